//! The YAML headroom writes ([`headroom::yaml`]) read back by a YAML 1.1 reader (PyYAML, as
//! kubectl's reads) and a YAML 1.2 reader (yaml_serde, as headroom's own reads): random
//! names and values, the nasty ones of both versions among them, come back as the same
//! strings, in one document, under a comment line made of them too.

use crate::support::pyyaml::PyYaml;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::{json, Map, Value as Json};
use std::cell::RefCell;

/// Pieces a reader could misread, alone or run together: YAML 1.1's booleans, nulls,
/// sexagesimal, octal and hex numbers, dates; document markers, indicators, comments, line
/// breaks of both versions, control characters, quotes, escapes, headroom's own `${` and
/// `{{`, and the emitter's placeholder stem.
const PIECES: &[&str] = &[
    "yes",
    "No",
    "ON",
    "off",
    "y",
    "N",
    "true",
    "FALSE",
    "null",
    "Null",
    "~",
    "0",
    "007",
    "0o17",
    "0x1F",
    "0b101",
    "1_000",
    "1:20",
    "190:20:30.15",
    "1e3",
    "1.5",
    ".5",
    "+1",
    "-1",
    ".inf",
    "-.Inf",
    ".NaN",
    "2026-11-25",
    "2026-11-25T04:00:00Z",
    "2026-11-25 04:00:00 +1",
    "---",
    "...",
    "- ",
    "? ",
    ": ",
    ":",
    "#",
    " #",
    "*",
    "&",
    "!",
    "!!str ",
    "%",
    "@",
    "`",
    "'",
    "\"",
    "[",
    "]",
    "{",
    "}",
    "|",
    ">",
    ",",
    "=",
    "<<",
    "\n",
    "\r",
    "\r\n",
    "\t",
    " ",
    "\u{85}",
    "\u{2028}",
    "\u{2029}",
    "\u{feff}",
    "\u{1b}",
    "\u{0}",
    "\u{7f}",
    "\u{9f}",
    "é",
    "×",
    "😀",
    "\\",
    "\\n",
    "$",
    "${A}",
    "$${",
    "{{ x }}",
    "hqz",
    "hqzx0x",
    "a",
    "key",
    "Z",
    "10s",
];

/// A string made of pieces, or of any characters at all.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec(prop::sample::select(PIECES), 0..6).prop_map(|v| v.concat()),
        prop::collection::vec(any::<char>(), 0..8).prop_map(String::from_iter),
    ]
}

/// A document: a mapping of random names to values, a list of values, and a comment line.
fn document() -> impl Strategy<Value = (Vec<(String, String)>, Vec<String>, String)> {
    (
        prop::collection::vec((text(), text()), 0..8),
        prop::collection::vec(text(), 0..8),
        text(),
    )
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs PyYAML: run tests/run")]
fn what_headroom_writes_reads_back_as_written_in_yaml_1_1_and_1_2() {
    let reader = RefCell::new(PyYaml::start());
    let config = Config {
        cases: 400,
        failure_persistence: None,
        ..Config::default()
    };
    // A fixed seed: the same cases every run, so a failure is the code's, not the draw's.
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let outcome = runner.run(&document(), |(pairs, list, note)| {
        let mut mapping = yaml_serde::Mapping::new();
        let mut expected = Map::new();
        for (k, v) in pairs {
            if !mapping.contains_key(k.as_str()) {
                mapping.insert(k.clone().into(), v.clone().into());
                expected.insert(k, Json::String(v));
            }
        }
        let doc = yaml_serde::Value::Mapping(
            [
                ("pairs".into(), yaml_serde::Value::Mapping(mapping)),
                (
                    "list".into(),
                    list.iter()
                        .cloned()
                        .map(yaml_serde::Value::String)
                        .collect(),
                ),
            ]
            .into_iter()
            .collect(),
        );
        let expected = json!({"pairs": expected, "list": list});
        let text = headroom::yaml::comment(&[note.as_str()])
            + &headroom::yaml::to_string(&doc).expect("the emitter writes it");
        let docs = reader
            .borrow_mut()
            .load_all(&text)
            .map_err(|e| TestCaseError::fail(format!("PyYAML refused:\n{text}\n{e}")))?;
        prop_assert_eq!(docs.len(), 1, "documents in:\n{}", text);
        prop_assert_eq!(&docs[0], &expected, "YAML 1.1 reading of:\n{}", text);
        let own: Json = yaml_serde::from_str(&text)
            .map_err(|e| TestCaseError::fail(format!("yaml_serde refused:\n{text}\n{e}")))?;
        prop_assert_eq!(&own, &expected, "YAML 1.2 reading of:\n{}", text);
        Ok(())
    });
    if let Err(e) = outcome {
        panic!("{e}");
    }
}
