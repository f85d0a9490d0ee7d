//! The report as markdown: the tables a performance report pastes in, like the seeds'.

use super::text::{load_words, target_line};
use crate::summary::{Stats, Summary};
use crate::units::{fmt_bytes, fmt_count, fmt_num, fmt_rate, fmt_secs, fmt_us, fmt_us_f};
use std::fmt::Write;

fn stats_row(out: &mut String, label: &str, st: &Stats) {
    if st.count == 0 {
        // Nothing to measure: dashes, never a latency of 0 µs.
        let _ = writeln!(out, "| {label} |{}", " — |".repeat(9));
        return;
    }
    let _ = writeln!(
        out,
        "| {label} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
        fmt_us(st.min_us),
        fmt_us_f(st.mean_us),
        fmt_us(st.p50_us),
        fmt_us(st.p90_us),
        fmt_us(st.p95_us),
        fmt_us(st.p99_us),
        fmt_us(st.p999_us),
        fmt_us(st.max_us),
        fmt_us_f(st.stdev_us)
    );
}

/// `rows` as a markdown table under a level-3 heading.
fn section(out: &mut String, title: &str, rows: &[Vec<String>], left: usize) {
    let _ = writeln!(out, "### {title}\n");
    out.push_str(&super::table::markdown_left(rows, left));
    out.push('\n');
}

/// Each step that ran as its own vegeta block (requests, latencies, status codes, Error Set).
fn steps(out: &mut String, s: &Summary) {
    let steps = super::steps::measured(s);
    if steps.is_empty() {
        return;
    }
    out.push_str("### Steps\n\n");
    for (title, st) in steps {
        let _ = writeln!(out, "#### {title}\n\n```\n{}```\n", super::steps::block(st));
    }
}

/// Renders the summary as a markdown report.
pub fn render_markdown(s: &Summary) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## {}\n", target_line(s, &load_words(s)));
    // When nothing succeeded every number below describes failures: say so first.
    if s.nothing_succeeded() {
        verdict(&mut out, s);
    }
    if let Some(shard) = super::text::shard_words(s) {
        let _ = writeln!(out, "> **Shard:** {shard}\n");
    }
    if let Some(why) = &s.partial {
        let _ = writeln!(out, "> **Partial run:** {why}\n");
    }
    if let Some(why) = &s.stopped_early {
        let _ = writeln!(out, "> **Stopped early:** {why}\n");
    }
    for o in &s.outputs {
        let _ = writeln!(out, "> **Output:** {}\n", super::outputs::line(o));
    }
    if s.warmup_secs > 0.0 {
        let _ = writeln!(
            out,
            "> The requests sent in the first {} (warm-up stages) are left out of every number but the generator's, wherever their answers fell.\n",
            fmt_secs(s.warmup_secs)
        );
    }
    let _ = writeln!(out, "Started {}.\n", s.started_at);
    if let Some(arrivals) = super::arrivals::words(s) {
        let _ = writeln!(out, "Arrivals: {arrivals}.\n");
    }
    if let Some(shards) = &s.shards {
        let _ = writeln!(out, "Merged: {}.\n", super::shards::line(shards));
    }
    out.push_str(
        "| requests | rate (req/s) | throughput (req/s) | success | duration | bytes in (mean) |\n",
    );
    out.push_str("|---:|---:|---:|---:|---:|---:|\n");
    let _ = writeln!(
        out,
        "| {} | {} | {} | {:.2}% | {} | {} |\n",
        fmt_count(s.requests.total),
        fmt_num(s.requests.rate, 2),
        fmt_num(s.requests.throughput, 2),
        100.0 * s.success_ratio,
        fmt_secs(s.duration.total_secs),
        fmt_bytes(s.bytes.in_mean)
    );
    out.push_str("| | min | mean | 50% | 90% | 95% | 99% | 99.9% | max | std dev |\n");
    out.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    stats_row(&mut out, "latency (answered)", &s.latency);
    stats_row(&mut out, "service time (answered)", &s.service_time);
    for (label, stats) in [
        ("latency (failed)", &s.failed_latency),
        ("first byte", &s.first_byte),
        ("connect", &s.connect),
        ("TLS handshake", &s.tls_handshake),
    ] {
        if let Some(st) = stats {
            stats_row(&mut out, label, st);
        }
    }
    out.push('\n');
    for t in super::sections::tables(s, true) {
        section(&mut out, t.title, &t.rows, t.left);
    }
    if !s.stages.is_empty() {
        steps(&mut out, s);
    }
    if !s.slo.is_empty() {
        out.push_str("### Objectives\n\n| objective | measured | verdict |\n|---|---:|---|\n");
        for v in &s.slo {
            let verdict = if v.met { "met" } else { "**not met**" };
            let _ = writeln!(
                out,
                "| `{}` | {} | {verdict} |",
                v.objective,
                super::interval::measured(v)
            );
        }
        out.push('\n');
    }
    out.push_str(
        "### Status codes and errors\n\n| outcome | count | side | meaning |\n|---|---:|---|---|\n",
    );
    for (code, n) in &s.status_codes {
        let _ = writeln!(out, "| {code} | {} | | |", fmt_count(*n));
    }
    // 5xx answers are in the codes above; every other entry (4xx the requests do not expect,
    // broken expectations, errors) is listed, so the failed share is explained.
    let fives = |key: &str| {
        key.strip_prefix("status_")
            .and_then(|c| c.parse::<u16>().ok())
            .is_some_and(|c| c >= 500)
    };
    for e in s.errors.iter().filter(|e| !fives(&e.key)) {
        let side = format!("{:?}", e.side).to_lowercase();
        let _ = writeln!(
            out,
            "| {} | {} | {side} | {} |",
            e.key,
            fmt_count(e.count),
            e.description
        );
    }
    let g = &s.generator;
    let _ = writeln!(
        out,
        "\n### Generator\n\n{}eld {}; its send lag (how late requests left it) p99 {}, max {}; CPU {:.1}% of a core ({:.1} µs per request on {} thread(s)).",
        // The rate asked only when one was (an open model's).
        g.rate_asked.map_or("Rate h".into(), |r| format!(
            "Rate asked {}/s, h",
            super::text::stage_level_number(r)
        )),
        fmt_rate(g.rate_held),
        fmt_us(g.lag.p99_us),
        fmt_us(g.lag.max_us),
        g.cpu_percent,
        g.cpu_us_per_request,
        g.threads
    );
    if let Some(sv) = &s.server {
        let _ = writeln!(
            out,
            "\n### Server\n\nCPU {:.1} % of a core on average, {:.1} % in its busiest second{}; up to {} of memory, {} threads ({} seconds sampled).",
            sv.cpu_mean_percent,
            sv.cpu_max_percent,
            sv.cpu_bound_percent
                .map_or(String::new(), |b| format!(" (at most {b:.0} %)")),
            fmt_bytes(sv.rss_max_bytes as f64),
            sv.threads_max,
            sv.samples
        );
        if sv.trees.len() > 1 {
            let _ = writeln!(
                out,
                "\n| PID | process | CPU mean | processes |\n|---:|---|---:|---:|"
            );
            for t in &sv.trees {
                let _ = writeln!(
                    out,
                    "| {} | {} | {:.1} % | {} |",
                    t.pid, t.name, t.cpu_mean_percent, t.processes_max
                );
            }
        }
    }
    if !s.nothing_succeeded() {
        out.push('\n');
        verdict(&mut out, s);
    }
    out
}

/// The verdict: its headline in bold, each piece of evidence a list item.
fn verdict(out: &mut String, s: &Summary) {
    let mut lines = super::verdict::lines(&s.verdict, &s.generator).into_iter();
    if let Some(head) = lines.next() {
        let _ = writeln!(out, "**Verdict: {head}**\n");
    }
    for line in lines {
        let _ = writeln!(out, "- {line}");
    }
    out.push('\n');
}
