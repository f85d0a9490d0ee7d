//! The time a run's measured requests took, and the rates over it.
//!
//! # Definitions
//! - The **measured span** runs from the first measured request's intended send to the last
//!   measured answer, less the warm-up stages between measured ones. A run without stages starts at 0 and ends with the run (its attack
//!   and the wait for the last answers: vegeta's span); a staged run's span is read from its
//!   measured stages' tallies, so a run of one measured stage (a capacity probe) has that
//!   stage's span exactly, and the same throughput.
//! - **Throughput** is the measured requests answered as they expect, per second of the
//!   measured span; a per-request row's RPS is its completions over the same span, so the
//!   rows add up to the run's.
//! - The **send rate** (`requests.rate`) is the measured requests sent (retries left out)
//!   per second of their sending: over the run, from the first send to the last (`n`
//!   requests span `n - 1` gaps), or, in a run with warm-ups, over the measured stages'
//!   lengths, as each stage's row has it. The generator's own rate held is over the whole
//!   run, warm-up included.
//! - Runs stored before sends were kept per stage ([`Counting::BySecond`]) keep the span
//!   they were reported with: the run less its whole warm-up seconds.

use crate::record::IntervalRecord;
use crate::store::{Counting, StoredRun};

/// When a run's measured requests were sent and answered, in seconds since its start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    /// The first measured request's intended send.
    pub from_secs: f64,
    /// The last send of the run.
    pub sent_to_secs: f64,
    /// From the first measured request's intended send to the last measured answer.
    pub secs: f64,
}

impl Span {
    /// The measured span of `run`, which sent its last request `attack_secs` and took
    /// `total_secs` from its start; `warmup_secs` whole seconds of warm-up for runs counted
    /// by second.
    pub fn of(run: &StoredRun, attack_secs: f64, total_secs: f64, warmup_secs: f64) -> Span {
        let whole = Span {
            from_secs: 0.0,
            sent_to_secs: attack_secs,
            secs: total_secs,
        };
        match run.counting {
            Counting::BySecond => Span {
                from_secs: warmup_secs.min(total_secs),
                secs: (total_secs - warmup_secs).max(0.0),
                ..whole
            },
            Counting::Whole | Counting::ByStage => match of_steps(&run.total) {
                // Computed as a stage's own span is, so one measured stage's numbers and
                // the run's are the same to the last bit; the warm-ups between measured
                // stages (a sweep's `--warmup` before each step) are not measured time.
                Some((from_us, to_us)) => Span {
                    from_secs: from_us as f64 / 1e6,
                    secs: (to_us.saturating_sub(from_us) as f64 / 1e6 - warmups_between(run))
                        .max(0.0),
                    ..whole
                },
                None => whole,
            },
        }
    }

    /// `n` per second of the span (0 over no time).
    pub fn per_sec(&self, n: u64) -> f64 {
        per_sec(n, self.secs)
    }

    /// `sent` requests per second of their sending, `lead` gaps before the first (see
    /// [`super::shard_lead`]).
    pub fn send_rate(&self, sent: u64, lead: f64) -> f64 {
        super::send_rate(sent, (self.sent_to_secs - self.from_secs).max(0.0), lead)
    }
}

/// Seconds of warm-up stages between the first and the last measured stage with answers.
fn warmups_between(run: &StoredRun) -> f64 {
    let stages = &run.meta.stages;
    let answered = |i: usize| {
        u16::try_from(i)
            .ok()
            .and_then(|i| run.total.steps.get(&i))
            .is_some_and(|s| s.count > 0)
    };
    let measured = |i: &usize| !stages[*i].warmup && answered(*i);
    let (Some(first), Some(last)) = (
        (0..stages.len()).find(measured),
        (0..stages.len()).rfind(measured),
    ) else {
        return 0.0;
    };
    stages[first..=last]
        .iter()
        .filter(|s| s.warmup)
        .map(|s| s.duration.as_secs_f64())
        .sum()
}

/// The earliest intended send and the latest answer of the stages `total` keeps, µs; none
/// for a run without stages or without answers.
fn of_steps(total: &IntervalRecord) -> Option<(u64, u64)> {
    let answered = total.steps.values().filter(|s| s.count > 0);
    let from = answered.clone().map(|s| s.first_us).min()?;
    let to = answered.map(|s| s.last_us).max()?;
    Some((from, to))
}

/// `n` per `secs` seconds (0 over no time): every rate of a count over a span.
pub fn per_sec(n: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        n as f64 / secs
    } else {
        0.0
    }
}
