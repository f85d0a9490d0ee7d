//! The figures over time (one point per second) of a run, or of runs compared, and the
//! rule that leaves them out of a run too short for a time axis.
//!
//! Their counts are the report's classification: a second's "OK" are its measured
//! completions that met their expectations ([`IntervalDigest::measured_ok`]), its "failed"
//! every other measured completion (a 401 the request does not expect, a body without
//! what it expects, a transport error), and the seconds of warm-up stages are left out, as
//! warm-up requests are from every number but the generator's. A run with fewer than
//! [`MIN_SECONDS`] such seconds gets no time figure: a note says so instead.

use super::figure::{Axis, Figure, Mark, Series};
use super::rates::{per_second, Span, Window};
use super::RunView;
use crate::store::IntervalDigest;
use crate::summary::Summary;
use crate::units::fmt_secs;

/// Seconds a time figure needs: fewer draw no trend (one is a dot on an empty axis).
pub const MIN_SECONDS: usize = 3;

/// A figure a report does not show, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct LeftOut {
    /// The figure's title.
    pub title: String,
    /// Why it is left out.
    pub why: Why,
}

/// Why a figure is left out.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Why {
    /// The run's measured seconds are too few for a time axis.
    TooShort {
        /// How long the run lasted, seconds.
        run_secs: f64,
        /// Whether it has per-step figures to look at instead.
        steps: bool,
    },
    /// The runs compared are all too short for a time axis.
    RunsTooShort {
        /// How long the longest lasted, seconds.
        longest_secs: f64,
    },
    /// No measured request was answered as it expects: there is no latency to draw.
    NoneAnswered,
}

impl LeftOut {
    /// The one-line note the report shows in the figure's place.
    pub fn sentence(&self) -> String {
        let why = match self.why {
            Why::TooShort { run_secs, steps } => format!(
                "left out, the run lasted {}, too short for a time axis{}",
                fmt_secs(run_secs),
                if steps {
                    "; see the per-step figures"
                } else {
                    ""
                }
            ),
            Why::RunsTooShort { longest_secs } => format!(
                "left out, the runs lasted at most {}, too short for a time axis",
                fmt_secs(longest_secs)
            ),
            Why::NoneAnswered => {
                "left out, no request was answered as it expects (see the failures)".into()
            }
        };
        format!("{}: {why}.", self.title)
    }
}

fn ms(us: u64) -> f64 {
    us as f64 / 1e3
}

fn line(name: &str, points: Vec<(f64, f64)>, mark: Mark) -> Series {
    Series {
        name: name.into(),
        points,
        mark,
        secondary: false,
        labels: Vec::new(),
    }
}

/// The seconds a time figure of `s` shows: every second but a warm-up stage's.
fn measured(s: &Summary) -> Vec<IntervalDigest> {
    s.timeline
        .iter()
        .filter(|d| {
            d.stage
                .and_then(|i| s.stages.get(usize::from(i)))
                .is_none_or(|st| !st.warmup)
        })
        .cloned()
        .collect()
}

/// The run's sending and completing spans, so its cut-short last second is read as a rate.
fn span(s: &Summary) -> Option<Span> {
    (s.duration.total_secs > 0.0).then_some(Span {
        sending_secs: s.duration.attack_secs,
        completing_secs: s.duration.total_secs,
    })
}

/// A latency of each second with measured answers that met their expectations, in ms.
fn latency(seconds: &[IntervalDigest], pick: fn(&IntervalDigest) -> u64) -> Vec<(f64, f64)> {
    seconds
        .iter()
        .filter(|d| d.measured_ok() > 0)
        .map(|d| (d.index as f64, ms(pick(d))))
        .collect()
}

/// Measured completions of each second, per second.
fn completed(s: &Summary, seconds: &[IntervalDigest]) -> Vec<(f64, f64)> {
    per_second(seconds, span(s), Window::Completing, |d| {
        d.measured_completed()
    })
}

/// Why `s` gets no time figure, if it gets none: too few seconds of `points`.
fn too_short(s: &Summary, points: usize) -> Option<Why> {
    (points < MIN_SECONDS).then(|| Why::TooShort {
        run_secs: s.duration.total_secs,
        steps: s.stages.iter().any(|st| !st.warmup && st.count > 0),
    })
}

/// `figure`, or why it is left out.
fn kept(figure: Figure, why: Option<Why>) -> Result<Figure, LeftOut> {
    match why {
        Some(why) => Err(LeftOut {
            title: figure.title,
            why,
        }),
        None => Ok(figure),
    }
}

/// A run's latency over time (p50, p90, p99, max of each second).
pub fn latency_figure(view: &RunView<'_>) -> Result<Figure, LeftOut> {
    let s = view.summary;
    let seconds = measured(s);
    let series: Vec<Series> = [
        ("p50", (|d| d.p50_us) as fn(&IntervalDigest) -> u64),
        ("p90", |d| d.p90_us),
        ("p99", |d| d.p99_us),
        ("max", |d| d.max_us),
    ]
    .into_iter()
    .map(|(name, pick)| line(name, latency(&seconds, pick), Mark::Line))
    .collect();
    let why = if s.latency.count == 0 {
        Some(Why::NoneAnswered)
    } else {
        too_short(s, series[0].points.len())
    };
    kept(
        Figure {
            name: "latency-over-time".into(),
            title: "Latency over time (per second)".into(),
            x: Axis::seconds("seconds since start"),
            y: Axis::log("latency (ms)"),
            y2: None,
            series,
            distinct: false,
        },
        why,
    )
}

/// A run's sent, answered OK and failed per second, with the watched server's CPU.
pub fn throughput_figure(view: &RunView<'_>) -> Result<Figure, LeftOut> {
    let s = view.summary;
    let seconds = measured(s);
    let span = span(s);
    let cpu: Vec<(f64, f64)> = seconds
        .iter()
        .filter_map(|d| {
            let cpu = d.server.as_ref()?.judged_cpu_percent()?;
            Some((d.index as f64, cpu))
        })
        .collect();
    // Sent last, dashed, so it shows over the answers where the two agree.
    let mut series_list = vec![
        line(
            "OK/s",
            per_second(&seconds, span, Window::Completing, |d| d.measured_ok()),
            Mark::Line,
        ),
        line(
            "failed/s",
            per_second(&seconds, span, Window::Completing, |d| d.measured_failed()),
            Mark::Line,
        ),
        line(
            "sent/s",
            per_second(&seconds, span, Window::Sending, |d| d.measured_sent()),
            Mark::Dashed,
        ),
    ];
    let y2 = super::figures::server_cpu(&mut series_list, cpu, super::figures::cpu_bound(view))
        .map(|mut axis| {
            axis.label = super::figures::cpu_axis_label(view);
            axis
        });
    let why = too_short(s, series_list[0].points.len());
    kept(
        Figure {
            name: "throughput-over-time".into(),
            title: "Sent, answered OK and failed per second".into(),
            x: Axis::seconds("seconds since start"),
            y: Axis::linear("requests per second"),
            y2,
            series: series_list,
            distinct: false,
        },
        why,
    )
}

/// The points one run gives a comparison's time figure, from its summary and its seconds.
type PerRun = dyn Fn(&Summary, &[IntervalDigest]) -> Vec<(f64, f64)>;

/// The runs' p99 over time and measured completions per second, one line each; a run too
/// short for a time axis has none, and a figure none of whose runs has one is left out.
pub fn for_comparison(views: &[RunView<'_>]) -> Vec<Result<Figure, LeftOut>> {
    let each = |f: &PerRun| -> Vec<Series> {
        views
            .iter()
            .map(|v| {
                let seconds = measured(v.summary);
                line(&v.label, f(v.summary, &seconds), Mark::Line)
            })
            .filter(|s| s.points.len() >= MIN_SECONDS)
            .collect()
    };
    let longest = views
        .iter()
        .map(|v| v.summary.duration.total_secs)
        .fold(0.0, f64::max);
    let short = |series: &Vec<Series>| {
        series.is_empty().then_some(Why::RunsTooShort {
            longest_secs: longest,
        })
    };
    let p99 = each(&|_, seconds| latency(seconds, |d| d.p99_us));
    let done = each(&|s, seconds| completed(s, seconds));
    let (p99_short, done_short) = (short(&p99), short(&done));
    vec![
        kept(
            Figure {
                name: "compare-p99-over-time".into(),
                title: "p99 latency over time (per second)".into(),
                x: Axis::seconds("seconds since start"),
                y: Axis::log("latency (ms)"),
                y2: None,
                series: p99,
                distinct: true,
            },
            p99_short,
        ),
        kept(
            Figure {
                name: "compare-throughput-over-time".into(),
                title: "Completed requests per second".into(),
                x: Axis::seconds("seconds since start"),
                y: Axis::linear("requests per second"),
                y2: None,
                series: done,
                distinct: true,
            },
            done_short,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::Health;
    use crate::plan::{AttackPlan, Load, NamedRequest, Rate, RequestSpec, Stage, Stop, Target};
    use crate::record::IntervalRecord;
    use crate::sample::{Outcome, Sample};
    use crate::store::{EndStatus, IntervalLine, RunDir, RunEnd, RunMeta, StoredRun};
    use std::time::Duration;

    fn sample(code: u16, stage: Option<u16>) -> Sample {
        Sample {
            outcome: Outcome::Status(code),
            latency: Duration::from_millis(2),
            service: Duration::from_millis(2),
            lag: Duration::ZERO,
            connect: None,
            tls_handshake: None,
            first_byte: Some(Duration::from_millis(1)),
            bytes_in: 3,
            bytes_out: 0,
            retried: false,
            request: 0,
            stage,
            // The default expectation: a 2xx or 3xx.
            expected: (200..400).contains(&code),
            iteration: None,
        }
    }

    /// A run of `seconds` seconds of 10 answers each with status `code`, in `stages` (each
    /// second in the stage of its index, when there are stages), lasting `secs`.
    fn run(
        code: u16,
        seconds: u64,
        stages: Vec<Stage>,
        secs: f64,
    ) -> (tempfile::TempDir, StoredRun) {
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
                duration: Some(Duration::from_secs(seconds)),
                requests: None,
            },
        );
        plan.stages = stages;
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::at(dir.path().join("run"));
        let meta = RunMeta::describe(&plan, &[], None, "HTTP/1.1", &[]);
        let mut log = run.create(&meta).unwrap();
        for index in 0..seconds {
            let stage = (!plan.stages.is_empty()).then_some(index as u16);
            let mut r = IntervalRecord::new(index);
            for k in 0..10u64 {
                r.sent += 1;
                let s = sample(code, stage);
                r.record(&s);
                if let Some(stage) = stage {
                    r.sent_for(stage);
                    let done = Duration::from_millis(1000 * index + 100 * k + 2);
                    r.record_step(stage, &s, done);
                }
            }
            log.append(&IntervalLine {
                record: r,
                health: Health::default(),
                stage,
                server: None,
                shards: Vec::new(),
            })
            .unwrap();
        }
        run.finish(&RunEnd {
            status: EndStatus::Completed,
            ended_at: "2026-11-21T00:00:02.000Z".into(),
            ended_unix: None,
            attack_secs: secs,
            wait_secs: 0.0,
            cpu: Default::default(),
            peak_open_fds: 1,
            peak_rss_bytes: None,
            reason: None,
            aborted: None,
        })
        .unwrap();
        let stored = run.load().unwrap();
        (dir, stored)
    }

    fn view<'a>(stored: &'a StoredRun, summary: &'a Summary) -> RunView<'a> {
        RunView {
            label: "run".into(),
            run: stored,
            summary,
            scatter: None,
        }
    }

    fn sum(f: &Figure, name: &str) -> f64 {
        f.series
            .iter()
            .find(|s| s.name == name)
            .unwrap()
            .points
            .iter()
            .map(|p| p.1)
            .sum()
    }

    #[test]
    fn answers_the_requests_do_not_expect_are_drawn_as_failed_not_ok() {
        let (_dir, stored) = run(401, 5, Vec::new(), 4.95);
        let summary = Summary::of(&stored);
        let figure = throughput_figure(&view(&stored, &summary)).unwrap();
        assert_eq!(sum(&figure, "OK/s"), 0.0);
        assert!(sum(&figure, "failed/s") >= 40.0);
        // Nothing answered as expected: no latency to draw, and the page says why.
        let left = latency_figure(&view(&stored, &summary)).unwrap_err();
        assert_eq!(left.why, Why::NoneAnswered);
        assert!(left
            .sentence()
            .starts_with("Latency over time (per second): left out"));
        // The same answers expected are OK.
        let (_dir, stored) = run(200, 5, Vec::new(), 4.95);
        let summary = Summary::of(&stored);
        let figure = throughput_figure(&view(&stored, &summary)).unwrap();
        assert_eq!(sum(&figure, "failed/s"), 0.0);
        assert!(sum(&figure, "OK/s") >= 40.0);
    }

    #[test]
    fn a_run_too_short_for_a_time_axis_gets_a_note_instead() {
        let (_dir, stored) = run(200, 2, Vec::new(), 1.4);
        let summary = Summary::of(&stored);
        for figure in [
            latency_figure(&view(&stored, &summary)),
            throughput_figure(&view(&stored, &summary)),
        ] {
            let left = figure.unwrap_err();
            assert_eq!(
                left.why,
                Why::TooShort {
                    run_secs: 1.4,
                    steps: false
                }
            );
            assert!(
                left.sentence().contains("the run lasted 1.400s"),
                "{}",
                left.sentence()
            );
        }
    }

    #[test]
    fn warm_up_seconds_are_left_out_of_the_time_figures() {
        let stages = vec![
            Stage {
                warmup: true,
                ..Stage::constant("warm", 10.0, Duration::from_secs(1))
            },
            Stage::constant("a", 10.0, Duration::from_secs(1)),
            Stage::constant("b", 10.0, Duration::from_secs(1)),
            Stage::constant("c", 10.0, Duration::from_secs(1)),
        ];
        let (_dir, stored) = run(200, 4, stages, 3.95);
        let summary = Summary::of(&stored);
        let figure = throughput_figure(&view(&stored, &summary)).unwrap();
        let xs: Vec<f64> = figure.series[0].points.iter().map(|p| p.0).collect();
        assert_eq!(xs, [1.0, 2.0, 3.0]);
        assert!(summary.count_identity().is_empty());
        assert_eq!(summary.requests.total, 30);
    }
}
