//! The shape of a scenario document, read from its JSON Schema: which fields a path may
//! name and which of them hold text. Overrides and environment variables are checked
//! against it, so that the schema stays the one description of the file.

use serde_json::Value as Json;
use std::sync::OnceLock;

/// The scenario schema, built once.
fn schema() -> &'static Json {
    static SCHEMA: OnceLock<Json> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        serde_json::to_value(schemars::schema_for!(super::ScenarioFile)).expect("a schema")
    })
}

/// A place in the schema: the alternatives a value there may take (an `Option` is a
/// reference or null, a `Level` a number or a pair).
#[derive(Debug, Clone)]
pub struct Shape {
    nodes: Vec<&'static Json>,
}

impl Shape {
    /// The whole document.
    pub fn root() -> Shape {
        Shape::of(vec![schema()])
    }

    fn of(nodes: Vec<&'static Json>) -> Shape {
        let mut flat = Vec::new();
        for n in nodes {
            flatten(n, &mut flat);
        }
        Shape { nodes: flat }
    }

    /// The field `key` of an object here, when one may have it.
    pub fn field(&self, key: &str) -> Option<Shape> {
        let mut found = Vec::new();
        for n in &self.nodes {
            if let Some(p) = n.get("properties").and_then(|p| p.get(key)) {
                found.push(p);
            } else if let Some(a) = n
                .get("additionalProperties")
                .filter(|a| a.is_object() || a.as_bool() == Some(true))
            {
                found.push(a);
            } else if free_form(n) {
                found.push(n);
            }
        }
        (!found.is_empty()).then(|| Shape::of(found))
    }

    /// The fields an object here may have by name (for error messages).
    pub fn field_names(&self) -> Vec<&'static str> {
        self.nodes
            .iter()
            .filter_map(|n| n.get("properties").and_then(Json::as_object))
            .flat_map(|p| p.keys().map(String::as_str))
            .collect()
    }

    /// An item of a list here, when this may be a list.
    pub fn item(&self) -> Option<Shape> {
        let found: Vec<&'static Json> = self
            .nodes
            .iter()
            .filter_map(|n| match n.get("items") {
                Some(Json::Array(tuple)) => tuple.first(),
                Some(items) => Some(items),
                None if free_form(n) => Some(*n),
                None => n.get("prefixItems").and_then(|p| p.get(0)),
            })
            .collect();
        (!found.is_empty()).then(|| Shape::of(found))
    }

    /// The value here can only be text (or absent): a value given for it is taken as
    /// written, never read as a number.
    pub fn is_text(&self) -> bool {
        let types = |n: &Json| -> Vec<String> {
            match n.get("type") {
                Some(Json::String(t)) => vec![t.clone()],
                Some(Json::Array(ts)) => ts
                    .iter()
                    .filter_map(|t| t.as_str().map(str::to_string))
                    .collect(),
                _ => vec!["any".into()],
            }
        };
        let all: Vec<String> = self.nodes.iter().flat_map(|n| types(n)).collect();
        all.iter().any(|t| t == "string") && all.iter().all(|t| t == "string" || t == "null")
    }
}

/// Any value at all (a JSON body): `true`, or a schema that says nothing of its type or
/// contents, so any field or item may be named below it.
fn free_form(n: &Json) -> bool {
    n.as_bool() == Some(true)
        || n.as_object().is_some_and(|o| {
            ["type", "properties", "items", "enum", "const", "$ref"]
                .iter()
                .all(|k| !o.contains_key(*k))
        })
}

/// Follows references and spreads `anyOf`/`oneOf`/`allOf` into their alternatives.
fn flatten(node: &'static Json, out: &mut Vec<&'static Json>) {
    if let Some(r) = node.get("$ref").and_then(Json::as_str) {
        let name = r.rsplit('/').next().unwrap_or(r);
        if let Some(target) = schema().get("$defs").and_then(|d| d.get(name)) {
            flatten(target, out);
        }
    }
    let mut spread = false;
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Json::Array(alternatives)) = node.get(key) {
            spread = true;
            for a in alternatives {
                flatten(a, out);
            }
        }
    }
    if node.get("$ref").is_none() && (!spread || node.get("type").is_some()) {
        out.push(node);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_lists_and_text_are_read_from_the_schema() {
        let load = Shape::root().field("load").unwrap();
        assert!(!load.field("rate").unwrap().is_text());
        assert!(load.field("duration").unwrap().is_text());
        assert!(load.field("rat").is_none());
        let stage = load.field("stages").unwrap().item().unwrap();
        assert!(!stage.field("rate").unwrap().is_text());
        assert!(stage.field("rate").unwrap().item().is_some());
        let request = Shape::root().field("requests").unwrap().item().unwrap();
        assert!(request.field("path").unwrap().is_text());
        // Headers are a map: any name is a field, and its value is text.
        let headers = request.field("headers").unwrap();
        assert!(headers.field("X-Anything").unwrap().is_text());
        // A JSON body is any value: any field or item below it may be set.
        let json = request.field("json").unwrap();
        assert!(json.field("range_end").unwrap().field("deep").is_some());
        assert!(json.field("list").unwrap().item().is_some());
        assert!(!json.field("range_end").unwrap().is_text());
    }
}
