//! A run directory read back as `headroom report` reads it: `RunDir::load` (meta.json,
//! intervals.jsonl line by line, end.json), the summary, and the text, Markdown and JSON
//! reports (HTML too, when bit 0 of the input's last byte is set: its plots cost time); and a
//! capacity search's record (capacity.json), when the input has one, rendered the same ways.
//!
//! Input: NUL-separated files: intervals.jsonl, then meta.json (a real sweep's, with four
//! stages, when absent), then end.json (none when absent), then capacity.json (none when
//! absent).
//!
//! Invariants: no panic, no allocation past the RSS limit; a corrupt file is a `StoreError`
//! naming it; a run that loads has no more interval digests than lines, never more stages
//! than its metadata has, and renders in every format.
#![no_main]

use headroom::capacity::study::CapacityRecord;
use headroom::report::{self, Format};
use headroom::store::{RunDir, StoreError};
use headroom::summary::Summary;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

const META: &str = include_str!("stored_run_meta.json");

fn dir() -> &'static tempfile::TempDir {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("a temporary directory"))
}

fuzz_target!(|data: &[u8]| {
    let mut files = data.split(|&b| b == 0);
    let intervals = files.next().unwrap_or_default();
    let meta = files.next().unwrap_or(META.as_bytes());
    let end = files.next();
    let capacity = files.next();
    let root = dir().path();
    std::fs::write(root.join("intervals.jsonl"), intervals).expect("write intervals");
    std::fs::write(root.join("meta.json"), meta).expect("write meta");
    match end {
        Some(end) => std::fs::write(root.join("end.json"), end).expect("write end"),
        None => {
            let _ = std::fs::remove_file(root.join("end.json"));
        }
    }
    match capacity {
        Some(c) => std::fs::write(root.join("capacity.json"), c).expect("write capacity"),
        None => {
            let _ = std::fs::remove_file(root.join("capacity.json"));
        }
    }
    let html = data.last().is_some_and(|b| b & 1 == 1);
    let formats = [Format::Text, Format::Markdown, Format::Json, Format::Html];
    let formats = &formats[..if html { 4 } else { 3 }];
    match CapacityRecord::load(root) {
        Ok(Some(record)) => {
            for &format in formats {
                let _ = report::capacity::render(&record, format);
            }
        }
        Ok(None) => {}
        Err(e) => assert!(
            matches!(e, StoreError::Corrupt { .. } | StoreError::Io { .. }),
            "{e}"
        ),
    }
    let stored = match RunDir::at(root).load() {
        Ok(stored) => stored,
        Err(e) => {
            assert!(
                matches!(e, StoreError::Corrupt { .. } | StoreError::Io { .. }),
                "{e}"
            );
            let _ = e.to_string();
            return;
        }
    };
    let lines = intervals
        .split(|&b| b == b'\n')
        .filter(|l| !l.trim_ascii().is_empty())
        .count();
    assert!(stored.intervals.len() <= lines);
    assert!(stored.stages.len() <= stored.meta.stages.len());
    let summary = Summary::of(&stored);
    for &format in formats {
        let _ = report::render(&stored, &summary, format, None);
    }
});
