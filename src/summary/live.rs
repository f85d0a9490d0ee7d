//! The diagnosis so far of a run still going: the report's own judge, fed each second as it
//! arrives, so what the progress line (or a live page) says is what the report will say of
//! the same seconds. A staged run is judged on its current stage, as the report judges each
//! step on its own.

use super::diagnosis::{self, Asked, Diagnosis, Evidence};
use crate::plan::{AttackPlan, HttpVersion, Load, Scheme, Stage};
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
        }
    }

    /// Takes one more second; a new stage starts the tally again.
    pub fn add(&mut self, line: &IntervalLine) {
        if line.stage != self.stage {
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

    /// The diagnosis of the seconds so far (of the current stage, in a staged run).
    pub fn diagnosis(&self) -> Diagnosis {
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
                duration: Some(Duration::from_secs(10)),
                requests: None,
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
