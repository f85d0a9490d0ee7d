//! Manifests written as YAML that every Kubernetes reader takes as meant: serde's YAML, with
//! the plain scalars a YAML 1.1 reader would take for dates quoted.

use super::KubeError;

/// A manifest object written as YAML.
pub trait Yaml {
    fn to_yaml(&self) -> Result<String, KubeError>;
}
impl<T: serde::Serialize> Yaml for T {
    fn to_yaml(&self) -> Result<String, KubeError> {
        yaml_serde::to_string(self)
            .map(|text| quote_timestamps(&text))
            .map_err(|e| KubeError::Yaml(e.to_string()))
    }
}

/// `text` with every plain scalar that a YAML 1.1 reader takes for a timestamp (the start
/// time, a name such as `2026-11-25`) single-quoted: serde writes them plain, as YAML 1.2
/// allows, but a YAML 1.1 reader (the schema validator's, and others in the Kubernetes
/// world) finds a date where the API wants a string.
/// Block scalars (the files' contents) are left as they are.
pub fn quote_timestamps(text: &str) -> String {
    use std::sync::OnceLock;
    static PLAIN: OnceLock<regex::Regex> = OnceLock::new();
    static STAMP: OnceLock<regex::Regex> = OnceLock::new();
    let plain = PLAIN.get_or_init(|| {
        regex::Regex::new(r"^(\s*(?:- )?(?:[^\s'\x22#][^:]*: )?)(.+)$").expect("a regex")
    });
    let stamp = STAMP.get_or_init(|| {
        regex::Regex::new(
            r"^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?)?$",
        )
        .expect("a regex")
    });
    let mut out = String::with_capacity(text.len() + 16);
    // The indentation a block scalar's lines are deeper than, while inside one.
    let mut block: Option<usize> = None;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches('\n');
        let indent = body.len() - body.trim_start().len();
        if let Some(outer) = block {
            if body.trim().is_empty() || indent > outer {
                out.push_str(line);
                continue;
            }
            block = None;
        }
        let trimmed = body.trim_end();
        if block_header(trimmed) {
            block = Some(indent);
            out.push_str(line);
            continue;
        }
        match plain.captures(body) {
            Some(c) if stamp.is_match(&c[2]) => {
                out.push_str(&c[1]);
                out.push('\'');
                out.push_str(&c[2]);
                out.push('\'');
                out.push_str(&line[body.len()..]);
            }
            _ => out.push_str(line),
        }
    }
    out
}

/// Whether a line opens a block scalar: its value is `|` or `>`, with an indentation digit
/// and a chomping sign in either order (`|2-`, `>+`), as serde writes a file whose first line
/// starts with a space.
fn block_header(line: &str) -> bool {
    let value = line
        .rsplit_once(": ")
        .map_or(line.trim_start_matches("- "), |(_, v)| v);
    let mut chars = value.chars();
    matches!(chars.next(), Some('|' | '>'))
        && chars.all(|c| c.is_ascii_digit() || c == '-' || c == '+')
        && value.len() <= 3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_quoted_outside_block_scalars() {
        let text = "a: 2099-01-01T00:02:00Z\nargs:\n- 2099-01-01T00:02:00Z\n- run\nname: 2026-11-25\ndata:\n  f.csv: |\n    day: 2026-11-25\n    - 2026-11-25\nb: 2026-11-25 x\n- k: 2026-11-25\n";
        assert_eq!(
            quote_timestamps(text),
            "a: '2099-01-01T00:02:00Z'\nargs:\n- '2099-01-01T00:02:00Z'\n- run\nname: '2026-11-25'\ndata:\n  f.csv: |\n    day: 2026-11-25\n    - 2026-11-25\nb: 2026-11-25 x\n- k: '2026-11-25'\n"
        );
    }

    #[test]
    fn block_scalars_with_indentation_or_folding_are_left_as_they_are() {
        let text =
            "data:\n  f.csv: |2-\n     2026-11-25\n  g.txt: >\n    2026-11-25\nname: 2026-11-25\n";
        assert_eq!(
            quote_timestamps(text),
            "data:\n  f.csv: |2-\n     2026-11-25\n  g.txt: >\n    2026-11-25\nname: '2026-11-25'\n"
        );
    }
}
