//! Reads `raw.bin` back one record at a time: memory stays that of one record whatever the
//! file's size, and a damaged record is named by its number, never trusted.

use super::codec::{decode, Header, MAGIC, MAX_HEADER, RECORD_BYTES};
use crate::record::RawRecord;
use crate::sample::ErrorKind;
use crate::store::{io_err, StoreError};
use std::io::Read;
use std::path::{Path, PathBuf};

/// What a run's records may name: as many requests and stages as its metadata holds.
#[derive(Debug, Clone, Copy)]
pub struct RawBounds {
    /// Requests of the run.
    pub requests: usize,
    /// Stages of the run.
    pub stages: usize,
}

/// Streams a raw file's records in the order they were written.
pub struct RawReader {
    path: PathBuf,
    source: std::io::BufReader<std::fs::File>,
    kinds: Vec<Option<ErrorKind>>,
    bounds: RawBounds,
    number: u64,
    /// The last record's bytes, to find one written twice.
    previous: [u8; RECORD_BYTES],
    /// Set once a torn last record (from a kill mid-write) was skipped.
    pub torn_tail: bool,
    /// The number of the first record that repeats the one before it byte for byte: no run
    /// writes two (each has its own send time to the nanosecond), so it was appended twice.
    pub first_repeat: Option<u64>,
}

impl RawReader {
    /// Opens `path` and reads its header.
    pub fn open(path: &Path, bounds: RawBounds) -> Result<RawReader, StoreError> {
        let file = std::fs::File::open(path).map_err(io_err(path))?;
        let mut source = std::io::BufReader::with_capacity(64 * 1024, file);
        let corrupt = |reason: String| StoreError::Corrupt {
            path: path.to_path_buf(),
            reason,
        };
        let mut magic = [0u8; 12];
        let got = read_full(&mut source, &mut magic).map_err(io_err(path))?;
        if got < magic.len() || &magic[..8] != MAGIC {
            return Err(corrupt(
                "not a headroom raw file (or one cut short in its header)".into(),
            ));
        }
        let len = u32::from_le_bytes(magic[8..12].try_into().expect("4 bytes"));
        if len > MAX_HEADER {
            return Err(corrupt(format!(
                "a header of {len} bytes, more than headroom writes"
            )));
        }
        let mut json = vec![0u8; len as usize];
        if read_full(&mut source, &mut json).map_err(io_err(path))? < json.len() {
            return Err(corrupt("cut short in its header".into()));
        }
        let header: Header =
            serde_json::from_slice(&json).map_err(|e| corrupt(format!("header: {e}")))?;
        Ok(RawReader {
            path: path.to_path_buf(),
            source,
            kinds: header
                .error_kinds
                .iter()
                .map(|k| ErrorKind::from_key(k))
                .collect(),
            bounds,
            number: 0,
            previous: [0; RECORD_BYTES],
            torn_tail: false,
            first_repeat: None,
        })
    }

    /// The file read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The number of the record last returned (from 1).
    pub fn record_number(&self) -> u64 {
        self.number
    }

    /// The next record, or `None` at the end (or at a torn last record, see `torn_tail`).
    pub fn next_record(&mut self) -> Result<Option<RawRecord>, StoreError> {
        let mut bytes = [0u8; RECORD_BYTES];
        let got = read_full(&mut self.source, &mut bytes).map_err(io_err(&self.path))?;
        if got == 0 {
            return Ok(None);
        }
        if got < RECORD_BYTES {
            self.torn_tail = true;
            return Ok(None);
        }
        self.number += 1;
        if self.number > 1 && bytes == self.previous && self.first_repeat.is_none() {
            self.first_repeat = Some(self.number);
        }
        self.previous = bytes;
        let record = decode(&bytes, &self.kinds).map_err(|reason| self.corrupt(reason))?;
        let RawBounds { requests, stages } = self.bounds;
        if usize::from(record.request) >= requests {
            return Err(self.corrupt(format!(
                "request {}, but the run has {requests}",
                record.request
            )));
        }
        if let Some(stage) = record.stage.filter(|s| usize::from(*s) >= stages) {
            return Err(self.corrupt(format!("stage {stage}, but the run has {stages} stage(s)")));
        }
        Ok(Some(record))
    }

    fn corrupt(&self, reason: impl std::fmt::Display) -> StoreError {
        StoreError::Corrupt {
            path: self.path.clone(),
            reason: format!("record {}: {reason}", self.number),
        }
    }
}

/// Reads until `buf` is full or the file ends; returns the bytes read.
fn read_full(source: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match source.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}
