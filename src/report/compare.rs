//! Runs side by side (TLS at the balancer vs on the instance vs with client certificates):
//! one row per measure, one column per run; a percentile with its 95 % confidence interval.

use super::plot::RunView;
use super::table::{aligned, aligned_left, markdown, markdown_left};
use super::Format;
use crate::summary::{Interval, PercentileIntervals, Stats};
use crate::units::{fmt_count, fmt_rate, fmt_us, fmt_us_f};

/// The comparison table: header (measure, then each run's label), then one row per measure.
pub fn rows(views: &[RunView<'_>]) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut header = vec!["".to_string()];
    header.extend(views.iter().map(|v| v.label.clone()));
    rows.push(header);
    let mut add = |name: &str, cell: &dyn Fn(&RunView<'_>) -> String| {
        let mut r = vec![name.to_string()];
        r.extend(views.iter().map(cell));
        rows.push(r);
    };
    add("load", &|v| super::build::words::load_words(v.summary));
    add("protocol", &|v| v.summary.protocol.clone());
    add("requests", &|v| fmt_count(v.summary.requests.total));
    add("throughput", &|v| fmt_rate(v.summary.requests.throughput));
    add("success", &|v| {
        format!("{:.2}%", 100.0 * v.summary.success_ratio)
    });
    type Pick = fn(&Stats) -> u64;
    type PickCi = fn(&PercentileIntervals) -> &Interval<u64>;
    // Each percentile with its 95 % confidence interval: two runs' percentiles whose
    // intervals overlap may differ by chance alone.
    let percentiles: [(&str, Pick, PickCi); 5] = [
        ("latency 50%", |s| s.p50_us, |c| &c.p50_us),
        ("latency 90%", |s| s.p90_us, |c| &c.p90_us),
        ("latency 95%", |s| s.p95_us, |c| &c.p95_us),
        ("latency 99%", |s| s.p99_us, |c| &c.p99_us),
        ("latency 99.9%", |s| s.p999_us, |c| &c.p999_us),
    ];
    add("latency min", &|v| fmt_us(v.summary.latency.min_us));
    for (name, pick, ci) in percentiles {
        add(name, &|v| {
            let l = &v.summary.latency;
            super::interval::us_with(pick(l), l.ci.as_ref().map(ci))
        });
    }
    add("latency max", &|v| fmt_us(v.summary.latency.max_us));
    add("latency mean", &|v| fmt_us_f(v.summary.latency.mean_us));
    add("latency std dev", &|v| fmt_us_f(v.summary.latency.stdev_us));
    add("TLS handshake mean", &|v| {
        v.summary
            .tls_handshake
            .as_ref()
            .map_or("-".into(), |s| fmt_us_f(s.mean_us))
    });
    add("errors", &|v| {
        let e: Vec<String> = v
            .summary
            .errors
            .iter()
            .map(|e| format!("{} {}", e.key, e.count))
            .collect();
        if e.is_empty() {
            "-".into()
        } else {
            e.join(", ")
        }
    });
    add("objectives", &|v| match v.summary.slo.len() {
        0 => "-".into(),
        n => format!(
            "{} of {n} met",
            v.summary.slo.iter().filter(|s| s.met).count()
        ),
    });
    add("generator CPU/req", &|v| {
        format!("{:.1}µs", v.summary.generator.cpu_us_per_request)
    });
    add("limit", &|v| {
        super::build::verdict::cell(&v.summary.verdict)
    });
    if views.iter().any(|v| v.summary.server.is_some()) {
        add("server CPU mean", &|v| {
            v.summary
                .server
                .as_ref()
                .map_or("-".into(), |s| format!("{:.0}%", s.cpu_mean_percent))
        });
        add("server CPU max", &|v| {
            v.summary
                .server
                .as_ref()
                .map_or("-".into(), |s| format!("{:.0}%", s.cpu_max_percent))
        });
    }
    rows
}

/// The comparison in `format`.
pub fn render(views: &[RunView<'_>], format: Format) -> Result<String, super::RenderError> {
    Ok(match format {
        Format::Junit => {
            return Err(super::RenderError::Unsupported {
                what: "a comparison without rules",
                format: "JUnit",
                hint: "give the rules it must pass: headroom compare --baseline BASE CANDIDATE --fail-on 'p99 +10%' --format junit",
            })
        }
        Format::Html => super::html::compare_page(views, &rows(views))?,
        Format::Json => {
            let all: Vec<serde_json::Value> = views
                .iter()
                .map(|v| serde_json::json!({"label": v.label, "summary": v.summary}))
                .collect();
            serde_json::to_string_pretty(&all).expect("summaries serialize") + "\n"
        }
        Format::Markdown => {
            let mut out = markdown(&rows(views));
            for (title, rows) in super::compare_breakdown::tables(views) {
                out.push_str(&format!("\n### {title}\n\n"));
                out.push_str(&markdown_left(&rows, super::compare_breakdown::LEFT));
            }
            out
        }
        Format::Text => {
            let mut out = aligned(&rows(views));
            for (title, rows) in super::compare_breakdown::tables(views) {
                out.push_str(&format!("\n{title}:\n"));
                for line in aligned_left(&rows, super::compare_breakdown::LEFT).lines() {
                    out.push_str(&format!("  {line}\n"));
                }
            }
            out
        }
    })
}
