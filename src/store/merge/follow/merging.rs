//! The view of a sharded test: each shard's lines placed on the merged timeline, merged
//! second by second once every shard still writing has written it (merge's own placing and
//! merging), and the shards' states.

use super::sending::Sending;
use super::*;
use crate::record::IntervalRecord;
use std::collections::VecDeque;

/// The shards present, their lines waiting to be merged, and the merged run so far.
#[derive(Debug)]
pub(super) struct Merging {
    pub(super) set: ShardSet,
    pub(super) meta: RunMeta,
    pub(super) tails: Vec<Tail>,
    pub(super) placings: Vec<Placing>,
    /// Whether each shard still sends, as its lines tell.
    pub(super) sendings: Vec<Sending>,
    pub(super) queues: Vec<VecDeque<Placed>>,
    pub(super) seconds: Seconds,
    pub(super) loader: Loader,
    /// The last merged second taken into `loader`.
    pub(super) shown: Option<u64>,
    /// A merged second refused (past any run): nothing more is merged.
    pub(super) broken: Option<String>,
    /// A shard wrote into seconds already shown: rebuild.
    pub(super) stale: Option<PathBuf>,
    /// The last merged second's record.
    pub(super) latest: Option<IntervalRecord>,
    /// Which shards were still writing at the last poll (neither ended nor stopped).
    pub(super) writing: Vec<bool>,
}

impl Merging {
    pub(super) fn new(
        set: ShardSet,
        command: &[String],
        now: Instant,
        stall: Duration,
    ) -> Result<Merging, MergeError> {
        let meta = crate::store::merge::merged_meta(&set, command);
        let stages = meta.stages.len();
        let mut tails = Vec::new();
        let mut placings = Vec::new();
        let mut sendings = Vec::new();
        for shard in &set.shards {
            let (placing, bounds) = Placing::of(shard, stages);
            tails.push(Tail::new(shard.dir.path(), bounds, now));
            placings.push(placing);
            sendings.push(Sending::of(&shard.meta));
        }
        let loader = Loader::new(meta.clone()).map_err(|reason| StoreError::Corrupt {
            path: set.shards[0].dir.path().join("meta.json"),
            reason,
        })?;
        // Never written: named in an error about a merged second.
        let out = PathBuf::from("(the merged view)");
        let writing = tails.iter().map(|t| is_writing(t, now, stall)).collect();
        Ok(Merging {
            seconds: Seconds::of(&set.shards, &out),
            queues: set.shards.iter().map(|_| VecDeque::new()).collect(),
            set,
            meta,
            tails,
            placings,
            sendings,
            loader,
            shown: None,
            broken: None,
            stale: None,
            latest: None,
            writing,
        })
    }

    pub(super) fn poll(&mut self, now: Instant, stall: Duration) {
        for i in 0..self.tails.len() {
            let placing = &mut self.placings[i];
            let sending = &mut self.sendings[i];
            let queue = &mut self.queues[i];
            let shown = self.shown;
            let mut stale = false;
            self.tails[i].read(now, &mut |line, number| {
                sending.take(&line);
                let placed = placing.place(line, number).map_err(|e| e.to_string())?;
                stale |= shown.is_some_and(|s| placed.at <= s);
                queue.push_back(placed);
                Ok(())
            });
            if stale {
                self.stale = Some(self.set.shards[i].dir.path().to_path_buf());
                return;
            }
            if let Some(end) = &self.tails[i].end {
                self.set.shards[i].end = Some(end.clone());
            }
            self.writing[i] = is_writing(&self.tails[i], now, stall);
        }
        if self.broken.is_some() {
            return;
        }
        let frontier = self.frontier(now, stall);
        while let Some(at) = self
            .queues
            .iter()
            .filter_map(|q| q.front().map(|p| p.at))
            .min()
            .filter(|&at| frontier.is_none_or(|f| f.is_some_and(|f| at <= f)))
        {
            let heads: Vec<Option<&IntervalLine>> = self
                .queues
                .iter()
                .map(|q| q.front().filter(|p| p.at == at).map(|p| &p.line))
                .collect();
            let merged = self
                .seconds
                .merge(at, &heads)
                .map_err(|e| e.to_string())
                .and_then(|line| {
                    self.loader
                        .add(&line)
                        .map(|()| line.record)
                        .map_err(|reason| format!("second {at} of the merged view: {reason}"))
                });
            match merged {
                Ok(record) => self.latest = Some(record),
                Err(why) => {
                    self.broken = Some(why);
                    return;
                }
            }
            self.shown = Some(at);
            for q in &mut self.queues {
                if q.front().is_some_and(|p| p.at == at) {
                    q.pop_front();
                }
            }
        }
    }

    /// The last merged second that is final: `None` when no shard holds the view back
    /// (`Some(None)` when one holds it before any second).
    pub(super) fn frontier(&self, now: Instant, stall: Duration) -> Option<Option<u64>> {
        let mut frontier: Option<Option<u64>> = None;
        for (tail, placing) in self.tails.iter().zip(&self.placings) {
            let holds = match tail.state {
                TailState::Ended => None,
                // What `merge` would do with a shard killed here: its lines, and the
                // others' later seconds without it.
                TailState::Open if now.saturating_duration_since(tail.grew) >= stall => None,
                // Its lines come in order: no second before its next can change.
                TailState::Open => Some(placing.last_at().or(placing.first_at().checked_sub(1))),
                TailState::Damaged(_) | TailState::Gone => Some(placing.last_at()),
            };
            if let Some(h) = holds {
                frontier = Some(match frontier {
                    None => h,
                    Some(f) => f.min(h),
                });
            }
        }
        frontier
    }

    pub(super) fn views(&self, now: Instant, stall: Duration) -> Vec<ShardView> {
        let furthest = self.placings.iter().filter_map(Placing::last_at).max();
        self.set
            .shards
            .iter()
            .zip(self.tails.iter().zip(&self.placings))
            .zip(&self.sendings)
            .map(|((shard, (tail, placing)), sending)| {
                let last = placing.last_at();
                let mut state = state_of(
                    tail,
                    now,
                    stall,
                    last.zip(furthest).map(|(l, f)| f.saturating_sub(l)),
                    sending.now(),
                );
                if last.is_none() && matches!(state, ShardState::Running) {
                    state = match furthest {
                        Some(_) => ShardState::Late,
                        None => ShardState::Waiting,
                    };
                }
                // Before anyone's first line, a long quiet is the wait for the start.
                if last.is_none() && furthest.is_none() && state == ShardState::Stopped {
                    state = ShardState::Waiting;
                }
                ShardView {
                    index: Some(shard.id.index),
                    dir: shard.dir.path().to_path_buf(),
                    state,
                    last_second: last,
                    problem: problem_of(tail),
                    late_secs: shard.id.late_secs,
                }
            })
            .collect()
    }

    /// The merged run so far: the merge's own metadata, its tallies as they stand.
    pub(super) fn run(&self, ended: bool) -> StoredRun {
        let mut meta = self.meta.clone();
        if let Some(info) = meta.merged.as_mut() {
            info.set.server_from = self.seconds.server_from;
            for ((shard, placing), (tail, s)) in info
                .shards
                .iter_mut()
                .zip(&self.placings)
                .zip(self.tails.iter().zip(&self.set.shards))
            {
                shard.intervals = placing.tally.intervals;
                shard.generator = placing.tally.generator.clone();
                shard.seconds_health = placing.tally.seconds_health;
                shard.torn_tail = tail.torn_tail();
                shard.end = s.end.clone();
            }
            for (shard, writing) in info.shards.iter_mut().zip(&self.writing) {
                shard.sending = *writing;
            }
        }
        let end = if ended {
            crate::store::merge::merged_end(&self.set)
        } else {
            None
        };
        let mut run = self.loader.so_far(end);
        run.meta = meta;
        run
    }
}
