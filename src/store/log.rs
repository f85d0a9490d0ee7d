//! The interval log: one JSON line per interval, appended and flushed as the run goes.

use super::{io_err, StoreError};
use crate::monitor::Health;
use crate::record::IntervalRecord;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

/// One line of the log: what happened in an interval and how the generator fared.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IntervalLine {
    /// Requests, latencies and outcomes.
    pub record: IntervalRecord,
    /// The generator's own health.
    pub health: Health,
}

/// Appends interval lines; each is flushed to the OS at once, so a killed run keeps them.
#[derive(Debug)]
pub struct IntervalWriter {
    path: PathBuf,
    file: std::fs::File,
}

impl IntervalWriter {
    pub(super) fn create(path: &Path) -> Result<Self, StoreError> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(io_err(path))?;
        Ok(IntervalWriter {
            path: path.to_path_buf(),
            file,
        })
    }

    /// Appends one line.
    pub fn append(&mut self, line: &IntervalLine) -> Result<(), StoreError> {
        let mut text = serde_json::to_vec(line).expect("interval lines always serialize");
        text.push(b'\n');
        // One write per line: a kill can tear at most the last one, which the reader skips.
        self.file.write_all(&text).map_err(io_err(&self.path))
    }
}

/// Reads every whole line; a torn last line is skipped and reported.
pub(super) fn read_intervals(path: &Path) -> Result<(Vec<IntervalLine>, bool), StoreError> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), false)),
        Err(e) => return Err(io_err(path)(e)),
    };
    let mut lines = Vec::new();
    let mut torn = false;
    let reader = std::io::BufReader::new(file);
    let mut raw: Vec<String> = Vec::new();
    for line in reader.lines() {
        raw.push(line.map_err(io_err(path))?);
    }
    let last = raw.len().saturating_sub(1);
    for (i, text) in raw.iter().enumerate() {
        if text.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<IntervalLine>(text) {
            Ok(line) => lines.push(line),
            Err(_) if i == last => torn = true,
            Err(e) => {
                return Err(StoreError::Corrupt {
                    path: path.to_path_buf(),
                    reason: format!("line {}: {e}", i + 1),
                })
            }
        }
    }
    Ok((lines, torn))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_torn_last_line_is_skipped_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("intervals.jsonl");
        let mut w = IntervalWriter::create(&path).unwrap();
        for i in 0..3 {
            w.append(&IntervalLine {
                record: IntervalRecord::new(i),
                health: Health::default(),
            })
            .unwrap();
        }
        drop(w);
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"record\":{\"ind");
        std::fs::write(&path, &text).unwrap();
        let (lines, torn) = read_intervals(&path).unwrap();
        assert_eq!(lines.len(), 3);
        assert!(torn);
        std::fs::write(&path, format!("garbage\n{text}")).unwrap();
        assert!(read_intervals(&path).is_err());
    }
}
