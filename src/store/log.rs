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
    /// The stage of the load the interval began in (staged runs only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage: Option<u16>,
    /// The server, when one was watched (`--monitor-pid` or `--monitor-prometheus`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<crate::monitor::TargetHealth>,
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

/// Streams the log's lines in order, one decoded at a time, so reading a long run back
/// costs the memory of one interval, not of the whole run.
pub struct IntervalReader {
    path: PathBuf,
    lines: std::io::Lines<std::io::BufReader<std::fs::File>>,
    next: Option<String>,
    number: usize,
    /// Set once a torn last line (from a kill mid-write) was skipped.
    pub torn_tail: bool,
}

impl IntervalReader {
    pub(super) fn open(path: &Path) -> Result<Option<Self>, StoreError> {
        let file = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err(path)(e)),
        };
        let mut reader = IntervalReader {
            path: path.to_path_buf(),
            lines: std::io::BufReader::new(file).lines(),
            next: None,
            number: 0,
            torn_tail: false,
        };
        reader.next = reader.read_raw()?;
        Ok(Some(reader))
    }

    fn read_raw(&mut self) -> Result<Option<String>, StoreError> {
        loop {
            match self.lines.next() {
                None => return Ok(None),
                Some(Err(e)) => return Err(io_err(&self.path)(e)),
                Some(Ok(line)) if line.trim().is_empty() => self.number += 1,
                Some(Ok(line)) => return Ok(Some(line)),
            }
        }
    }

    /// The number of the line last returned (from 1).
    pub fn line_number(&self) -> usize {
        self.number
    }

    /// The next whole line, or `None` at the end.
    pub fn next_line(&mut self) -> Result<Option<IntervalLine>, StoreError> {
        let Some(text) = self.next.take() else {
            return Ok(None);
        };
        self.number += 1;
        // Read one ahead: only the last line may be torn.
        self.next = self.read_raw()?;
        match serde_json::from_str::<IntervalLine>(&text) {
            Ok(line) => match super::check::implausible(&line.record) {
                None => Ok(Some(line)),
                Some(reason) => Err(StoreError::Corrupt {
                    path: self.path.clone(),
                    reason: format!("line {}: {reason}", self.number),
                }),
            },
            Err(_) if self.next.is_none() => {
                self.torn_tail = true;
                Ok(None)
            }
            Err(e) => Err(StoreError::Corrupt {
                path: self.path.clone(),
                reason: format!("line {}: {e}", self.number),
            }),
        }
    }
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
                stage: None,
                server: None,
            })
            .unwrap();
        }
        drop(w);
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"record\":{\"ind");
        std::fs::write(&path, &text).unwrap();
        let mut reader = IntervalReader::open(&path).unwrap().unwrap();
        let mut n = 0;
        while reader.next_line().unwrap().is_some() {
            n += 1;
        }
        assert_eq!(n, 3);
        assert!(reader.torn_tail);
        std::fs::write(&path, format!("garbage\n{text}")).unwrap();
        let mut reader = IntervalReader::open(&path).unwrap().unwrap();
        assert!(reader.next_line().is_err());
    }
}
