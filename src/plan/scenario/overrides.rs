//! Overrides: scenario values replaced from the command line (`--set load.rate=50`,
//! `--rate`, `--users`, `--duration`, `--stages`) or by a matrix variant, applied to the
//! parsed document before it is lowered, so every check of the loader still applies.
//!
//! A path names fields by key (`load.rate`), list items by index (`requests[0]`) or, for
//! lists of named things, by name (`requests.read` or `requests[read]`). Paths are checked
//! against the scenario's schema: a field the file format does not have is refused.

use super::shape::Shape;
use yaml_serde::{Mapping, Value};

/// An override that cannot be applied: the path, and why. Never its value, which may be a
/// secret (`--set target.headers.Authorization=…`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}{reason}", shown_path(path))]
pub struct OverrideError {
    /// The path as written (empty when the argument has none).
    pub path: String,
    /// What is wrong with it.
    pub reason: String,
}

/// The path as an error shows it: up to a `:` or a control character, where a header's value
/// typed in the wrong place (`target.headers.Authorization: Bearer …=`) would start.
fn shown_path(path: &str) -> String {
    if path.is_empty() {
        return String::new();
    }
    match path.find(|c: char| c == ':' || c.is_control()) {
        Some(cut) => format!("{}…: ", &path[..cut]),
        None => format!("{path}: "),
    }
}

/// The error for an argument without `=`: nothing of it is shown, as nothing tells where
/// a path would end and a value start.
pub(crate) fn no_equals(form: &str) -> OverrideError {
    OverrideError {
        path: String::new(),
        reason: format!(
            "write {form} (this argument has no '='; it is not shown, as it may hold a secret)"
        ),
    }
}

/// One step of a path.
#[derive(Debug, Clone, PartialEq)]
enum Segment {
    /// A field of an object, or the named item of a list.
    Key(String),
    /// An item of a list, from 0.
    Index(usize),
}

/// A path to a value in a scenario, e.g. `requests.read.weight` or `load.stages[1].rate`.
#[derive(Debug, Clone, PartialEq)]
pub struct ValuePath {
    text: String,
    segments: Vec<Segment>,
}

impl std::fmt::Display for ValuePath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::str::FromStr for ValuePath {
    type Err = OverrideError;

    fn from_str(text: &str) -> Result<ValuePath, OverrideError> {
        let bad = |reason: &str| OverrideError {
            path: text.to_string(),
            reason: reason.to_string(),
        };
        let mut segments = Vec::new();
        let mut rest = text.trim();
        if rest.is_empty() {
            return Err(bad("give a path such as load.rate or requests[0].weight"));
        }
        while !rest.is_empty() {
            if let Some(inner) = rest.strip_prefix('[') {
                let (item, after) = inner
                    .split_once(']')
                    .ok_or_else(|| bad("a [ is not closed"))?;
                let item = item.trim();
                segments.push(match item.parse::<usize>() {
                    Ok(i) => Segment::Index(i),
                    Err(_) if !item.is_empty() => Segment::Key(item.to_string()),
                    Err(_) => return Err(bad("[] needs an index or a name")),
                });
                rest = after.strip_prefix('.').unwrap_or(after);
                if after.starts_with('.') && rest.is_empty() {
                    return Err(bad("the path ends with a dot"));
                }
                continue;
            }
            let end = rest.find(['.', '[']).unwrap_or(rest.len());
            let key = &rest[..end];
            if key.is_empty() {
                return Err(bad("empty field name"));
            }
            segments.push(match key.parse::<usize>() {
                Ok(i) if !segments.is_empty() => Segment::Index(i),
                _ => Segment::Key(key.to_string()),
            });
            rest = &rest[end..];
            if let Some(after) = rest.strip_prefix('.') {
                if after.is_empty() {
                    return Err(bad("the path ends with a dot"));
                }
                rest = after;
            }
        }
        if segments.first() == Some(&Segment::Key("matrix".into())) {
            return Err(bad(
                "the matrix is not a scenario value; give its variants with --matrix",
            ));
        }
        Ok(ValuePath {
            text: text.trim().to_string(),
            segments,
        })
    }
}

impl ValuePath {
    /// Checks the path against the schema (for a variant's path, before anything runs).
    pub fn check(&self) -> Result<Shape, OverrideError> {
        let mut shape = Shape::root();
        let mut at = String::new();
        let mut after_headers = false;
        for s in &self.segments {
            if let (true, Segment::Key(name)) = (after_headers, s) {
                // Shown only up to `headers`: what stands here may be a header's value.
                if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
                    return Err(OverrideError {
                        path: at,
                        reason: "a header's name is letters, digits and !#$%&'*+-.^_`|~ only: write headers.NAME=VALUE".into(),
                    });
                }
            }
            after_headers = matches!(s, Segment::Key(k) if k == "headers");
            shape = self.step(&shape, s, &at)?;
            push(&mut at, s);
        }
        Ok(shape)
    }

    fn step(&self, shape: &Shape, s: &Segment, at: &str) -> Result<Shape, OverrideError> {
        let here = if at.is_empty() { "the scenario" } else { at };
        match s {
            Segment::Key(k) => shape
                .field(k)
                .or_else(|| shape.item())
                .ok_or_else(|| self.error(no_field(shape, here, k))),
            Segment::Index(_) => shape
                .item()
                .ok_or_else(|| self.error(format!("{here} is not a list"))),
        }
    }

    fn error(&self, reason: String) -> OverrideError {
        OverrideError {
            path: self.text.clone(),
            reason,
        }
    }
}

fn push(at: &mut String, s: &Segment) {
    match s {
        Segment::Key(k) if at.is_empty() => at.push_str(k),
        Segment::Key(k) => {
            at.push('.');
            at.push_str(k);
        }
        Segment::Index(i) => at.push_str(&format!("[{i}]")),
    }
}

fn no_field(shape: &Shape, here: &str, key: &str) -> String {
    let names = shape.field_names();
    if names.is_empty() {
        format!("{here} has no field {key:?}")
    } else {
        format!("{here} has no field {key:?} (it has {})", names.join(", "))
    }
}

/// What an override puts at its path.
#[derive(Debug, Clone, PartialEq)]
pub enum Given {
    /// Text from the command line: kept as text where the schema wants text, read as a
    /// YAML value (a number, a list `[0, 50]`, `null`) elsewhere.
    Text(String),
    /// A value from a YAML file (a matrix).
    Yaml(Value),
    /// Nothing: the field is removed (as `--rate` removes `users` and `stages`).
    Remove,
}

/// One override: a path and what to put there.
#[derive(Debug, Clone, PartialEq)]
pub struct Override {
    /// Where.
    pub path: ValuePath,
    /// What.
    pub value: Given,
}

impl std::str::FromStr for Override {
    type Err = OverrideError;

    /// Reads `path=value`, as `--set` takes it.
    fn from_str(text: &str) -> Result<Override, OverrideError> {
        let (path, value) = text
            .split_once('=')
            .ok_or_else(|| no_equals("path=value, e.g. load.rate=50 or requests.read.weight=90"))?;
        let path: ValuePath = path.parse()?;
        path.check()?;
        Ok(Override {
            path,
            value: Given::Text(value.to_string()),
        })
    }
}

impl Override {
    /// Sets `path` (checked against the schema) to text from the command line.
    pub fn text(path: &str, value: impl Into<String>) -> Override {
        Override {
            path: path.parse().expect("a built-in path"),
            value: Given::Text(value.into()),
        }
    }

    fn remove(path: &str) -> Override {
        Override {
            path: path.parse().expect("a built-in path"),
            value: Given::Remove,
        }
    }

    /// The overrides of the load flags: a rate or users replaces the scenario's load model
    /// (stages included), a duration its length, stages (YAML, as in the file) its profile.
    pub fn load(
        rate: Option<f64>,
        users: Option<u32>,
        duration: Option<&str>,
        stages: Option<&str>,
    ) -> Vec<Override> {
        let mut out = Vec::new();
        if rate.is_some() || users.is_some() || stages.is_some() {
            out.extend(["load.rate", "load.users", "load.stages"].map(Override::remove));
            if stages.is_some() && duration.is_none() {
                out.push(Override::remove("load.duration"));
            }
        }
        if let Some(r) = rate {
            out.push(Override::text("load.rate", r.to_string()));
        }
        if let Some(u) = users {
            out.push(Override::text("load.users", u.to_string()));
        }
        if let Some(s) = stages {
            out.push(Override::text("load.stages", s));
        }
        // Alone on a staged scenario, a duration is refused by the loader (each stage has
        // its own), which says so at the stages.
        if let Some(d) = duration {
            out.push(Override::text("load.duration", d));
        }
        out
    }

    /// `message` with this override's value replaced by the path it was given for: an error
    /// raised after the override was applied (the loader's `invalid type: string "…"`) must
    /// not show a value that may be a secret.
    pub fn scrub(&self, message: &str) -> String {
        let value = match &self.value {
            Given::Text(t) => t.trim().to_string(),
            Given::Yaml(Value::String(s)) => s.trim().to_string(),
            _ => return message.to_string(),
        };
        // One character cannot be told from the text around it, and is no secret.
        if value.chars().count() < 2 {
            return message.to_string();
        }
        let shown = format!("<the value given for {}>", self.path);
        message
            .replace(&format!("{value:?}"), &shown)
            .replace(&value, &shown)
    }

    /// Applies the override to the document `doc`.
    pub fn apply(&self, doc: &mut Value) -> Result<(), OverrideError> {
        let path = &self.path;
        let mut shape = Shape::root();
        let mut node = doc;
        let mut at = String::new();
        let last = path.segments.len() - 1;
        for (i, s) in path.segments.iter().enumerate() {
            shape = path.step(&shape, s, &at)?;
            let here = if at.is_empty() {
                "the scenario".to_string()
            } else {
                at.clone()
            };
            node = match (s, node) {
                (Segment::Key(k), Value::Sequence(items)) => {
                    let names: Vec<String> = items
                        .iter()
                        .filter_map(|x| x.get("name").and_then(Value::as_str).map(str::to_string))
                        .collect();
                    let found = items
                        .iter_mut()
                        .find(|x| x.get("name").and_then(Value::as_str) == Some(k.as_str()));
                    match found {
                        Some(x) => x,
                        None => {
                            return Err(path.error(format!(
                                "{here} has no item named {k:?} (it has {})",
                                if names.is_empty() {
                                    "none with a name".to_string()
                                } else {
                                    names.join(", ")
                                }
                            )))
                        }
                    }
                }
                (Segment::Key(k), node) => {
                    if matches!(self.value, Given::Remove) && i == last {
                        if let Value::Mapping(m) = node {
                            m.shift_remove(k.as_str());
                        }
                        return Ok(());
                    }
                    if node.is_null() {
                        *node = Value::Mapping(Mapping::new());
                    }
                    let Value::Mapping(m) = node else {
                        return Err(path.error(format!("{here} is not a mapping in the scenario")));
                    };
                    if matches!(self.value, Given::Remove) && !m.contains_key(k.as_str()) {
                        return Ok(());
                    }
                    m.entry(Value::String(k.clone())).or_insert(Value::Null)
                }
                (Segment::Index(n), Value::Sequence(items)) => {
                    let len = items.len();
                    match items.get_mut(*n) {
                        Some(x) => x,
                        None => {
                            return Err(path.error(format!(
                                "{here} has {len} item(s), so no [{n}] (items count from 0)"
                            )))
                        }
                    }
                }
                (Segment::Index(_), node) => {
                    if matches!(self.value, Given::Remove) {
                        return Ok(());
                    }
                    return Err(path.error(if node.is_null() {
                        format!("the scenario has no {here} (or another override removed it)")
                    } else {
                        format!("{here} is not a list in the scenario")
                    }));
                }
            };
            push(&mut at, s);
        }
        *node = match &self.value {
            Given::Text(t) if shape.is_text() => Value::String(t.clone()),
            // The value is not shown: it may be a secret (a JSON body with a password).
            Given::Text(t) => yaml_serde::from_str(t).map_err(|e| {
                path.error(format!(
                    "the value given ({} characters, not shown) is not a YAML value: {}",
                    t.chars().count(),
                    self.scrub(&first_line(&e))
                ))
            })?,
            Given::Yaml(v) if shape.is_text() => as_text(v),
            Given::Yaml(v) => v.clone(),
            Given::Remove => Value::Null,
        };
        Ok(())
    }
}

fn first_line(e: &yaml_serde::Error) -> String {
    e.to_string().lines().next().unwrap_or_default().to_string()
}

/// A scalar where text is wanted: `5` read as "5".
fn as_text(v: &Value) -> Value {
    match v {
        Value::Number(n) => Value::String(n.to_string()),
        Value::Bool(b) => Value::String(b.to_string()),
        other => other.clone(),
    }
}

/// A value as shown in a table cell: text as written, lists in flow style.
pub fn display(v: &Value) -> String {
    match v {
        Value::Null => "-".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        Value::Sequence(items) => {
            let parts: Vec<String> = items.iter().map(display).collect();
            format!("[{}]", parts.join(", "))
        }
        Value::Mapping(m) => {
            let parts: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}: {}", display(k), display(v)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        Value::Tagged(t) => display(&t.value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> Value {
        yaml_serde::from_str(
            "target: {url: 'http://127.0.0.1:1'}\nrequests:\n  - {name: read, path: /r, weight: 95}\n  - {name: write, path: /w, weight: 5}\nload: {rate: 10, duration: 5s}\n",
        )
        .unwrap()
    }

    fn set(doc: &mut Value, text: &str) -> Result<(), OverrideError> {
        text.parse::<Override>()?.apply(doc)
    }

    #[test]
    fn paths_name_fields_indexes_and_named_items() {
        let mut d = doc();
        set(&mut d, "load.rate=50").unwrap();
        set(&mut d, "requests.read.weight=90").unwrap();
        set(&mut d, "requests[1].weight=10").unwrap();
        set(&mut d, "requests[write].path=/w2").unwrap();
        set(&mut d, "target.headers.X-Id=007").unwrap();
        assert_eq!(d["load"]["rate"], Value::from(50));
        assert_eq!(d["requests"][0]["weight"], Value::from(90));
        assert_eq!(d["requests"][1]["weight"], Value::from(10));
        assert_eq!(d["requests"][1]["path"], Value::from("/w2"));
        // Text fields keep what was written: a header of digits stays text.
        assert_eq!(d["target"]["headers"]["X-Id"], Value::from("007"));
    }

    #[test]
    fn a_path_the_schema_lacks_is_refused_with_its_name() {
        let e = "load.rat=5".parse::<Override>().unwrap_err();
        assert_eq!(e.path, "load.rat");
        assert!(e.reason.contains("load has no field \"rat\""), "{e}");
        assert!(e.reason.contains("rate"), "{e}");
        let mut d = doc();
        let e = set(&mut d, "requests.delete.weight=1").unwrap_err();
        assert!(
            e.reason
                .contains("no item named \"delete\" (it has read, write)"),
            "{e}"
        );
        let e = set(&mut d, "requests[7].weight=1").unwrap_err();
        assert!(e.reason.contains("2 item(s)"), "{e}");
        assert!("rate".parse::<Override>().is_err());
        assert!("matrix.x=1".parse::<Override>().is_err());
    }

    #[test]
    fn load_flags_replace_the_model() {
        let mut d = doc();
        for o in Override::load(None, Some(4), Some("2s"), None) {
            o.apply(&mut d).unwrap();
        }
        assert_eq!(d["load"]["users"], Value::from(4));
        assert!(d["load"].get("rate").is_none());
        assert_eq!(d["load"]["duration"], Value::from("2s"));
        for o in Override::load(None, None, None, Some("[{rate: [0, 5], duration: 1s}]")) {
            o.apply(&mut d).unwrap();
        }
        assert!(d["load"].get("users").is_none());
        assert!(d["load"].get("duration").is_none());
        assert_eq!(d["load"]["stages"][0]["rate"][1], Value::from(5));
    }
}
