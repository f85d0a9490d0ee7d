//! `headroom merge`: one run directory made from the shard runs of one test, exactly.
//!
//! Every count is added up and every histogram added bucket by bucket (HDR histograms add
//! without loss), so the merged run's percentiles are those of all the shards' requests
//! recorded in one. Each shard's seconds are counted from its own start; they are placed on
//! the common clock (the shared `--start-at`, else the first start) by their start's offset
//! rounded to the second, and how far apart the starts were is kept in `meta.json`. The
//! merged run is an ordinary run directory: every renderer reads it unchanged. Raw records
//! (`raw.bin`) are not merged: export them from each shard.

pub mod follow;
mod shards;
mod staging;
#[cfg(test)]
mod tests;
mod timeline;

use super::{EndStatus, MergedRun, MergedSet, MergedShard, RunDir, RunEnd, RunMeta, StoreError};
use crate::monitor::CpuTime;
use shards::{Shard, ShardSet};
use staging::Staging;
use std::path::PathBuf;

/// Why shard runs could not be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// Nothing to merge.
    #[error("no runs to merge; give the shard run directories")]
    NoRuns,
    /// A run directory could not be read, or is damaged.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A run that is not a shard.
    #[error(
        "{0} is not a shard run (its meta.json has no shard); merge the runs of `--shard I/N`"
    )]
    NotAShard(PathBuf),
    /// A run that is already a merge.
    #[error("{0} is already a merged run; merge the shard runs it was made from")]
    AlreadyMerged(PathBuf),
    /// Runs of different tests.
    #[error("{other} and {first} are shards of different tests ({why}); merge only the shards of one test")]
    DifferentTest {
        /// The first run read.
        first: PathBuf,
        /// The run that differs.
        other: PathBuf,
        /// What differs.
        why: String,
    },
    /// Runs of tests split differently.
    #[error("{first} is a shard of {first_count} but {other} of {other_count}; merge only the shards of one test")]
    DifferentCount {
        /// The first run read.
        first: PathBuf,
        /// Its shard count.
        first_count: u32,
        /// The run that differs.
        other: PathBuf,
        /// Its shard count.
        other_count: u32,
    },
    /// One shard given twice.
    #[error("shard {index} is given twice ({first} and {second}); give each shard's run once")]
    Duplicate {
        /// The shard.
        index: u32,
        /// Its first run.
        first: PathBuf,
        /// Its second.
        second: PathBuf,
    },
    /// Shards missing from the set.
    #[error("{} of {count} missing; give every shard's run, or --partial to merge those given (the report then says which are missing)", crate::units::shard_list(.missing))]
    Missing {
        /// The shards not given.
        missing: Vec<u32>,
        /// How many the test has.
        count: u32,
    },
    /// A time in a run's metadata that does not parse.
    #[error("{dir}: its {what} {value:?} is not an RFC 3339 time; the run's meta.json is damaged")]
    BadTime {
        /// The run.
        dir: PathBuf,
        /// Which field.
        what: String,
        /// Its text.
        value: String,
    },
}

/// What a merge made.
#[derive(Debug)]
pub struct MergeOutcome {
    /// The merged run's metadata.
    pub meta: RunMeta,
    /// Its end, when every shard ended.
    pub end: Option<RunEnd>,
    /// Seconds in its log.
    pub intervals: u64,
    /// Shards whose runs kept raw records, which the merge does not carry over.
    pub raw_left: Vec<u32>,
}

/// Merges the shard runs in `dirs` into a new run directory `out`; `partial` merges a set
/// with shards missing; `command` is recorded as the merged run's command line. `out` is
/// written whole or not at all (see `staging`): it must not be there yet, or be empty.
pub fn merge(
    dirs: &[PathBuf],
    out: &RunDir,
    partial: bool,
    command: &[String],
) -> Result<MergeOutcome, MergeError> {
    merge_with(dirs, out, partial, command, &|dir, end| dir.finish(end))
}

/// [`merge`], its last write (`end.json`) made by `finish`: a test makes it fail.
fn merge_with(
    dirs: &[PathBuf],
    out: &RunDir,
    partial: bool,
    command: &[String],
    finish: &dyn Fn(&RunDir, &RunEnd) -> Result<(), StoreError>,
) -> Result<MergeOutcome, MergeError> {
    let set = shards::gather(dirs, partial)?;
    let mut meta = merged_meta(&set, command);
    let stages = meta.stages.len();
    // Until it is whole, the run is written aside: an error from here on (a shard's log
    // damaged past its first lines, a full disk) drops `staging`, which removes it.
    let staging = Staging::beside(out)?;
    let dir = staging.dir();
    let mut log = dir.create(&meta)?;
    let log_path = dir.path().join("intervals.jsonl");
    let merged = timeline::merge(&set.shards, stages, &mut log, &log_path)?;
    drop(log);
    let info = meta.merged.as_mut().expect("a merged run's meta says so");
    info.set.server_from = merged.server_from;
    for (shard, tally) in info.shards.iter_mut().zip(merged.tallies) {
        shard.intervals = tally.intervals;
        shard.generator = tally.generator;
        shard.torn_tail = tally.torn_tail;
        shard.seconds_health = tally.seconds_health;
    }
    super::write_json(&dir.path().join("meta.json"), &meta)?;
    let end = merged_end(&set);
    if let Some(end) = &end {
        finish(dir, end)?;
    }
    staging.place()?;
    let raw_left = set
        .shards
        .iter()
        .filter(|s| s.dir.raw_path().exists())
        .map(|s| s.id.index)
        .collect();
    Ok(MergeOutcome {
        meta,
        end,
        intervals: merged.lines,
        raw_left,
    })
}

/// The merged run's metadata: the whole test's load and stages, the shards' engines added up.
fn merged_meta(set: &ShardSet, command: &[String]) -> RunMeta {
    let first = &set.shards[0];
    let mut meta = first.meta.clone();
    meta.command = super::redact_args(command);
    meta.load = first.id.whole_load;
    // Each shard capped its starts at its equal part of the whole test's cap.
    meta.max_rate = first
        .meta
        .max_rate
        .map(|r| crate::plan::Rate(r.per_second() * f64::from(set.count)));
    meta.stages = first.id.whole_stages.clone();
    meta.shard = None;
    let mut hosts: Vec<&str> = Vec::new();
    for s in &set.shards {
        if !hosts.contains(&s.meta.host.as_str()) {
            hosts.push(&s.meta.host);
        }
    }
    meta.host = hosts.join(", ");
    meta.started_at = humantime::format_rfc3339_millis(set.origin).to_string();
    // Engine threads of all the generators: the merged CPU is theirs added up.
    meta.threads = set
        .shards
        .iter()
        .fold(0usize, |sum, s| sum.saturating_add(s.meta.threads));
    // Descriptors are judged per shard (each against its own limit); the merged run keeps
    // the tightest of them.
    meta.open_files_limit = set
        .shards
        .iter()
        .filter_map(|s| s.meta.open_files_limit)
        .min();
    // The connection ceiling is shared like users: the whole test's is the shares added up
    // (the shards' own, so a partial set says what those given could open).
    meta.connection.max_connections = set
        .shards
        .iter()
        .map(|s| s.meta.connection.max_connections)
        .fold(0u32, u32::saturating_add);
    // A stop by count is split like the load: the whole test's is the shares added up.
    if set.missing.is_empty() {
        meta.stop.requests = set
            .shards
            .iter()
            .map(|s| s.meta.stop.requests)
            .try_fold(0u64, |sum, n| n.map(|n| sum.saturating_add(n)));
    }
    for s in &set.shards[1..] {
        for notice in &s.meta.notices {
            if !meta.notices.contains(notice) {
                meta.notices.push(*notice);
            }
        }
    }
    meta.merged = Some(MergedRun {
        set: MergedSet {
            count: set.count,
            origin: meta.started_at.clone(),
            start_spread_secs: set.start_spread_secs,
            missing: set.missing.clone(),
            server_from: None,
        },
        shards: set.shards.iter().map(merged_shard).collect(),
    });
    meta
}

fn merged_shard(s: &Shard) -> MergedShard {
    MergedShard {
        index: s.id.index,
        dir: s.dir.path().file_name().map_or_else(
            || s.dir.path().display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        ),
        host: s.meta.host.clone(),
        started_at: s.meta.started_at.clone(),
        offset_secs: s.offset_secs,
        shift_secs: s.shift_secs,
        late_secs: s.id.late_secs,
        load: s.meta.load,
        stages: s.meta.stages.clone(),
        threads: s.meta.threads,
        open_files_limit: s.meta.open_files_limit,
        intervals: 0,
        end: s.end.clone(),
        generator: Default::default(),
        torn_tail: false,
        seconds_health: Default::default(),
        sending: false,
    }
}

/// How bad an ending is: a stop asked for is worse than a run to its end, an interrupted
/// run worse still.
fn severity(status: EndStatus) -> u8 {
    match status {
        EndStatus::Completed => 0,
        EndStatus::Stopped => 1,
        // A shard's safety stop ends the whole test's claim to have run as planned, and
        // says why: it outranks a stop by signal, whose shards are only cut short.
        EndStatus::Interrupted => 2,
        EndStatus::Aborted => 3,
    }
}

/// The merged run's end, when every shard wrote one (otherwise the merged run is partial,
/// as a run killed before its end is):
/// - `status`: the worst of the shards' (aborted, then interrupted, then stopped, then
///   completed);
/// - `ended_at`: the last shard's end;
/// - `attack_secs`: from the common start to the last request any shard sent (a shard's
///   attack counted from its own start, plus its offset), so the rate is the whole test's
///   over the time it really took; `wait_secs`: from then to the last answer any received;
/// - `cpu`: the generators' CPU added up (each machine's own is in its shard's record);
/// - `peak_open_fds`, `peak_rss_bytes`: the largest of any one generator, not a sum: each
///   bounds what one machine needed;
/// - `reason`: the first shard's that stopped itself early;
/// - `aborted`: the earliest safety stop of any shard, on the merged clock (its seconds
///   shifted by the shard's place on the common timeline).
fn merged_end(set: &ShardSet) -> Option<RunEnd> {
    let ends: Vec<(&Shard, &RunEnd)> = set
        .shards
        .iter()
        .map(|s| s.end.as_ref().map(|e| (s, e)))
        .collect::<Option<_>>()?;
    let status = ends
        .iter()
        .map(|(_, e)| e.status)
        .max_by_key(|s| severity(*s))?;
    let ended_at = ends
        .iter()
        .max_by_key(|(_, e)| humantime::parse_rfc3339_weak(&e.ended_at).ok())
        .map(|(_, e)| e.ended_at.clone())?;
    let attack_secs = ends
        .iter()
        .map(|(s, e)| s.offset_secs + e.attack_secs)
        .fold(0.0, f64::max);
    let done = ends
        .iter()
        .map(|(s, e)| s.offset_secs + e.attack_secs + e.wait_secs)
        .fold(0.0, f64::max);
    let cpu = ends
        .iter()
        .fold(CpuTime::default(), |sum, (_, e)| cpu_sum(&sum, &e.cpu));
    Some(RunEnd {
        status,
        ended_unix: super::meta::unix_secs_of(&ended_at),
        ended_at,
        attack_secs,
        wait_secs: (done - attack_secs).max(0.0),
        cpu,
        peak_open_fds: ends.iter().map(|(_, e)| e.peak_open_fds).max()?,
        peak_rss_bytes: ends.iter().filter_map(|(_, e)| e.peak_rss_bytes).max(),
        reason: ends.iter().find_map(|(_, e)| e.reason.clone()),
        aborted: ends
            .iter()
            .filter_map(|(s, e)| {
                e.aborted.as_ref().map(|a| super::Aborted {
                    from_second: a.from_second + s.shift_secs,
                    at_second: a.at_second + s.shift_secs,
                    ..a.clone()
                })
            })
            .min_by_key(|a| a.at_second),
    })
}

/// `a` and `b` added up, saturating: a damaged file's times never overflow.
fn cpu_sum(a: &CpuTime, b: &CpuTime) -> CpuTime {
    CpuTime {
        total: a.total.saturating_add(b.total),
        user: a.user.saturating_add(b.user),
        system: a.system.saturating_add(b.system),
        waiting: a.waiting.saturating_add(b.waiting),
    }
}
