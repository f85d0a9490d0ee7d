//! The text report, laid out like vegeta's so seed reports can be compared line by line.

use crate::plan::Load;
use crate::sample::Side;
use crate::summary::{ErrorEntry, Stats, Summary};
use crate::units::{fmt_bytes, fmt_num, fmt_rate, fmt_secs, fmt_us, fmt_us_f, plural};
use std::collections::BTreeMap;
use std::fmt::Write;

const LABEL: usize = 14;
const FIELDS: usize = 47;

/// One vegeta-style line: label, the fields named, their values.
pub(super) fn row(out: &mut String, label: &str, fields: &str, values: &str) {
    let _ = writeln!(out, "{label:<LABEL$}{fields:<FIELDS$}{values}");
}

/// The values of [`STATS_FIELDS`]; dashes when there was nothing to measure (no answer
/// met its expectations), never a latency of 0 µs.
pub(super) fn stats_values(s: &Stats) -> String {
    if s.count == 0 {
        return ["—"; 9].join(", ");
    }
    [
        s.min_us as f64,
        s.mean_us,
        s.p50_us as f64,
        s.p90_us as f64,
        s.p95_us as f64,
        s.p99_us as f64,
        s.p999_us as f64,
        s.max_us as f64,
        s.stdev_us,
    ]
    .iter()
    .map(|v| fmt_us_f(*v))
    .collect::<Vec<_>>()
    .join(", ")
}

/// The fields of a latency line.
pub(super) const STATS_FIELDS: &str = "[min, mean, 50, 90, 95, 99, 99.9, max, stdev]";

/// vegeta's status codes cell: failures without an answer as code 0, then each code.
pub(super) fn status_codes(codes: &BTreeMap<u16, u64>, errors: &[ErrorEntry]) -> String {
    let mut cells: Vec<String> = codes.iter().map(|(c, n)| format!("{c}:{n}")).collect();
    let failed: u64 = errors
        .iter()
        .filter(|e| !e.key.starts_with("status_") && e.key != "expectation_failed")
        .map(|e| e.count)
        .sum();
    if failed > 0 {
        cells.insert(0, format!("0:{failed}"));
    }
    cells.join("  ")
}

/// The Error Set's lines, each indented by `indent`.
pub(super) fn error_set(out: &mut String, indent: &str, errors: &[ErrorEntry]) {
    for e in errors {
        let side = match e.side {
            Side::Client => "client",
            Side::Server => "server",
        };
        let _ = writeln!(
            out,
            "{indent}{side:<7}{:<20}{:>10}  {}",
            e.key, e.count, e.description
        );
    }
}

/// `rows` as an aligned table under `title`, indented by two spaces.
fn section(out: &mut String, title: &str, rows: &[Vec<String>], left: usize) {
    let _ = writeln!(out, "{title}:");
    for line in super::table::aligned_left(rows, left).lines() {
        let _ = writeln!(out, "  {line}");
    }
}

/// What was attacked: the method and URL, or how many kinds of request went to it.
pub(super) fn target_line(s: &Summary, load: &str) -> String {
    let what = match &s.method {
        Some(method) => format!("{method} {}", s.target),
        None => format!("{} ({} requests)", s.target, s.by_request.len()),
    };
    format!("{what}  ({load}, {})", s.protocol)
}

/// Which part of a sharded test the run was: "shard 1 of 4 (plan 3f2a…), started 2.3 s
/// after the common start"; `None` for a whole test.
pub(super) fn shard_words(s: &Summary) -> Option<String> {
    let shard = s.shard.as_ref()?;
    let mut words = format!(
        "shard {} of {} of one test (plan {}); its numbers are its part only, headroom merge joins the parts",
        shard.index,
        shard.count,
        shard.plan.get(..12).unwrap_or(&shard.plan)
    );
    if let Some(late) = shard
        .late_secs
        .filter(|&l| l >= crate::plan::shard::LATE_NOTICE.as_secs_f64())
    {
        let _ = write!(
            words,
            "; started {} after the common start {}",
            fmt_secs(late),
            shard.start_at.as_deref().unwrap_or("?")
        );
    }
    Some(words)
}

/// The load model in words.
pub(super) fn load_words(s: &Summary) -> String {
    let n = s.stages.len();
    match (s.load, n) {
        // A shard's share of a rate can be a long fraction (100 / 3): three decimals
        // say it, and leave whole and short rates as they were.
        (Load::Open { rate }, 0) => format!(
            "open model, {} req/s",
            (rate.per_second() * 1000.0).round() / 1000.0
        ),
        (Load::Closed { concurrency }, 0) => match s.max_rate {
            Some(cap) => format!(
                "closed model, {}, at most {} req/s",
                plural(concurrency, "worker"),
                (cap.per_second() * 1000.0).round() / 1000.0
            ),
            None => format!("closed model, {}", plural(concurrency, "worker")),
        },
        (Load::Open { rate }, _) => {
            format!(
                "open model in {n} stages, up to {} req/s",
                rate.per_second()
            )
        }
        (Load::Closed { concurrency }, _) => {
            format!(
                "closed model in {n} stages, up to {}",
                plural(concurrency, "user")
            )
        }
    }
}

/// A load level for people: "2,000", "0.5".
pub(super) fn stage_level_number(x: f64) -> String {
    if x.fract() == 0.0 {
        fmt_num(x, 0)
    } else {
        fmt_num(x, 2)
    }
}

/// A stage's load: "200/s", "0→500/s", "1 user", "10 users".
pub(super) fn stage_level(s: &Summary, from: f64, to: f64) -> String {
    let level = stage_level_number;
    match s.load {
        Load::Open { .. } if from == to => format!("{}/s", level(from)),
        Load::Open { .. } => format!("{}→{}/s", level(from), level(to)),
        Load::Closed { .. } if from == to => plural(level(from), "user"),
        Load::Closed { .. } => format!("{}→{}", level(from), plural(level(to), "user")),
    }
}

/// Renders the summary as the end-of-run text report.
pub fn render_text(s: &Summary) -> String {
    text(s, true)
}

/// The text report without the tables (sections, steps, objectives) a page shows as tables
/// of its own: what the HTML report puts in its summary block.
pub(super) fn headline(s: &Summary) -> String {
    text(s, false)
}

/// The verdict's lines, the headline first and each piece of evidence indented.
fn verdict_lines(out: &mut String, s: &Summary) {
    let mut verdict = super::verdict::lines(&s.verdict, &s.generator).into_iter();
    if let Some(head) = verdict.next() {
        let _ = writeln!(out, "{head}");
    }
    for line in verdict {
        let _ = writeln!(out, "  - {line}");
    }
}

fn text(s: &Summary, tables: bool) -> String {
    let mut out = String::new();
    // When nothing succeeded every number below describes failures: say so first.
    if s.nothing_succeeded() {
        verdict_lines(&mut out, s);
    }
    let load = load_words(s);
    row(&mut out, "Target", "", &target_line(s, &load));
    if let Some(arrivals) = super::arrivals::words(s) {
        row(&mut out, "Arrivals", "", &arrivals);
    }
    if let Some(shard) = shard_words(s) {
        row(&mut out, "Shard", "", &shard);
    }
    if let Some(why) = &s.partial {
        row(&mut out, "Partial", "", &format!("PARTIAL RUN: {why}"));
    }
    if let Some(shards) = &s.shards {
        row(&mut out, "Merged", "", &super::shards::line(shards));
    }
    if let Some(why) = &s.stopped_early {
        row(&mut out, "Stopped", "", &format!("stopped early: {why}"));
    }
    for o in &s.outputs {
        row(&mut out, "Output", "", &super::outputs::line(o));
    }
    for notice in &s.notices {
        row(&mut out, "Note", "", &notice.to_string());
    }
    if s.warmup_secs > 0.0 {
        row(
            &mut out,
            "Warm-up",
            "",
            &format!(
                "the requests sent in the first {} (warm-up stages) are left out of every number but the generator's, wherever their answers fell",
                fmt_secs(s.warmup_secs)
            ),
        );
    }
    row(
        &mut out,
        "Requests",
        "[total, rate, throughput]",
        &format!(
            "{}, {:.2}, {:.2}",
            s.requests.total, s.requests.rate, s.requests.throughput
        ),
    );
    if s.requests.retried > 0 {
        row(
            &mut out,
            "Retried",
            "[count, why]",
            &format!(
                "{}, the server closed their connection unprocessed (GOAWAY or idle close); sent once more (those the server refused: at most a tenth of the requests sent), latency counts both, the rate neither",
                s.requests.retried
            ),
        );
    }
    row(
        &mut out,
        "Duration",
        "[total, attack, wait]",
        &format!(
            "{}, {}, {}",
            fmt_secs(s.duration.total_secs),
            fmt_secs(s.duration.attack_secs),
            fmt_secs(s.duration.wait_secs)
        ),
    );
    row(
        &mut out,
        "Latencies",
        STATS_FIELDS,
        &stats_values(&s.latency),
    );
    row(
        &mut out,
        "Service time",
        STATS_FIELDS,
        &stats_values(&s.service_time),
    );
    for (label, stats) in [
        // Apart from the answered requests' latencies above, so fast failures never
        // make the server look fast.
        ("Failed", &s.failed_latency),
        ("First byte", &s.first_byte),
        ("Connect", &s.connect),
        ("TLS handshake", &s.tls_handshake),
    ] {
        if let Some(st) = stats {
            row(
                &mut out,
                label,
                "[count, mean, 50, 99, max, stdev]",
                &format!(
                    "{}, {}, {}, {}, {}, {}",
                    st.count,
                    fmt_us_f(st.mean_us),
                    fmt_us(st.p50_us),
                    fmt_us(st.p99_us),
                    fmt_us(st.max_us),
                    fmt_us_f(st.stdev_us)
                ),
            );
        }
    }
    row(
        &mut out,
        "Bytes In",
        "[total, mean]",
        &format!("{}, {:.2}", s.bytes.in_total, s.bytes.in_mean),
    );
    row(
        &mut out,
        "Bytes Out",
        "[total, mean]",
        &format!("{}, {:.2}", s.bytes.out_total, s.bytes.out_mean),
    );
    row(
        &mut out,
        "Success",
        "[ratio]",
        &format!("{:.2}%", 100.0 * s.success_ratio),
    );
    let codes = status_codes(&s.status_codes, &s.errors);
    row(&mut out, "Status Codes", "[code:count]", codes.trim());
    out.push_str("Error Set:\n");
    error_set(&mut out, "  ", &s.errors);
    if tables {
        for t in super::sections::tables(s, false) {
            section(&mut out, t.title, &t.rows, t.left);
        }
        if !s.stages.is_empty() {
            out.push_str(&super::steps::blocks(s));
        }
    }
    if tables && !s.slo.is_empty() {
        out.push_str("SLO:\n");
        let width = s
            .slo
            .iter()
            .map(|v| v.objective.chars().count())
            .max()
            .unwrap_or(0);
        for v in &s.slo {
            let verdict = if v.met { "met" } else { "NOT MET" };
            let _ = writeln!(
                out,
                "  {verdict:<9}{:<width$}  measured {}",
                v.objective,
                super::interval::measured(v)
            );
        }
    }
    let g = &s.generator;
    // The rate asked only when one was (an open model's).
    let (fields, asked) = match g.rate_asked {
        Some(r) => (
            "[asked, held, lag p99, lag max, cpu]",
            format!("{}/s, ", stage_level_number(r)),
        ),
        None => ("[held, lag p99, lag max, cpu]", String::new()),
    };
    row(
        &mut out,
        "Generator",
        fields,
        &format!(
            "{asked}{}, {}, {}, {:.1}% of a core ({:.1}µs/req on {} thread(s))",
            fmt_rate(g.rate_held),
            fmt_us(g.lag.p99_us),
            fmt_us(g.lag.max_us),
            g.cpu_percent,
            g.cpu_us_per_request,
            g.threads
        ),
    );
    if let Some(rss) = g.peak_rss_bytes {
        row(
            &mut out,
            "",
            "[peak rss, peak fds]",
            &format!("{}, {}", fmt_bytes(rss as f64), g.peak_open_fds),
        );
    }
    if let Some(sv) = &s.server {
        row(
            &mut out,
            "Server",
            "[cpu mean, max, memory, threads, fds]",
            &format!(
                "{:.1}%, {:.1}% of a core{}, {}, {}, {}",
                sv.cpu_mean_percent,
                sv.cpu_max_percent,
                sv.cpu_bound_percent
                    .map_or(String::new(), |b| format!(" (at most {b:.0}%)")),
                fmt_bytes(sv.rss_max_bytes as f64),
                sv.threads_max,
                sv.open_fds_max.map_or("-".into(), |n| n.to_string())
            ),
        );
        if sv.trees.len() > 1 {
            for t in &sv.trees {
                row(
                    &mut out,
                    "",
                    "[pid name, cpu mean, processes]",
                    &format!(
                        "{} {}, {:.1}% of a core, {}",
                        t.pid, t.name, t.cpu_mean_percent, t.processes_max
                    ),
                );
            }
        }
    }
    if !s.nothing_succeeded() {
        verdict_lines(&mut out, s);
    }
    out
}
