//! The options stored with a run as a two-column table, nested fields named by their path
//! (`connection.keep_alive`, `requests.1.method`).

use crate::report::document::{Cell, Table};
use serde_json::Value;

/// `meta` (the run's stored options, secrets already redacted) as rows of option and value;
/// a merged run's shards are left out (they are the Shards table, histograms not options).
pub fn table(mut meta: Value) -> Table {
    if let Some(merged) = meta.get_mut("merged").and_then(|m| m.as_object_mut()) {
        merged.remove("shards");
    }
    let mut rows = Vec::new();
    flatten("", &meta, &mut rows);
    // One name column: long values (a command line, headers) wrap as words.
    let mut t = Table::new(&["option", "value"], 1);
    t.rows = rows
        .into_iter()
        .map(|(k, v)| vec![Cell::Text(k), Cell::Text(v)])
        .collect();
    t
}

fn flatten(prefix: &str, v: &Value, rows: &mut Vec<(String, String)>) {
    let key = |k: &str| {
        if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        }
    };
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                flatten(&key(k), v, rows);
            }
        }
        Value::Array(items) if items.iter().all(|i| !i.is_object() && !i.is_array()) => {
            let text: Vec<String> = items.iter().map(scalar).collect();
            rows.push((
                prefix.to_string(),
                text.join(if prefix == "command" { " " } else { ", " }),
            ));
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                flatten(&key(&i.to_string()), item, rows);
            }
        }
        other => rows.push((prefix.to_string(), scalar(other))),
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_options_are_named_by_their_path_and_shards_left_out() {
        let t = table(json!({
            "command": ["headroom", "attack", "http://h/"],
            "connection": {"keep_alive": true},
            "requests": [{"method": "GET"}, {"method": "POST"}],
            "headers": ["a", "b"],
            "body": null,
            "merged": {"shards": [{"x": 1}], "count": 2},
        }));
        let rows: Vec<(String, String)> = t
            .rows
            .iter()
            .map(|r| (r[0].to_text(), r[1].to_text()))
            .collect();
        let find = |k: &str| rows.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(find("command"), Some("headroom attack http://h/"));
        assert_eq!(find("connection.keep_alive"), Some("true"));
        assert_eq!(find("requests.1.method"), Some("POST"));
        assert_eq!(find("headers"), Some("a, b"));
        assert_eq!(find("body"), Some("-"));
        assert_eq!(find("merged.count"), Some("2"));
        assert!(rows.iter().all(|(k, _)| !k.starts_with("merged.shards")));
    }
}
