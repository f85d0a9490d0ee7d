//! The diagnosis so far of a run still going: the report's own judge, fed each second as it
//! arrives, so what the progress line (or a live page) says is what the report will say of
//! the same seconds. A staged run is judged on its current stage, as the report judges each
//! step on its own. Only the seconds sent through whole are judged, as the report's are
//! (`summary::whole`): a partial last second (a fractional duration, a count ending in it,
//! a stop) sent less than its share, and judged it would read as the rate falling short.

use super::diagnosis::{self, Asked, Diagnosis, Evidence, Limit};
use crate::plan::{AttackPlan, HttpVersion, Load, Scheme, SendingEnd, Stage};
use crate::record::IntervalRecord;
use crate::store::{IntervalDigest, IntervalLine, RequestMeta, RunMeta};

/// What the judge needs of the seconds seen so far.
pub struct SoFar {
    requests: Vec<RequestMeta>,
    load: Load,
    stages: Vec<Stage>,
    threads: usize,
    connection_cap: Option<u32>,
    poisson: bool,
    stage: Option<u16>,
    record: IntervalRecord,
    seconds: Vec<IntervalDigest>,
    cpu_secs: f64,
    waiting_secs: f64,
    /// Where the plan's sending ends, and the first sends so far: which second is whole.
    end: SendingEnd,
    sent: u64,
    /// The run was stopped (Ctrl-C, the stop button): no second from then on is whole.
    stopped: bool,
    /// The first measured stage that ended at a limit.
    first_limit: Option<Diagnosis>,
}

impl SoFar {
    /// Nothing seen yet of a run of `plan`.
    pub fn new(plan: &AttackPlan) -> SoFar {
        let meta = RunMeta::describe(plan, &[], None, "", &[]);
        // One connection carries one request at a time over HTTP/1.1, which plain http
        // always speaks (see `summary::generator::connection_cap`).
        let http1 = plan.connection.http == HttpVersion::Http1
            || (plan.connection.http == HttpVersion::Auto && plan.target.scheme == Scheme::Http);
        SoFar {
            requests: meta.requests,
            load: plan.load,
            stages: plan.stages.clone(),
            threads: plan.threads,
            connection_cap: (matches!(plan.load, Load::Open { .. }) && http1)
                .then_some(plan.connection.max_connections),
            poisson: plan.arrivals.kind() == crate::plan::ArrivalKind::Poisson,
            stage: None,
            record: IntervalRecord::new(0),
            seconds: Vec::new(),
            cpu_secs: 0.0,
            waiting_secs: 0.0,
            end: SendingEnd::of(&plan.stop, &plan.stages),
            sent: 0,
            stopped: false,
            first_limit: None,
        }
    }

    /// The run was stopped before its plan's end: the second it stopped in, and those
    /// after it, are not judged (the report judges the seconds before the stop).
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// Takes one more second, when it was sent through whole; a new stage starts the tally
    /// again.
    pub fn add(&mut self, line: &IntervalLine) {
        // All sends, retries too, as the report's seconds count them (`summary::whole`).
        let sent_through = self.sent.saturating_add(line.record.sent);
        self.sent = sent_through;
        if self.stopped || !self.end.whole(line.record.index, sent_through) {
            return;
        }
        if line.stage != self.stage {
            self.judge_finished_stage();
            self.stage = line.stage;
            self.record = IntervalRecord::new(0);
            self.seconds.clear();
            self.cpu_secs = 0.0;
            self.waiting_secs = 0.0;
        }
        self.record.merge(&line.record);
        self.seconds.push(IntervalDigest::of_live(line));
        self.cpu_secs += line.health.cpu.total.as_secs_f64();
        self.waiting_secs += line.health.cpu.waiting.as_secs_f64();
    }

    /// The first measured stage found at a limit, kept as the run's verdict, as the
    /// report's is (`diagnosis::of_staged_run`): a later step too short to judge, or one
    /// judged fine, does not undo it.
    fn judge_finished_stage(&mut self) {
        let measured = self
            .stage
            .and_then(|i| self.stages.get(usize::from(i)))
            .is_some_and(|s| !s.warmup);
        if self.first_limit.is_some() || !measured || self.seconds.is_empty() {
            return;
        }
        let d = self.of_stage();
        if matches!(
            d.limit,
            Limit::Server | Limit::Generator | Limit::Both | Limit::ChangedWithTime
        ) {
            self.first_limit = Some(d);
        }
    }

    /// The diagnosis so far: the first measured stage found at a limit, in a staged run
    /// that has one; otherwise the seconds so far (of the current stage, in a staged run).
    pub fn diagnosis(&self) -> Diagnosis {
        match &self.first_limit {
            Some(d) => d.clone(),
            None => self.of_stage(),
        }
    }

    /// The diagnosis of the seconds so far (of the current stage, in a staged run).
    fn of_stage(&self) -> Diagnosis {
        let secs = self.seconds.len() as f64;
        let share = |s: f64| {
            if secs > 0.0 {
                s / secs / self.threads.max(1) as f64
            } else {
                0.0
            }
        };
        let stage = self.stage.and_then(|i| self.stages.get(usize::from(i)));
        let asked = match (self.load, stage) {
            (Load::Open { rate }, None) if secs > 0.0 => Asked::Rate {
                asked: rate.per_second(),
                sent: self.record.sent_first() as f64 / secs,
            },
            (Load::Open { .. }, Some(s)) if secs > 0.0 && s.from == s.to => Asked::Rate {
                asked: s.from,
                sent: self.record.sent_first() as f64 / secs,
            },
            _ => Asked::Nothing,
        };
        let constant = stage.is_none_or(|s| s.from == s.to);
        diagnosis::diagnose(&Evidence {
            record: &self.record,
            requests: &self.requests,
            asked,
            cpu_share: share(self.cpu_secs),
            threads: self.threads,
            waiting_share: Some(share(self.waiting_secs)),
            descriptors: None,
            connection_cap: self.connection_cap,
            open_model: matches!(self.load, Load::Open { .. }),
            poisson: self.poisson,
            seconds: if constant { &self.seconds } else { &[] },
            whole_secs: Some(secs),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{NamedRequest, Rate, RequestSpec, Stop, Target};
    use crate::sample::{Outcome, Sample};
    use std::time::Duration;

    fn plan(rate: f64) -> AttackPlan {
        plan_of(rate, Duration::from_secs(10), None)
    }

    fn plan_of(rate: f64, duration: Duration, requests: Option<u64>) -> AttackPlan {
        let target = Target::parse("http://127.0.0.1:9/").unwrap();
        let request = NamedRequest::single(
            RequestSpec::parse("GET", &[], bytes::Bytes::new()).unwrap(),
            &target,
        );
        AttackPlan::new(
            target,
            vec![request],
            Load::Open { rate: Rate(rate) },
            Stop {
                duration: Some(duration),
                requests,
            },
        )
    }

    /// A second of `n` answers with `status`, on time.
    fn second(index: u64, n: u64, status: u16) -> IntervalLine {
        let mut record = IntervalRecord::new(index);
        record.sent = n;
        for _ in 0..n {
            record.record(&Sample {
                outcome: Outcome::Status(status),
                latency: Duration::from_millis(2),
                service: Duration::from_millis(2),
                lag: Duration::ZERO,
                connect: None,
                tls_handshake: None,
                first_byte: None,
                bytes_in: 0,
                bytes_out: 0,
                retried: false,
                request: 0,
                stage: None,
                expected: status < 400,
                iteration: None,
            });
        }
        IntervalLine {
            record,
            health: Default::default(),
            stage: None,
            server: None,
            shards: Vec::new(),
        }
    }

    #[test]
    fn the_verdict_so_far_is_the_reports_of_the_same_seconds() {
        let mut so_far = SoFar::new(&plan(100.0));
        so_far.add(&second(0, 100, 200));
        // One second is too short to say it kept up.
        assert_eq!(so_far.diagnosis().limit, crate::summary::Limit::CannotTell);
        for i in 1..4 {
            so_far.add(&second(i, 100, 200));
        }
        assert_eq!(so_far.diagnosis().limit, crate::summary::Limit::Neither);

        // The report judges the seconds sent through whole, not a partial last one.
        let mut partial = SoFar::new(&plan_of(100.0, Duration::from_millis(3_500), None));
        for i in 0..3 {
            partial.add(&second(i, 100, 200));
        }
        partial.add(&second(3, 50, 200));
        assert_eq!(partial.diagnosis().limit, crate::summary::Limit::Neither);
        let mut counted = SoFar::new(&plan_of(100.0, Duration::from_secs(60), Some(250)));
        for (i, n) in [100, 100, 50].into_iter().enumerate() {
            counted.add(&second(i as u64, n, 200));
        }
        assert_eq!(counted.diagnosis().limit, crate::summary::Limit::Neither);
        // Stopped (Ctrl-C) in the fourth second: its few sends are not the rate.
        let mut stopped = SoFar::new(&plan(100.0));
        for i in 0..3 {
            stopped.add(&second(i, 100, 200));
        }
        stopped.stop();
        stopped.add(&second(3, 20, 200));
        assert_eq!(stopped.diagnosis().limit, crate::summary::Limit::Neither);

        // A sweep whose first step was at a limit: a last step too short to judge (or
        // judged fine) does not undo it, as it does not in the report.
        let mut sweep = plan(100.0);
        sweep.stop.duration = None;
        sweep.stages = vec![
            Stage::constant("100 req/s", 100.0, Duration::from_secs(3)),
            Stage::constant("200 req/s", 200.0, Duration::from_secs(2)),
        ];
        let mut swept = SoFar::new(&sweep);
        for i in 0..3 {
            // One in ten answered 503: the server's overload.
            let mut s = second(i, 90, 200);
            s.record.merge(&second(i, 10, 503).record);
            s.stage = Some(0);
            swept.add(&s);
        }
        assert_eq!(swept.diagnosis().limit, crate::summary::Limit::Server);
        let mut s = second(3, 200, 200);
        s.stage = Some(1);
        swept.add(&s);
        assert_eq!(swept.diagnosis().limit, crate::summary::Limit::Server);

        let mut walled = SoFar::new(&plan(100.0));
        for i in 0..3 {
            walled.add(&second(i, 100, 401));
        }
        assert_eq!(
            walled.diagnosis().limit,
            crate::summary::Limit::NothingSucceeded
        );
    }
}
