//! The run directory: what was asked (metadata), what happened (interval log), how it ended.
//!
//! ```text
//! RUN_DIR/meta.json        written before the first request
//! RUN_DIR/intervals.jsonl  one line per second, appended and flushed as the run goes
//! RUN_DIR/end.json         written when the run ends; absent after a crash or kill -9
//! RUN_DIR/raw.bin          each request's record, with --raw (see `raw`)
//! RUN_DIR/outputs.json     what the live outputs (--push) sent and dropped, with --push
//! ```
//! A run without `end.json` is still readable: the report marks it partial. A run merged
//! from shards ([`merge`]) is a run directory like any other, with its shards named in
//! `meta.json`.

mod check;
pub use check::MAX_COUNT;
pub mod export;
mod fingerprint;
mod loader;
mod log;
pub mod matrix;
mod measured;
pub mod merge;
mod meta;
mod raw;
mod redact;

pub use fingerprint::plan_fingerprint;
pub use loader::Loader;
pub use log::{IntervalLine, IntervalReader, IntervalWriter, LineBounds, ShardHealth, MAX_LINE};
pub use measured::{failed, record_of_stages, Counting};
pub use meta::{
    unix_secs_of, Aborted, EndStatus, FlowMeta, MergedRun, MergedSet, MergedShard, RequestMeta,
    RunEnd, RunMeta, ShardMeta,
};
// The record of the live outputs is the summary's model: reports read it without the store.
pub use crate::summary::{DropReason, OutputKind, OutputRecord};
pub use raw::{RawBounds, RawEnd, RawFailure, RawReader, RawWriter};
pub use redact::redact_args;

use crate::monitor::Health;
use crate::record::IntervalRecord;
use std::path::{Path, PathBuf};

/// Problems reading or writing a run directory.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A file could not be read or written.
    #[error("{path}: {reason}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause (not a `source`, so error chains do not print it twice).
        reason: std::io::Error,
    },
    /// A file is not what headroom wrote.
    #[error("{path}: {reason}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong, with the line when known.
        reason: String,
    },
    /// The directory is not a run.
    #[error("{0} is not a headroom run directory (no meta.json); give the directory an attack wrote with --out")]
    NotARun(PathBuf),
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |reason| StoreError::Io {
        path: path.to_path_buf(),
        reason,
    }
}

/// A stored run read back from disk: the intervals merged into one total, plus a small
/// digest of each interval (memory grows by a few dozen bytes per second of run, not by
/// its histograms).
#[derive(Debug)]
pub struct StoredRun {
    /// What was asked.
    pub meta: RunMeta,
    /// What is reported: the requests sent for the stages that are not warm-ups, wherever
    /// their answers fell (see [`measured`](self::measured) for the one definition).
    pub total: IntervalRecord,
    /// How the warm-up was told apart from `total`.
    pub counting: Counting,
    /// Every whole interval merged, warm-up included: what the generator did.
    pub all: IntervalRecord,
    /// The intervals of each stage merged, by stage index (staged runs only).
    pub stages: Vec<IntervalRecord>,
    /// One digest per whole interval, in order.
    pub intervals: Vec<IntervalDigest>,
    /// How it ended; `None` when the process died before writing it.
    pub end: Option<RunEnd>,
    /// A torn last line (from a kill mid-write) that was skipped.
    pub torn_tail: bool,
    /// What the live outputs (`--push`) sent and dropped; empty without them.
    pub outputs: Vec<OutputRecord>,
}

/// The few numbers of one interval that reports over time need. Its counts are of the
/// whole second (what was sent and completed then, warm-up included), each with the
/// warm-up's share beside it: the second's measured completions are `completed -
/// warmup_completed`.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct IntervalDigest {
    /// Seconds since the start.
    pub index: u64,
    /// Requests sent.
    pub sent: u64,
    /// Requests completed.
    pub completed: u64,
    /// Of those, completions without an answer they expect: the same split as the Success
    /// ratio and the Failures table (a 401 the request does not expect is one).
    pub failed: u64,
    /// Of `sent`, requests sent for a warm-up stage.
    #[serde(default)]
    pub warmup_sent: u64,
    /// Of `completed`, answers to requests sent for a warm-up stage.
    #[serde(default)]
    pub warmup_completed: u64,
    /// Of `failed`, those of requests sent for a warm-up stage.
    #[serde(default)]
    pub warmup_failed: u64,
    /// Median latency of the second's measured answers, µs.
    pub p50_us: u64,
    /// 90th percentile latency, µs.
    #[serde(default)]
    pub p90_us: u64,
    /// 99th percentile latency, µs.
    pub p99_us: u64,
    /// Slowest, µs.
    #[serde(default)]
    pub max_us: u64,
    /// The generator's send lag p99 (how late requests left), µs; 0 in runs stored before
    /// it was kept.
    #[serde(default)]
    pub lag_p99_us: u64,
    /// Connections opened (TCP connects completed).
    #[serde(default)]
    pub connects: u64,
    /// The generator's health.
    pub health: Health,
    /// The stage it began in (staged runs only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage: Option<u16>,
    /// The watched server (`--monitor-pid` or `--monitor-prometheus`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<crate::monitor::TargetHealth>,
}

impl IntervalDigest {
    /// The second's completions of measured requests.
    pub fn measured_completed(&self) -> u64 {
        self.completed.saturating_sub(self.warmup_completed)
    }

    /// Of those, the ones without an answer they expect.
    pub fn measured_failed(&self) -> u64 {
        self.failed.saturating_sub(self.warmup_failed)
    }

    /// Of those, the ones with an answer they expect.
    pub fn measured_ok(&self) -> u64 {
        self.measured_completed()
            .saturating_sub(self.measured_failed())
    }

    /// The second's measured requests sent.
    pub fn measured_sent(&self) -> u64 {
        self.sent.saturating_sub(self.warmup_sent)
    }
}

/// A run directory on disk.
#[derive(Debug, Clone)]
pub struct RunDir {
    root: PathBuf,
}

impl RunDir {
    /// The run directory at `root` (not created yet).
    pub fn at(root: impl Into<PathBuf>) -> Self {
        RunDir { root: root.into() }
    }

    /// A new directory under `runs/` named after the start time and kind of run; a numeric
    /// suffix keeps runs started within the same millisecond apart.
    pub fn default_for(kind: &str) -> Self {
        let stamp = humantime::format_rfc3339_millis(std::time::SystemTime::now())
            .to_string()
            .replace(':', "")
            .trim_end_matches('Z')
            .to_string();
        let base = Path::new("runs").join(format!("{stamp}-{kind}"));
        let mut path = base.clone();
        let mut n = 1;
        while path.exists() {
            n += 1;
            path = base.with_file_name(format!("{stamp}-{kind}-{n}"));
        }
        RunDir::at(path)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.root
    }

    fn meta_path(&self) -> PathBuf {
        self.root.join("meta.json")
    }

    fn log_path(&self) -> PathBuf {
        self.root.join("intervals.jsonl")
    }

    fn end_path(&self) -> PathBuf {
        self.root.join("end.json")
    }

    fn outputs_path(&self) -> PathBuf {
        self.root.join("outputs.json")
    }

    /// Records what the live outputs sent and dropped.
    pub fn finish_outputs(&self, outputs: &[OutputRecord]) -> Result<(), StoreError> {
        write_json(&self.outputs_path(), &outputs)
    }

    /// Creates the directory and writes the metadata; refuses to overwrite another run.
    pub fn create(&self, meta: &RunMeta) -> Result<IntervalWriter, StoreError> {
        std::fs::create_dir_all(&self.root).map_err(io_err(&self.root))?;
        let meta_path = self.meta_path();
        if meta_path.exists() {
            return Err(StoreError::Io {
                path: meta_path,
                reason: std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    "a run is already stored here; choose another --out",
                ),
            });
        }
        write_json(&meta_path, meta)?;
        IntervalWriter::create(&self.log_path())
    }

    /// Records how the run ended.
    pub fn finish(&self, end: &RunEnd) -> Result<(), StoreError> {
        write_json(&self.end_path(), end)
    }

    /// Reads a stored run, complete or partial, one interval at a time.
    pub fn load(&self) -> Result<StoredRun, StoreError> {
        let meta_path = self.meta_path();
        if !meta_path.exists() {
            return Err(StoreError::NotARun(self.root.clone()));
        }
        let meta: RunMeta = read_json(&meta_path)?;
        let mut loader = Loader::new(meta).map_err(|reason| StoreError::Corrupt {
            path: meta_path,
            reason,
        })?;
        let mut torn_tail = false;
        if let Some(mut reader) = IntervalReader::open(&self.log_path(), loader.bounds())? {
            while let Some(line) = reader.next_line()? {
                loader.add(&line).map_err(|reason| StoreError::Corrupt {
                    path: self.log_path(),
                    reason: format!("line {}: {reason}", reader.line_number()),
                })?;
            }
            torn_tail = reader.torn_tail;
        }
        let end_path = self.end_path();
        let end = if end_path.exists() {
            Some(read_json(&end_path)?)
        } else {
            None
        };
        let outputs_path = self.outputs_path();
        let outputs = if outputs_path.exists() {
            read_json(&outputs_path)?
        } else {
            Vec::new()
        };
        Ok(loader.finish(end, torn_tail, outputs))
    }
}

/// Writes `value` as pretty JSON, whole or not at all.
pub fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> Result<(), StoreError> {
    let text = serde_json::to_string_pretty(value).expect("run metadata always serializes");
    // Write then rename, so a reader never sees half a file.
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text + "\n").map_err(io_err(&tmp))?;
    std::fs::rename(&tmp, path).map_err(io_err(path))
}

/// The largest JSON file of a run read back (metadata, end, a search's record).
const MAX_JSON: u64 = 64 * 1024 * 1024;

/// Reads a JSON file headroom wrote.
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, StoreError> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_JSON + 1).read_to_string(&mut text))
        .map_err(io_err(path))?;
    if text.len() as u64 > MAX_JSON {
        return Err(StoreError::Corrupt {
            path: path.to_path_buf(),
            reason: format!(
                "larger than {} MiB, more than headroom writes",
                MAX_JSON >> 20
            ),
        });
    }
    serde_json::from_str(&text).map_err(|e| StoreError::Corrupt {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{AttackPlan, Load, NamedRequest, Rate, RequestSpec, Stop, Target};
    use crate::record::RequestStats;

    /// A run directory holding `records`, one line each.
    fn stored(records: &[IntervalRecord]) -> (tempfile::TempDir, RunDir) {
        let target = Target::parse("http://127.0.0.1:9/").unwrap();
        let request = NamedRequest::single(
            RequestSpec::parse("GET", &[], bytes::Bytes::new()).unwrap(),
            &target,
        );
        let plan = AttackPlan::new(
            target,
            vec![request],
            Load::Open { rate: Rate(10.0) },
            Stop {
                duration: Some(std::time::Duration::from_secs(2)),
                requests: None,
            },
        );
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::at(dir.path().join("run"));
        let meta = RunMeta::describe(&plan, &[], None, "HTTP/1.1", &[]);
        let mut log = run.create(&meta).unwrap();
        for record in records {
            log.append(&IntervalLine {
                record: record.clone(),
                health: Health::default(),
                stage: None,
                server: None,
                shards: Vec::new(),
            })
            .unwrap();
        }
        (dir, run)
    }

    fn refused(run: &RunDir) -> String {
        match run.load() {
            Err(StoreError::Corrupt { reason, .. }) => reason,
            other => panic!("not refused as corrupt: {other:?}"),
        }
    }

    #[test]
    fn the_run_so_far_fed_line_by_line_is_the_run_read_back() {
        // The live page's loader and `load` are one path: fed the same lines, the same run,
        // down to its summary.
        let records: Vec<IntervalRecord> = (0..4)
            .map(|i| {
                let mut r = IntervalRecord::new(i);
                r.sent = 10 + i;
                r.status.insert(200, 10);
                r.status.insert(500, i);
                let mut q = RequestStats {
                    count: 10 + i,
                    failures: i,
                    ..Default::default()
                };
                q.status = r.status.clone();
                r.requests.push(q);
                r
            })
            .collect();
        let (_dir, run) = stored(&records);
        let read = run.load().unwrap();
        let mut live = Loader::new(read.meta.clone()).unwrap();
        for r in &records {
            live.add(&IntervalLine {
                record: r.clone(),
                health: Health::default(),
                stage: None,
                server: None,
                shards: Vec::new(),
            })
            .unwrap();
        }
        let so_far = live.so_far(None);
        let json = |r: &StoredRun| serde_json::to_value(crate::summary::Summary::of(r)).unwrap();
        assert_eq!(json(&so_far), json(&read));
        assert_eq!(so_far.intervals, read.intervals);
        assert_eq!(so_far.all.sent, 46);
        // A line naming a stage the run does not have is refused, as `load` refuses it.
        let bad = IntervalLine {
            record: IntervalRecord::new(4),
            health: Health::default(),
            stage: Some(3),
            server: None,
            shards: Vec::new(),
        };
        assert_eq!(
            live.add(&bad).unwrap_err(),
            "stage 3, but the run has 0 stage(s)"
        );
    }

    #[test]
    fn a_line_with_more_failures_than_completions_is_refused() {
        // Found through the stored_run fuzz target (a line edited by hand): the summary's
        // count - failures overflowed (a panic in a debug build, billions of successes in a
        // release one).
        let mut r = IntervalRecord::new(0);
        r.requests.push(RequestStats {
            count: 200,
            failures: 500,
            ..Default::default()
        });
        let (_dir, run) = stored(&[IntervalRecord::new(0), r]);
        assert_eq!(
            refused(&run),
            "line 2: request 0 has 500 failures of 200 completions"
        );
    }

    #[test]
    fn breakdowns_a_run_could_not_have_recorded_are_refused() {
        // More statuses than completions: their sums would no longer be bounded by the
        // run's completions when added up across requests.
        let mut r = IntervalRecord::new(0);
        let mut q = RequestStats {
            count: 2,
            ..Default::default()
        };
        q.status.insert(200, 3);
        r.requests.push(q);
        let (_dir, run) = stored(&[r]);
        assert!(refused(&run).starts_with("line 1: request 0 has more statuses"));
        // A step naming more requests than the run has sizes nothing.
        let mut r = IntervalRecord::new(0);
        r.steps.entry(0).or_default().requests = vec![RequestStats::default(); 2];
        let (_dir, run) = stored(&[r]);
        assert_eq!(
            refused(&run),
            "line 1: a stage with 2 requests, but the run has 1"
        );
        let mut r = IntervalRecord::new(0);
        r.flows = vec![crate::record::FlowStats::default()];
        let (_dir, run) = stored(&[r]);
        assert_eq!(refused(&run), "line 1: 1 flow(s), but the run has 0");
    }

    #[test]
    fn counts_past_any_run_are_refused_never_added_up() {
        // Found through the stored_run fuzz target (lines edited by hand): two lines of
        // u64::MAX requests sent overflowed the merged total (a panic in a debug build, a
        // wrapped count in a release one).
        let mut huge = IntervalRecord::new(0);
        huge.sent = u64::MAX;
        let (_dir, run) = stored(&[huge.clone(), huge]);
        assert!(
            refused(&run)
                .starts_with("line 1: sent, scheduled, retried or byte counts add up past 2^60"),
            "{}",
            refused(&run)
        );
        let mut statuses = IntervalRecord::new(0);
        statuses.status.insert(200, u64::MAX / 2 + 1);
        statuses.status.insert(503, u64::MAX / 2 + 1);
        let (_dir, run) = stored(&[statuses]);
        assert!(refused(&run).starts_with("line 1: completions"));
        // Each line plausible, the two together not: refused at the second.
        let mut half = IntervalRecord::new(0);
        half.sent = check::MAX_COUNT;
        let (_dir, run) = stored(&[half.clone(), half.clone()]);
        assert!(
            refused(&run).starts_with("line 2: the run's sent"),
            "{}",
            refused(&run)
        );
        let (_dir, run) = stored(&[half]);
        assert_eq!(run.load().unwrap().all.sent, check::MAX_COUNT);
    }
}
