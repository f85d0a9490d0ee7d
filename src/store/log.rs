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
    /// Each generator's own health, in a run merged from shards (`health` is then their
    /// sum): which of them fell behind is read here, not from the sum.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shards: Vec<ShardHealth>,
}

/// One shard's generator health in one second of a merged run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ShardHealth {
    /// The shard's index.
    pub shard: u32,
    /// Its generator's health that second.
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

/// The longest line read back: an interval of a run of 65,535 requests takes about 16 MiB.
pub const MAX_LINE: usize = 64 * 1024 * 1024;

/// What a run's lines may hold: as many requests and stages as its metadata names. A line
/// is checked against these before its histograms are decoded, since each may take hundreds
/// of kilobytes once decoded: a damaged line is never trusted to size memory.
#[derive(Debug, Clone, Copy)]
pub struct LineBounds {
    /// Requests of the run.
    pub requests: usize,
    /// Stages of the run.
    pub stages: usize,
    /// Flows of the run.
    pub flows: usize,
}

/// The parts of a line that size its decoding, read without decoding anything.
#[derive(Deserialize)]
struct Skeleton {
    record: SkeletonRecord,
}

#[derive(Deserialize)]
struct SkeletonRecord {
    #[serde(default)]
    requests: Vec<serde::de::IgnoredAny>,
    #[serde(default)]
    steps: std::collections::BTreeMap<u16, SkeletonStep>,
    #[serde(default)]
    flows: Vec<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
struct SkeletonStep {
    #[serde(default)]
    requests: Vec<serde::de::IgnoredAny>,
    #[serde(default)]
    flows: Vec<serde::de::IgnoredAny>,
}

/// Streams the log's lines in order, one decoded at a time, so reading a long run back
/// costs the memory of one interval, not of the whole run.
pub struct IntervalReader {
    path: PathBuf,
    source: std::io::BufReader<std::fs::File>,
    bounds: LineBounds,
    next: Option<String>,
    number: usize,
    /// Set once a torn last line (from a kill mid-write) was skipped.
    pub torn_tail: bool,
    /// Following a log still being written (see [`IntervalReader::follow`]): the bytes of
    /// its last line read so far, not yet ended by a newline.
    following: Option<Vec<u8>>,
    /// Bytes read from the log so far (following only): where a copy of it that replaced
    /// the file is read on from.
    consumed: u64,
}

impl IntervalReader {
    pub(super) fn open(path: &Path, bounds: LineBounds) -> Result<Option<Self>, StoreError> {
        let file = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err(path)(e)),
        };
        let mut reader = IntervalReader {
            path: path.to_path_buf(),
            source: std::io::BufReader::new(file),
            bounds,
            next: None,
            number: 0,
            torn_tail: false,
            following: None,
            consumed: 0,
        };
        reader.next = reader.read_raw()?;
        Ok(Some(reader))
    }

    /// Opens the log of a run still being written, to follow it as it grows: `next_line`
    /// returns only lines ended by a newline (the writer writes each whole, so a line
    /// without one is still being written), `None` when no whole line is there yet, and
    /// reads on from there when called again. A line that is whole and does not parse is
    /// damage, never torn; [`Self::ended`] says whether the run's last line was torn.
    /// `None` when the log is not there yet.
    pub fn follow(path: &Path, bounds: LineBounds) -> Result<Option<Self>, StoreError> {
        let file = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err(path)(e)),
        };
        Ok(Some(IntervalReader {
            path: path.to_path_buf(),
            source: std::io::BufReader::new(file),
            bounds,
            next: None,
            number: 0,
            torn_tail: false,
            following: Some(Vec::new()),
            consumed: 0,
        }))
    }

    /// Bytes of a followed log read so far.
    pub fn consumed(&self) -> u64 {
        self.consumed
    }

    /// For a followed log: when the file at its path is no longer the one being read (a
    /// copy brought in again, e.g. by `kubectl cp`, is a new file of the same lines and
    /// more), reads on in the new file from the same byte. A copy rewritten in place needs
    /// nothing: its bytes past those read are read when they are there.
    pub fn reopen_if_replaced(&mut self) -> Result<(), StoreError> {
        use std::io::Seek;
        use std::os::unix::fs::MetadataExt;
        let Ok(now) = std::fs::metadata(&self.path) else {
            return Ok(());
        };
        let open = self
            .source
            .get_ref()
            .metadata()
            .map_err(io_err(&self.path))?;
        if (now.dev(), now.ino()) == (open.dev(), open.ino()) {
            return Ok(());
        }
        let mut file = std::fs::File::open(&self.path).map_err(io_err(&self.path))?;
        file.seek(std::io::SeekFrom::Start(self.consumed))
            .map_err(io_err(&self.path))?;
        self.source = std::io::BufReader::new(file);
        Ok(())
    }

    /// For a followed log whose run has ended (its `end.json` is written, and every line
    /// since read): an unended last line is then torn, as [`Self::open`] would have found.
    pub fn ended(&mut self) {
        if self.following.as_ref().is_some_and(|rest| !rest.is_empty()) {
            self.torn_tail = true;
        }
    }

    /// The next line ended by a newline, read no further than [`MAX_LINE`] in all.
    fn read_whole(&mut self) -> Result<Option<String>, StoreError> {
        use std::io::Read;
        let mut bytes = self.following.take().unwrap_or_default();
        loop {
            let room = (MAX_LINE as u64 + 1).saturating_sub(bytes.len() as u64);
            let read = match (&mut self.source).take(room).read_until(b'\n', &mut bytes) {
                Ok(n) => {
                    self.consumed += n as u64;
                    n
                }
                Err(e) => {
                    self.following = Some(bytes);
                    return Err(io_err(&self.path)(e));
                }
            };
            let line = self.number + 1;
            if bytes.len() > MAX_LINE {
                self.following = Some(Vec::new());
                return Err(self.corrupt(line, too_long()));
            }
            if read == 0 || bytes.last() != Some(&b'\n') {
                self.following = Some(bytes);
                return Ok(None);
            }
            if bytes.iter().all(u8::is_ascii_whitespace) {
                self.number += 1;
                bytes.clear();
                continue;
            }
            self.following = Some(Vec::new());
            self.number += 1;
            return String::from_utf8(bytes)
                .map(Some)
                .map_err(|_| self.corrupt(line, "not UTF-8"));
        }
    }

    fn corrupt(&self, line: usize, reason: impl std::fmt::Display) -> StoreError {
        StoreError::Corrupt {
            path: self.path.clone(),
            reason: format!("line {line}: {reason}"),
        }
    }

    /// The next non-blank line, read no further than [`MAX_LINE`].
    fn read_raw(&mut self) -> Result<Option<String>, StoreError> {
        use std::io::Read;
        loop {
            let mut bytes = Vec::new();
            let read = (&mut self.source)
                .take(MAX_LINE as u64 + 1)
                .read_until(b'\n', &mut bytes)
                .map_err(io_err(&self.path))?;
            if read == 0 {
                return Ok(None);
            }
            let line = self.number + usize::from(self.next.is_some()) + 1;
            if bytes.len() > MAX_LINE {
                return Err(self.corrupt(line, too_long()));
            }
            let text = String::from_utf8(bytes).map_err(|_| self.corrupt(line, "not UTF-8"))?;
            if text.trim().is_empty() {
                self.number += 1;
                continue;
            }
            return Ok(Some(text));
        }
    }

    /// The number of the line last returned (from 1).
    pub fn line_number(&self) -> usize {
        self.number
    }

    /// The next whole line, or `None` at the end.
    pub fn next_line(&mut self) -> Result<Option<IntervalLine>, StoreError> {
        if self.following.is_some() {
            let Some(text) = self.read_whole()? else {
                return Ok(None);
            };
            return match self.decode(&text)? {
                Ok(line) => Ok(Some(line)),
                Err(e) => Err(self.corrupt(self.number, json_reason(&e))),
            };
        }
        let Some(text) = self.next.take() else {
            return Ok(None);
        };
        self.number += 1;
        // Read one ahead: only the last line may be torn.
        self.next = self.read_raw()?;
        match self.decode(&text)? {
            Ok(line) => Ok(Some(line)),
            Err(_) if self.next.is_none() => {
                self.torn_tail = true;
                Ok(None)
            }
            Err(e) => Err(self.corrupt(self.number, json_reason(&e))),
        }
    }

    /// The line numbered `self.number`, checked against the bounds before it is decoded;
    /// text that is not a line at all is the inner error (torn, when it is the last).
    fn decode(&self, text: &str) -> Result<Result<IntervalLine, serde_json::Error>, StoreError> {
        let skeleton: Skeleton = match serde_json::from_str(text) {
            Ok(s) => s,
            Err(e) => return Ok(Err(e)),
        };
        let LineBounds {
            requests,
            stages,
            flows,
        } = self.bounds;
        let r = &skeleton.record;
        let most_flows = r
            .steps
            .values()
            .map(|s| s.flows.len())
            .chain([r.flows.len()])
            .max()
            .unwrap_or(0);
        if most_flows > flows {
            return Err(self.corrupt(
                self.number,
                format!("{most_flows} flow(s), but the run has {flows}"),
            ));
        }
        if r.requests.len() > requests {
            let n = r.requests.len();
            return Err(self.corrupt(
                self.number,
                format!("{n} requests, but the run has {requests}"),
            ));
        }
        if let Some(n) = r
            .steps
            .values()
            .map(|s| s.requests.len())
            .find(|&n| n > requests)
        {
            return Err(self.corrupt(
                self.number,
                format!("a stage with {n} requests, but the run has {requests}"),
            ));
        }
        if let Some(&stage) = r.steps.keys().find(|&&s| usize::from(s) >= stages) {
            return Err(self.corrupt(
                self.number,
                format!("stage {stage}, but the run has {stages} stage(s)"),
            ));
        }
        match serde_json::from_str::<IntervalLine>(text) {
            Ok(line) => match super::check::implausible(&line.record) {
                None => Ok(Ok(line)),
                Some(reason) => Err(self.corrupt(self.number, reason)),
            },
            Err(e) => Ok(Err(e)),
        }
    }
}

/// What is wrong with a line's JSON, placed in the line the user is told of: the decoder's
/// own "at line 2 column 0" counts lines of the text it was given (the line and its newline),
/// not of the file.
fn json_reason(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let bare = text
        .strip_suffix(&format!(" at line {} column {}", e.line(), e.column()))
        .unwrap_or(&text);
    match e.line() {
        1 => format!("{bare} (at character {} of the line)", e.column()),
        _ => format!("{bare} (at the end of the line)"),
    }
}

fn too_long() -> String {
    format!(
        "longer than {} MiB, more than any interval takes",
        MAX_LINE >> 20
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOUNDS: LineBounds = LineBounds {
        requests: 1,
        stages: 0,
        flows: 0,
    };

    #[test]
    fn a_damaged_line_is_placed_in_the_file_not_in_the_decoders_text() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("intervals.jsonl");
        let line = IntervalLine {
            record: IntervalRecord::new(0),
            health: Health::default(),
            stage: None,
            server: None,
            shards: Vec::new(),
        };
        let good = serde_json::to_string(&line).unwrap();
        // Line 2 cut inside a string, line 3 a bad character: neither is the last line (a
        // torn last line is skipped), so both are damage.
        for (bad, says) in [
            (r#"{"record": {"index": "ab"#, "of the line)"),
            (r#"{"record": x}"#, "(at character 12 of the line)"),
        ] {
            std::fs::write(&path, format!("{good}\n{bad}\n{good}\n")).unwrap();
            let mut reader = IntervalReader::open(&path, BOUNDS).unwrap().unwrap();
            reader.next_line().unwrap();
            let Err(e) = reader.next_line() else {
                panic!("{bad} should be refused");
            };
            let e = e.to_string();
            assert!(e.contains("line 2: ") && e.ends_with(says), "{e}");
            assert!(!e.contains(" column "), "{e}");
        }
    }

    #[test]
    fn lines_past_what_the_run_has_are_refused_before_they_are_decoded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("intervals.jsonl");
        let mut record = IntervalRecord::new(0);
        record.requests = vec![Default::default(); 3];
        let line = IntervalLine {
            record,
            health: Health::default(),
            stage: None,
            server: None,
            shards: Vec::new(),
        };
        std::fs::write(&path, serde_json::to_string(&line).unwrap() + "\n").unwrap();
        let mut reader = IntervalReader::open(&path, BOUNDS).unwrap().unwrap();
        let Err(e) = reader.next_line() else {
            panic!("the line should be refused");
        };
        let e = e.to_string();
        assert!(e.ends_with("line 1: 3 requests, but the run has 1"), "{e}");

        let mut v = serde_json::to_value(&line).unwrap();
        v["record"]["steps"] = serde_json::json!({"7": {}});
        std::fs::write(&path, format!("{v}\n{v}\n")).unwrap();
        let bounds = LineBounds {
            requests: 3,
            stages: 2,
            flows: 0,
        };
        let mut reader = IntervalReader::open(&path, bounds).unwrap().unwrap();
        let Err(e) = reader.next_line() else {
            panic!("the line should be refused");
        };
        let e = e.to_string();
        assert!(
            e.ends_with("line 1: stage 7, but the run has 2 stage(s)"),
            "{e}"
        );

        // A line of endless bytes is cut at the bound, not read whole.
        let file = std::fs::File::create(&path).unwrap();
        file.set_len(MAX_LINE as u64 + 2).unwrap();
        let e = IntervalReader::open(&path, BOUNDS)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.ends_with("line 1: longer than 64 MiB, more than any interval takes"),
            "{e}"
        );
    }

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
                shards: Vec::new(),
            })
            .unwrap();
        }
        drop(w);
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"record\":{\"ind");
        std::fs::write(&path, &text).unwrap();
        let mut reader = IntervalReader::open(&path, BOUNDS).unwrap().unwrap();
        let mut n = 0;
        while reader.next_line().unwrap().is_some() {
            n += 1;
        }
        assert_eq!(n, 3);
        assert!(reader.torn_tail);
        std::fs::write(&path, format!("garbage\n{text}")).unwrap();
        let mut reader = IntervalReader::open(&path, BOUNDS).unwrap().unwrap();
        assert!(reader.next_line().is_err());
    }
}
