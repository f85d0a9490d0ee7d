//! Environment variables in scenario text: `${HOST}`, `${HOST:-127.0.0.1}`, `$${` for a
//! literal `${`. Expanded in the parsed document's text values (never in comments or keys),
//! so line numbers stay those of the file. A value that is only a reference (`rate: ${RATE}`)
//! is read as YAML where the schema wants a number or a list.
//!
//! Values of variables can be secrets: they never appear in errors (see [`Expanded::scrub`]).

use super::shape::Shape;
use aho_corasick::{AhoCorasick, MatchKind};
use std::collections::BTreeMap;
use std::sync::OnceLock;
use yaml_serde::Value;

/// What the expansion used, to keep the values out of error messages and printed lines.
#[derive(Debug, Default)]
pub struct Expanded {
    /// Each variable used, once, with its value. A value used in every request is one entry:
    /// scrubbing went over every use of every value for each line, which made `run --check`
    /// of 700 requests using one 8 KB token take 10 s.
    used: BTreeMap<String, String>,
    /// Whether any text changed (a default or an escape counts).
    changed: bool,
    /// The values to find, built once at the first scrub.
    finder: OnceLock<Option<Finder>>,
}

/// An automaton over the values worth scrubbing, and each one's reference.
#[derive(Debug)]
struct Finder {
    automaton: AhoCorasick,
    references: Vec<String>,
}

impl Expanded {
    /// Whether any reference was expanded.
    pub fn any(&self) -> bool {
        self.changed
    }

    /// `message` with every value of a variable replaced by its reference, in one pass over
    /// the message whatever the number of variables.
    pub fn scrub(&self, message: &str) -> String {
        let Some(finder) = self.finder.get_or_init(|| self.finder()) else {
            // No value worth scrubbing (then this is a copy), or no automaton.
            return self.scrub_slowly(message);
        };
        let mut out = String::with_capacity(message.len());
        finder
            .automaton
            .replace_all_with(message, &mut out, |m, _, out| {
                out.push_str(&finder.references[m.pattern().as_usize()]);
                true
            });
        out
    }

    /// The values worth scrubbing, longest first: one character cannot be told from the text
    /// around it, and is no secret.
    fn worth(&self) -> Vec<(&String, &String)> {
        let mut worth: Vec<(&String, &String)> = self
            .used
            .iter()
            .filter(|(_, v)| v.trim().chars().count() > 1)
            .collect();
        worth.sort_by_key(|(_, v)| std::cmp::Reverse(v.len()));
        worth
    }

    /// A value at a time, for values the automaton could not be built of (past its size
    /// limits, far beyond a scenario's): slower, never less thorough.
    fn scrub_slowly(&self, message: &str) -> String {
        let mut out = message.to_string();
        for (name, value) in self.worth() {
            out = out.replace(value.as_str(), &format!("${{{name}}}"));
        }
        out
    }

    fn finder(&self) -> Option<Finder> {
        let worth = self.worth();
        if worth.is_empty() {
            return None;
        }
        // Longest first where two start at one place, so that a value inside another is not
        // half replaced.
        let automaton = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(worth.iter().map(|(_, v)| v.as_str()))
            .ok()?;
        Some(Finder {
            automaton,
            references: worth.iter().map(|(n, _)| format!("${{{n}}}")).collect(),
        })
    }
}

/// A reference that cannot be expanded.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EnvError {
    /// The variable is not set and the reference has no default.
    #[error(
        "the environment variable {name} is not set; set it, or give a default: ${{{name}:-value}}"
    )]
    Unset {
        /// Its name.
        name: String,
    },
    /// `${` without a closing `}` or a valid name.
    #[error("{text:?} is not a variable reference; write ${{NAME}} or ${{NAME:-default}} (and $${{ for a literal ${{)")]
    Malformed {
        /// The reference as written.
        text: String,
    },
    /// A value read as YAML that is not.
    #[error("the value of ${{{name}}} is not a YAML value for this field")]
    NotYaml {
        /// The variable.
        name: String,
    },
}

impl EnvError {
    /// What to look for in the file to place the error.
    pub fn needle(&self) -> String {
        match self {
            EnvError::Unset { name } | EnvError::NotYaml { name } => format!("${{{name}"),
            EnvError::Malformed { text } => text.clone(),
        }
    }
}

/// Expands every reference in `doc`'s text values, reading variables with `lookup`.
pub fn expand(
    doc: &mut Value,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Expanded, EnvError> {
    let mut used = Expanded::default();
    walk(doc, Some(Shape::root()), lookup, &mut used)?;
    Ok(used)
}

fn walk(
    node: &mut Value,
    shape: Option<Shape>,
    lookup: &dyn Fn(&str) -> Option<String>,
    used: &mut Expanded,
) -> Result<(), EnvError> {
    match node {
        Value::String(s) if s.contains('$') => {
            let whole = whole_reference(s);
            let text = expand_text(s, lookup, used)?;
            *node = match (whole, &shape) {
                (Some(name), Some(shape)) if !shape.is_text() => yaml_serde::from_str(&text)
                    .map_err(|_| EnvError::NotYaml {
                        name: name.to_string(),
                    })?,
                _ => Value::String(text),
            };
        }
        Value::Sequence(items) => {
            let item = shape.as_ref().and_then(Shape::item);
            for x in items {
                walk(x, item.clone(), lookup, used)?;
            }
        }
        Value::Mapping(m) => {
            for (k, v) in m.iter_mut() {
                let field = match (&shape, k.as_str()) {
                    (Some(s), Some(k)) => s.field(k),
                    _ => None,
                };
                walk(v, field, lookup, used)?;
            }
        }
        Value::Tagged(t) => walk(&mut t.value, shape, lookup, used)?,
        _ => {}
    }
    Ok(())
}

/// The variable's name when `s` is one reference and nothing else.
fn whole_reference(s: &str) -> Option<&str> {
    let inner = s.trim().strip_prefix("${")?.strip_suffix('}')?;
    if inner.contains(['{', '}', '$']) {
        return None;
    }
    Some(inner.split_once(":-").map_or(inner, |(n, _)| n))
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn expand_text(
    s: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
    used: &mut Expanded,
) -> Result<String, EnvError> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i..];
        if let Some(tail) = after.strip_prefix("$${") {
            used.changed = true;
            out.push_str("${");
            rest = tail;
            continue;
        }
        let Some(body) = after.strip_prefix("${") else {
            out.push('$');
            rest = &after[1..];
            continue;
        };
        let malformed = || EnvError::Malformed {
            text: after.chars().take(40).collect(),
        };
        let end = body.find('}').ok_or_else(malformed)?;
        let inner = &body[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (inner, None),
        };
        if !valid_name(name) {
            return Err(malformed());
        }
        let value = match (lookup(name), default) {
            (Some(v), _) => {
                used.used.insert(name.to_string(), v.clone());
                v
            }
            (None, Some(d)) => d.to_string(),
            (None, None) => {
                return Err(EnvError::Unset {
                    name: name.to_string(),
                })
            }
        };
        used.changed = true;
        out.push_str(&value);
        rest = &body[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "HOST" => Some("10.0.0.7".into()),
            "RATE" => Some("25".into()),
            "TOKEN" => Some("s3cr3t-token".into()),
            _ => None,
        }
    }

    fn expanded(yaml: &str) -> Result<Value, EnvError> {
        let mut doc: Value = yaml_serde::from_str(yaml).unwrap();
        expand(&mut doc, &env).map(|_| doc)
    }

    #[test]
    fn references_defaults_and_escapes() {
        let d = expanded(
            "target: {url: 'http://${HOST}:${PORT:-8080}/a$${b}'}\nload: {rate: '${RATE}', duration: '${D:-5s}'}\n",
        )
        .unwrap();
        assert_eq!(
            d["target"]["url"],
            Value::from("http://10.0.0.7:8080/a${b}")
        );
        // Only a reference, where a number is wanted: read as a number.
        assert_eq!(d["load"]["rate"], Value::from(25));
        assert_eq!(d["load"]["duration"], Value::from("5s"));
    }

    #[test]
    fn an_unset_variable_is_named_and_values_are_scrubbed() {
        let e = expanded("target: {url: 'http://${NOPE}/'}\n").unwrap_err();
        assert_eq!(
            e,
            EnvError::Unset {
                name: "NOPE".into()
            }
        );
        assert!(e.to_string().contains("NOPE"));
        assert!(expanded("target: {url: '${bad name}'}\n").is_err());
        let mut doc: Value =
            yaml_serde::from_str("target: {headers: {a: 'Bearer ${TOKEN}'}}\n").unwrap();
        let used = expand(&mut doc, &env).unwrap();
        assert_eq!(
            used.scrub("header a: Bearer s3cr3t-token is bad"),
            "header a: Bearer ${TOKEN} is bad"
        );
    }

    /// An 8 KB token used in 1,000 requests: a value is kept once however often it is used,
    /// and a line is scrubbed in one pass over it. Scrubbing every use of every value for each
    /// line made `run --check` of 1,000 such requests take 27 s.
    #[test]
    fn a_long_value_used_a_thousand_times_is_scrubbed_in_one_pass_a_line() {
        let token = "t0k3n".repeat(1_640);
        let lookup = |name: &str| match name {
            "TOKEN" => Some(token.clone()),
            "HOST" => Some("10.0.0.7".to_string()),
            _ => None,
        };
        let mut yaml = String::from("requests:\n");
        for i in 0..1_000 {
            yaml.push_str(&format!(
                "  - {{name: r{i}, headers: {{Authorization: 'Bearer ${{TOKEN}}', Host: '${{HOST}}'}}}}\n"
            ));
        }
        let mut doc: Value = yaml_serde::from_str(&yaml).unwrap();
        let used = expand(&mut doc, &lookup).unwrap();
        let started = std::time::Instant::now();
        for _ in 0..1_000 {
            let line = format!("    Authorization: Bearer {token} (to 10.0.0.7)");
            assert_eq!(
                used.scrub(&line),
                "    Authorization: Bearer ${TOKEN} (to ${HOST})"
            );
        }
        // One pass a line: milliseconds in all; the old way, a pass per use, tens of seconds.
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn a_value_inside_another_is_not_half_replaced() {
        let lookup = |name: &str| match name {
            "A" => Some("secret".to_string()),
            "B" => Some("secret-longer".to_string()),
            "C" => Some("x".to_string()),
            _ => None,
        };
        let mut doc: Value = yaml_serde::from_str("a: '${A} ${B} ${C}'\n").unwrap();
        let used = expand(&mut doc, &lookup).unwrap();
        assert_eq!(used.scrub("secret-longer, secret, x"), "${B}, ${A}, x");
    }
}
