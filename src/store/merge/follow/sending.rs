//! Whether a followed run still sends, as far as its lines tell before its `end.json` does:
//! past its own plan's end it only drains, and once one of its own abort conditions held
//! (judged over its lines exactly as the run judged them) it is stopping. A merged test
//! sends while any of its shards does.

use crate::abort::AbortJudge;
use crate::plan::SendingEnd;
use crate::store::{IntervalLine, RunMeta};

/// What a run's lines so far say of its sending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sends {
    /// Sending as planned (or nothing read yet).
    Yes,
    /// Past its planned end: waiting for the last answers.
    Drained,
    /// One of its abort conditions held: stopped early, waiting for the answers in flight.
    Aborting,
}

/// One run's lines, read in order, judged for [`Sends`].
#[derive(Debug, Clone)]
pub struct Sending {
    ends: SendingEnd,
    judge: AbortJudge,
    /// Requests sent in the lines read (first sends: a count stop counts no retries).
    sent: u64,
    now: Sends,
}

impl Sending {
    /// Judges the lines of the run `meta` describes, in its own seconds.
    pub fn of(meta: &RunMeta) -> Sending {
        Sending {
            ends: SendingEnd::of(&meta.stop, &meta.stages),
            judge: AbortJudge::of_meta(meta),
            sent: 0,
            now: Sends::Yes,
        }
    }

    /// Takes the run's next line (its index its own, not shifted onto a merged timeline).
    pub fn take(&mut self, line: &IntervalLine) {
        let index = line.record.index;
        let before = self.sent;
        self.sent = self.sent.saturating_add(line.record.sent_first());
        if self.now == Sends::Aborting {
            return;
        }
        if self.judge.judge(line).is_some() {
            self.now = Sends::Aborting;
        } else if self.ends.drains(index, before) {
            // As the page and the progress line say of one run: the second that ends the
            // sending still sends; the next drains.
            self.now = Sends::Drained;
        }
    }

    /// What the lines read so far say.
    pub fn now(&self) -> Sends {
        self.now
    }

    /// The planned sending's end in whole seconds of the run's own clock, when timed.
    pub fn planned_secs(&self) -> Option<u64> {
        self.ends.secs()
    }
}
