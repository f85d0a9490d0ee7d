//! What a run reports: its measured requests, told from its warm-up in one place.
//!
//! # One definition
//! A request belongs to the stage it was **sent** for (its sample carries the stage, and the
//! per-stage tallies of each interval, [`IntervalRecord::steps`], follow it to its answer),
//! wherever in time its answer falls. A run's **measured** requests are those sent for a
//! stage that is not a warm-up: every request, when no stage is one. Every count a report
//! shows (completions, status codes, errors, the Failures table, the per-request and
//! per-stage rows, latency, first byte, connections opened, bytes, retries, requests sent)
//! is of the measured requests, so a warm-up request answered after the warm-up ended is in
//! none of them, and the counts add up: completions = status codes + transport errors = the
//! per-request rows = the measured stages' rows = the per-second rows' measured completions.
//!
//! The generator's own numbers (its send rate held, lag, CPU, descriptors) are of the whole
//! run, warm-up included; so are the per-second counts of what was sent and completed in
//! each second (what the server did then, which the capacity search's steadiness reads),
//! each with its warm-up share beside it ([`IntervalDigest::warmup_completed`] …).
//!
//! Runs stored before the per-stage tallies kept their sends ([`Counting::BySecond`]) are
//! read as they were reported then: their measured requests are the completions of the
//! whole seconds that began after the warm-up.

use super::IntervalDigest;
use crate::plan::Stage;
use crate::record::{add_each, FlowStats, Histogram, IntervalRecord, RequestStats};
use crate::sample::Outcome;

/// How a run's measured requests are told from its warm-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Counting {
    /// No stage is a warm-up: every request is measured.
    #[default]
    Whole,
    /// By the stage each request was sent for (runs stored since the per-stage tallies kept
    /// their sends).
    ByStage,
    /// By the second each request completed in: the whole seconds that began after the
    /// warm-up (runs stored before).
    BySecond,
}

impl Counting {
    /// True when no stage was a warm-up.
    pub fn is_whole(&self) -> bool {
        *self == Counting::Whole
    }
}

/// The warm-up stages of a run.
#[derive(Clone, Copy)]
pub(super) struct Warmup<'a> {
    stages: &'a [Stage],
}

impl<'a> Warmup<'a> {
    pub(super) fn of(stages: &'a [Stage]) -> Self {
        Warmup { stages }
    }

    /// Whether stage `stage` is a warm-up.
    pub(super) fn is(&self, stage: u16) -> bool {
        self.stages
            .get(usize::from(stage))
            .is_some_and(|s| s.warmup)
    }

    fn any(&self) -> bool {
        self.stages.iter().any(|s| s.warmup)
    }
}

/// The measured part of a run, gathered line by line as the log is read (or as a live run
/// records it). It owns its stages, so a loader that lives as long as the run can hold it.
#[derive(Clone)]
pub(super) struct Gather {
    stages: Vec<Stage>,
    /// The lines of whole seconds outside the warm-up merged, for runs counted by second.
    by_second: IntervalRecord,
    /// Each line's digest counted by stage, then by second (warm-up runs only).
    digests: Vec<(IntervalDigest, IntervalDigest)>,
    /// Each line's digest when no stage is a warm-up.
    plain: Vec<IntervalDigest>,
}

impl Gather {
    pub(super) fn new(stages: &[Stage]) -> Self {
        Gather {
            stages: stages.to_vec(),
            by_second: IntervalRecord::new(0),
            digests: Vec::new(),
            plain: Vec::new(),
        }
    }

    /// Takes one line of the log.
    pub(super) fn line(&mut self, line: &super::IntervalLine) {
        let warmup = Warmup::of(&self.stages);
        if !warmup.any() {
            self.plain.push(IntervalDigest::of(line, Part::None));
            return;
        }
        let in_warmup = line.stage.is_some_and(|s| warmup.is(s));
        if !in_warmup {
            self.by_second.merge(&line.record);
        }
        self.digests.push((
            IntervalDigest::of(line, Part::Stages(warmup)),
            IntervalDigest::of(
                line,
                if in_warmup {
                    Part::WholeSecond
                } else {
                    Part::None
                },
            ),
        ));
    }

    /// The measured total, each line's digest, and how the warm-up was told apart, from
    /// `all` (every line merged).
    pub(super) fn finish(
        self,
        all: &IntervalRecord,
    ) -> (IntervalRecord, Vec<IntervalDigest>, Counting) {
        let warmup = Warmup::of(&self.stages);
        if !warmup.any() {
            return (all.clone(), self.plain, Counting::Whole);
        }
        if by_stage_known(all) {
            let total = record_of_stages(all, &self.by_second, |s| !warmup.is(s));
            let digests = self.digests.into_iter().map(|(d, _)| d).collect();
            (total, digests, Counting::ByStage)
        } else {
            let digests = self.digests.into_iter().map(|(_, d)| d).collect();
            (self.by_second, digests, Counting::BySecond)
        }
    }
}

/// Whether every stage's tally holds its sends and its requests, so a run can be counted
/// by stage (runs stored before the sends were kept cannot).
fn by_stage_known(all: &IntervalRecord) -> bool {
    !all.steps.is_empty()
        && all.steps.values().all(|s| {
            s.count == 0
                || (s.sent > 0 && s.requests.iter().map(|q| q.count).sum::<u64>() == s.count)
        })
}

/// Which part of one second's record was the warm-up's.
#[derive(Clone, Copy)]
enum Part<'a> {
    /// None of it.
    None,
    /// All of it (a second that began in a warm-up, counted by second).
    WholeSecond,
    /// The requests sent for these warm-up stages.
    Stages(Warmup<'a>),
}

/// Completions of `r` without an answer they expect: the same split as the Success ratio
/// and the Failures table. Records stored before requests were kept apart count transport
/// errors and statuses outside 2xx/3xx (the default expectation).
pub fn failed(r: &IntervalRecord) -> u64 {
    if !r.requests.is_empty() || r.completed() == 0 {
        return r.requests.iter().map(|q| q.failures).sum();
    }
    r.errors.values().sum::<u64>()
        + r.status
            .iter()
            .filter(|(code, _)| !Outcome::Status(**code).is_success())
            .map(|(_, n)| n)
            .sum::<u64>()
}

impl IntervalDigest {
    /// The digest of one second of a run still going, before any stage is known to be a
    /// warm-up's (the live diagnosis judges one stage at a time).
    pub fn of_live(line: &super::IntervalLine) -> Self {
        IntervalDigest::of(line, Part::None)
    }

    /// The digest of `line`, `warmup` naming the warm-up's part of it.
    fn of(line: &super::IntervalLine, warmup: Part<'_>) -> Self {
        let r = &line.record;
        let (mut sent, mut completed, mut failed_) = (0, 0, 0);
        // The second's percentiles are of its measured answers: by stage, those of the
        // requests sent for the measured stages (the second's whole, else).
        let mut latency = None;
        match warmup {
            Part::None => {}
            Part::WholeSecond => {
                (sent, completed, failed_) = (r.sent, r.completed(), failed(r));
            }
            Part::Stages(w) => {
                let mut measured = Histogram::new();
                let mut split = false;
                for (stage, step) in &r.steps {
                    if w.is(*stage) {
                        sent += step.sent;
                        completed += step.count;
                        failed_ += step.failures;
                        split |= !step.latency.is_empty();
                    } else {
                        measured.add(&step.latency);
                    }
                }
                latency = split.then_some(measured);
            }
        }
        let latency = latency.unwrap_or_else(|| r.latency_ok());
        let q = |p: f64| latency.quantile(p).as_micros() as u64;
        IntervalDigest {
            index: r.index,
            sent: r.sent,
            completed: r.completed(),
            failed: failed(r),
            warmup_sent: sent,
            warmup_completed: completed,
            warmup_failed: failed_,
            p50_us: q(0.5),
            p90_us: q(0.90),
            p99_us: q(0.99),
            max_us: q(1.0),
            lag_p99_us: r.lag.quantile(0.99).as_micros() as u64,
            connects: r.connect.len(),
            health: line.health,
            stage: line.stage,
            server: line.server.clone(),
        }
    }
}

/// The record of the requests sent for the stages `measured` keeps, from `all`'s per-stage
/// tallies: everything counted of a request is theirs. The generator's timing of the
/// measured seconds (lag, requests scheduled) comes from `seconds`: it is not kept per
/// stage. Per-class service times are not kept per stage either: `classes` holds the
/// classes' latency only.
pub fn record_of_stages(
    all: &IntervalRecord,
    seconds: &IntervalRecord,
    measured: impl Fn(u16) -> bool,
) -> IntervalRecord {
    let mut r = IntervalRecord::new(0);
    r.lag = seconds.lag.clone();
    r.scheduled = seconds.scheduled;
    for (stage, step) in all.steps.iter().filter(|(s, _)| measured(**s)) {
        r.sent += step.sent;
        r.retried += step.retried;
        r.bytes_out += step.bytes_out;
        r.first_byte.add(&step.first_byte);
        r.connect.add(&step.connect);
        r.tls_handshake.add(&step.tls_handshake);
        add_each(&mut r.requests, &step.requests, RequestStats::add);
        add_each(&mut r.flows, &step.flows, FlowStats::add);
        r.steps.insert(*stage, step.clone());
    }
    for q in &r.requests {
        for (code, n) in &q.status {
            *r.status.entry(*code).or_default() += n;
        }
        for (kind, n) in &q.errors {
            *r.errors.entry(*kind).or_default() += n;
        }
        r.bytes_in += q.bytes_in;
        if let Some(by) = q.by_class() {
            for (class, latency) in by.iter() {
                let mine = r.classes.entry(*class).or_default();
                mine.latency.add(&latency.expected);
                mine.latency.add(&latency.unexpected);
            }
        }
    }
    // A request whose classes cannot be split (stored before they were kept) leaves the
    // classes unknown rather than partial.
    if r.requests
        .iter()
        .any(|q| q.count > 0 && q.by_class().is_none())
    {
        r.classes.clear();
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::Health;
    use crate::plan::{AttackPlan, Load, NamedRequest, Rate, RequestSpec, Stop, Target};
    use crate::sample::Sample;
    use crate::store::{IntervalLine, RunDir, RunMeta};
    use std::time::Duration;

    fn sample(stage: u16, latency_ms: u64) -> Sample {
        Sample {
            outcome: Outcome::Status(200),
            latency: Duration::from_millis(latency_ms),
            service: Duration::from_millis(latency_ms),
            lag: Duration::ZERO,
            connect: None,
            tls_handshake: None,
            first_byte: Some(Duration::from_millis(1)),
            bytes_in: 1,
            bytes_out: 0,
            retried: false,
            request: 0,
            stage: Some(stage),
            expected: true,
            iteration: None,
        }
    }

    /// A warm-up second then a measured one: 10 requests sent in each, the warm-up's last
    /// 4 answered in the measured second. `sends` records the sends per stage (runs stored
    /// before it did not).
    fn stored(sends: bool) -> (tempfile::TempDir, crate::store::StoredRun) {
        let target = Target::parse("http://127.0.0.1:9/").unwrap();
        let request = NamedRequest::single(
            RequestSpec::parse("GET", &[], bytes::Bytes::new()).unwrap(),
            &target,
        );
        let mut plan = AttackPlan::new(
            target,
            vec![request],
            Load::Open { rate: Rate(10.0) },
            Stop {
                duration: Some(Duration::from_secs(2)),
                requests: None,
            },
        );
        plan.stages = vec![
            Stage {
                warmup: true,
                ..Stage::constant("warm", 10.0, Duration::from_secs(1))
            },
            Stage::constant("hold", 10.0, Duration::from_secs(1)),
        ];
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::at(dir.path().join("run"));
        let meta = RunMeta::describe(&plan, &[], None, "HTTP/1.1", &[]);
        let mut log = run.create(&meta).unwrap();
        let mut lines = [IntervalRecord::new(0), IntervalRecord::new(1)];
        for stage in 0..2u16 {
            for k in 0..10u64 {
                let sent_ms = 1000 * u64::from(stage) + 100 * k;
                let late = stage == 0 && k >= 6;
                let latency = if late { 500 } else { 5 };
                let done_ms = sent_ms + latency;
                let sent = &mut lines[(sent_ms / 1000) as usize];
                sent.sent += 1;
                if sends {
                    sent.sent_for(stage);
                }
                let s = sample(stage, latency);
                let done = &mut lines[(done_ms / 1000) as usize];
                done.record(&s);
                done.record_step(stage, &s, Duration::from_millis(done_ms));
            }
        }
        for (i, record) in lines.into_iter().enumerate() {
            log.append(&IntervalLine {
                record,
                health: Health::default(),
                stage: Some(i as u16),
                server: None,
                shards: Vec::new(),
            })
            .unwrap();
        }
        let stored = run.load().unwrap();
        (dir, stored)
    }

    #[test]
    fn a_warm_up_request_answered_after_the_warm_up_is_left_out() {
        let (_dir, run) = stored(true);
        assert_eq!(run.counting, Counting::ByStage);
        assert_eq!((run.total.completed(), run.total.sent), (10, 10));
        assert_eq!(run.total.requests[0].count, 10);
        // The measured second completed 14, 4 of them the warm-up's.
        let second = &run.intervals[1];
        assert_eq!((second.completed, second.warmup_completed), (14, 4));
        assert_eq!(second.measured_completed(), 10);
        assert_eq!(run.intervals[0].warmup_sent, 10);
    }

    #[test]
    fn a_run_stored_before_sends_were_kept_per_stage_counts_whole_seconds() {
        let (_dir, run) = stored(false);
        assert_eq!(run.counting, Counting::BySecond);
        assert_eq!(run.total.completed(), 14);
        let measured: u64 = run.intervals.iter().map(|d| d.measured_completed()).sum();
        assert_eq!(measured, 14);
    }
}
