//! The shard runs given to a merge: read, checked to be one whole test, and placed on a
//! common clock.

use super::MergeError;
use crate::store::{RunDir, RunEnd, RunMeta, ShardMeta, StoreError};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// One shard run, its identity checked and its place on the merged timeline known.
#[derive(Debug)]
pub struct Shard {
    /// Its run directory.
    pub dir: RunDir,
    /// What it was asked.
    pub meta: RunMeta,
    /// Its place in the test (copied out of `meta`, which always has it here).
    pub id: ShardMeta,
    /// How it ended, when it wrote `end.json`.
    pub end: Option<RunEnd>,
    /// When it started.
    pub started: SystemTime,
    /// Seconds after the merged run's origin it started (exact, never negative).
    pub offset_secs: f64,
    /// Whole seconds added to its interval indices.
    pub shift_secs: u64,
}

/// The shards of one test, by index, with the merged run's origin.
#[derive(Debug)]
pub struct ShardSet {
    /// The shards given, by index.
    pub shards: Vec<Shard>,
    /// How many the whole test has.
    pub count: u32,
    /// Those not given.
    pub missing: Vec<u32>,
    /// The common start: the shared `--start-at`, else the earliest shard's start.
    pub origin: SystemTime,
    /// Seconds between the earliest and the latest start.
    pub start_spread_secs: f64,
}

fn time(dir: &Path, what: &str, text: &str) -> Result<SystemTime, MergeError> {
    humantime::parse_rfc3339_weak(text).map_err(|_| MergeError::BadTime {
        dir: dir.to_path_buf(),
        what: what.to_string(),
        value: text.to_string(),
    })
}

/// Reads the runs in `dirs` and checks they are shards of one test, each once, all of them
/// unless `partial`.
pub fn gather(dirs: &[PathBuf], partial: bool) -> Result<ShardSet, MergeError> {
    if dirs.is_empty() {
        return Err(MergeError::NoRuns);
    }
    let mut shards: Vec<Shard> = Vec::with_capacity(dirs.len());
    for path in dirs {
        admit(&mut shards, read(path)?)?;
    }
    place(shards, partial)
}

/// Reads the shard run at `path`: its metadata checked, its end if it wrote one.
pub fn read(path: &Path) -> Result<Shard, MergeError> {
    let path = &path.to_path_buf();
    let dir = RunDir::at(path);
    let meta_path = path.join("meta.json");
    if !meta_path.exists() {
        return Err(StoreError::NotARun(path.clone()).into());
    }
    let meta: RunMeta = crate::store::read_json(&meta_path)?;
    let Some(id) = meta.shard.clone() else {
        return Err(if meta.merged.is_some() {
            MergeError::AlreadyMerged(path.clone())
        } else {
            MergeError::NotAShard(path.clone())
        });
    };
    // The count sizes the list of missing shards: a damaged one is refused, never looped.
    if id.count == 0 || id.count > crate::plan::shard::MAX_SHARDS || id.index >= id.count {
        return Err(StoreError::Corrupt {
            path: meta_path,
            reason: format!(
                "shard {} of {}, not a shard of the test",
                id.index, id.count
            ),
        }
        .into());
    }
    // Added up across shards for the merged CPU share: a damaged count is refused,
    // never summed past what any set of generators runs.
    if meta.threads > crate::plan::MAX_THREADS {
        return Err(StoreError::Corrupt {
            path: meta_path,
            reason: format!(
                "{} engine threads, more than headroom runs ({}); the run's meta.json is damaged",
                meta.threads,
                crate::plan::MAX_THREADS
            ),
        }
        .into());
    }
    let end_path = path.join("end.json");
    let end: Option<RunEnd> = if end_path.exists() {
        Some(crate::store::read_json(&end_path)?)
    } else {
        None
    };
    let started = time(path, "started_at", &meta.started_at)?;
    Ok(Shard {
        dir,
        meta,
        id,
        end,
        started,
        offset_secs: 0.0,
        shift_secs: 0,
    })
}

/// Adds `shard` to `shards` when it is a shard of the same test, and not one of them.
pub fn admit(shards: &mut Vec<Shard>, shard: Shard) -> Result<(), MergeError> {
    let path = &shard.dir.path().to_path_buf();
    let (meta, id) = (&shard.meta, &shard.id);
    if let Some(first) = shards.first() {
        check_same_test(first, path, meta, id)?;
    }
    if let Some(same) = shards.iter().find(|s| s.id.index == id.index) {
        return Err(MergeError::Duplicate {
            index: id.index,
            first: same.dir.path().to_path_buf(),
            second: path.clone(),
        });
    }
    shards.push(shard);
    Ok(())
}

/// The shards of one test placed on their common clock; refused when some are missing,
/// unless `partial`.
pub fn place(mut shards: Vec<Shard>, partial: bool) -> Result<ShardSet, MergeError> {
    if shards.is_empty() {
        return Err(MergeError::NoRuns);
    }
    shards.sort_by_key(|s| s.id.index);
    let count = shards[0].id.count;
    let missing: Vec<u32> = (0..count)
        .filter(|i| !shards.iter().any(|s| s.id.index == *i))
        .collect();
    if !missing.is_empty() && !partial {
        return Err(MergeError::Missing { missing, count });
    }
    let earliest = shards.iter().map(|s| s.started).min().expect("one shard");
    let latest = shards.iter().map(|s| s.started).max().expect("one shard");
    // A start every shard was given is the test's own clock; lacking one, the first shard
    // to start opens the test.
    let shared_start = match shards[0].id.start_at.as_deref() {
        Some(at) if shards.iter().all(|s| s.id.start_at.as_deref() == Some(at)) => {
            Some(time(shards[0].dir.path(), "start_at", at)?)
        }
        _ => None,
    };
    let origin = shared_start.map_or(earliest, |at| at.min(earliest));
    for s in &mut shards {
        let offset = s.started.duration_since(origin).unwrap_or_default();
        s.offset_secs = offset.as_secs_f64();
        // Nearest second: each shard's seconds then lie within half a second of the merged
        // seconds they are counted in.
        s.shift_secs = (offset.as_millis() as u64).saturating_add(500) / 1000;
    }
    Ok(ShardSet {
        shards,
        count,
        missing,
        origin,
        start_spread_secs: latest
            .duration_since(earliest)
            .unwrap_or_default()
            .as_secs_f64(),
    })
}

/// Refuses `meta` unless it is a shard of the same test as `first`.
fn check_same_test(
    first: &Shard,
    path: &Path,
    meta: &RunMeta,
    id: &ShardMeta,
) -> Result<(), MergeError> {
    let different = |why: &str| MergeError::DifferentTest {
        first: first.dir.path().to_path_buf(),
        other: path.to_path_buf(),
        why: why.to_string(),
    };
    if id.plan != first.id.plan {
        return Err(different("their plan fingerprints differ"));
    }
    if id.count != first.id.count {
        return Err(MergeError::DifferentCount {
            first: first.dir.path().to_path_buf(),
            first_count: first.id.count,
            other: path.to_path_buf(),
            other_count: id.count,
        });
    }
    // The fingerprint says these agree; the merge sizes its records by them, so a run
    // edited by hand is refused here rather than trusted.
    let names = |m: &RunMeta| {
        m.requests
            .iter()
            .map(|r| r.name.clone())
            .collect::<Vec<_>>()
    };
    if names(meta) != names(&first.meta)
        || meta.flows.len() != first.meta.flows.len()
        || id.whole_stages.len() != first.id.whole_stages.len()
        || meta.stages.len() != first.meta.stages.len()
    {
        return Err(different("their requests, flows or stages differ"));
    }
    Ok(())
}
