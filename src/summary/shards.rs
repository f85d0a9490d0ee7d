//! A run merged from shards: where each shard ran, when it started, and whether its
//! generator kept up, judged on its own evidence.
//!
//! The merged record adds the shards' requests up, which is exact for what the server did;
//! but a generator's CPU, run queue and descriptors belong to one machine, so adding them
//! up would hide one that fell behind among several that did not. Each shard is judged
//! as the run it was, and the test's verdict names the shards that could not keep up.

use super::diagnosis::{self, Blame, Diagnosis, Finding};
use super::GeneratorHealth;
use crate::plan::shard::LATE_NOTICE;
use crate::store::{MergedSet, MergedShard, StoredRun};
use crate::units::shard_list;
use serde::{Deserialize, Serialize};

/// The shards of a merged run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Shards {
    /// How many the test has, their common clock, which are missing: as the stored run
    /// says (its fields at this level in the JSON).
    #[serde(flatten)]
    pub set: MergedSet,
    /// One row per shard merged, by index.
    pub rows: Vec<ShardRow>,
}

/// One shard of a merged run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ShardRow {
    /// Its index.
    pub index: u32,
    /// Host it ran on.
    pub host: String,
    /// Its run directory's name.
    pub dir: String,
    /// Seconds after the common start it started.
    pub offset_secs: f64,
    /// Seconds it began after `--start-at`, as it recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late_secs: Option<f64>,
    /// False when it did not write its end (killed or crashed).
    pub finished: bool,
    /// True when a stop signal ended it before its stop condition.
    #[serde(default)]
    pub interrupted: bool,
    /// True when its log's last line was torn and skipped.
    #[serde(default)]
    pub torn_tail: bool,
    /// Requests it sent, retries left out.
    pub sent: u64,
    /// Requests it completed.
    pub completed: u64,
    /// Its generator's health.
    pub generator: GeneratorHealth,
    /// Its own verdict: whether it kept up, and the evidence.
    pub verdict: Diagnosis,
}

/// The shards of `run`, when it was merged from shards.
pub(super) fn of(run: &StoredRun) -> Option<Shards> {
    let merged = run.meta.merged.as_ref()?;
    Some(Shards {
        set: merged.set.clone(),
        rows: merged.shards.iter().map(|s| row(run, s)).collect(),
    })
}

/// The shard judged as the run it was: its share of the load, its engine, its end.
fn row(run: &StoredRun, shard: &MergedShard) -> ShardRow {
    let mut meta = run.meta.clone();
    meta.load = shard.load;
    meta.stages = shard.stages.clone();
    meta.threads = shard.threads;
    meta.open_files_limit = shard.open_files_limit;
    meta.merged = None;
    let own = StoredRun {
        meta,
        total: shard.generator.clone(),
        counting: crate::store::Counting::Whole,
        all: shard.generator.clone(),
        stages: Vec::new(),
        intervals: Vec::new(),
        end: shard.end.clone(),
        torn_tail: false,
        outputs: Vec::new(),
    };
    let (attack_secs, wait_secs) = match &shard.end {
        Some(end) => (end.attack_secs, end.wait_secs),
        None => (shard.intervals as f64, 0.0),
    };
    let total_secs = attack_secs + wait_secs;
    let lead = run.meta.merged.as_ref().map_or(0.0, |m| {
        super::shard_lead(shard.index, m.set.count, &run.meta.load)
    });
    let rate = super::send_rate(own.all.sent_first(), attack_secs, lead);
    // Killed, it wrote no end: its health is its seconds', which the merge kept.
    let generator =
        GeneratorHealth::assess(&own, &own.all, total_secs, rate, &shard.seconds_health);
    // Latency over time is the server's evidence, judged on the merged run: a shard's own
    // medians are left out.
    let verdict = diagnosis::diagnose(&generator.evidence(&own, &own.all, total_secs, &[]));
    ShardRow {
        index: shard.index,
        host: shard.host.clone(),
        dir: shard.dir.clone(),
        offset_secs: shard.offset_secs,
        late_secs: shard.late_secs,
        finished: shard.end.is_some(),
        interrupted: shard
            .end
            .as_ref()
            .is_some_and(|e| e.status == crate::store::EndStatus::Interrupted),
        torn_tail: shard.torn_tail,
        sent: own.all.sent_first(),
        completed: own.all.completed(),
        generator,
        verdict,
    }
}

/// The merged test's verdict: the evidence on the server's side and the symptoms from the
/// merged record, the generators' side from each shard on its own, and the shards that
/// started late when the test fell short.
pub(super) fn judge(merged: Diagnosis, shards: &Shards) -> Diagnosis {
    let mut findings: Vec<Finding> = merged
        .findings
        .into_iter()
        .filter(|f| f.blame() != Blame::Generator)
        .collect();
    let fell_short = findings.iter().any(|f| f.blame() == Blame::Symptom);
    // A shard late by what its own run calls late is named when the test did not send what
    // it asked: a tenth of a second of a share missing is already more than the rate
    // tolerance of a ten-second test of a few shards.
    for r in &shards.rows {
        if fell_short && r.offset_secs >= LATE_NOTICE.as_secs_f64() {
            findings.push(Finding::ShardLate {
                shard: r.index,
                host: r.host.clone(),
                late_us: (r.offset_secs * 1e6) as u64,
            });
        }
    }
    let cut_short: Vec<u32> = shards
        .rows
        .iter()
        .filter(|r| !r.finished || r.interrupted || r.torn_tail)
        .map(|r| r.index)
        .collect();
    if fell_short && (!shards.set.missing.is_empty() || !cut_short.is_empty()) {
        findings.push(Finding::ShardsIncomplete {
            missing: shards.set.missing.clone(),
            cut_short,
        });
    }
    for r in shards.rows.iter().filter(|r| r.verdict.generator_limited()) {
        findings.push(Finding::ShardLimited {
            shard: r.index,
            host: r.host.clone(),
            findings: r
                .verdict
                .findings
                .iter()
                .filter(|f| f.blame() != Blame::Server)
                .cloned()
                .collect(),
        });
    }
    Diagnosis::of(findings)
}

/// Why the merged numbers cover less than the whole test, when they do.
pub(super) fn partial(shards: &Shards) -> Option<String> {
    let which = |keep: &dyn Fn(&ShardRow) -> bool| -> Vec<u32> {
        shards
            .rows
            .iter()
            .filter(|r| keep(r))
            .map(|r| r.index)
            .collect()
    };
    let mut why = Vec::new();
    if !shards.set.missing.is_empty() {
        why.push(format!(
            "merged from {} of {} shards; missing: {}",
            shards.rows.len(),
            shards.set.count,
            shard_list(&shards.set.missing)
        ));
    }
    for (rows, what) in [
        (
            which(&|r| !r.finished),
            "did not finish (killed or crashed)",
        ),
        (
            which(&|r| r.interrupted),
            "was interrupted before its stop condition",
        ),
        (
            which(&|r| r.torn_tail),
            "lost its last interval (a torn line, skipped)",
        ),
    ] {
        if !rows.is_empty() {
            why.push(format!("{} {what}", shard_list(&rows)));
        }
    }
    (!why.is_empty()).then(|| why.join("; "))
}
