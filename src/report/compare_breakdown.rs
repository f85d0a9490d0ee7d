//! Runs side by side step by step and request by request: a sweep's measured steps
//! (matched by name, e.g. "500/s"; warm-ups left out) and the requests (matched by name),
//! one column per run, so variants are compared rate by rate, not only over their whole runs.

use super::build::run::vegeta::status_codes;
use super::plot::RunView;
use crate::summary::{RequestRow, StageRow};
use crate::units::{fmt_count, fmt_num, fmt_rate, fmt_us, fmt_us_f};

/// A titled table: header first.
pub type Titled = (&'static str, Vec<Vec<String>>);

/// Columns aligned left: the step or request and the measure.
pub const LEFT: usize = 2;

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

type Measure<T> = (&'static str, fn(&T) -> String);

/// Rows `name, measure, each run's value` for every name and measure; a run without the
/// name shows "-".
fn table<T>(
    views: &[RunView<'_>],
    first: &str,
    names: &[&str],
    find: impl Fn(&RunView<'_>, &str) -> Option<T>,
    measures: &[Measure<T>],
) -> Vec<Vec<String>> {
    let mut header = vec![first.to_string(), "measure".into()];
    header.extend(views.iter().map(|v| v.label.clone()));
    let mut rows = vec![header];
    for name in names {
        let found: Vec<Option<T>> = views.iter().map(|v| find(v, name)).collect();
        for (i, (measure, cell)) in measures.iter().enumerate() {
            let mut row = vec![
                if i == 0 {
                    name.to_string()
                } else {
                    String::new()
                },
                measure.to_string(),
            ];
            row.extend(found.iter().map(|f| f.as_ref().map_or("-".into(), cell)));
            rows.push(row);
        }
    }
    rows
}

fn step_measures() -> Vec<Measure<StageRow>> {
    vec![
        ("requests", |s| fmt_count(s.count)),
        ("throughput", |s| fmt_rate(s.throughput)),
        ("50%", |s| fmt_us(s.latency.p50_us)),
        ("95%", |s| fmt_us(s.latency.p95_us)),
        ("99%", |s| fmt_us(s.latency.p99_us)),
        ("max", |s| fmt_us(s.latency.max_us)),
        ("std dev", |s| fmt_us_f(s.latency.stdev_us)),
        ("errors", |s| format!("{:.2}%", 100.0 * s.failure_ratio())),
        ("status codes", |s| {
            let codes = status_codes(&s.status_codes, &s.error_set);
            if codes.is_empty() {
                "-".into()
            } else {
                codes
            }
        }),
    ]
}

fn request_measures() -> Vec<Measure<RequestRow>> {
    vec![
        ("requests", |r| fmt_count(r.count)),
        ("RPS", |r| fmt_num(r.rps, 1)),
        ("fails", |r| {
            super::build::run::by_request::fails_cell(r.failures, r.count)
        }),
        ("avg", |r| fmt_us_f(r.latency.mean_us)),
        ("50%", |r| fmt_us(r.latency.p50_us)),
        ("95%", |r| fmt_us(r.latency.p95_us)),
        ("99%", |r| fmt_us(r.latency.p99_us)),
        ("max", |r| fmt_us(r.latency.max_us)),
        ("std dev", |r| fmt_us_f(r.latency.stdev_us)),
    ]
}

/// The by-step table (when a run has stages) and the by-request table (when a run has more
/// than one request).
pub fn tables(views: &[RunView<'_>]) -> Vec<Titled> {
    let mut out = Vec::new();
    let steps = union(views.iter().map(|v| {
        v.summary
            .stages
            .iter()
            .filter(|s| !s.warmup)
            .map(|s| s.name.as_str())
            .collect()
    }));
    if !steps.is_empty() {
        let find = |v: &RunView<'_>, name: &str| {
            v.summary
                .stages
                .iter()
                .find(|s| s.name == name && s.count > 0 && !s.warmup)
                .cloned()
        };
        out.push((
            "By step",
            table(views, "step", &steps, find, &step_measures()),
        ));
    }
    if views.iter().any(|v| v.summary.by_request.len() > 1) {
        let names = union(views.iter().map(|v| {
            v.summary
                .by_request
                .iter()
                .map(|r| r.name.as_str())
                .collect()
        }));
        let find = |v: &RunView<'_>, name: &str| {
            v.summary
                .by_request
                .iter()
                .find(|r| r.name == name)
                .cloned()
        };
        out.push((
            "By request",
            table(views, "request", &names, find, &request_measures()),
        ));
    }
    out
}
