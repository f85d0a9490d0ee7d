//! Example values for an OpenAPI document's parameters and bodies: taken from the document
//! or built from a schema, within a budget of bytes, since a schema that holds itself several
//! times over grows with the power of the depth it is followed to.

use super::{resolve, MAX_DEPTH};
use serde_json::{json, Map, Value};

/// The most one request's example (its body, or a parameter's value) may weigh, in about the
/// bytes it takes written out. A schema that holds itself several times over (a tree node with
/// three kinds of children) grows with the power of the depth it is followed to: fan-out 3 to
/// depth 12 is half a million values, so building stops here.
pub(super) const MAX_EXAMPLE: usize = 1 << 20;

/// The most all of a document's examples may weigh together.
pub(super) const MAX_EXAMPLES: usize = 16 << 20;

/// A parameter's example: `example`, the first of `examples`, else its schema's.
pub(super) fn parameter_example(doc: &Value, p: &Value, budget: &mut Budget) -> Option<Value> {
    if let Some(e) = p.get("example") {
        return budget.take(e);
    }
    if let Some(e) = first_example(doc, &p["examples"]) {
        return budget.take(e);
    }
    let schema = resolve(doc, &p["schema"], 0);
    if schema.is_null() {
        return None;
    }
    if let Some(e) = schema
        .get("example")
        .or_else(|| schema.get("default"))
        .or_else(|| schema["enum"].get(0))
    {
        return budget.take(e);
    }
    p["required"]
        .as_bool()
        .filter(|r| *r)
        .map(|_| from_schema(doc, schema, 0, budget))
}

/// The value of the first entry of an `examples` map (resolving `$ref`s to components).
pub(super) fn first_example<'a>(doc: &'a Value, examples: &'a Value) -> Option<&'a Value> {
    let (_, first) = examples.as_object()?.iter().next()?;
    resolve(doc, first, 0).get("value")
}

/// What may still be spent on examples, and whether one was cut for want of it.
#[derive(Debug)]
pub(super) struct Budget {
    pub(super) left: usize,
    /// What it started with.
    given: usize,
    pub(super) cut: bool,
}

impl Budget {
    pub(super) fn new(left: usize) -> Budget {
        Budget {
            left,
            given: left,
            cut: false,
        }
    }

    /// A budget of at most `most` out of this one, to give back with [`Budget::spent`].
    pub(super) fn part(&self, most: usize) -> Budget {
        Budget::new(most.min(self.left))
    }

    /// Takes off what `part` spent.
    pub(super) fn spent(&mut self, part: &Budget) {
        self.left -= (part.given - part.left).min(self.left);
    }

    /// Spends `weight`, or, when it is more than is left, nothing more from now on.
    pub(super) fn spend(&mut self, weight: usize) -> bool {
        if weight > self.left {
            self.left = 0;
            self.cut = true;
            return false;
        }
        self.left -= weight;
        true
    }

    /// A copy of `value` (to go at `depth`) when what is left pays for it.
    pub(super) fn take_at(&mut self, value: &Value, depth: usize) -> Option<Value> {
        match weight(value, depth, self.left) {
            Some(w) if self.spend(w) => Some(value.clone()),
            _ => {
                self.spend(usize::MAX);
                None
            }
        }
    }

    /// A copy of `value`, as a whole example, when what is left pays for it.
    pub(super) fn take(&mut self, value: &Value) -> Option<Value> {
        self.take_at(value, 0)
    }
}

/// What a value at `depth` takes written out as pretty JSON, besides its text: at most two
/// lines' indentation (a collection's opening and closing) and punctuation.
pub(super) fn overhead(depth: usize) -> usize {
    4 * depth + 8
}

/// About the bytes `value` (at `depth`) takes written out as pretty JSON, counted no further
/// than `limit` (`None` past it).
pub(super) fn weight(value: &Value, depth: usize, limit: usize) -> Option<usize> {
    let mut total = 0usize;
    let mut stack = vec![(value, depth)];
    while let Some((v, depth)) = stack.pop() {
        total += overhead(depth)
            + match v {
                Value::String(s) => s.len(),
                Value::Array(items) => {
                    stack.extend(items.iter().map(|i| (i, depth + 1)));
                    0
                }
                Value::Object(map) => {
                    stack.extend(map.values().map(|i| (i, depth + 1)));
                    map.keys().map(String::len).sum()
                }
                _ => 8,
            };
        if total > limit {
            return None;
        }
    }
    Some(total)
}

/// A value that fits `schema`: its example, default or first enum value, else one built
/// from its type (objects with every property, arrays of one item); `null` where `budget`
/// runs out.
pub(super) fn from_schema(doc: &Value, schema: &Value, depth: usize, budget: &mut Budget) -> Value {
    let schema = resolve(doc, schema, 0);
    // What this value itself takes (a null past the depth too: a tree's leaves are most of
    // it); a string's text is short (`example`, a date).
    if !budget.spend(overhead(depth) + 16) || depth > MAX_DEPTH {
        return Value::Null;
    }
    for key in ["example", "default", "const"] {
        if let Some(v) = schema.get(key) {
            return budget.take_at(v, depth).unwrap_or(Value::Null);
        }
    }
    if let Some(v) = schema["examples"].get(0).or_else(|| schema["enum"].get(0)) {
        return budget.take_at(v, depth).unwrap_or(Value::Null);
    }
    if let Some(all) = schema["allOf"].as_array() {
        let mut merged = Map::new();
        for part in all {
            if let Value::Object(m) = from_schema(doc, part, depth + 1, budget) {
                merged.extend(m);
            }
        }
        return Value::Object(merged);
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(first) = schema[key].get(0) {
            return from_schema(doc, first, depth + 1, budget);
        }
    }
    let kind = match &schema["type"] {
        Value::String(t) => t.as_str(),
        // OpenAPI 3.1 allows a list of types: the first that is not null.
        Value::Array(types) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if schema.get("properties").is_some() => "object",
        _ => "string",
    };
    match kind {
        "object" => {
            let mut out = Map::new();
            for (name, prop) in schema["properties"].as_object().into_iter().flatten() {
                if !budget.spend(name.len()) {
                    break;
                }
                out.insert(name.clone(), from_schema(doc, prop, depth + 1, budget));
            }
            Value::Object(out)
        }
        "array" => json!([from_schema(doc, &schema["items"], depth + 1, budget)]),
        "integer" => json!(schema["minimum"].as_i64().unwrap_or(1)),
        "number" => json!(schema["minimum"].as_f64().unwrap_or(1.0)),
        "boolean" => json!(true),
        "null" => Value::Null,
        _ => Value::String(match schema["format"].as_str() {
            Some("byte") => "ZXhhbXBsZQ==".into(),
            Some("date-time") => "2024-01-01T00:00:00Z".into(),
            Some("date") => "2024-01-01".into(),
            Some("uuid") => "00000000-0000-4000-8000-000000000000".into(),
            Some("email") => "user@example.com".into(),
            Some("uri") => "https://example.com/".into(),
            _ => "example".into(),
        }),
    }
}
