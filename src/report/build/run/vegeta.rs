//! vegeta's block of a run (Target, Requests, Duration, Latencies … Status Codes, Error Set)
//! and its Generator and Server lines, as [`FieldLine`]s: the text writer lays them out as
//! vegeta does, so a seed's report can be compared with vegeta's line by line.

use crate::report::document::{Block, Cell, FieldLine};
use crate::sample::Side;
use crate::summary::{ErrorEntry, Stats, Summary};
use crate::units::{fmt_bytes, fmt_rate, fmt_secs, fmt_us, fmt_us_f};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The fields of a latency line.
pub const STATS_FIELDS: &str = "[min, mean, 50, 90, 95, 99, 99.9, max, stdev]";

/// One line: label, the fields named, their values.
pub fn line(label: &str, fields: &str, values: impl Into<String>) -> FieldLine {
    FieldLine {
        label: label.into(),
        fields: fields.into(),
        values: Cell::Text(values.into()),
    }
}

/// The values of [`STATS_FIELDS`]; dashes when there was nothing to measure (no answer
/// met its expectations), never a latency of 0 µs.
pub fn stats_values(s: &Stats) -> String {
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

/// vegeta's status codes cell: failures without an answer as code 0, then each code.
pub fn status_codes(codes: &BTreeMap<u16, u64>, errors: &[ErrorEntry]) -> String {
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

/// The Error Set as vegeta lays it out (its columns are the content): under its label when
/// it has lines, or its label alone (vegeta prints it even when empty) as the last of the
/// field `lines`, so an empty set adds no empty block.
pub fn error_set(mut lines: Vec<FieldLine>, errors: &[ErrorEntry]) -> Vec<Block> {
    if errors.is_empty() {
        lines.push(line("Error Set:", "", ""));
        return vec![Block::Fields(lines)];
    }
    let mut out = String::from("Error Set:\n");
    for e in errors {
        let side = match e.side {
            Side::Client => "client",
            Side::Server => "server",
        };
        let _ = writeln!(
            out,
            "  {side:<7}{:<20}{:>10}  {}",
            e.key, e.count, e.description
        );
    }
    vec![Block::Fields(lines), Block::Preformatted(out)]
}

/// The run's block, from Target to Status Codes, then the Error Set.
pub fn block(s: &Summary) -> Vec<Block> {
    let load = crate::report::build::words::load_words(s);
    let mut lines = vec![line(
        "Target",
        "",
        crate::report::build::words::target_line(s, &load),
    )];
    if let Some(arrivals) = super::arrivals::words(s) {
        lines.push(line("Arrivals", "", arrivals));
    }
    lines.push(line(
        "Requests",
        "[total, rate, throughput]",
        format!(
            "{}, {:.2}, {:.2}",
            s.requests.total, s.requests.rate, s.requests.throughput
        ),
    ));
    if s.requests.retried > 0 {
        lines.push(line(
            "Retried",
            "[count, why]",
            format!(
                "{}, the server closed their connection unprocessed (GOAWAY or idle close); sent once more (those the server refused: at most a tenth of the requests sent), latency counts both, the rate neither",
                s.requests.retried
            ),
        ));
    }
    lines.push(line(
        "Duration",
        "[total, attack, wait]",
        format!(
            "{}, {}, {}",
            fmt_secs(s.duration.total_secs),
            fmt_secs(s.duration.attack_secs),
            fmt_secs(s.duration.wait_secs)
        ),
    ));
    lines.push(line("Latencies", STATS_FIELDS, stats_values(&s.latency)));
    lines.push(line(
        "Service time",
        STATS_FIELDS,
        stats_values(&s.service_time),
    ));
    for (label, stats) in [
        // Apart from the answered requests' latencies above, so fast failures never
        // make the server look fast.
        ("Failed", &s.failed_latency),
        ("First byte", &s.first_byte),
        ("Connect", &s.connect),
        ("TLS handshake", &s.tls_handshake),
    ] {
        if let Some(st) = stats {
            lines.push(line(
                label,
                "[count, mean, 50, 99, max, stdev]",
                format!(
                    "{}, {}, {}, {}, {}, {}",
                    st.count,
                    fmt_us_f(st.mean_us),
                    fmt_us(st.p50_us),
                    fmt_us(st.p99_us),
                    fmt_us(st.max_us),
                    fmt_us_f(st.stdev_us)
                ),
            ));
        }
    }
    lines.push(line(
        "Bytes In",
        "[total, mean]",
        format!("{}, {:.2}", s.bytes.in_total, s.bytes.in_mean),
    ));
    lines.push(line(
        "Bytes Out",
        "[total, mean]",
        format!("{}, {:.2}", s.bytes.out_total, s.bytes.out_mean),
    ));
    lines.push(FieldLine {
        label: "Success".into(),
        fields: "[ratio]".into(),
        values: Cell::Percent(100.0 * s.success_ratio),
    });
    let codes = status_codes(&s.status_codes, &s.errors);
    lines.push(line("Status Codes", "[code:count]", codes.trim()));
    error_set(lines, &s.errors)
}

/// The generator's lines (what it was asked and held, its send lag, its CPU and memory) and
/// the watched server's, when it was watched.
pub fn machines(s: &Summary) -> Vec<FieldLine> {
    let g = &s.generator;
    // The rate asked only when one was (an open model's).
    let (fields, asked) = match g.rate_asked {
        Some(r) => (
            "[asked, held, lag p99, lag max, cpu]",
            format!("{}/s, ", crate::report::build::words::stage_level_number(r)),
        ),
        None => ("[held, lag p99, lag max, cpu]", String::new()),
    };
    let mut lines = vec![line(
        "Generator",
        fields,
        format!(
            "{asked}{}, {}, {}, {:.1}% of a core ({:.1}µs/req on {} thread(s))",
            fmt_rate(g.rate_held),
            fmt_us(g.lag.p99_us),
            fmt_us(g.lag.max_us),
            g.cpu_percent,
            g.cpu_us_per_request,
            g.threads
        ),
    )];
    if let Some(rss) = g.peak_rss_bytes {
        lines.push(line(
            "",
            "[peak rss, peak fds]",
            format!("{}, {}", fmt_bytes(rss as f64), g.peak_open_fds),
        ));
    }
    if let Some(sv) = &s.server {
        lines.push(line(
            "Server",
            "[cpu mean, max, memory, threads, fds]",
            format!(
                "{:.1}%, {:.1}% of a core{}, {}, {}, {}",
                sv.cpu_mean_percent,
                sv.cpu_max_percent,
                sv.cpu_bound_percent
                    .map_or(String::new(), |b| format!(" (at most {b:.0}%)")),
                fmt_bytes(sv.rss_max_bytes as f64),
                sv.threads_max,
                sv.open_fds_max.map_or("-".into(), |n| n.to_string())
            ),
        ));
        if sv.trees.len() > 1 {
            for t in &sv.trees {
                lines.push(line(
                    "",
                    "[pid name, cpu mean, processes]",
                    format!(
                        "{} {}, {:.1}% of a core, {}",
                        t.pid, t.name, t.cpu_mean_percent, t.processes_max
                    ),
                ));
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_error_set_is_its_label_alone_as_vegeta_prints_it() {
        let blocks = error_set(vec![line("Success", "[ratio]", "100.00%")], &[]);
        let [Block::Fields(lines)] = blocks.as_slice() else {
            panic!("one block of lines: {blocks:?}")
        };
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[1].label, "Error Set:");
        assert_eq!(lines[1].values.to_text(), "");
        let text = crate::report::write::text::write(&crate::report::document::Document {
            sections: vec![crate::report::document::Section::new("", "", blocks)],
            ..Default::default()
        });
        assert_eq!(
            text,
            "Success       [ratio]                                        100.00%\nError Set:\n"
        );
    }
}
