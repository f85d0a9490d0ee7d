//! The document of runs compared (TLS at the balancer vs on the instance vs with client
//! certificates): which run was faster or slower, by how much and whether beyond noise, and
//! which side limited each; then the figures (overlaid, and small multiples by step), the
//! whole runs side by side, and a compact table per step and per request.
//!
//! Runs are columns in every table: the question is "which run did better", read across a
//! row. A sweep's steps each get their own small table (a measure per row) rather than one
//! step × measure list, so at 3 runs × 12 steps a reader finds a step by its heading and
//! compares three numbers on a line.

use super::run::by_request;
use super::run::vegeta::status_codes;
use super::verdict;
use super::words::load_words;
use crate::report::document::{
    Answer, Block, Cell, Document, Fact, Figures, Section, Table, Tone, Verdict,
};
use crate::report::plot;
use crate::summary::{Interval, Limit, PercentileIntervals, RequestRow, StageRow, Stats, Summary};
use crate::units::{fmt_rate, fmt_us};

/// One run compared: its name in the tables and legends, and its summary.
pub struct Compared<'a> {
    /// Its label (a directory name, or one given with --labels).
    pub label: &'a str,
    /// Its summary.
    pub summary: &'a Summary,
}

/// The runs compared as a document; the first is the one the others are measured against.
/// `figures` are the comparison's, drawn by the caller ([`plot::for_comparison`]).
pub fn build(runs: &[Compared<'_>], figures: plot::Figures) -> Document {
    let labels: Vec<&str> = runs.iter().map(|r| r.label).collect();
    let loads: Vec<String> = runs.iter().map(|r| load_words(r.summary)).collect();
    let what_ran = if loads.windows(2).all(|w| w[0] == w[1]) {
        loads.into_iter().take(1).collect()
    } else {
        runs.iter()
            .zip(loads)
            .map(|(r, l)| format!("{}: {l}", r.label))
            .collect()
    };
    let mut sections = vec![Section::table("runs", "Whole runs", whole_runs(runs))];
    sections.extend(by_step(runs));
    sections.extend(by_request(runs));
    Document {
        title: format!("Comparison of {}", labels.join(", ")),
        what_ran,
        answer: answer(runs),
        figures: Figures {
            shown: figures.shown,
            left_out: figures.left_out.iter().map(|l| l.sentence()).collect(),
        },
        sections,
        data: serde_json::json!({
            "runs": runs
                .iter()
                .map(|r| serde_json::json!({"label": r.label, "summary": r.summary}))
                .collect::<Vec<_>>(),
        }),
        ..Document::default()
    }
}

/// How two values of one measure compare: the change and whether it is beyond noise.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Noise {
    /// Their 95 % confidence intervals do not overlap: not chance.
    Beyond,
    /// Their intervals overlap: chance alone can make a difference this size.
    Within,
    /// A run has no interval (too few requests, or stored before they were kept).
    Unknown,
}

/// Whether two intervals overlap, an open end reaching as far as it may.
pub fn noise(a: Option<Interval<u64>>, b: Option<Interval<u64>>) -> Noise {
    let (Some(a), Some(b)) = (a, b) else {
        return Noise::Unknown;
    };
    let lo = |i: Interval<u64>| i.lo.unwrap_or(0);
    let hi = |i: Interval<u64>| i.hi.unwrap_or(u64::MAX);
    if lo(a) <= hi(b) && lo(b) <= hi(a) {
        Noise::Within
    } else {
        Noise::Beyond
    }
}

/// "+247.6 %", "−0.3 %", "±0 %": the change from `base` to `value`.
pub fn change(base: f64, value: f64) -> String {
    if base <= 0.0 {
        return if value <= 0.0 { "±0 %" } else { "from 0" }.into();
    }
    let c = 100.0 * (value - base) / base;
    if c.abs() < 0.05 {
        "±0 %".into()
    } else if c < 0.0 {
        format!("−{:.1} %", -c)
    } else {
        format!("+{c:.1} %")
    }
}

/// One latency measure of `run` against `base`: "p99 13.807ms against 3.801ms (+263.2 %,
/// beyond noise)".
fn latency_line(
    name: &str,
    run: &Stats,
    base: &Stats,
    pick: fn(&Stats) -> u64,
    ci: fn(&PercentileIntervals) -> Interval<u64>,
) -> (String, Noise) {
    let n = noise(run.ci.as_ref().map(ci), base.ci.as_ref().map(ci));
    let how = match n {
        Noise::Beyond => ", beyond noise",
        Noise::Within => ", within noise: their 95 % intervals overlap",
        Noise::Unknown => ", no interval to tell noise from a change",
    };
    (
        format!(
            "{name} {} against {} ({}{how})",
            fmt_us(pick(run)),
            fmt_us(pick(base)),
            change(pick(base) as f64, pick(run) as f64)
        ),
        n,
    )
}

/// One percentile of a run against the first, in a few words ("slower in median latency
/// (3.5×, beyond noise)"), and its tone: slower beyond noise is bad news, within noise unsure.
fn part(name: &str, run: u64, base: u64, n: Noise) -> (String, Tone) {
    use std::cmp::Ordering;
    let how = match n {
        Noise::Beyond => "beyond noise",
        Noise::Unknown => "no interval to tell noise",
        Noise::Within => {
            return (
                format!("no clear difference in {name} (within noise)"),
                Tone::Unsure,
            )
        }
    };
    let times = |a: u64, b: u64| a as f64 / b.max(1) as f64;
    match run.cmp(&base) {
        Ordering::Greater => (
            format!("slower in {name} ({:.1}×, {how})", times(run, base)),
            if n == Noise::Beyond {
                Tone::Bad
            } else {
                Tone::Unsure
            },
        ),
        Ordering::Less => (
            format!("faster in {name} ({:.1}× as fast, {how})", times(base, run)),
            if n == Noise::Beyond {
                Tone::Good
            } else {
                Tone::Unsure
            },
        ),
        Ordering::Equal => (format!("the same {name}"), Tone::Good),
    }
}

/// What a reader came for: each run against the first (faster or slower at p50 and p99,
/// by how much, beyond noise or not; its throughput), then which side limited each run.
fn answer(runs: &[Compared<'_>]) -> Answer {
    let Some((base, others)) = runs.split_first() else {
        return Answer::default();
    };
    let (b, bl) = (base.summary, &base.summary.latency);
    let mut clauses = Vec::new();
    let mut evidence = Vec::new();
    let mut tone = Tone::Good;
    for r in others {
        let l = &r.summary.latency;
        let (p50, n50) = latency_line("p50", l, bl, |s| s.p50_us, |c| c.p50_us);
        let (p99, n99) = latency_line("p99", l, bl, |s| s.p99_us, |c| c.p99_us);
        let mut parts = Vec::new();
        for (name, run, base_us, n) in [
            ("median latency", l.p50_us, bl.p50_us, n50),
            ("p99 latency", l.p99_us, bl.p99_us, n99),
        ] {
            let (part, t) = part(name, run, base_us, n);
            tone = worse(tone, t);
            parts.push(part);
        }
        let word = format!(
            "{} against {}: {}",
            r.label,
            base.label,
            parts.join(" and ")
        );
        clauses.push(word);
        evidence.push(format!(
            "{} against {}: {p50}; {p99}; throughput {} against {} ({}); success {:.2}% against {:.2}%",
            r.label,
            base.label,
            fmt_rate(r.summary.requests.throughput),
            fmt_rate(b.requests.throughput),
            change(b.requests.throughput, r.summary.requests.throughput),
            100.0 * r.summary.success_ratio,
            100.0 * b.success_ratio
        ));
    }
    for r in runs {
        evidence.push(format!("{}: {}", r.label, limit_words(r.summary)));
    }
    let mut numbers = Vec::new();
    for r in runs {
        let s = r.summary;
        let fact = |what: &str, value: Cell| Fact {
            label: format!("{} {what}", r.label),
            value,
        };
        numbers.extend([
            fact("throughput", Cell::Rate(s.requests.throughput)),
            fact("success", Cell::Percent(100.0 * s.success_ratio)),
            fact("p50", Cell::Duration(s.latency.p50_us as f64)),
            fact("p99", Cell::Duration(s.latency.p99_us as f64)),
        ]);
    }
    Answer {
        verdict: Some(Verdict {
            tone,
            sentence: format!("{}.", clauses.join("; ")),
            evidence,
        }),
        objectives: Vec::new(),
        numbers,
        notes: runs
            .iter()
            .filter_map(|r| {
                r.summary.partial.as_ref().map(|why| {
                    format!(
                        "{} is a partial run ({why}): its numbers cover part of it.",
                        r.label
                    )
                })
            })
            .collect(),
    }
}

/// The worse of two tones: bad over unsure over good.
fn worse(a: Tone, b: Tone) -> Tone {
    match (a, b) {
        (Tone::Bad, _) | (_, Tone::Bad) => Tone::Bad,
        (Tone::Unsure, _) | (_, Tone::Unsure) => Tone::Unsure,
        _ => Tone::Good,
    }
}

/// Which side limited a run, in a sentence and its evidence: the diagnosis' own words.
fn limit_words(s: &Summary) -> String {
    let mut lines = verdict::lines(&s.verdict, &s.generator).into_iter();
    let head = lines.next().unwrap_or_default();
    let rest: Vec<String> = lines.collect();
    if rest.is_empty() {
        head
    } else {
        format!("{} {}", head, rest.join("; "))
    }
}

/// The tone of a diagnosis in a table cell: nothing at its limit is good news.
fn limit_cell(d: &crate::summary::Diagnosis) -> Cell {
    let tone = match d.limit {
        Limit::Neither | Limit::Transient => Tone::Good,
        Limit::CannotTell => Tone::Unsure,
        _ => Tone::Bad,
    };
    Cell::Status(tone, verdict::cell(d))
}

/// A header: the first column's name, then each run's label.
fn header(first: &str, runs: &[Compared<'_>]) -> Vec<String> {
    std::iter::once(first.to_string())
        .chain(runs.iter().map(|r| r.label.to_string()))
        .collect()
}

/// A latency percentile with its interval, when the run kept one.
fn with_ci(point: u64, ci: Option<Interval<u64>>) -> Cell {
    match ci {
        Some(i) => Cell::DurationCi {
            us: point as f64,
            lo: i.lo.map(|v| v as f64),
            hi: i.hi.map(|v| v as f64),
        },
        None => Cell::Duration(point as f64),
    }
}

/// The whole runs side by side: a row per measure, a column per run.
fn whole_runs(runs: &[Compared<'_>]) -> Table {
    let mut t = Table {
        header: header("", runs),
        rows: Vec::new(),
        left: 1,
    };
    let mut add = |name: &str, cell: &dyn Fn(&Summary) -> Cell| {
        let mut row = vec![Cell::text(name)];
        row.extend(runs.iter().map(|r| cell(r.summary)));
        t.rows.push(row);
    };
    add("load", &|s| Cell::text(load_words(s)));
    add("protocol", &|s| Cell::text(s.protocol.clone()));
    add("requests", &|s| Cell::Count(s.requests.total));
    add("throughput", &|s| Cell::Rate(s.requests.throughput));
    add("success", &|s| Cell::Percent(100.0 * s.success_ratio));
    type Pick = fn(&Stats) -> u64;
    type PickCi = fn(&PercentileIntervals) -> Interval<u64>;
    // Each percentile with its 95 % confidence interval: two runs' percentiles whose
    // intervals overlap may differ by chance alone.
    let percentiles: [(&str, Pick, PickCi); 5] = [
        ("latency 50%", |s| s.p50_us, |c| c.p50_us),
        ("latency 90%", |s| s.p90_us, |c| c.p90_us),
        ("latency 95%", |s| s.p95_us, |c| c.p95_us),
        ("latency 99%", |s| s.p99_us, |c| c.p99_us),
        ("latency 99.9%", |s| s.p999_us, |c| c.p999_us),
    ];
    add("latency min", &|s| Cell::Duration(s.latency.min_us as f64));
    for (name, pick, ci) in percentiles {
        add(name, &|s| {
            with_ci(pick(&s.latency), s.latency.ci.as_ref().map(ci))
        });
    }
    add("latency max", &|s| Cell::Duration(s.latency.max_us as f64));
    add("latency mean", &|s| Cell::Duration(s.latency.mean_us));
    add("latency std dev", &|s| Cell::Duration(s.latency.stdev_us));
    add("TLS handshake mean", &|s| {
        s.tls_handshake
            .as_ref()
            .map_or(Cell::Empty, |h| Cell::Duration(h.mean_us))
    });
    add("errors", &|s| {
        let e: Vec<String> = s
            .errors
            .iter()
            .map(|e| format!("{} {}", e.key, e.count))
            .collect();
        if e.is_empty() {
            Cell::Empty
        } else {
            Cell::text(e.join(", "))
        }
    });
    add("objectives", &|s| match s.slo.len() {
        0 => Cell::Empty,
        n => {
            let met = s.slo.iter().filter(|v| v.met).count();
            let tone = if met == n { Tone::Good } else { Tone::Bad };
            Cell::Status(tone, format!("{met} of {n} met"))
        }
    });
    add("generator CPU/req", &|s| {
        Cell::text(format!("{:.1}µs", s.generator.cpu_us_per_request))
    });
    add("limit", &|s| limit_cell(&s.verdict));
    if runs.iter().any(|r| r.summary.server.is_some()) {
        add("server CPU mean", &|s| {
            s.server.as_ref().map_or(Cell::Empty, |c| {
                Cell::text(format!("{:.0}%", c.cpu_mean_percent))
            })
        });
        add("server CPU max", &|s| {
            s.server.as_ref().map_or(Cell::Empty, |c| {
                Cell::text(format!("{:.0}%", c.cpu_max_percent))
            })
        });
    }
    t
}

/// The names in `lists`, each once, in the order they first appear.
fn union<'a>(lists: impl Iterator<Item = Vec<&'a str>>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for list in lists {
        for name in list {
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

type Measure<T> = (&'static str, fn(&T) -> Cell);

/// A small table: a row per measure, a column per run; a run without `T` shows "-".
fn small_table<T>(runs: &[Compared<'_>], found: &[Option<T>], measures: &[Measure<T>]) -> Table {
    let mut t = Table {
        header: header("", runs),
        rows: Vec::new(),
        left: 1,
    };
    for (name, cell) in measures {
        let mut row = vec![Cell::text(*name)];
        row.extend(found.iter().map(|f| f.as_ref().map_or(Cell::Empty, cell)));
        t.rows.push(row);
    }
    t
}

/// What a step's table shows: enough to say which run did better at that load and which
/// side limited it; the other percentiles are in each run's own report.
fn step_measures() -> Vec<Measure<StageRow>> {
    vec![
        ("requests", |s| Cell::Count(s.count)),
        ("throughput", |s| Cell::Rate(s.throughput)),
        ("50% (95% CI)", |s| {
            with_ci(s.latency.p50_us, s.latency.ci.as_ref().map(|c| c.p50_us))
        }),
        ("99% (95% CI)", |s| {
            with_ci(s.latency.p99_us, s.latency.ci.as_ref().map(|c| c.p99_us))
        }),
        ("errors", |s| Cell::Percent(100.0 * s.failure_ratio())),
        ("status codes", |s| {
            let codes = status_codes(&s.status_codes, &s.error_set);
            if codes.is_empty() {
                Cell::Empty
            } else {
                Cell::text(codes)
            }
        }),
        ("limit", |s| limit_cell(&s.verdict)),
    ]
}

fn request_measures() -> Vec<Measure<RequestRow>> {
    vec![
        ("requests", |r| Cell::Count(r.count)),
        ("RPS", |r| Cell::Number {
            value: r.rps,
            decimals: 1,
        }),
        ("fails", |r| {
            Cell::text(by_request::fails_cell(r.failures, r.count))
        }),
        ("avg", |r| Cell::Duration(r.latency.mean_us)),
        ("50%", |r| Cell::Duration(r.latency.p50_us as f64)),
        ("95%", |r| Cell::Duration(r.latency.p95_us as f64)),
        ("99%", |r| Cell::Duration(r.latency.p99_us as f64)),
        ("max", |r| Cell::Duration(r.latency.max_us as f64)),
    ]
}

/// A compact table per measured step (matched by name, e.g. "500/s"; warm-ups left out),
/// when a run has steps.
fn by_step(runs: &[Compared<'_>]) -> Option<Section> {
    let steps = union(runs.iter().map(|r| {
        r.summary
            .stages
            .iter()
            .filter(|s| !s.warmup)
            .map(|s| s.name.as_str())
            .collect()
    }));
    if steps.is_empty() {
        return None;
    }
    let blocks = steps
        .iter()
        .map(|name| {
            let found: Vec<Option<StageRow>> = runs
                .iter()
                .map(|r| {
                    r.summary
                        .stages
                        .iter()
                        .find(|s| s.name == *name && s.count > 0 && !s.warmup)
                        .cloned()
                })
                .collect();
            Block::Sub(Section::table(
                &format!("step-{}", slug(name)),
                name,
                small_table(runs, &found, &step_measures()),
            ))
        })
        .collect();
    Some(Section::new("by-step", "By step", blocks))
}

/// A compact table per request (matched by name), when a run has more than one.
fn by_request(runs: &[Compared<'_>]) -> Option<Section> {
    if runs.iter().all(|r| r.summary.by_request.len() < 2) {
        return None;
    }
    let names = union(runs.iter().map(|r| {
        r.summary
            .by_request
            .iter()
            .map(|q| q.name.as_str())
            .collect()
    }));
    let blocks = names
        .iter()
        .map(|name| {
            let found: Vec<Option<RequestRow>> = runs
                .iter()
                .map(|r| {
                    r.summary
                        .by_request
                        .iter()
                        .find(|q| q.name == *name)
                        .cloned()
                })
                .collect();
            Block::Sub(Section::table(
                &format!("request-{}", slug(name)),
                name,
                small_table(runs, &found, &request_measures()),
            ))
        })
        .collect();
    Some(Section::new("by-request", "By request", blocks))
}

/// A name as an anchor: letters and digits kept, the rest dashes.
fn slug(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn i(lo: Option<u64>, hi: Option<u64>) -> Option<Interval<u64>> {
        Some(Interval { lo, hi })
    }

    #[test]
    fn intervals_that_overlap_are_noise_and_open_ends_reach_as_far_as_they_may() {
        assert_eq!(
            noise(i(Some(10), Some(20)), i(Some(30), Some(40))),
            Noise::Beyond
        );
        assert_eq!(
            noise(i(Some(10), Some(30)), i(Some(20), Some(40))),
            Noise::Within
        );
        // Open above: the run's p99 may be anywhere higher, so it reaches the other.
        assert_eq!(
            noise(i(Some(10), None), i(Some(30), Some(40))),
            Noise::Within
        );
        assert_eq!(
            noise(i(Some(50), None), i(Some(30), Some(40))),
            Noise::Beyond
        );
        assert_eq!(noise(None, i(Some(30), Some(40))), Noise::Unknown);
    }

    #[test]
    fn a_change_is_signed_and_relative_to_the_first_run() {
        assert_eq!(change(2101.0, 7303.0), "+247.6 %");
        assert_eq!(change(36.89, 36.79), "−0.3 %");
        assert_eq!(change(5.0, 5.0), "±0 %");
        assert_eq!(change(0.0, 5.0), "from 0");
    }

    #[test]
    fn each_percentile_says_which_way_by_how_much_and_whether_beyond_noise() {
        assert_eq!(
            part("median latency", 7303, 2101, Noise::Beyond),
            (
                "slower in median latency (3.5×, beyond noise)".to_string(),
                Tone::Bad
            )
        );
        assert_eq!(
            part("p99 latency", 13807, 3801, Noise::Within),
            (
                "no clear difference in p99 latency (within noise)".to_string(),
                Tone::Unsure
            )
        );
        assert_eq!(
            part("p99 latency", 1000, 3000, Noise::Unknown),
            (
                "faster in p99 latency (3.0× as fast, no interval to tell noise)".to_string(),
                Tone::Unsure
            )
        );
    }

    #[test]
    fn the_worse_tone_wins() {
        assert_eq!(worse(Tone::Good, Tone::Unsure), Tone::Unsure);
        assert_eq!(worse(Tone::Unsure, Tone::Bad), Tone::Bad);
        assert_eq!(worse(Tone::Good, Tone::Good), Tone::Good);
    }
}
