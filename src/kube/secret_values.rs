//! Secret values written in the scenario itself, moved to the Secret: what headroom's rule
//! for secrets ([`crate::plan::secret_names`]) marks is replaced in the ConfigMap's copy by a
//! `${HEADROOM_SECRET_n}` reference, which the pod reads back from the Secret as an
//! environment variable. The values of the scenario's own `${VARIABLES}` go there too.

use super::files::{get, render, set, Seg, MOVED_PREFIX};
use crate::plan::scenario::env;
use crate::plan::scenario::shape::Shape;
use crate::plan::secret_names::{is_secret_path, secret_query_values, user_info};
use std::ops::Range;
use yaml_serde::Value;

/// Moves every secret value of `raw` (the scenario as written; `expanded`, with its
/// variables read by `lookup`) out of it, leaving the fields at `skip` (files, which are
/// mounted) alone. Returns the Secret's variables, by name, sorted: the values moved and
/// those of the variables the scenario still refers to.
pub(super) fn move_out(
    raw: &mut Value,
    expanded: &Value,
    skip: &[Vec<Seg>],
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Vec<(String, String)> {
    let mut finder = Finder {
        skip,
        lookup,
        found: Vec::new(),
    };
    finder.walk(raw, expanded, &mut Vec::new(), Some(Shape::root()));

    let mut taken: Vec<String> = Vec::new();
    collect_references(raw, &mut taken);
    let mut fresh = || {
        let mut n = 1;
        while taken.contains(&format!("{MOVED_PREFIX}{n}")) {
            n += 1;
        }
        let name = format!("{MOVED_PREFIX}{n}");
        taken.push(name.clone());
        name
    };
    let mut env: Vec<(String, String)> = Vec::new();
    for secret in finder.found {
        match secret.parts {
            Parts::Whole(value) => {
                let name = fresh();
                set(raw, &secret.at, Value::String(format!("${{{name}}}")));
                env.push((name, value));
            }
            Parts::Pieces(pieces) => {
                let Some(Value::String(text)) = get(raw, &secret.at) else {
                    continue;
                };
                let mut text = text.clone();
                let named: Vec<(Range<usize>, String)> = pieces
                    .into_iter()
                    .map(|(range, value)| {
                        let name = fresh();
                        env.push((name.clone(), value));
                        (range, name)
                    })
                    .collect();
                // From the last piece back, so that the ranges before it still hold.
                for (range, name) in named.into_iter().rev() {
                    text.replace_range(range, &format!("${{{name}}}"));
                }
                set(raw, &secret.at, Value::String(text));
            }
        }
    }
    // The scenario's own variables: their values are read here, and may be secrets.
    let mut referenced = Vec::new();
    collect_references(raw, &mut referenced);
    for name in referenced {
        // Unset here, the reference has a default (or the scenario would not have loaded).
        if let Some(value) = lookup(&name) {
            if !env.iter().any(|(n, _)| *n == name) {
                env.push((name, value));
            }
        }
    }
    env.sort();
    env
}

/// A secret value written in the scenario, and where.
struct Found {
    /// Where it is in the document.
    at: Vec<Seg>,
    /// The whole value, or pieces of its text.
    parts: Parts,
}

/// What of a scalar is secret.
enum Parts {
    /// All of it (a credential header, a body, a field named like a secret), with the value
    /// the pod must read back.
    Whole(String),
    /// Pieces of a text (a URL's user info, the values of query parameters named like
    /// credentials): each byte range of the text as written, with its value as read.
    Pieces(Vec<(Range<usize>, String)>),
}

/// Walks the scenario for what the rule marks.
struct Finder<'a> {
    /// Fields left alone (the files, which are mounted).
    skip: &'a [Vec<Seg>],
    /// The variables, to read a piece that refers to one.
    lookup: &'a dyn Fn(&str) -> Option<String>,
    /// What was found, in document order.
    found: Vec<Found>,
}

impl Finder<'_> {
    /// Finds the scalars at secret places (moved whole: as written where the schema wants
    /// text, as YAML elsewhere, so a JSON body's `pin: 1234` stays a number) and the secret
    /// pieces of every other text. A value that is one `${VARIABLE}` is left (its value goes
    /// to the Secret anyway), and so is one of template slots only (filled from a data set,
    /// whose file is judged by its columns).
    fn walk(&mut self, raw: &Value, expanded: &Value, at: &mut Vec<Seg>, shape: Option<Shape>) {
        match raw {
            Value::Mapping(m) => {
                for (k, v) in m {
                    let Some(k) = k.as_str() else { continue };
                    let field = shape.as_ref().and_then(|s| s.field(k));
                    let Some(e) = expanded.get(k) else { continue };
                    at.push(Seg::Key(k.to_string()));
                    self.walk(v, e, at, field);
                    at.pop();
                }
            }
            Value::Sequence(items) => {
                let item = shape.as_ref().and_then(Shape::item);
                for (i, v) in items.iter().enumerate() {
                    let Some(e) = expanded.get(i) else { continue };
                    at.push(Seg::Index(i));
                    self.walk(v, e, at, item.clone());
                    at.pop();
                }
            }
            Value::Tagged(t) => self.walk(&t.value, expanded, at, shape),
            Value::Null => {}
            scalar => {
                if self.skip.iter().any(|s| s == at) || structural(at) {
                    return;
                }
                if !is_secret_path(&render(at)) {
                    if let Value::String(s) = scalar {
                        let pieces = self.pieces(s);
                        if !pieces.is_empty() {
                            self.found.push(Found {
                                at: at.clone(),
                                parts: Parts::Pieces(pieces),
                            });
                        }
                    }
                    return;
                }
                if let Value::String(s) = scalar {
                    if is_one_reference(s) || only_slots(s) {
                        return;
                    }
                }
                let text = shape.as_ref().is_some_and(Shape::is_text);
                let value = match expanded {
                    Value::String(s) if text => s.clone(),
                    Value::Number(n) if text => n.to_string(),
                    Value::Bool(b) if text => b.to_string(),
                    other => match yaml_serde::to_string(other) {
                        Ok(y) => y.trim_end().to_string(),
                        Err(_) => return,
                    },
                };
                self.found.push(Found {
                    at: at.clone(),
                    parts: Parts::Whole(value),
                });
            }
        }
    }

    /// The secret pieces of a text as written (its user info, if it is a URL with one; the
    /// values of its query parameters named like credentials), each with its value as the
    /// pod reads it. A piece that is a `${VARIABLE}` is none (the rule leaves it: its value
    /// goes to the Secret anyway).
    fn pieces(&self, text: &str) -> Vec<(Range<usize>, String)> {
        user_info(text)
            .into_iter()
            .chain(secret_query_values(text))
            .filter_map(|r| {
                let piece = &text[r.clone()];
                if only_slots(piece) {
                    return None;
                }
                let mut value = Value::String(piece.to_string());
                // As the pod will read it: `$${` is a literal `${`, a variable its value.
                env::expand(&mut value, self.lookup).ok()?;
                Some((r, value.as_str()?.to_string()))
            })
            .collect()
    }
}

/// Whether `at` says how to read or make values rather than carrying one: where to capture
/// from (`capture.token.json: token`), what an answer must hold, a generated set's size and
/// prefix. Their names may sound secret (a set named `secrets`) but they are the scenario's
/// shape, and a reader of the ConfigMap needs them.
fn structural(at: &[Seg]) -> bool {
    let key = |s: &Seg, name: &str| matches!(s, Seg::Key(k) if k == name);
    at.iter().any(|s| key(s, "capture") || key(s, "expect"))
        || matches!(at, [d, _, g, ..] if key(d, "data") && key(g, "generate"))
}

/// Whether `s` is nothing but `{{ … }}` template slots and spaces.
fn only_slots(s: &str) -> bool {
    let mut rest = s.trim();
    if rest.is_empty() {
        return false;
    }
    while let Some(tail) = rest.strip_prefix("{{") {
        match tail.find("}}") {
            Some(end) => rest = tail[end + 2..].trim_start(),
            None => return false,
        }
    }
    rest.is_empty()
}

/// Whether `s` is one `${NAME}` reference and nothing else (spaces aside): its value is the
/// variable's, which goes to the Secret. A reference with text around it is not: the text
/// may be the secret (`Bearer abc${SUFFIX}`).
fn is_one_reference(s: &str) -> bool {
    let s = s.trim();
    s.starts_with("${")
        && s.ends_with('}')
        && references(s).len() == 1
        && !s[2..s.len() - 1].contains(['$', '{', '}'])
}

/// The variables `s` refers to.
fn references(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(i) = rest.find('$') {
        let after = &rest[i..];
        if let Some(tail) = after.strip_prefix("$${") {
            rest = tail;
        } else if let Some(body) = after.strip_prefix("${") {
            let end = body.find('}').unwrap_or(body.len());
            let inner = &body[..end];
            let name = inner.split_once(":-").map_or(inner, |(n, _)| n);
            out.push(name.to_string());
            rest = &body[end.min(body.len())..];
        } else {
            rest = &after[1..];
        }
    }
    out
}

/// Every variable the document's values refer to, once each, in order.
fn collect_references(doc: &Value, out: &mut Vec<String>) {
    match doc {
        Value::String(s) => {
            for name in references(s) {
                if !out.contains(&name) {
                    out.push(name);
                }
            }
        }
        Value::Sequence(items) => items.iter().for_each(|v| collect_references(v, out)),
        Value::Mapping(m) => m.values().for_each(|v| collect_references(v, out)),
        Value::Tagged(t) => collect_references(&t.value, out),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_skip_escapes() {
        assert_eq!(references("a ${X} $${Y} ${Z:-d}"), vec!["X", "Z"]);
        assert!(references("a$${b}").is_empty());
        assert!(is_one_reference(" ${X} ") && is_one_reference("${X:-d}"));
        assert!(!is_one_reference("Bearer ${X}") && !is_one_reference("${X}${Y}"));
        assert!(only_slots("{{ user }} {{ n | upper }}"));
        assert!(!only_slots("Bearer {{ token }}"));
        assert!(!only_slots(""));
    }

    fn moved(scenario: &str) -> (String, Vec<(String, String)>) {
        let mut raw: Value = yaml_serde::from_str(scenario).unwrap();
        let lookup = |name: &str| (name == "SUFFIX").then(|| "-env-7".to_string());
        let mut expanded = raw.clone();
        env::expand(&mut expanded, &lookup).unwrap();
        let env = move_out(&mut raw, &expanded, &[], &lookup);
        (yaml_serde::to_string(&raw).unwrap(), env)
    }

    #[test]
    fn secret_pieces_of_urls_and_paths_leave_and_the_rest_stays() {
        let (text, env) = moved(
            "target: {url: 'https://u:pw-1@h/api?key=k1&api_key=ak-2&access_token=$${lit}'}\nrequests: [{name: a, path: '/x?pwd=p-3&limit=5&token={{ t }}'}, {name: b, path: '/y?sig=s-4${SUFFIX}'}]\n",
        );
        for secret in ["pw-1", "ak-2", "p-3", "s-4", "lit"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        let values: Vec<&str> = env.iter().map(|(_, v)| v.as_str()).collect();
        for value in ["u:pw-1", "ak-2", "${lit}", "p-3", "s-4-env-7"] {
            assert!(values.contains(&value), "{value} not in {values:?}");
        }
        // Not credentials, and a slot filled from a data set: left as written.
        for kept in [
            "https://${HEADROOM_SECRET_",
            "@h/api?key=k1&api_key=${",
            "limit=5",
            "token={{ t }}",
        ] {
            assert!(text.contains(kept), "{kept} not in {text}");
        }
    }

    #[test]
    fn headers_and_fields_named_like_secrets_leave_whole() {
        let (text, env) = moved(
            "target: {url: 'http://h/', headers: {apikey: ak-1, X-Goog-Api-Key: gk-2, X-Access-Key: xk-3, X-Env: staging, Authorization: 'Bearer b-4${SUFFIX}', Cookie: '${SUFFIX}'}}\n",
        );
        for secret in ["ak-1", "gk-2", "xk-3", "b-4"] {
            assert!(!text.contains(secret), "{secret} in {text}");
            assert!(env.iter().any(|(_, v)| v.contains(secret)), "{secret}");
        }
        assert!(env.iter().any(|(_, v)| v == "Bearer b-4-env-7"), "{env:?}");
        assert!(
            text.contains("X-Env: staging") && text.contains("Cookie: ${SUFFIX}"),
            "{text}"
        );
        assert!(env.contains(&("SUFFIX".to_string(), "-env-7".to_string())));
    }
}
