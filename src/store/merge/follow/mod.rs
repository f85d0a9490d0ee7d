//! `headroom watch`'s data: run directories followed as other processes write them — one
//! run, or the shard runs of one test merged second by second exactly as `merge` merges them
//! (its own placing and merging of a second, see `timeline`), each shard's health beside.
//!
//! A merged second is shown only once it is final: every shard still writing has written a
//! line at or past it (a shard's lines come in order), so no shown number is a partial sum.
//! A shard that ended, or that stopped writing (no line for `stall`, no `end.json`), no
//! longer holds the view back: `merge` would merge what it wrote and the others' later
//! seconds without it. Should a stopped shard write again into seconds already shown, the
//! view is rebuilt from the start and says so. A damaged shard, a deleted directory, or a
//! merged second past what any run holds stops the view at the last exact second.
//!
//! The work is bounded: each shard's log is read once, from where it was left (a [`Tail`]),
//! each line placed and merged once into an incremental [`Loader`]; only a rebuild (a shard
//! appearing late, or writing again after it stopped) reads the logs from their start again.
//! A snapshot ([`Follow::run`]) copies the run so far: its totals and a digest of a few dozen
//! bytes per second.

mod merging;
mod said;
mod sending;
mod tail;
#[cfg(test)]
mod tests;

use super::shards::{self, Shard, ShardSet};
use super::timeline::{Placed, Placing, Seconds};
use super::MergeError;
use crate::record::IntervalRecord;
use crate::store::{IntervalLine, Loader, RunMeta, StoreError, StoredRun};
use merging::Merging;
pub use said::{second_number, Notice, ShardState, ShardView};
use sending::{Sending, Sends};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
pub use tail::{Tail, TailState};

/// How a shard is said to lag: its last second this far behind the furthest shard's.
pub const LAG_SECS: u64 = 2;

/// How runs are followed.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Follow the shards given even when some of the test's are not (as `merge --partial`).
    pub partial: bool,
    /// A run that writes no line for this long, and no `end.json`, has stopped.
    pub stall: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            partial: false,
            stall: Duration::from_secs(10),
        }
    }
}

/// Run directories followed as they grow.
#[derive(Debug)]
pub struct Follow {
    dirs: Vec<PathBuf>,
    settings: Settings,
    command: Vec<String>,
    view: View,
    /// Directories left out (not shards of the test).
    refused: Vec<PathBuf>,
    /// Everything said so far.
    said: Vec<Notice>,
    /// Each directory's state when last polled, to say a change once.
    last: Vec<Option<ShardState>>,
}

#[derive(Debug)]
enum View {
    /// No `meta.json` yet.
    Nothing,
    /// One run that is not a shard.
    Single(Box<Single>),
    /// The shards of one test.
    Shards(Box<Merging>),
}

#[derive(Debug)]
struct Single {
    tail: Tail,
    loader: Loader,
    /// The index of the last line taken.
    last: Option<u64>,
    /// Its record.
    latest: Option<IntervalRecord>,
    /// Whether it still sends, as its lines tell.
    sending: Sending,
}

impl Follow {
    /// Follows the runs in `dirs` (one run, or the shard runs of one test); `command` is
    /// the merged run's command line. Refused, in `merge`'s words, when the runs already
    /// there are not one test's shards or (unless `partial`) some shards are not given.
    pub fn start(
        dirs: &[PathBuf],
        settings: Settings,
        command: &[String],
        now: Instant,
    ) -> Result<Follow, MergeError> {
        if dirs.is_empty() {
            return Err(MergeError::NoRuns);
        }
        let mut follow = Follow {
            dirs: dirs.to_vec(),
            settings,
            command: command.to_vec(),
            view: View::Nothing,
            refused: Vec::new(),
            said: Vec::new(),
            last: vec![None; dirs.len()],
        };
        follow.build(now, true)?;
        Ok(follow)
    }

    /// Builds the view from the runs there now; `strict` refuses what `merge` refuses,
    /// else a directory that is not of the test is left out and said so.
    fn build(&mut self, now: Instant, strict: bool) -> Result<(), MergeError> {
        let present: Vec<&PathBuf> = self
            .dirs
            .iter()
            .filter(|d| !self.refused.contains(d) && d.join("meta.json").exists())
            .collect();
        if present.is_empty() {
            self.view = View::Nothing;
            return Ok(());
        }
        if self.dirs.len() == 1 {
            let meta: RunMeta = crate::store::read_json(&present[0].join("meta.json"))?;
            if meta.shard.is_none() {
                let sending = Sending::of(&meta);
                let loader = Loader::new(meta).map_err(|reason| StoreError::Corrupt {
                    path: present[0].join("meta.json"),
                    reason,
                })?;
                let tail = Tail::new(present[0], loader.bounds(), now);
                self.view = View::Single(Box::new(Single {
                    tail,
                    loader,
                    last: None,
                    latest: None,
                    sending,
                }));
                return Ok(());
            }
        }
        let mut found: Vec<Shard> = Vec::new();
        let mut refused = Vec::new();
        for dir in present {
            match shards::read(dir).and_then(|s| shards::admit(&mut found, s)) {
                Ok(()) => {}
                Err(e) if strict => return Err(e),
                Err(e) => refused.push((dir.clone(), e.to_string())),
            }
        }
        for (dir, why) in refused {
            self.refused.push(dir);
            self.say(Notice::Refused { why });
        }
        let set = shards::place(found, true)?;
        let waiting = self.dirs.len() - self.refused.len() - set.shards.len();
        if !set.missing.is_empty() && set.missing.len() > waiting {
            if strict && !self.settings.partial {
                return Err(MergeError::Missing {
                    missing: set.missing.clone(),
                    count: set.count,
                });
            }
            // Refused above when known at the start; found later (the directories came
            // after the watch began), it can only be said.
            let notice = Notice::Missing {
                missing: set.missing.clone(),
                count: set.count,
            };
            if !self.said.contains(&notice) {
                self.say(notice);
            }
        }
        self.view = View::Shards(Box::new(Merging::new(
            set,
            &self.command,
            now,
            self.settings.stall,
        )?));
        Ok(())
    }

    fn say(&mut self, notice: Notice) {
        self.said.push(notice);
    }

    /// Reads what the runs wrote since the last poll and merges what is final; returns
    /// what it has to say that it had not said (one line each on stderr).
    pub fn poll(&mut self, now: Instant) -> Vec<Notice> {
        let before = self.said.len();
        // A run that began writing since the view was built is brought in: the view is
        // rebuilt with it (its seconds may fall among those already shown).
        let arrived: Vec<PathBuf> = self
            .dirs
            .iter()
            .filter(|d| {
                !self.refused.contains(d) && !self.in_view(d) && d.join("meta.json").exists()
            })
            .cloned()
            .collect();
        if !arrived.is_empty() {
            let shown = self.shown().is_some();
            if let Err(e) = self.build(now, false) {
                self.say(Notice::Damaged {
                    why: e.to_string(),
                    shown: None,
                });
            } else if shown {
                let joined: Vec<PathBuf> =
                    arrived.into_iter().filter(|d| self.in_view(d)).collect();
                for dir in joined {
                    self.say(Notice::Appeared { dir });
                }
            }
        }
        match &mut self.view {
            View::Nothing => {}
            View::Single(single) => single.poll(now),
            View::Shards(merging) => {
                merging.poll(now, self.settings.stall);
                if let Some(dir) = merging.stale.take() {
                    self.say(Notice::Resumed { dir });
                    if let Err(e) = self.build(now, false) {
                        self.say(Notice::Damaged {
                            why: e.to_string(),
                            shown: None,
                        });
                    } else if let View::Shards(m) = &mut self.view {
                        m.poll(now, self.settings.stall);
                    }
                }
            }
        }
        self.say_changes(now);
        self.said[before..].to_vec()
    }

    fn in_view(&self, dir: &Path) -> bool {
        match &self.view {
            View::Nothing => false,
            View::Single(_) => true,
            View::Shards(m) => m.set.shards.iter().any(|s| s.dir.path() == dir),
        }
    }

    /// Says once each change of a directory into a state that needs a word.
    fn say_changes(&mut self, now: Instant) {
        let views = self.shards(now);
        let merged = matches!(self.view, View::Shards(_));
        let shown = self.shown();
        let broken = match &self.view {
            View::Shards(m) => m.broken.clone(),
            _ => None,
        };
        for v in &views {
            let Some(slot) = self.dirs.iter().position(|d| *d == v.dir) else {
                continue;
            };
            if self.last[slot] == Some(v.state) {
                continue;
            }
            self.last[slot] = Some(v.state);
            // Left out, and said so when it was.
            if self.refused.contains(&v.dir) {
                continue;
            }
            let notice = match v.state {
                ShardState::Stopped => Notice::Stopped {
                    dir: v.dir.clone(),
                    secs: self.silent_secs(&v.dir, now),
                    merged,
                },
                ShardState::Damaged => Notice::Damaged {
                    why: v.problem.clone().unwrap_or_default(),
                    shown,
                },
                ShardState::Gone => Notice::Gone {
                    dir: v.dir.clone(),
                    shown,
                },
                _ => continue,
            };
            self.say(notice);
        }
        if let Some(why) = broken {
            let notice = Notice::Damaged { why, shown };
            if !self.said.contains(&notice) {
                self.say(notice);
            }
        }
    }

    /// Whole seconds since the run in `dir` last wrote a line.
    fn silent_secs(&self, dir: &Path, now: Instant) -> u64 {
        let tail = match &self.view {
            View::Single(s) => Some(&s.tail),
            View::Shards(m) => m.tails.iter().find(|t| t.dir() == dir),
            View::Nothing => None,
        };
        tail.map_or(0, |t| now.saturating_duration_since(t.grew).as_secs())
    }

    /// The last second shown (merged and taken into the run so far).
    pub fn shown(&self) -> Option<u64> {
        match &self.view {
            View::Nothing => None,
            View::Single(s) => s.last,
            View::Shards(m) => m.shown,
        }
    }

    /// The run so far, as `RunDir::load` would read it (for shards: as it would read the
    /// merged run `merge` would write of the seconds shown); `None` before any run began.
    pub fn run(&self) -> Option<StoredRun> {
        match &self.view {
            View::Nothing => None,
            View::Single(s) => Some(s.loader.clone().finish(
                s.tail.end.clone(),
                s.tail.torn_tail(),
                Vec::new(),
            )),
            View::Shards(m) => Some(m.run(self.ended())),
        }
    }

    /// The record of the last second shown.
    pub fn latest(&self) -> Option<&IntervalRecord> {
        match &self.view {
            View::Nothing => None,
            View::Single(s) => s.latest.as_ref(),
            View::Shards(m) => m.latest.as_ref(),
        }
    }

    /// Whether every run followed has ended and all they wrote is shown.
    pub fn ended(&self) -> bool {
        match &self.view {
            View::Nothing => false,
            View::Single(s) => s.tail.state == TailState::Ended,
            View::Shards(m) => {
                self.dirs.len() == self.refused.len() + m.set.shards.len()
                    && m.tails.iter().all(|t| t.state == TailState::Ended)
                    && m.queues.iter().all(VecDeque::is_empty)
            }
        }
    }

    /// Whether nothing more can come: every run ended, or damage or a lost directory
    /// stopped the view.
    pub fn over(&self) -> bool {
        self.ended()
            || match &self.view {
                View::Nothing => false,
                View::Single(s) => !matches!(s.tail.state, TailState::Open),
                View::Shards(m) => {
                    m.broken.is_some()
                        || m.tails
                            .iter()
                            .any(|t| matches!(t.state, TailState::Damaged(_) | TailState::Gone))
                }
            }
    }

    /// The shard runs the view is of (for `merge` at the end).
    pub fn shard_dirs(&self) -> Vec<PathBuf> {
        match &self.view {
            View::Shards(m) => m
                .set
                .shards
                .iter()
                .map(|s| s.dir.path().to_path_buf())
                .collect(),
            _ => Vec::new(),
        }
    }

    /// When the test's sending ends, in whole seconds of the view's clock: a run's own
    /// plan; for shards, the last shard's planned end placed on the merged timeline (a shard
    /// that started late sends past the plan's time). `None` when a run's end is not a time.
    pub fn sending_ends(&self) -> Option<u64> {
        match &self.view {
            View::Nothing => None,
            View::Single(s) => s.sending.planned_secs(),
            View::Shards(m) => m
                .set
                .shards
                .iter()
                .zip(&m.sendings)
                .map(|(shard, s)| s.planned_secs().map(|p| p.saturating_add(shard.shift_secs)))
                .try_fold(0u64, |end, p| p.map(|p| end.max(p))),
        }
    }

    /// Whether the view is of shards (merged), not of one run.
    pub fn is_merged(&self) -> bool {
        matches!(self.view, View::Shards(_))
    }

    /// Whether the view is known to be of one run (not of shards, nor of directories that
    /// have yet to appear).
    pub fn is_one_run(&self) -> bool {
        matches!(self.view, View::Single(_))
    }

    /// Everything said so far, for the page.
    pub fn notices(&self) -> &[Notice] {
        &self.said
    }

    /// Each directory followed, in the order given.
    pub fn shards(&self, now: Instant) -> Vec<ShardView> {
        match &self.view {
            View::Nothing => self
                .dirs
                .iter()
                .map(|d| ShardView {
                    index: None,
                    dir: d.clone(),
                    state: ShardState::Waiting,
                    last_second: None,
                    problem: None,
                    late_secs: None,
                })
                .collect(),
            View::Single(s) => vec![ShardView {
                index: None,
                dir: self.dirs[0].clone(),
                state: state_of(&s.tail, now, self.settings.stall, None, s.sending.now()),
                last_second: s.last,
                problem: problem_of(&s.tail),
                late_secs: None,
            }],
            View::Shards(m) => {
                let views = m.views(now, self.settings.stall);
                let anyone = views.iter().any(|v| v.last_second.is_some());
                self.dirs
                    .iter()
                    .map(|d| {
                        views
                            .iter()
                            .find(|v| v.dir == *d)
                            .cloned()
                            .unwrap_or_else(|| {
                                let refused = self.refused.contains(d);
                                ShardView {
                                    index: None,
                                    dir: d.clone(),
                                    state: match (refused, anyone) {
                                        (true, _) => ShardState::Damaged,
                                        (false, true) => ShardState::Late,
                                        (false, false) => ShardState::Waiting,
                                    },
                                    last_second: None,
                                    problem: refused.then(|| "not a shard of this test".into()),
                                    late_secs: None,
                                }
                            })
                    })
                    .collect()
            }
        }
    }
}

/// Whether the run `tail` follows is still writing: not ended, and not silent for `stall`
/// (what `merge` takes as killed). A damaged or deleted run writes nothing more.
fn is_writing(tail: &Tail, now: Instant, stall: Duration) -> bool {
    matches!(tail.state, TailState::Open) && now.saturating_duration_since(tail.grew) < stall
}

fn problem_of(tail: &Tail) -> Option<String> {
    match &tail.state {
        TailState::Damaged(why) => Some(why.clone()),
        TailState::Gone => Some("its directory was deleted".into()),
        _ => None,
    }
}

/// A run's state from its tail and what its lines say of its sending; `behind` is how far
/// its last second is behind the furthest shard's (`None` when it wrote none, or is not a
/// shard).
fn state_of(
    tail: &Tail,
    now: Instant,
    stall: Duration,
    behind: Option<u64>,
    sends: Sends,
) -> ShardState {
    match tail.state {
        TailState::Ended => ShardState::Ended,
        TailState::Damaged(_) => ShardState::Damaged,
        TailState::Gone => ShardState::Gone,
        TailState::Open if now.saturating_duration_since(tail.grew) >= stall => ShardState::Stopped,
        TailState::Open if sends == Sends::Aborting => ShardState::Stopping,
        TailState::Open if sends == Sends::Drained => ShardState::Draining,
        TailState::Open if behind.is_some_and(|b| b > LAG_SECS) => ShardState::Lagging,
        TailState::Open => ShardState::Running,
    }
}

impl Single {
    fn poll(&mut self, now: Instant) {
        let Single {
            tail,
            loader,
            last,
            latest,
            sending,
        } = self;
        let path = tail.dir().join("intervals.jsonl");
        tail.read(now, &mut |line, number| {
            loader.add(&line).map_err(|reason| {
                StoreError::Corrupt {
                    path: path.clone(),
                    reason: format!("line {number}: {reason}"),
                }
                .to_string()
            })?;
            sending.take(&line);
            *last = Some(line.record.index);
            *latest = Some(line.record);
            Ok(())
        });
    }
}
