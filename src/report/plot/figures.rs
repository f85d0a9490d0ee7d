//! Which figures a run (or a comparison of runs) gets, built from the stored intervals and
//! the summary: latency and throughput over time, each request's latency (from the raw
//! records, when kept), latency by percentile per request and per stage, and for sweeps the
//! headroom plot and the server's CPU by step.

use super::figure::{Axis, Figure, Mark, Series};
use super::over_time::{self, LeftOut, Why};
use super::ticks;
use crate::record::Histogram;
use crate::store::StoredRun;
use crate::summary::{StageRow, Summary};

/// One run as figures see it.
pub struct RunView<'a> {
    /// Its name in legends.
    pub label: String,
    /// What was stored.
    pub run: &'a StoredRun,
    /// Its summary.
    pub summary: &'a Summary,
    /// Each request's latency over time, when the run kept its raw records
    /// ([`super::scatter::of_run`]).
    pub scatter: Option<Figure>,
}

fn ms(us: u64) -> f64 {
    us as f64 / 1e3
}

/// The latency curve by percentile from the median, through Locust's columns (66, 75, 80,
/// 90, 95, 98, 99, 99.9 %) and a point every tenth of a nine, to six nines or the
/// resolution of the samples there are.
fn percentile_points(h: &Histogram) -> Vec<(f64, f64)> {
    if h.is_empty() {
        return Vec::new();
    }
    let finest = 1.0 / h.len() as f64;
    let mut qs: Vec<f64> = (3..=60)
        .map(|k| 1.0 - 10f64.powf(-(k as f64) / 10.0))
        .chain(ticks::PERCENTILES.iter().map(|p| p / 100.0))
        .filter(|&q| q >= 0.5 - 1e-9 && 1.0 - q >= finest * (1.0 - 1e-9))
        .collect();
    qs.sort_by(f64::total_cmp);
    qs.dedup_by(|a, b| (*a - *b).abs() < 1e-6);
    qs.into_iter()
        .map(|q| (100.0 * q, h.quantile(q).as_micros() as f64 / 1e3))
        .collect()
}

/// Adds the watched server's CPU on a second axis, when there is any; returns that axis,
/// bounded by the most the watched processes could use when that is known.
pub(super) fn server_cpu(
    series: &mut Vec<Series>,
    cpu: Vec<(f64, f64)>,
    most: Option<f64>,
) -> Option<Axis> {
    if cpu.is_empty() {
        return None;
    }
    series.push(Series {
        name: "server CPU".into(),
        points: cpu,
        mark: Mark::Dashed,
        secondary: true,
        labels: Vec::new(),
    });
    let mut axis = Axis::linear("server CPU (% of a core)");
    axis.most = most;
    Some(axis)
}

/// At each measured stage, a percentile figure with a line per request (seed 004's graph per
/// user level); only for a few stages of several requests, so a long sweep does not become
/// dozens of figures.
fn by_request_at_each_stage(view: &RunView<'_>) -> Vec<Figure> {
    const MOST_STAGES: usize = 6;
    let measured: Vec<(usize, &str)> = view
        .summary
        .stages
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.warmup)
        .map(|(i, r)| (i, r.name.as_str()))
        .collect();
    if view.run.meta.requests.len() < 2 || measured.len() > MOST_STAGES {
        return Vec::new();
    }
    measured
        .into_iter()
        .filter_map(|(i, stage)| {
            let step = view.run.total.steps.get(&u16::try_from(i).ok()?)?;
            let lines: Vec<Series> = view
                .run
                .meta
                .requests
                .iter()
                .zip(&step.requests)
                .map(|(meta, stats)| {
                    series(
                        &meta.name,
                        percentile_points(&stats.latency),
                        Mark::LinePoints,
                    )
                })
                .filter(|s| !s.points.is_empty())
                .collect();
            if lines.is_empty() {
                return None;
            }
            let mut figure =
                by_percentile(&format!("latency-by-percentile-stage-{}", i + 1), lines);
            figure.title = format!("Latency by percentile, per request, at {stage}");
            figure.distinct = true;
            Some(figure)
        })
        .collect()
}

/// The latency-by-percentile figure (the seed 004 graph) of `series`.
fn by_percentile(name: &str, series: Vec<Series>) -> Figure {
    Figure {
        name: name.into(),
        title: "Latency by percentile".into(),
        x: Axis::percentile("percentile"),
        y: Axis::log("latency (ms)"),
        y2: None,
        series,
        distinct: true,
    }
}

fn series(name: &str, points: Vec<(f64, f64)>, mark: Mark) -> Series {
    Series {
        name: name.into(),
        points,
        mark,
        secondary: false,
        labels: Vec::new(),
    }
}

/// The steps a headroom plot shows: measured, and with answers that met their expectations
/// (a step of failures only has no latency to place).
fn steps(s: &Summary) -> impl Iterator<Item = &StageRow> {
    s.stages
        .iter()
        .filter(|r| !r.warmup && r.count > 0 && r.latency.count > 0)
}

/// What a report draws: the figures with something to show, and a note for each left out.
#[derive(Debug, Clone, Default)]
pub struct Figures {
    /// The figures drawn.
    pub shown: Vec<Figure>,
    /// The figures left out, each with why.
    pub left_out: Vec<LeftOut>,
}

impl Figures {
    fn add(&mut self, figure: Result<Figure, LeftOut>) {
        match figure {
            Ok(f) => self.shown.push(f),
            Err(why) => self.left_out.push(why),
        }
    }
}

/// The figures of one run: over time, by percentile (per request and per stage when there
/// are several), and for staged runs (sweeps) the headroom plot and the server's CPU by step.
pub fn for_run(view: &RunView<'_>) -> Figures {
    let mut out = Figures::default();
    out.add(over_time::latency_figure(view));
    out.add(over_time::throughput_figure(view));
    let mut figures = Vec::new();
    figures.extend(view.scatter.clone());
    let mut overall = vec![series(
        &view.label,
        percentile_points(&view.run.total.latency_ok()),
        Mark::LinePoints,
    )];
    if view.run.total.requests.len() > 1 {
        overall.extend(
            view.run
                .meta
                .requests
                .iter()
                .zip(&view.run.total.requests)
                .map(|(meta, stats)| {
                    series(
                        &meta.name,
                        percentile_points(&stats.latency),
                        Mark::LinePoints,
                    )
                })
                // A request that never answered as expected has no curve: its failures
                // are in the tables.
                .filter(|s| !s.points.is_empty()),
        );
    }
    let mut figure = by_percentile("latency-by-percentile", overall);
    figure.title = "Latency by percentile, per request".into();
    figure.distinct = true;
    figures.push(figure);
    let by_stage: Vec<Series> = view
        .summary
        .stages
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.warmup)
        .filter_map(|(i, r)| {
            let stats = view.run.total.steps.get(&u16::try_from(i).ok()?)?;
            Some(series(
                &r.name,
                percentile_points(&stats.latency),
                Mark::LinePoints,
            ))
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    if by_stage.len() > 1 {
        let mut figure = by_percentile("latency-by-percentile-by-stage", by_stage);
        figure.title = "Latency by percentile, per stage".into();
        figure.distinct = true;
        figures.push(figure);
        figures.extend(by_request_at_each_stage(view));
    }
    let answered_steps = view.summary.stages.iter().any(|r| !r.warmup && r.count > 0);
    if answered_steps && steps(view.summary).next().is_none() {
        out.left_out.push(LeftOut {
            title: headroom(view).title,
            why: Why::NoneAnswered,
        });
    }
    if steps(view.summary).next().is_some() {
        figures.push(headroom(view));
        let cpu: Vec<(f64, f64)> = steps(view.summary)
            .filter_map(|r| r.server_cpu_percent.map(|c| (r.throughput, c)))
            .collect();
        if !cpu.is_empty() {
            let labels = steps(view.summary)
                .filter(|r| r.server_cpu_percent.is_some())
                .map(|r| r.name.clone())
                .collect();
            let mut y = Axis::linear(&cpu_axis_label(view));
            y.most = cpu_bound(view);
            figures.push(Figure {
                name: "server-cpu-by-step".into(),
                title: "Server CPU against achieved throughput (one point per step)".into(),
                x: Axis::linear("throughput (req/s)"),
                y,
                y2: None,
                series: vec![Series {
                    labels,
                    ..series("server CPU", cpu, Mark::LinePoints)
                }],
                distinct: false,
            });
        }
    }
    for f in figures {
        // A latency figure of a run none of whose requests was answered as it expects.
        out.add(if f.is_empty() {
            Err(LeftOut {
                title: f.title,
                why: Why::NoneAnswered,
            })
        } else {
            Ok(f)
        });
    }
    out
}

/// Seed 003's headroom plot: latency against achieved throughput, one point per step
/// joined in step order (a server past its capacity turns back on itself rather than
/// crossing its own line), each labelled with its level.
fn headroom(view: &RunView<'_>) -> Figure {
    let curve = |q: &dyn Fn(&StageRow) -> f64| -> Vec<(f64, f64)> {
        steps(view.summary).map(|r| (r.throughput, q(r))).collect()
    };
    let labels: Vec<String> = steps(view.summary).map(|r| r.name.clone()).collect();
    let lines = vec![
        series(
            "mean",
            curve(&|r| r.latency.mean_us / 1e3),
            Mark::LinePoints,
        ),
        series("p50", curve(&|r| ms(r.latency.p50_us)), Mark::LinePoints),
        series("p95", curve(&|r| ms(r.latency.p95_us)), Mark::LinePoints),
        Series {
            labels,
            ..series("p99", curve(&|r| ms(r.latency.p99_us)), Mark::LinePoints)
        },
    ];
    Figure {
        name: "headroom".into(),
        title: "Headroom: latency against achieved throughput (one point per step)".into(),
        x: Axis::linear("throughput (req/s)"),
        y: Axis::log("latency (ms)"),
        y2: None,
        series: lines,
        distinct: true,
    }
}

/// The most CPU the run's watched server could use, % of a core.
pub(super) fn cpu_bound(view: &RunView<'_>) -> Option<f64> {
    view.summary
        .server
        .as_ref()
        .and_then(|s| s.cpu_bound_percent)
}

pub(super) fn cpu_axis_label(view: &RunView<'_>) -> String {
    match cpu_bound(view) {
        Some(most) => format!(
            "server CPU (% of a core; {} cores = {most:.0}%)",
            (most / 100.0).round()
        ),
        None => "server CPU (% of a core)".into(),
    }
}

/// The runs overlaid: latency by percentile, p99 over time, throughput over time, and for
/// sweeps the headroom plot and small multiples by step (one small figure per measure).
/// Each run keeps its own dash and marker, so runs that overlap stay apart.
pub fn for_comparison(views: &[RunView<'_>]) -> Figures {
    let each = |f: &dyn Fn(&RunView<'_>) -> Vec<(f64, f64)>, mark| -> Vec<Series> {
        views
            .iter()
            .map(|v| series(&v.label, f(v), mark))
            .filter(|s| !s.points.is_empty())
            .collect()
    };
    let mut out = Figures::default();
    let mut figures = vec![by_percentile(
        "compare-latency-by-percentile",
        each(
            &|v| percentile_points(&v.run.total.latency_ok()),
            Mark::LinePoints,
        ),
    )];
    for f in over_time::for_comparison(views) {
        match f {
            Ok(f) => figures.push(f),
            Err(why) => out.left_out.push(why),
        }
    }
    let headroom: Vec<Series> = views
        .iter()
        .map(|v| Series {
            labels: steps(v.summary).map(|r| r.name.clone()).collect(),
            ..series(
                &v.label,
                steps(v.summary)
                    .map(|r| (r.throughput, ms(r.latency.p99_us)))
                    .collect(),
                Mark::LinePoints,
            )
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    if !headroom.is_empty() {
        figures.push(Figure {
            name: "compare-headroom".into(),
            title: "Headroom: p99 latency against achieved throughput".into(),
            x: Axis::linear("throughput (req/s)"),
            y: Axis::log("p99 latency (ms)"),
            y2: None,
            series: headroom,
            distinct: true,
        });
    }
    let runs: Vec<(&str, &Summary)> = views
        .iter()
        .map(|v| (v.label.as_str(), v.summary))
        .collect();
    figures.extend(super::multiples::by_step(&runs));
    for f in figures {
        out.add(if f.is_empty() {
            Err(LeftOut {
                title: f.title,
                why: Why::NoneAnswered,
            })
        } else {
            Ok(f)
        });
    }
    out
}

/// A capacity search's probes: latency and throughput against the offered rate, with the
/// latency objectives drawn as the lines they must stay under.
pub fn for_capacity(record: &crate::capacity::study::CapacityRecord) -> Vec<Figure> {
    let mut probes: Vec<&crate::capacity::study::ProbeRecord> = record.probes.iter().collect();
    probes.sort_by(|a, b| a.rate.total_cmp(&b.rate));
    let curve = |q: fn(&crate::capacity::study::ProbeRecord) -> f64| -> Vec<(f64, f64)> {
        probes.iter().map(|p| (p.rate, q(p))).collect()
    };
    let (lo, hi) = (
        probes.first().map_or(0.0, |p| p.rate),
        probes.last().map_or(1.0, |p| p.rate),
    );
    let mut latency = Vec::new();
    if probes.iter().any(|p| p.mean_us > 0.0) {
        latency.push(series("mean", curve(|p| p.mean_us / 1e3), Mark::LinePoints));
    }
    latency.extend([
        series("p50", curve(|p| ms(p.p50_us)), Mark::LinePoints),
        series("p95", curve(|p| ms(p.p95_us)), Mark::LinePoints),
        series("p99", curve(|p| ms(p.p99_us)), Mark::LinePoints),
    ]);
    for text in &record.objectives {
        if let Ok(slo) = text.parse::<crate::plan::Slo>() {
            if matches!(
                slo.metric,
                crate::plan::Metric::Quantile(_)
                    | crate::plan::Metric::Mean
                    | crate::plan::Metric::Max
            ) {
                let y = slo.bound / 1e3;
                latency.push(series(
                    &format!("objective {text}"),
                    vec![(lo, y), (hi, y)],
                    Mark::Dashed,
                ));
            }
        }
    }
    let mut figures = vec![Figure {
        name: "capacity-latency".into(),
        title: "Latency against offered rate (one point per probe)".into(),
        x: Axis::linear("offered rate (req/s)"),
        y: Axis::log("latency (ms)"),
        y2: None,
        series: latency,
        distinct: false,
    }];
    if record.clock.is_some() {
        // Latency followed the clock: joined by rate, later (slower) probes at lower rates
        // would draw latency falling as the rate rises. Each probe is a point where its
        // window began, in the order the search ran them.
        let mut ran: Vec<&crate::capacity::study::ProbeRecord> = record.probes.iter().collect();
        ran.sort_by(|a, b| a.started_secs.total_cmp(&b.started_secs));
        let at = |q: fn(&crate::capacity::study::ProbeRecord) -> f64| -> Vec<(f64, f64)> {
            ran.iter().map(|p| (p.started_secs, q(p))).collect()
        };
        figures[0] = Figure {
            name: "capacity-latency".into(),
            title: "Latency through the search (one point per probe, where its window began): it followed the clock, not the rate".into(),
            x: Axis::seconds("seconds since the search began"),
            y: Axis::log("latency (ms)"),
            y2: None,
            series: vec![
                series("p50", at(|p| ms(p.p50_us)), Mark::LinePoints),
                series("p99", at(|p| ms(p.p99_us)), Mark::LinePoints),
            ],
            distinct: false,
        };
    }
    figures.extend([Figure {
        name: "capacity-throughput".into(),
        title: "Achieved throughput against offered rate".into(),
        x: Axis::linear("offered rate (req/s)"),
        y: Axis::linear("throughput (req/s)"),
        y2: None,
        series: vec![
            series("achieved", curve(|p| p.throughput), Mark::LinePoints),
            series("offered", curve(|p| p.rate), Mark::Dashed),
        ],
        distinct: false,
    }]);
    figures
}
