//! The safety stop: each recorded second is judged against the run's abort conditions
//! (`--abort-when`), and the run is stopped gracefully (as a sweep's limit stops it: the
//! requests in flight get their grace, everything sent is kept) the first time one has held
//! for its whole window. It reads only the seconds the recorder already hands over, on the
//! thread that stores them: no work per request.
//!
//! # Which seconds count
//! - A second counts the requests *measured* as every report counts them: those sent for a
//!   stage that is not a warm-up (warm-up seconds never start, extend or break a streak).
//! - A second with nothing to measure for a condition neither extends nor breaks its streak:
//!   a second without one completion (a hung server: its requests fail with a timeout when
//!   `--timeout` fires, and those seconds count as errors), or for a latency condition a
//!   second without one expected answer (a latency is the answered requests', as for
//!   `--slo`). `rps` is measured every whole second, 0 included.
//! - The seconds after the last send (the drain) are not judged: the run is ending anyway.
//!   Nor, for `rps`, is the second in which sending ended, which is only partly a second
//!   of load.

use crate::engine::CancellationToken;
use crate::plan::{parse_abort_condition, AbortWhen, AttackPlan, Metric, SendingEnd, Stage, Stop};
use crate::record::RequestStats;
use crate::run::Observer;
use crate::store::{Aborted, IntervalLine, RunMeta};
use std::borrow::Cow;

/// How one condition stands: the streak of seconds it has held in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Streak {
    /// The first second of the streak, while there is one.
    from: Option<u64>,
    /// Seconds in the streak the condition held in.
    held: u64,
}

impl Streak {
    /// Takes second `index`'s judgement (`None`: nothing to judge); true once the streak
    /// reaches `needed` seconds.
    fn judge(&mut self, index: u64, holds: Option<bool>, needed: u64) -> bool {
        match holds {
            None => {}
            Some(false) => *self = Streak::default(),
            Some(true) => {
                self.from.get_or_insert(index);
                self.held += 1;
            }
        }
        self.held >= needed
    }
}

/// A run's seconds judged against its abort conditions, as the run itself judges them: the
/// run's [`AbortWatch`] stops it on the first that held; `watch` reads from a shard's lines
/// that it is stopping, before its `end.json` says so.
#[derive(Debug, Clone)]
pub struct AbortJudge {
    conditions: Vec<(AbortWhen, Option<usize>, Streak)>,
    warmup: Vec<bool>,
    /// When the sending ends, for knowing the drain from the load.
    ends: SendingEnd,
    sent: u64,
}

impl AbortJudge {
    /// Judges against `conditions` the seconds of a run of `requests` (their names, in plan
    /// order), `stages`, and `stop`.
    pub fn new<'n>(
        conditions: &[AbortWhen],
        requests: impl Iterator<Item = &'n str> + Clone,
        stages: &[Stage],
        stop: &Stop,
    ) -> AbortJudge {
        AbortJudge {
            conditions: conditions
                .iter()
                .map(|a| {
                    // Validated with the plan: a named request is one of the plan's.
                    let request = a
                        .limit
                        .request
                        .as_ref()
                        .and_then(|name| requests.clone().position(|r| r == name.as_str()));
                    (a.clone(), request, Streak::default())
                })
                .collect(),
            warmup: stages.iter().map(|s| s.warmup).collect(),
            ends: SendingEnd::of(stop, stages),
            sent: 0,
        }
    }

    /// Judges the seconds of a stored run by the conditions its metadata keeps (each was
    /// read when the run began; one that no longer reads is left out, never guessed at).
    pub fn of_meta(meta: &RunMeta) -> AbortJudge {
        let conditions: Vec<AbortWhen> = meta
            .abort_when
            .iter()
            .filter_map(|text| parse_abort_condition(text).ok())
            .collect();
        AbortJudge::new(
            &conditions,
            meta.requests.iter().map(|r| r.name.as_str()),
            &meta.stages,
            &meta.stop,
        )
    }

    /// Whether there is anything to judge.
    pub fn is_empty(&self) -> bool {
        self.conditions.is_empty()
    }

    /// The measured requests of a second, by request: those sent for a stage that is not a
    /// warm-up (all of them in a run without stages).
    fn measured<'l>(&self, line: &'l IntervalLine) -> Cow<'l, [RequestStats]> {
        if self.warmup.iter().all(|w| !w) {
            return Cow::Borrowed(&line.record.requests);
        }
        let mut out: Vec<RequestStats> = Vec::new();
        for (stage, step) in &line.record.steps {
            if self
                .warmup
                .get(usize::from(*stage))
                .copied()
                .unwrap_or(false)
            {
                continue;
            }
            if out.len() < step.requests.len() {
                out.resize_with(step.requests.len(), RequestStats::default);
            }
            for (sum, r) in out.iter_mut().zip(&step.requests) {
                sum.add(r);
            }
        }
        Cow::Owned(out)
    }

    /// Judges the run's next second; the condition that completed its window, if one did.
    pub fn judge(&mut self, line: &IntervalLine) -> Option<Aborted> {
        let index = line.record.index;
        let before = self.sent;
        self.sent += line.record.sent_first();
        if self.ends.drains(index, before) {
            return None;
        }
        // The second in which sending ended holds only part of a second's load.
        let whole = self.ends.whole(index, self.sent);
        let measured = self.measured(line);
        let mut fired = None;
        for (cond, request, streak) in &mut self.conditions {
            let mut scope = RequestStats::default();
            match request {
                Some(i) => {
                    if let Some(r) = measured.get(*i) {
                        scope.add(r);
                    }
                }
                None => measured.iter().for_each(|r| scope.add(r)),
            }
            let (holds, last) = judge_second(cond, &scope, whole);
            if streak.judge(index, holds, cond.seconds_needed()) && fired.is_none() {
                fired = Some(Aborted {
                    condition: cond.text.clone(),
                    window_secs: cond.window.as_secs(),
                    from_second: streak.from.unwrap_or(index),
                    held_secs: streak.held,
                    at_second: index + 1,
                    last,
                });
            }
        }
        fired
    }
}

/// Watches a run's seconds against its abort conditions, stops it through its handle at
/// the first that held for its window, and passes every second on to `inner`.
pub struct AbortWatch<'a> {
    judge: AbortJudge,
    handle: CancellationToken,
    aborted: Option<Aborted>,
    inner: &'a mut dyn Observer,
}

impl<'a> AbortWatch<'a> {
    /// Watches the seconds of `plan` against its abort conditions, stopping the run through
    /// `handle`; every second goes on to `inner` first.
    pub fn new(plan: &AttackPlan, handle: CancellationToken, inner: &'a mut dyn Observer) -> Self {
        AbortWatch {
            judge: AbortJudge::new(
                &plan.abort,
                plan.requests.iter().map(|r| r.name.as_str()),
                &plan.stages,
                &plan.stop,
            ),
            handle,
            aborted: None,
            inner,
        }
    }

    /// The condition that stopped the run, once one did.
    pub fn aborted(&self) -> Option<&Aborted> {
        self.aborted.as_ref()
    }
}

/// Whether `cond` holds over one second's `scope` (`None`: nothing to judge), and the
/// measure as it reads in the condition's unit.
fn judge_second(cond: &AbortWhen, scope: &RequestStats, whole: bool) -> (Option<bool>, String) {
    let limit = &cond.limit;
    let judged = match limit.metric {
        Metric::Rps => whole,
        Metric::ErrorRate => scope.count > 0,
        Metric::Quantile(_) | Metric::Mean | Metric::Max => !scope.latency.is_empty(),
    };
    if !judged {
        return (None, String::new());
    }
    let (value, measured) = crate::summary::measure(
        limit.metric,
        scope.count,
        scope.failures,
        &scope.latency,
        1.0,
    );
    (Some(limit.op.holds(value, limit.bound)), measured)
}

impl Observer for AbortWatch<'_> {
    fn interval(&mut self, line: &IntervalLine) {
        self.inner.interval(line);
        if self.aborted.is_some() || self.judge.is_empty() {
            return;
        }
        if let Some(a) = self.judge.judge(line) {
            self.inner.aborting(&a);
            self.handle.cancel();
            self.aborted = Some(a);
        }
    }

    fn notice(&mut self, notice: &crate::sample::Notice) {
        self.inner.notice(notice);
    }

    fn aborting(&mut self, aborted: &Aborted) {
        self.inner.aborting(aborted);
    }

    fn stopping(&mut self) {
        self.inner.stopping();
    }

    fn stopped_early(&self) -> Option<String> {
        self.inner.stopped_early()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_streak_stops_once_it_held_for_its_window() {
        let mut s = Streak::default();
        let seconds = [
            Some(true),
            Some(false),
            Some(true),
            None,
            Some(true),
            Some(true),
        ];
        let fired: Vec<bool> = seconds
            .iter()
            .enumerate()
            .map(|(i, h)| s.judge(i as u64, *h, 3))
            .collect();
        // A second that does not hold breaks the streak; one with nothing to judge pauses it.
        assert_eq!(fired, [false, false, false, false, false, true]);
        assert_eq!((s.from, s.held), (Some(2), 3));
    }

    #[test]
    fn a_window_of_nothing_stops_at_the_first_second_that_holds() {
        let mut s = Streak::default();
        assert!(!s.judge(0, Some(false), 1));
        assert!(!s.judge(1, None, 1));
        assert!(s.judge(2, Some(true), 1));
        assert_eq!((s.from, s.held), (Some(2), 1));
    }

    use crate::monitor::Health;
    use crate::plan::{
        parse_abort_when, Load, NamedRequest, Rate, RequestSpec, Stage, Stop, Target,
    };
    use crate::record::IntervalRecord;
    use crate::sample::{Outcome, Sample};
    use std::time::Duration;

    /// A second with `ok` answers of 1 ms and `failed` HTTP 503s, sent for `stage`.
    fn second(index: u64, ok: u64, failed: u64, stage: Option<u16>) -> IntervalLine {
        let mut record = IntervalRecord::new(index);
        record.sent = ok + failed;
        for i in 0..ok + failed {
            let outcome = Outcome::Status(if i < ok { 200 } else { 503 });
            let s = Sample {
                outcome,
                latency: Duration::from_millis(1),
                service: Duration::from_millis(1),
                lag: Duration::ZERO,
                connect: None,
                tls_handshake: None,
                first_byte: None,
                bytes_in: 0,
                bytes_out: 0,
                retried: false,
                request: 0,
                stage,
                expected: i < ok,
                iteration: None,
            };
            record.record(&s);
            if let Some(st) = stage {
                record.sent_for(st);
                record.record_step(st, &s, Duration::from_secs(index));
            }
        }
        IntervalLine {
            record,
            health: Health::default(),
            stage,
            server: None,
            shards: Vec::new(),
        }
    }

    fn plan(abort: &str, secs: u64) -> AttackPlan {
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
                duration: Some(Duration::from_secs(secs)),
                requests: None,
            },
        );
        plan.abort = parse_abort_when(abort).unwrap();
        plan
    }

    /// Feeds `seconds` to a watch of `plan`; the abort, and whether the run was told to stop.
    fn watch(plan: &AttackPlan, seconds: &[IntervalLine]) -> (Option<Aborted>, bool) {
        let token = CancellationToken::new();
        let mut inner = ();
        let mut w = AbortWatch::new(plan, token.clone(), &mut inner);
        for s in seconds {
            w.interval(s);
        }
        (w.aborted().cloned(), token.is_cancelled())
    }

    #[test]
    fn a_stored_runs_conditions_are_judged_as_the_run_judged_them() {
        // As `watch` judges a shard from its metadata: the same second, the same words.
        let p = plan("p99 > 5s, errors > 50% for 2s", 60);
        let meta = RunMeta::describe(&p, &[], None, "HTTP/1.1", &[]);
        let mut seconds: Vec<IntervalLine> = (0..3).map(|i| second(i, 10, 0, None)).collect();
        seconds.extend((3..6).map(|i| second(i, 0, 10, None)));
        let mut judge = AbortJudge::of_meta(&meta);
        let fired = seconds.iter().find_map(|s| judge.judge(s));
        assert_eq!(fired, watch(&p, &seconds).0);
        assert_eq!(fired.map(|a| a.at_second), Some(5));
    }

    #[test]
    fn the_run_stops_at_the_end_of_the_window_naming_the_condition_and_its_seconds() {
        let p = plan("p99 > 5s, errors > 50% for 2s", 60);
        // Failing from second 3 on, with a second of silence inside the streak.
        let mut seconds: Vec<IntervalLine> = (0..3).map(|i| second(i, 10, 0, None)).collect();
        seconds.push(second(3, 2, 8, None));
        seconds.push(second(4, 0, 0, None));
        seconds.push(second(5, 0, 10, None));
        seconds.push(second(6, 0, 10, None));
        let (aborted, stopped) = watch(&p, &seconds);
        let a = aborted.unwrap();
        assert!(stopped);
        assert_eq!(a.condition, "errors > 50% for 2s");
        assert_eq!((a.from_second, a.held_secs, a.at_second), (3, 2, 6));
        assert_eq!((a.window_secs, a.last.as_str()), (2, "100.00%"));
    }

    #[test]
    fn a_condition_that_never_holds_never_stops_the_run() {
        let p = plan("errors > 50% for 2s", 60);
        let seconds: Vec<IntervalLine> = (0..60)
            .map(|i| second(i, 10, if i % 2 == 0 { 10 } else { 0 }, None))
            .collect();
        assert_eq!(watch(&p, &seconds), (None, false));
    }

    #[test]
    fn warm_up_and_drain_seconds_are_not_judged() {
        let mut p = plan("errors > 50%", 4);
        p.stages = vec![
            Stage {
                warmup: true,
                ..Stage::constant("warm-up", 10.0, Duration::from_secs(2))
            },
            Stage::constant("load", 10.0, Duration::from_secs(2)),
        ];
        let seconds = [
            second(0, 0, 10, Some(0)),
            second(1, 0, 10, Some(0)),
            second(2, 10, 0, Some(1)),
            second(3, 10, 0, Some(1)),
            // The drain: the answers of the last second's requests, all failed.
            second(4, 0, 10, Some(1)),
        ];
        assert_eq!(watch(&p, &seconds), (None, false));
        // Judged: the measured stage failing.
        let (a, _) = watch(&p, &[second(0, 10, 0, Some(0)), second(2, 0, 10, Some(1))]);
        assert_eq!(a.map(|a| (a.from_second, a.at_second)), Some((2, 3)));
    }

    #[test]
    fn throughput_is_judged_every_whole_second_even_when_nothing_completed() {
        let p = plan("rps < 5 for 3s", 10);
        let seconds: Vec<IntervalLine> = (0..10)
            .map(|i| second(i, if i < 4 { 10 } else { 0 }, 0, None))
            .collect();
        let (a, _) = watch(&p, &seconds);
        assert_eq!(a.map(|a| (a.from_second, a.at_second)), Some((4, 7)));
    }

    #[test]
    fn seconds_with_nothing_to_judge_never_stop_a_run() {
        let mut s = Streak::default();
        assert!((0..1000).all(|i| !s.judge(i, None, 1)));
        assert_eq!(s, Streak::default());
    }
}
