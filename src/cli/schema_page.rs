//! `headroom schema --markdown`: the scenario file reference (docs/scenario.md), rendered from
//! the JSON Schema that `headroom schema` prints, so the reference never drifts from the parser.
//!
//! Written by hand: the JSON Schema to markdown converters on crates.io render any schema
//! generically (nested headings per `$ref`, no defaults column); this is one table per section
//! of headroom's own file format, with its types said in words.

use serde_json::{Map, Value};
use std::fmt::Write;

/// The section names in the schema end in "Section" (the Rust types'); readers see the rest.
fn display_name(def: &str) -> &str {
    def.strip_suffix("Section").unwrap_or(def)
}

/// A markdown link to the heading of definition `def`.
fn link(def: &str) -> String {
    let name = display_name(def);
    format!("[{name}](#{})", name.to_lowercase())
}

/// One line of markdown from a description that may span lines (a table cell holds one line).
fn one_line(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

/// The type of a schema in words: `string`, `list of [Request](#request)`, `even | poisson`.
fn type_of(schema: &Value) -> String {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        return link(r.rsplit('/').next().unwrap_or(r));
    }
    if let Some(c) = schema.get("const") {
        return format!("`{c}`").replace('"', "");
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(options) = schema.get(key).and_then(Value::as_array) {
            // `null` only says the field may be left out: the default column says what then.
            let kinds: Vec<String> = options
                .iter()
                .filter(|o| o.get("type").and_then(Value::as_str) != Some("null"))
                .map(type_of)
                .collect();
            return kinds.join(" or ");
        }
    }
    let kind = match schema.get("type") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .filter(|k| *k != "null")
            .collect::<Vec<_>>()
            .join(" or "),
        _ => return "any".into(),
    };
    match kind.as_str() {
        "array" => {
            let item = schema.get("items").map_or_else(|| "any".into(), type_of);
            match (schema.get("minItems"), schema.get("maxItems")) {
                (Some(min), Some(max)) if min == max => format!("{min} × {item}"),
                _ => format!("list of {item}"),
            }
        }
        "object" => match schema.get("additionalProperties") {
            Some(v) if v.is_object() => format!("map of name → {}", type_of(v)),
            _ => "map".into(),
        },
        _ => kind,
    }
}

/// The default of a field as the file would write it, or what its absence means.
fn default_of(schema: &Value, required: bool) -> String {
    if required {
        return "**required**".into();
    }
    match schema.get("default") {
        Some(Value::Array(a)) if a.is_empty() => "none".into(),
        Some(Value::Object(o)) if o.is_empty() => "none".into(),
        Some(v) => format!("`{v}`"),
        None => "—".into(),
    }
}

/// The table of an object's fields.
fn fields(out: &mut String, object: &Value) {
    let Some(props) = object.get("properties").and_then(Value::as_object) else {
        return;
    };
    let required: Vec<&str> = object
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    out.push_str("| field | type | default | description |\n|---|---|---|---|\n");
    for (name, schema) in props {
        let description = schema
            .get("description")
            .and_then(Value::as_str)
            .map(one_line)
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "| `{name}` | {} | {} | {description} |",
            type_of(schema).replace('|', "\\|"),
            default_of(schema, required.contains(&name.as_str()))
        );
    }
    out.push('\n');
}

/// The body of one definition: its fields, or the values or shapes it takes.
fn definition(out: &mut String, name: &str, schema: &Value) {
    let _ = writeln!(out, "## {}\n", display_name(name));
    if let Some(d) = schema.get("description").and_then(Value::as_str) {
        let _ = writeln!(out, "{}\n", one_line(d));
    }
    if schema.get("properties").is_some() {
        fields(out, schema);
        return;
    }
    let options = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))
        .and_then(Value::as_array);
    if let Some(options) = options {
        out.push_str("One of:\n\n");
        for option in options {
            let what = option
                .get("description")
                .and_then(Value::as_str)
                .map(|d| format!(": {}", one_line(d)))
                .unwrap_or_default();
            let _ = writeln!(out, "- {}{what}", type_of(option));
        }
        out.push('\n');
    } else {
        let _ = writeln!(out, "A {}.\n", type_of(schema));
    }
}

/// The scenario file reference in markdown, from the schema `headroom schema` prints.
pub fn render(schema_json: &str) -> serde_json::Result<String> {
    let schema: Value = serde_json::from_str(schema_json)?;
    let mut out = String::new();
    out.push_str(
        "# Scenario file reference\n\n\
         <!-- Generated by `headroom schema --markdown > docs/scenario.md` from the JSON Schema \
         of scenario files: edit the doc comments in src/plan/scenario/, not this page. -->\n\n",
    );
    if let Some(d) = schema.get("description").and_then(Value::as_str) {
        let _ = writeln!(out, "{}\n", one_line(d));
    }
    out.push_str(
        "Every field of a scenario file, its type, its default and what it does. How to write \
         one, a feature at a time: [writing-scenarios.md](writing-scenarios.md). Editors \
         complete and check files against the JSON Schema itself: `headroom schema > \
         headroom.schema.json`, then `# yaml-language-server: $schema=headroom.schema.json` \
         on a scenario's first line.\n\n## Top level\n\n",
    );
    fields(&mut out, &schema);
    let empty = Map::new();
    let defs = schema
        .get("$defs")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    for (name, def) in defs {
        definition(&mut out, name, def);
    }
    // One newline at the end, as an editor saves it.
    while out.ends_with("\n\n") {
        out.pop();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_and_section_of_the_real_schema_is_in_the_reference() {
        let json = headroom::plan::scenario::json_schema();
        let page = render(&json).unwrap();
        let schema: Value = serde_json::from_str(&json).unwrap();
        for (def, body) in schema["$defs"].as_object().unwrap() {
            assert!(
                page.contains(&format!("## {}\n", display_name(def))),
                "{def}"
            );
            for field in body["properties"].as_object().into_iter().flatten() {
                assert!(
                    page.contains(&format!("| `{}` |", field.0)),
                    "{def}.{}",
                    field.0
                );
            }
        }
        assert!(page.contains("| `target` | [Target](#target) | **required** |"));
    }

    #[test]
    fn types_are_said_in_words() {
        let t = |v: Value| type_of(&v);
        assert_eq!(t(serde_json::json!({"type": ["string", "null"]})), "string");
        assert_eq!(
            t(serde_json::json!({"type": "array", "items": {"$ref": "#/$defs/StageSection"}})),
            "list of [Stage](#stage)"
        );
        assert_eq!(
            t(
                serde_json::json!({"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2})
            ),
            "2 × number"
        );
        assert_eq!(
            t(serde_json::json!({"oneOf": [{"const": "even"}, {"const": "poisson"}]})),
            "`even` or `poisson`"
        );
        assert_eq!(
            t(serde_json::json!({"type": "object", "additionalProperties": {"type": "string"}})),
            "map of name → string"
        );
    }

    #[test]
    fn a_description_over_lines_is_one_table_cell() {
        assert_eq!(one_line("a\nb | c"), "a b \\| c");
    }
}
