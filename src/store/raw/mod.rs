//! Each request's record, kept when a run is asked for it (`--raw`):
//!
//! ```text
//! RUN_DIR/raw.bin   a header, then one fixed-size record per request, written as the run goes
//! RUN_DIR/raw.json  how many were written and dropped; written when the run ends
//! ```
//! Records hold request and stage indices (named from `meta.json` when exported), times,
//! statuses or error kinds and body sizes: never a header value or a body.

mod codec;
mod reader;
mod writer;

pub use reader::{RawBounds, RawReader};
pub use writer::{RawFailure, RawWriter};

use super::{RunDir, RunMeta, StoreError};
use std::path::PathBuf;

/// How the raw records of a run went, as `raw.json` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RawEnd {
    /// Records written.
    pub records: u64,
    /// Records dropped because the disk did not keep up (the run's counts still hold them).
    pub dropped: u64,
}

impl RunDir {
    /// Where the run's raw records are.
    pub fn raw_path(&self) -> PathBuf {
        self.root.join("raw.bin")
    }

    fn raw_end_path(&self) -> PathBuf {
        self.root.join("raw.json")
    }

    /// Starts writing the run's raw records (after [`RunDir::create`]); `on_failure` is
    /// called if a write fails.
    pub fn record_raw(
        &self,
        on_failure: impl FnOnce() + Send + 'static,
    ) -> Result<RawWriter, StoreError> {
        RawWriter::start(&self.raw_path(), on_failure)
    }

    /// Records how the raw records went.
    pub fn finish_raw(&self, end: &RawEnd) -> Result<(), StoreError> {
        super::write_json(&self.raw_end_path(), end)
    }

    /// How the raw records went; `None` when the run never finished writing them.
    pub fn raw_end(&self) -> Result<Option<RawEnd>, StoreError> {
        let path = self.raw_end_path();
        if !path.exists() {
            return Ok(None);
        }
        super::read_json(&path).map(Some)
    }

    /// Reads the run's raw records back; `None` when it was not run with `--raw`.
    pub fn open_raw(&self, meta: &RunMeta) -> Result<Option<RawReader>, StoreError> {
        let path = self.raw_path();
        if !path.exists() {
            return Ok(None);
        }
        let bounds = RawBounds {
            requests: meta.requests.len(),
            stages: meta.stages.len(),
        };
        RawReader::open(&path, bounds).map(Some)
    }

    /// The run's metadata alone.
    pub fn meta(&self) -> Result<RunMeta, StoreError> {
        let path = self.root.join("meta.json");
        if !path.exists() {
            return Err(StoreError::NotARun(self.root.clone()));
        }
        super::read_json(&path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::RawRecord;
    use crate::sample::{ErrorKind, Outcome};
    use std::io::Write;
    use std::time::Duration;

    fn record(i: u64) -> RawRecord {
        RawRecord {
            request: (i % 2) as u16,
            stage: None,
            outcome: if i % 3 == 0 {
                Outcome::Error(ErrorKind::Timeout)
            } else {
                Outcome::Status(200)
            },
            expected: i % 3 != 0,
            retried: false,
            intended: Duration::from_micros(i),
            sent: Duration::from_micros(i + 1),
            end: Duration::from_micros(i + 100),
            bytes_in: i,
            bytes_out: 0,
        }
    }

    const BOUNDS: RawBounds = RawBounds {
        requests: 2,
        stages: 0,
    };

    /// A raw file of `n` records, written through the writer as a run does.
    fn written(n: u64) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("raw.bin");
        let mut writer = RawWriter::start(&path, || {}).unwrap();
        let mut batch = writer.sink().batch();
        for i in 0..n {
            batch.push(record(i));
        }
        drop(batch);
        let end = writer.finish().unwrap();
        assert_eq!(
            end,
            RawEnd {
                records: n,
                dropped: 0
            }
        );
        (dir, path)
    }

    fn read_all(path: &std::path::Path) -> (Vec<RawRecord>, Result<(), String>, bool) {
        let mut reader = RawReader::open(path, BOUNDS).unwrap();
        let mut out = Vec::new();
        loop {
            match reader.next_record() {
                Ok(Some(r)) => out.push(r),
                Ok(None) => return (out, Ok(()), reader.torn_tail),
                Err(e) => return (out, Err(e.to_string()), reader.torn_tail),
            }
        }
    }

    #[test]
    fn what_is_written_is_read_back() {
        let (_dir, path) = written(3_000);
        let (records, result, torn) = read_all(&path);
        assert_eq!(result, Ok(()));
        assert!(!torn);
        assert_eq!(records, (0..3_000).map(record).collect::<Vec<_>>());
    }

    #[test]
    fn a_torn_tail_is_skipped_and_damage_is_named_by_its_record() {
        let (_dir, path) = written(10);
        let len = std::fs::metadata(&path).unwrap().len();
        let whole = std::fs::read(&path).unwrap();
        // Cut mid-record: nine records, the tenth torn.
        std::fs::write(&path, &whole[..(len - 20) as usize]).unwrap();
        let (records, result, torn) = read_all(&path);
        assert_eq!((records.len(), result, torn), (9, Ok(()), true));
        // One byte changed in the fourth record: three read, then refused at the fourth.
        let mut damaged = whole.clone();
        let at = whole.len() - 7 * codec::RECORD_BYTES + 5;
        damaged[at] ^= 0x40;
        std::fs::write(&path, &damaged).unwrap();
        let (records, result, _) = read_all(&path);
        assert_eq!(records.len(), 3);
        let err = result.unwrap_err();
        assert!(err.ends_with("record 4: checksum mismatch"), "{err}");
    }

    #[test]
    fn a_record_written_twice_is_named_by_its_number() {
        let (_dir, path) = written(5);
        let whole = std::fs::read(&path).unwrap();
        let (records, result, _) = read_all(&path);
        assert_eq!((records.len(), result), (5, Ok(())));
        let reader = |bytes: &[u8]| {
            std::fs::write(&path, bytes).unwrap();
            let mut reader = RawReader::open(&path, BOUNDS).unwrap();
            while reader.next_record().unwrap().is_some() {}
            (reader.record_number(), reader.first_repeat)
        };
        assert_eq!(reader(&whole), (5, None));
        // The last record appended again: the sixth repeats the fifth.
        let mut doubled = whole.clone();
        doubled.extend_from_slice(&whole[whole.len() - codec::RECORD_BYTES..]);
        assert_eq!(reader(&doubled), (6, Some(6)));
    }

    #[test]
    fn a_bad_header_is_refused_without_sizing_memory_by_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("raw.bin");
        let refused = |bytes: &[u8]| {
            std::fs::write(&path, bytes).unwrap();
            match RawReader::open(&path, BOUNDS) {
                Err(e) => e.to_string(),
                Ok(_) => panic!("{bytes:?} was read as a raw file"),
            }
        };
        assert!(refused(b"request,stage\n").contains("not a headroom raw file"));
        assert!(refused(b"").contains("not a headroom raw file"));
        let mut huge = codec::MAGIC.to_vec();
        huge.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(refused(&huge).contains("more than headroom writes"));
        let mut short = codec::MAGIC.to_vec();
        short.extend_from_slice(&100u32.to_le_bytes());
        short.extend_from_slice(b"{\"error_kinds\"");
        assert!(refused(&short).contains("cut short"));
    }

    #[test]
    fn a_record_naming_what_the_run_does_not_have_is_refused() {
        let (_dir, path) = written(0);
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        let mut bytes = [0u8; codec::RECORD_BYTES];
        codec::encode(
            &RawRecord {
                request: 5,
                ..record(1)
            },
            &mut bytes,
        );
        file.write_all(&bytes).unwrap();
        let (_, result, _) = read_all(&path);
        assert!(result
            .unwrap_err()
            .ends_with("record 1: request 5, but the run has 2"));
    }
}
