//! YAML that every reader takes as meant: the one emitter of the YAML headroom writes (the
//! `kube` manifests, the scenario copy they carry, `import`'s scenarios), and of the comments
//! above it.
//!
//! serde writes the document (yaml_serde, over libyaml's emitter, which gets the syntax
//! right) and quotes what a YAML 1.2 reader would read as other than text; a YAML 1.1 reader
//! (kubectl's, PyYAML, most of the Kubernetes world) also reads `yes`, `on`, `n`, `1:20`,
//! `0o17`, `1_000` and `2026-11-25` as booleans, numbers and dates where the API wants text.
//! So every string that is not plainly text to both (a narrow, checked shape: see
//! [`plain_is_text`]) is written quoted by this module: it stands in the tree as a
//! placeholder serde writes plain, which is then replaced by the string in single quotes
//! (one line of printable characters) or double quotes (anything else, every character
//! outside printable ASCII escaped). Comments are written line by line, each
//! with its line breaks and control characters escaped, so no value can end one and start a
//! document or a field.

use serde::Serialize;
use yaml_serde::{Mapping, Value};

/// A value that cannot be written as YAML.
#[derive(Debug, thiserror::Error)]
#[error("cannot write YAML: {0}")]
pub struct YamlError(String);

/// Longest quoted mapping key written: YAML limits an implicit key to 1024 characters.
const MAX_KEY: usize = 1000;

/// `value` as a YAML document, every string that a YAML 1.1 or 1.2 reader could read as
/// anything else quoted.
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> Result<String, YamlError> {
    let mut tree = yaml_serde::to_value(value).map_err(|e| YamlError(e.to_string()))?;
    // A stem no string or tag of the tree holds, so that every place it is found in serde's
    // text is a placeholder.
    let mut stem = "hqz".to_string();
    let mut n = 0u32;
    while holds(&tree, &stem) {
        n += 1;
        stem = format!("hqz{n}q");
    }
    let mut held = Vec::new();
    mark(&mut tree, &stem, &mut held)?;
    let text = yaml_serde::to_string(&tree).map_err(|e| YamlError(e.to_string()))?;
    if held.is_empty() {
        return Ok(text);
    }
    let placeholder = regex::Regex::new(&format!("{stem}x([0-9]+)x")).expect("a regex");
    Ok(placeholder
        .replace_all(&text, |c: &regex::Captures| {
            c[1].parse::<usize>()
                .ok()
                .and_then(|i| held.get(i))
                .map_or_else(|| c[0].to_string(), |s| quoted(s))
        })
        .into_owned())
}

/// Comment lines (`# …`), one per item of `lines`: any line break or control character in
/// an item is escaped (`\n`, `\u{1b}`), so it stays one comment line however it was named.
pub fn comment<S: AsRef<str>>(lines: &[S]) -> String {
    let mut out = String::new();
    for line in lines {
        let line = one_line(line.as_ref());
        out.push('#');
        if !line.is_empty() {
            out.push(' ');
            out.push_str(&line);
        }
        out.push('\n');
    }
    out
}

/// `text` on one line, printable to every YAML reader: line breaks and other control
/// characters escaped as Rust writes them (`\n`, `\u{1b}`).
pub fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| match breaks_or_unprintable(c) {
            true => c.escape_default().to_string(),
            false => c.to_string(),
        })
        .collect()
}

/// Whether `c` is a line break to some YAML reader (YAML 1.1 counts `\u{85}`, `\u{2028}` and
/// `\u{2029}` among them) or a character a reader refuses or drops (controls, a BOM).
fn breaks_or_unprintable(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
        )
}

/// Whether any string or tag of `tree` holds `stem`.
fn holds(tree: &Value, stem: &str) -> bool {
    match tree {
        Value::String(s) => s.contains(stem),
        Value::Sequence(items) => items.iter().any(|v| holds(v, stem)),
        Value::Mapping(m) => m.iter().any(|(k, v)| holds(k, stem) || holds(v, stem)),
        Value::Tagged(t) => t.tag.to_string().contains(stem) || holds(&t.value, stem),
        _ => false,
    }
}

/// Replaces every string to be quoted (values and keys) with a placeholder, keeping
/// the strings in `held`, in order.
fn mark(tree: &mut Value, stem: &str, held: &mut Vec<String>) -> Result<(), YamlError> {
    let hold = |s: &str, held: &mut Vec<String>| {
        held.push(s.to_string());
        Value::String(format!("{stem}x{}x", held.len() - 1))
    };
    match tree {
        Value::String(s) if !stays(s) => *tree = hold(s, held),
        Value::Sequence(items) => {
            for v in items {
                mark(v, stem, held)?;
            }
        }
        Value::Mapping(m) => {
            let mut out = Mapping::with_capacity(m.len());
            for (mut k, mut v) in std::mem::take(m) {
                if let Value::String(s) = &k {
                    if !stays(s) {
                        if quoted(s).len() > MAX_KEY {
                            return Err(YamlError(format!(
                                "a mapping key of {} characters is longer than YAML allows",
                                s.chars().count()
                            )));
                        }
                        k = hold(s, held);
                    }
                } else {
                    mark(&mut k, stem, held)?;
                }
                mark(&mut v, stem, held)?;
                out.insert(k, v);
            }
            *m = out;
        }
        Value::Tagged(t) => mark(&mut t.value, stem, held)?,
        _ => {}
    }
    Ok(())
}

/// Whether serde may write `s` as it chooses: plain text to every reader, or a text of
/// several lines, which serde writes as a literal block (`|`, text to every reader) or, when
/// a block cannot hold it (a line break of YAML 1.1's, a control character, trailing
/// spaces), libyaml writes double-quoted with escapes.
fn stays(s: &str) -> bool {
    s.contains('\n') || plain_is_text(s)
}

/// Characters that numbers, dates and times are written with in YAML 1.1 and 1.2
/// (`0x1F`, `0o17`, `1_000`, `1:20`, `1e3`, `2026-11-25t10:00:00z`): a string that starts
/// like a number and holds nothing else could be read as one.
const NUMERIC: &str = "0123456789abcdefABCDEF_.:+-xXoObBeEtTzZ ";

/// Words a YAML 1.1 or 1.2 reader takes for a boolean, a null or a float, in any case.
const WORDS: &[&str] = &[
    "y", "yes", "n", "no", "true", "false", "on", "off", "null", ".inf", "-.inf", "+.inf", ".nan",
];

/// Whether `s`, written plain, is read as this text by YAML 1.1 and 1.2 readers alike: one
/// line of printable ASCII that starts with a letter, `_`, `/`, `$`, or a `-` before a letter
/// or `-`, or like a number but with a character no number has (`10s`, `256Mi`); that is no
/// boolean or null word; and with no `: `, ` #`, trailing `:` or space, or `---` start.
pub fn plain_is_text(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    let second = s.chars().nth(1);
    let starts = match first {
        'a'..='z' | 'A'..='Z' | '_' | '/' | '$' => true,
        '-' => second.is_some_and(|c| c.is_ascii_alphabetic() || c == '-') && !s.starts_with("---"),
        '0'..='9' | '+' | '.' => s.chars().any(|c| !NUMERIC.contains(c)),
        _ => false,
    };
    starts
        && s.bytes().all(|b| (0x20..0x7f).contains(&b))
        && !s.ends_with([' ', ':'])
        && !s.contains(": ")
        && !s.contains(" #")
        && !WORDS.contains(&s.to_ascii_lowercase().as_str())
}

/// `s` as a quoted YAML scalar that YAML 1.1 and 1.2 readers read back the same: in single
/// quotes when it is one line of printable characters (a `'` doubled), else in double quotes.
pub fn quoted(s: &str) -> String {
    if !s.chars().any(breaks_or_unprintable) {
        format!("'{}'", s.replace('\'', "''"))
    } else {
        double_quoted(s)
    }
}

/// `s` as a YAML double-quoted scalar that YAML 1.1 and 1.2 readers read back the same:
/// `"` and `\` escaped, and every character outside printable ASCII as `\n`, `\t`, `\uXXXX`
/// or `\UXXXXXXXX`.
fn double_quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            ' '..='~' => out.push(c),
            c if u32::from(c) <= 0xffff => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push_str(&format!("\\U{:08X}", u32::from(c))),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn what_a_reader_could_misread_is_quoted() {
        // PyYAML reads the rest of YAML 1.1's forms back in the property test
        // (tests/integration/yaml.rs); these are the ones it does not: go-yaml's `y` and `n`,
        // YAML 1.2's `0o` octal, and the indicators a plain scalar may not start with.
        for s in [
            "y", "Y", "n", "N", "0o17", "+.inf", "", "=", "<<", "~", "@a", "`a", "%a", "é",
        ] {
            assert!(!plain_is_text(s), "{s:?} would be written plain");
        }
        for s in [
            "registry.example/headroom:0.1.0",
            "500m",
            "256Mi",
            "10s",
            "--shard",
            "$(JOB_COMPLETION_INDEX)/4",
            "${HEADROOM_SECRET_1}",
            "/items/{{ sku }}",
            "app.kubernetes.io/name",
            "shop",
            "yesterday",
            "Never",
        ] {
            assert!(plain_is_text(s), "{s:?} would be quoted");
        }
    }

    #[test]
    fn ambiguous_values_and_keys_are_quoted() {
        let doc: BTreeMap<&str, &str> = [
            ("image", "yes"),
            ("on", "n"),
            ("storageClassName", "no"),
            ("start", "2026-11-25"),
            ("plain", "shop"),
            ("dashes", "---\nkind: Secret\n"),
        ]
        .into();
        let text = to_string(&doc).unwrap();
        assert_eq!(
            text,
            "dashes: |\n  ---\n  kind: Secret\nimage: 'yes'\n'on': 'n'\nplain: shop\nstart: '2026-11-25'\nstorageClassName: 'no'\n"
        );
        let back: BTreeMap<String, String> = yaml_serde::from_str(&text).unwrap();
        assert_eq!(back["on"], "n");
    }

    #[test]
    fn a_placeholder_stem_in_the_values_is_not_mistaken_for_one() {
        let doc = vec!["hqzx0x", "yes", "hqz1q"];
        let text = to_string(&doc).unwrap();
        let back: Vec<String> = yaml_serde::from_str(&text).unwrap();
        assert_eq!(back, doc);
    }

    #[test]
    fn comments_stay_comments() {
        assert_eq!(
            comment(&["a\n---\nkind: Secret", "", "b\r\u{2028}c\u{1b}"]),
            "# a\\n---\\nkind: Secret\n#\n# b\\r\\u{2028}c\\u{1b}\n"
        );
    }

    #[test]
    fn quotes_escape_everything_but_printable_ascii() {
        assert_eq!(quoted("it's 1 × 2"), "'it''s 1 × 2'");
        assert_eq!(
            double_quoted("a\"\\\n\té\u{85}\u{1f600}"),
            "\"a\\\"\\\\\\n\\t\\u00E9\\u0085\\U0001F600\""
        );
    }
}
