//! A stored run built up one interval at a time. `RunDir::load` reads the log through it, and
//! a live run (`--live`) feeds it each second as the recorder hands it over, so the page and
//! the report read the run by one path and cannot disagree.

use super::measured::Gather;
use super::{check, Counting, IntervalDigest, IntervalLine, LineBounds, OutputRecord, RunEnd};
use super::{RunMeta, StoredRun};
use crate::record::IntervalRecord;

/// The run so far: its metadata and every interval taken.
#[derive(Clone)]
pub struct Loader {
    meta: RunMeta,
    all: IntervalRecord,
    stages: Vec<IntervalRecord>,
    gather: Gather,
    lines: u64,
}

impl std::fmt::Debug for Loader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Loader")
            .field("lines", &self.lines)
            .finish_non_exhaustive()
    }
}

impl Loader {
    /// Nothing taken yet of the run `meta` describes; refused (with why) when the metadata
    /// holds counts no run could have recorded.
    pub fn new(meta: RunMeta) -> Result<Loader, String> {
        // A merged run keeps each shard's generator counts, which its report adds up: checked
        // as a line of the log is, so a damaged file is refused, never overflowed.
        for shard in meta.merged.iter().flat_map(|m| &m.shards) {
            if let Some(reason) = check::implausible(&shard.generator) {
                return Err(format!("shard {}: the generator's {reason}", shard.index));
            }
        }
        let gather = Gather::new(&meta.stages);
        Ok(Loader {
            meta,
            all: IntervalRecord::new(0),
            stages: Vec::new(),
            gather,
            lines: 0,
        })
    }

    /// What the run's lines may hold, for a reader of its log.
    pub fn bounds(&self) -> LineBounds {
        LineBounds {
            requests: self.meta.requests.len(),
            stages: self.meta.stages.len(),
            flows: self.meta.flows.len(),
        }
    }

    /// The run's metadata.
    pub fn meta(&self) -> &RunMeta {
        &self.meta
    }

    /// Intervals taken so far.
    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// Takes the next interval; refused (with why) when it is damage: counts past any run,
    /// or a stage the run does not have. A refused line leaves the run unusable.
    pub fn add(&mut self, line: &IntervalLine) -> Result<(), String> {
        self.all.merge(&line.record);
        // Each line is within bounds (the reader checks it), so adding one to a total within
        // them cannot overflow; the total is checked before the next.
        if let Some(reason) = check::implausible(&self.all) {
            return Err(format!("the run's {reason}"));
        }
        self.gather.line(line);
        if let Some(stage) = line.stage {
            let i = usize::from(stage);
            // The index sizes a vector: a line naming a stage the run does not have is
            // damage, never an allocation.
            if i >= self.meta.stages.len() {
                return Err(format!(
                    "stage {i}, but the run has {} stage(s)",
                    self.meta.stages.len()
                ));
            }
            if i >= self.stages.len() {
                self.stages.resize_with(i + 1, || IntervalRecord::new(0));
            }
            self.stages[i].merge(&line.record);
        }
        self.lines += 1;
        Ok(())
    }

    /// The run so far, as `RunDir::load` would read it with these lines and `end`; the
    /// loader keeps going.
    pub fn so_far(&self, end: Option<RunEnd>) -> StoredRun {
        self.clone().finish(end, false, Vec::new())
    }

    /// The run, with how it ended, whether a torn last line was skipped, and what its live
    /// outputs sent.
    pub fn finish(
        self,
        end: Option<RunEnd>,
        torn_tail: bool,
        outputs: Vec<OutputRecord>,
    ) -> StoredRun {
        let (total, intervals, counting): (IntervalRecord, Vec<IntervalDigest>, Counting) =
            self.gather.finish(&self.all);
        StoredRun {
            meta: self.meta,
            total,
            counting,
            all: self.all,
            stages: self.stages,
            intervals,
            end,
            torn_tail,
            outputs,
        }
    }
}
