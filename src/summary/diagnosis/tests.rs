use super::*;
use crate::record::{ErrorKindKey, IntervalRecord};
use crate::sample::{ErrorKind, Outcome, Sample};
use crate::store::{IntervalDigest, RequestMeta};

fn meta() -> Vec<RequestMeta> {
    vec![RequestMeta {
        name: "GET /".into(),
        weight: 1,
        method: "GET".into(),
        path: "/".into(),
        headers: Vec::new(),
        body_bytes: 0,
        expect: crate::plan::Expect {
            status: vec![(200, 399)],
            body: None,
            json: Vec::new(),
        },
        login: false,
    }]
}

fn sample(outcome: Outcome, expected: bool, lag_ms: u64) -> Sample {
    Sample {
        outcome,
        latency: Duration::from_millis(2 + lag_ms),
        service: Duration::from_millis(2),
        lag: Duration::from_millis(lag_ms),
        connect: None,
        tls_handshake: None,
        first_byte: Some(Duration::from_millis(1)),
        bytes_in: 10,
        bytes_out: 0,
        retried: false,
        request: 0,
        stage: None,
        expected,
        iteration: None,
    }
}

fn record(answered: u64, lag_ms: u64) -> IntervalRecord {
    let mut r = IntervalRecord::new(0);
    for _ in 0..answered {
        r.record(&sample(Outcome::Status(200), true, lag_ms));
    }
    r
}

/// Steady seconds: `n` of them at 100 sent and completed, a 2 ms median.
fn steady(n: u64) -> Vec<IntervalDigest> {
    (0..n)
        .map(|index| IntervalDigest {
            index,
            sent: 100,
            completed: 100,
            p50_us: 2_000,
            ..Default::default()
        })
        .collect()
}

struct Case {
    record: IntervalRecord,
    requests: Vec<RequestMeta>,
    seconds: Vec<IntervalDigest>,
    asked: Asked,
    cpu_share: f64,
    waiting_share: Option<f64>,
    descriptors: Option<(u64, u64)>,
    connection_cap: Option<u32>,
    open_model: bool,
}

impl Case {
    fn new(record: IntervalRecord, asked: Asked) -> Case {
        Case {
            record,
            requests: meta(),
            seconds: steady(10),
            asked,
            cpu_share: 0.05,
            waiting_share: Some(0.0),
            descriptors: Some((20, 1024)),
            connection_cap: None,
            open_model: true,
        }
    }

    fn judge(&self) -> Diagnosis {
        diagnose(&self.evidence())
    }

    fn evidence(&self) -> Evidence<'_> {
        Evidence {
            record: &self.record,
            requests: &self.requests,
            asked: self.asked,
            cpu_share: self.cpu_share,
            threads: 1,
            waiting_share: self.waiting_share,
            descriptors: self.descriptors,
            connection_cap: self.connection_cap,
            open_model: self.open_model,
            poisson: false,
            seconds: &self.seconds,
            whole_secs: Some(self.seconds.len() as f64),
        }
    }
}

fn rate(asked: f64, sent: f64) -> Asked {
    Asked::Rate { asked, sent }
}

#[test]
fn a_run_that_kept_up_blames_nobody() {
    let d = Case::new(record(1000, 0), rate(100.0, 100.0)).judge();
    assert_eq!(d.limit, Limit::Neither);
    assert!(d.findings.is_empty(), "{d:?}");
}

#[test]
fn lateness_throughout_names_nobody_and_says_it_cannot_tell() {
    // Late and short with the generator idle and the server answering: a symptom, no
    // evidence for either side.
    let mut c = Case::new(record(1000, 50), rate(100.0, 80.0));
    for s in &mut c.seconds {
        s.lag_p99_us = 50_000;
    }
    assert_eq!(c.judge().limit, Limit::CannotTell);
}

#[test]
fn every_answer_a_401_is_nothing_succeeded_with_the_reason() {
    let mut r = IntervalRecord::new(0);
    for _ in 0..600 {
        r.record(&sample(Outcome::Status(401), false, 0));
    }
    let d = Case::new(r, rate(200.0, 200.0)).judge();
    assert_eq!(d.limit, Limit::NothingSucceeded);
    assert_eq!(
        d.findings,
        vec![Finding::NothingSucceeded {
            completed: 600,
            reasons: vec![ReasonCount {
                reason: crate::summary::Reason::Status { code: 401 },
                count: 600
            }]
        }]
    );
}

#[test]
fn refusals_name_the_server_with_their_share() {
    let mut r = record(900, 30);
    r.errors.insert(ErrorKindKey(ErrorKind::Reset), 100);
    r.status.insert(503, 50);
    let d = Case::new(r, rate(3000.0, 2000.0)).judge();
    assert_eq!(d.limit, Limit::Server, "{d:?}");
    assert!(d.findings.iter().any(
        |f| matches!(f, Finding::ServerFailed { error, count: 100, share }
            if error == "reset" && (0.09..=0.1).contains(share))
    ));
    assert!(d
        .on(Blame::Server)
        .any(|f| matches!(f, Finding::ServerStatus { status: 503, .. })));
}

#[test]
fn a_rare_reset_is_an_incident_not_a_limit() {
    let mut r = record(10_000, 0);
    r.errors.insert(ErrorKindKey(ErrorKind::Reset), 3);
    assert_eq!(Case::new(r, Asked::Nothing).judge().limit, Limit::Neither);
}

#[test]
fn the_generators_own_shortages_name_it() {
    let mut r = record(100, 40);
    r.errors
        .insert(ErrorKindKey(ErrorKind::TooManyOpenFiles), 9);
    let mut c = Case::new(r, Asked::Nothing);
    c.descriptors = Some((39, 40));
    let d = c.judge();
    assert_eq!(d.limit, Limit::Generator, "{d:?}");
    assert!(d.findings.contains(&Finding::Descriptors {
        peak: 39,
        limit: 40
    }));
}

#[test]
fn a_busy_or_starved_cpu_names_the_generator() {
    let mut c = Case::new(record(1000, 30), rate(1000.0, 900.0));
    c.cpu_share = 0.97;
    assert_eq!(c.judge().limit, Limit::Generator);
    c.cpu_share = 0.3;
    c.waiting_share = Some(0.45);
    assert_eq!(c.judge().limit, Limit::Generator);
    // The same wait with the rate held and nothing late held nothing back.
    let mut on_time = Case::new(record(1000, 0), rate(1000.0, 1000.0));
    on_time.waiting_share = Some(0.45);
    assert_eq!(on_time.judge().limit, Limit::Neither);
}

#[test]
fn a_cap_too_small_for_the_rate_names_the_generator() {
    // 500 req/s at 2 ms each need one connection; a cap of 1 is past 90 % of that.
    let mut c = Case::new(record(500, 200), rate(500.0, 450.0));
    c.connection_cap = Some(1);
    assert_eq!(c.judge().limit, Limit::Generator);
    c.connection_cap = Some(100);
    assert_eq!(c.judge().limit, Limit::CannotTell);
}

/// Three seconds of a sweep's step at 1,000 req/s: `completed` and the median of each.
fn short_step(seconds: [(u64, u64); 3]) -> Case {
    let mut c = Case::new(record(1000, 0), rate(1000.0, 1000.0));
    c.seconds = seconds
        .iter()
        .enumerate()
        .map(|(i, &(completed, p50_us))| IntervalDigest {
            index: i as u64,
            sent: 1000,
            completed,
            p50_us,
            ..Default::default()
        })
        .collect();
    c
}

#[test]
fn a_step_too_short_for_a_trend_still_shows_a_queue() {
    // A server that completes 800 of the 1,000 sent each second, its median climbing: the
    // built-in target at --capacity 800 in a 3-second step at 1,000 req/s.
    let d = short_step([(800, 300_000), (800, 600_000), (800, 900_000)]).judge();
    assert_eq!(d.limit, Limit::Server, "{d:?}");
    assert!(
        matches!(
            d.findings[..],
            [Finding::LatencyRising {
                first_p50_us: 300_000,
                last_p50_us: 900_000
            }]
        ),
        "{d:?}"
    );
    // Keeping up: every second completes what it was sent, at a steady median.
    let d = short_step([(1000, 2_000), (1000, 2_100), (1000, 2_000)]).judge();
    assert_eq!(d.limit, Limit::Neither, "{d:?}");
    // A slow but steady server (a second per answer): the first second completes nothing
    // while the pipeline fills, then all; its median does not climb. Not a queue.
    let d = short_step([(0, 0), (1000, 1_000_000), (1000, 1_000_000)]).judge();
    assert!(!d.limit.is_limit(), "{d:?}");
    // Latency falling is no climb (and no arithmetic underflow).
    let d = short_step([(1000, 9_000), (1000, 2_000), (1000, 2_000)]).judge();
    assert_eq!(d.limit, Limit::Neither, "{d:?}");
    // Latency climbing while all that was sent completes is no queue: nothing said.
    let d = short_step([(1000, 2_000), (1000, 8_000), (1000, 20_000)]).judge();
    assert_eq!(d.limit, Limit::Neither, "{d:?}");
}

#[test]
fn latency_climbing_while_requests_pile_up_is_a_queue_at_the_server() {
    let mut c = Case::new(record(1000, 0), Asked::Nothing);
    c.seconds = [2_000, 3_000, 20_000, 60_000, 120_000, 200_000]
        .iter()
        .enumerate()
        .map(|(i, &p50_us)| IntervalDigest {
            index: i as u64,
            sent: 1530,
            completed: 1500,
            p50_us,
            ..Default::default()
        })
        .collect();
    let d = c.judge();
    assert_eq!(d.limit, Limit::Server, "{d:?}");
    assert!(matches!(
        d.findings[..],
        [Finding::LatencyRising {
            last_p50_us: 200_000,
            ..
        }]
    ));
}

#[test]
fn latency_climbing_while_the_server_keeps_up_cannot_tell_time_from_load() {
    // 0.5 ms more every second whatever the load, every request completed: one
    // run cannot say whether the clock or the load did it, only a sweep can.
    let mut c = Case::new(record(1000, 0), rate(100.0, 100.0));
    c.seconds = (0..10)
        .map(|index| IntervalDigest {
            index,
            sent: 100,
            completed: 100,
            p50_us: 1_000 + 500 * index,
            ..Default::default()
        })
        .collect();
    let d = c.judge();
    assert_eq!(d.limit, Limit::CannotTell, "{d:?}");
    assert!(matches!(
        d.findings[..],
        [Finding::LatencyDrifting { us_per_sec, secs: 10, .. }] if (us_per_sec - 500.0).abs() < 1.0
    ));
    // The same in the closed model, where nothing can pile up.
    c.open_model = false;
    assert_eq!(c.judge().limit, Limit::CannotTell);
}

#[test]
fn late_only_while_connections_opened_is_a_transient_not_the_server() {
    // Every request on time but those of the first second, which waited for TLS handshakes.
    let mut r = record(990, 0);
    for _ in 0..20 {
        r.record(&sample(Outcome::Status(200), true, 40));
    }
    r.tls_handshake.record(Duration::from_millis(60));
    let mut c = Case::new(r, rate(100.0, 100.0));
    c.seconds[0].lag_p99_us = 40_000;
    c.seconds[0].connects = 30;
    let d = c.judge();
    assert_eq!(d.limit, Limit::Transient, "{d:?}");
    assert!(matches!(
        &d.findings[..],
        [Finding::Transient { cause: TransientCause::ConnectionOpening, seconds, tls_p99_us, .. }]
            if seconds == &[0] && *tls_p99_us >= 59_000
    ));
    // The same lateness with the rate not held is not a transient.
    c.asked = rate(100.0, 80.0);
    assert_ne!(c.judge().limit, Limit::Transient);
}

#[test]
fn too_short_to_say_it_kept_up_is_cannot_tell_but_a_limit_stands() {
    let mut c = Case::new(record(40, 0), rate(40.0, 40.0));
    c.seconds = steady(1);
    let d = c.judge();
    assert_eq!(d.limit, Limit::CannotTell);
    assert!(matches!(
        d.findings[..],
        [Finding::TooShort { completed: 40, .. }]
    ));
    let mut r = record(30, 0);
    r.status.insert(503, 10);
    let mut c = Case::new(r, rate(40.0, 40.0));
    c.seconds = steady(1);
    assert_eq!(c.judge().limit, Limit::Server);
}

#[test]
fn evidence_on_both_sides_says_both() {
    let mut r = record(1000, 30);
    r.errors.insert(ErrorKindKey(ErrorKind::Closed), 200);
    r.errors.insert(ErrorKindKey(ErrorKind::PortExhaustion), 40);
    let d = Case::new(r, Asked::Nothing).judge();
    assert_eq!(d.limit, Limit::Both, "{d:?}");
    assert!(d.generator_limited());
}

#[test]
fn old_verdicts_read_back() {
    let d: Diagnosis = serde_json::from_str(r#"{"limit":"unexplained","findings":[]}"#).unwrap();
    assert_eq!(d.limit, Limit::CannotTell);
}

#[test]
fn sends_that_were_not_poisson_are_a_symptom_and_a_poisson_counts_chance_is_not() {
    use crate::summary::{Arrivals, Fit, SendCheck, SendFinding};
    let fit = |statistic: f64| Fit {
        statistic,
        critical: 0.01,
        samples: 10_000,
    };
    let check = |finding, gaps| Arrivals {
        kind: crate::plan::ArrivalKind::Poisson,
        seed: Some(7),
        check: Some(SendCheck {
            finding,
            gaps: fit(gaps),
            spans: fit(0.001),
            arrivals_per_gap: 1,
            arrivals_per_span: 10,
            resolution_us: 50.0,
            lag_p99_us: 30_000,
        }),
    };
    let kept_up = Case::new(record(1000, 0), rate(100.0, 100.0)).judge();
    let d = with_sends(kept_up.clone(), &check(SendFinding::NotPoisson, 0.05));
    assert_eq!(d.limit, Limit::CannotTell);
    assert!(matches!(
        d.findings[..],
        [Finding::NotPoisson { lag_p99_us: 30_000, statistic, .. }] if statistic == 0.05
    ));
    assert_eq!(
        with_sends(kept_up, &check(SendFinding::Poisson, 0.001)).limit,
        Limit::Neither
    );

    // 1,000 asked over 10 s, 960 sent: 1.3 standard deviations of a Poisson count, not a
    // generator falling short; 4 % short of even arrivals is.
    let mut c = Case::new(record(960, 0), rate(100.0, 96.0));
    assert_eq!(c.judge().limit, Limit::CannotTell);
    let poisson = diagnose(&Evidence {
        poisson: true,
        ..c.evidence()
    });
    assert_eq!(poisson.limit, Limit::Neither, "{poisson:?}");
    c.asked = rate(100.0, 90.0);
    assert_eq!(
        diagnose(&Evidence {
            poisson: true,
            ..c.evidence()
        })
        .limit,
        Limit::CannotTell
    );
}

#[test]
fn most_requests_failing_for_other_reasons_than_overload_cannot_be_read_as_kept_up() {
    // A token that expired: 2 % answered, 98 % HTTP 401.
    let mut r = record(20, 0);
    for _ in 0..980 {
        r.record(&sample(Outcome::Status(401), false, 0));
    }
    let d = Case::new(r, rate(100.0, 100.0)).judge();
    assert_eq!(d.limit, Limit::CannotTell, "{d:?}");
    assert!(matches!(
        &d.findings[..],
        [Finding::MostFailed { share, completed: 1000, reasons }]
            if (share - 0.98).abs() < 1e-9 && reasons[0].count == 980
    ));
    // Overload answers are the server's evidence instead.
    let mut r = record(20, 0);
    for _ in 0..980 {
        r.record(&sample(Outcome::Status(503), false, 0));
    }
    assert_eq!(
        Case::new(r, rate(100.0, 100.0)).judge().limit,
        Limit::Server
    );
}

#[test]
fn a_damaged_count_of_more_answers_than_completions_is_judged_without_wrapping() {
    // A line whose requests count more answers than its statuses and errors (damage the
    // store's check does not look for) used to wrap `completed - succeeded` around.
    let mut r = record(100, 0);
    r.requests[0].count += 50;
    let d = Case::new(r, rate(100.0, 100.0)).judge();
    assert!(
        !d.findings
            .iter()
            .any(|f| matches!(f, Finding::MostFailed { .. })),
        "{d:?}"
    );
}

#[test]
fn a_queue_stopped_early_is_still_a_queue_whatever_its_drain() {
    // The built-in target at --capacity 800 sent 1,000 req/s, stopped at its fourth second
    // (an abort): the last second sent 4 and the drain nothing while the queue emptied.
    // Counted in, those seconds read as a backlog shrinking and hid the queue.
    let mut c = Case::new(record(1000, 0), rate(1000.0, 1000.0));
    c.seconds = [
        (1000, 799, 101_000),
        (1000, 800, 301_000),
        (1000, 800, 501_000),
        (1000, 800, 701_000),
        (4, 800, 901_000),
        (0, 5, 1_000_000),
    ]
    .iter()
    .enumerate()
    .map(|(i, &(sent, completed, p50_us))| IntervalDigest {
        index: i as u64,
        sent,
        completed,
        p50_us,
        ..Default::default()
    })
    .collect();
    let d = c.judge();
    assert_eq!(d.limit, Limit::Server, "{d:?}");
    assert!(
        matches!(d.findings[..], [Finding::LatencyRising { .. }]),
        "{d:?}"
    );
}

#[test]
fn a_span_whose_latency_took_all_its_seconds_to_fill_cannot_be_said_to_have_kept_up() {
    // Two seconds at 400 req/s answered in 1.4 s: every second of the span was the
    // pipeline filling, none showed whether the server completed what it was sent.
    let mut c = Case::new(record(800, 0), rate(400.0, 400.0));
    c.seconds = (0..2)
        .map(|index| IntervalDigest {
            index,
            sent: 400,
            completed: 400,
            p50_us: 1_400_000,
            ..Default::default()
        })
        .collect();
    let d = c.judge();
    assert_eq!(d.limit, Limit::CannotTell, "{d:?}");
    assert!(
        matches!(d.findings[..], [Finding::TooShort { needed_secs, .. }] if needed_secs == 3.0),
        "{d:?}"
    );
    // Answered in 2 ms, the second second is settled: it kept up.
    for s in &mut c.seconds {
        s.p50_us = 2_000;
    }
    assert_eq!(c.judge().limit, Limit::Neither);
}
