//! The document as JSON: the subject's data as it always was (the summary, the capacity
//! record), with the answer beside it, its numbers typed (value and unit), for machines.

use crate::report::document::{Answer, Document};
use serde_json::{json, Map, Value};

/// The document as pretty JSON.
pub fn write(doc: &Document) -> String {
    let mut data = doc.data.clone();
    if let Value::Object(map) = &mut data {
        map.insert("answer".into(), answer_of(doc));
    }
    serde_json::to_string_pretty(&data).unwrap_or_else(|_| "{}".into())
}

/// The document's answer as the JSON report gives it: typed values, and the safety stop
/// where a machine looks first. The live page's frames carry this same value.
pub fn answer_of(doc: &Document) -> Value {
    let mut answer = answer(&doc.answer);
    if let (Some(aborted), Value::Object(a)) = (doc.data.get("aborted").cloned(), &mut answer) {
        a.insert("aborted".into(), aborted);
    }
    answer
}

/// The answer with typed values.
pub fn answer(a: &Answer) -> Value {
    let mut out = Map::new();
    if let Some(v) = &a.verdict {
        out.insert(
            "verdict".into(),
            json!({"sentence": v.sentence, "evidence": v.evidence}),
        );
    }
    out.insert(
        "objectives".into(),
        a.objectives
            .iter()
            .map(|o| json!({"objective": o.text, "measured": o.measured.to_json(), "met": o.met}))
            .collect(),
    );
    out.insert(
        "numbers".into(),
        a.numbers
            .iter()
            .map(|f| json!({"label": f.label, "value": f.value.to_json()}))
            .collect(),
    );
    if !a.notes.is_empty() {
        out.insert("notes".into(), json!(a.notes));
    }
    Value::Object(out)
}
