//! What `watch` says of each followed run: its state, its line on the page, and the notices
//! said once each on stderr and on the page.

use std::path::PathBuf;

/// What a followed run (or shard) is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardState {
    /// Not started, and no other has either.
    Waiting,
    /// Not started (no `meta.json`, or no line) while others have.
    Late,
    /// Writing.
    Running,
    /// Writing, its last second more than [`LAG_SECS`] behind the furthest shard's.
    Lagging,
    /// Writing, past its planned end: waiting for its last answers.
    Draining,
    /// Writing, one of its abort conditions held (as its lines show): stopped early,
    /// waiting for the answers in flight.
    Stopping,
    /// No line for a while, and no `end.json`.
    Stopped,
    /// `end.json` written, every line read.
    Ended,
    /// A line not as headroom writes it: nothing past it is read.
    Damaged,
    /// Its directory was deleted.
    Gone,
}

impl std::fmt::Display for ShardState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ShardState::Waiting => "waiting",
            ShardState::Late => "late",
            ShardState::Running => "running",
            ShardState::Lagging => "lagging",
            ShardState::Draining => "draining",
            ShardState::Stopping => "stopping",
            ShardState::Stopped => "stopped",
            ShardState::Ended => "ended",
            ShardState::Damaged => "damaged",
            ShardState::Gone => "gone",
        })
    }
}

/// One followed directory, as the page lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardView {
    /// Its shard index; `None` before its `meta.json` is read, or for a run that is not a
    /// shard.
    pub index: Option<u32>,
    /// Its directory.
    pub dir: PathBuf,
    /// What it is doing.
    pub state: ShardState,
    /// The index (from 0) of the last second it wrote, on the merged timeline; see
    /// [`ShardView::last_numbered`] for the second as the report numbers it.
    pub last_second: Option<u64>,
    /// What is wrong with it, in the words of the error that says so.
    pub problem: Option<String>,
    /// Seconds it began after the common start (`--start-at`), as it recorded.
    pub late_secs: Option<f64>,
}

impl ShardView {
    /// Its last second as the report numbers seconds, from 1 ("aborted at second 9"), so
    /// stderr, the page and the report name the same second alike.
    pub fn last_numbered(&self) -> Option<u64> {
        self.last_second.map(second_number)
    }
}

/// Second `index` (from 0) numbered as the report numbers seconds: from 1.
pub fn second_number(index: u64) -> u64 {
    index.saturating_add(1)
}

/// Something the follower says once: on stderr as it happens, on the page while it watches.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// A directory that appeared and is not a shard of the test: left out.
    Refused {
        /// Why, in `merge`'s words.
        why: String,
    },
    /// Shards of the test not given: the view is of those given (as `merge --partial`).
    Missing {
        /// Their indices.
        missing: Vec<u32>,
        /// How many the test has.
        count: u32,
    },
    /// A shard's `meta.json` appeared after seconds were shown: the view is rebuilt with it.
    Appeared {
        /// Its directory.
        dir: PathBuf,
    },
    /// A run wrote no line for a while, and no `end.json`.
    Stopped {
        /// Its directory.
        dir: PathBuf,
        /// How long it has been silent, in whole seconds.
        secs: u64,
        /// Whether the merged view goes on without it (a sharded test) or simply waits.
        merged: bool,
    },
    /// A stopped shard wrote again into seconds already shown: the view is rebuilt.
    Resumed {
        /// Its directory.
        dir: PathBuf,
    },
    /// A directory with damage: the view stops at the last exact second.
    Damaged {
        /// The error, with file and line.
        why: String,
        /// The last second shown.
        shown: Option<u64>,
    },
    /// A directory deleted while it was followed.
    Gone {
        /// Its directory.
        dir: PathBuf,
        /// The last second shown.
        shown: Option<u64>,
    },
}

fn held(shown: Option<u64>) -> String {
    match shown {
        Some(s) => format!(
            "the view stops at second {}, the last exact one",
            second_number(s)
        ),
        None => "nothing can be shown exactly".into(),
    }
}

impl std::fmt::Display for Notice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Notice::Refused { why } => write!(f, "left out: {why}"),
            Notice::Missing { missing, count } => write!(
                f,
                "{} of {count} not given: the view is of the shards given (as merge --partial)",
                crate::units::shard_list(missing)
            ),
            Notice::Appeared { dir } => write!(
                f,
                "{} started after the view began: rebuilt with it",
                dir.display()
            ),
            Notice::Stopped { dir, secs, merged } => write!(
                f,
                "{} has written no line for {secs}s and no end.json (stopped?){}",
                dir.display(),
                if *merged {
                    "; the later seconds are merged without it, as merge would"
                } else {
                    ""
                }
            ),
            Notice::Resumed { dir } => write!(
                f,
                "{} wrote again after it stopped: the view is rebuilt from the start",
                dir.display()
            ),
            Notice::Damaged { why, shown } => write!(f, "{why}; {}", held(*shown)),
            Notice::Gone { dir, shown } => write!(
                f,
                "{} was deleted while watched; {}",
                dir.display(),
                held(*shown)
            ),
        }
    }
}
