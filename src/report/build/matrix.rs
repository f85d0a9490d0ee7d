//! The document of a matrix: which variant was fastest and slowest at p99, which served
//! most and which failed most, then one row per variant (its cells, then requests, achieved
//! rate, errors, latency and server CPU), and one table per request when there are several.

use crate::report::document::{Answer, Cell, Document, Fact, Section, Table, Tone, Verdict};
use crate::summary::matrix::{MatrixTable, VariantRow, VariantState};
use crate::summary::Stats;
use crate::units::{fmt_rate, fmt_us};

/// The matrix as a document.
pub fn build(t: &MatrixTable) -> Document {
    let mut sections = vec![Section::table("variants", "", variants(t))];
    sections.extend(t.by_request.iter().map(|r| {
        Section::table(
            &format!("request-{}", r.request),
            &format!("Request {}", r.request),
            requests(t, r),
        )
    }));
    let notes = notes(t);
    Document {
        title: format!(
            "Matrix of {}: {} variant(s) run{}",
            t.scenario,
            t.rows.len(),
            if t.not_run > 0 {
                format!(", {} not run", t.not_run)
            } else {
                String::new()
            }
        ),
        answer: Answer {
            verdict: verdict(t, !notes.is_empty()),
            objectives: Vec::new(),
            numbers: vec![
                Fact {
                    label: "variants run".into(),
                    value: Cell::Count(t.rows.len() as u64),
                },
                Fact {
                    label: "requests".into(),
                    value: Cell::Count(t.rows.iter().map(|r| r.requests).sum()),
                },
            ],
            notes,
        },
        sections,
        data: serde_json::to_value(t).unwrap_or_default(),
        ..Document::default()
    }
}

/// A variant by its cells: "100, 256B".
fn name(r: &VariantRow) -> String {
    r.cells.join(", ")
}

/// The answer: the variants at either end of p99, the one that served most and the one
/// that failed most; unsure when a variant is partial or did not run.
fn verdict(t: &MatrixTable, partial: bool) -> Option<Verdict> {
    let answered: Vec<&VariantRow> = t.rows.iter().filter(|r| r.latency.count > 0).collect();
    let fastest = answered.iter().min_by_key(|r| r.latency.p99_us)?;
    let slowest = answered.iter().max_by_key(|r| r.latency.p99_us)?;
    let sentence = if answered.len() < 2 {
        format!(
            "One variant answered: {} (p99 {}).",
            name(fastest),
            fmt_us(fastest.latency.p99_us)
        )
    } else {
        format!(
            "Lowest p99: {} ({}); highest: {} ({}).",
            name(fastest),
            fmt_us(fastest.latency.p99_us),
            name(slowest),
            fmt_us(slowest.latency.p99_us)
        )
    };
    let mut evidence = Vec::new();
    if let Some(most) = t.rows.iter().max_by(|a, b| a.rps.total_cmp(&b.rps)) {
        evidence.push(format!(
            "most served: {} ({} achieved)",
            name(most),
            fmt_rate(most.rps)
        ));
    }
    if let Some(worst) = t
        .rows
        .iter()
        .filter(|r| r.error_rate > 0.0)
        .max_by(|a, b| a.error_rate.total_cmp(&b.error_rate))
    {
        evidence.push(format!(
            "most errors: {} ({:.2}% of its requests failed)",
            name(worst),
            100.0 * worst.error_rate
        ));
    }
    Some(Verdict {
        tone: if partial { Tone::Unsure } else { Tone::Good },
        sentence,
        evidence,
    })
}

/// What changes how to read the table: a variant stopped partway, variants not run.
fn notes(t: &MatrixTable) -> Vec<String> {
    let mut out: Vec<String> = t
        .rows
        .iter()
        .filter(|r| r.state != VariantState::Completed)
        .map(|r| match r.state {
            VariantState::Aborted => format!(
                "{} was aborted by its safety stop (--abort-when): its report says which condition held.",
                r.run
            ),
            _ => format!(
                "{} was stopped partway: its numbers cover part of its run.",
                r.run
            ),
        })
        .collect();
    if t.not_run > 0 {
        out.push(format!(
            "The matrix was stopped: {} variant(s) did not run.",
            t.not_run
        ));
    }
    out
}

/// The latency figures of `l` in order, or empty cells when nothing succeeded (a request
/// that only failed has no latency, not one of 0µs).
fn latencies(l: &Stats, pick: &[fn(&Stats) -> f64]) -> Vec<Cell> {
    pick.iter()
        .map(|f| {
            if l.count == 0 {
                Cell::Empty
            } else {
                Cell::Duration(f(l))
            }
        })
        .collect()
}

/// A row's variant cells, then how many requests it sent, at what rate, how many failed.
fn counts(cells: &[String], requests: u64, rps: f64, error_rate: f64) -> Vec<Cell> {
    let mut out: Vec<Cell> = cells.iter().map(Cell::text).collect();
    out.extend([
        Cell::Count(requests),
        Cell::Number {
            value: rps,
            decimals: 2,
        },
        Cell::Percent(100.0 * error_rate),
    ]);
    out
}

/// A header: the variant columns, then `rest`.
fn header(t: &MatrixTable, rest: &[&str], cpu: bool) -> Vec<String> {
    let mut out = t.columns.clone();
    out.extend(rest.iter().map(|s| s.to_string()));
    if cpu {
        out.extend(t.cpu_columns.iter().cloned());
    }
    out
}

/// The variant table.
fn variants(t: &MatrixTable) -> Table {
    let mut out = Table {
        header: header(
            t,
            &["requests", "req/s", "errors", "p50", "p95", "p99", "mean"],
            true,
        ),
        rows: Vec::new(),
        left: t.columns.len(),
    };
    for r in &t.rows {
        let mut cells = counts(&r.cells, r.requests, r.rps, r.error_rate);
        cells.extend(latencies(
            &r.latency,
            &[
                |l| l.p50_us as f64,
                |l| l.p95_us as f64,
                |l| l.p99_us as f64,
                |l| l.mean_us,
            ],
        ));
        cells.extend(
            r.server_cpu
                .iter()
                .map(|c| c.map_or(Cell::Empty, |c| Cell::text(format!("{c:.1}%")))),
        );
        out.rows.push(cells);
    }
    out
}

/// One request's table: a row per variant that sent it.
fn requests(t: &MatrixTable, table: &crate::summary::matrix::RequestTable) -> Table {
    let mut out = Table {
        header: header(
            t,
            &[
                "requests", "req/s", "errors", "min", "median", "p95", "p99", "max", "mean",
                "std dev",
            ],
            false,
        ),
        rows: Vec::new(),
        left: t.columns.len(),
    };
    for r in &table.rows {
        let mut cells = counts(&r.cells, r.requests, r.rps, r.error_rate);
        cells.extend(latencies(
            &r.latency,
            &[
                |l| l.min_us as f64,
                |l| l.p50_us as f64,
                |l| l.p95_us as f64,
                |l| l.p99_us as f64,
                |l| l.max_us as f64,
                |l| l.mean_us,
                |l| l.stdev_us,
            ],
        ));
        out.rows.push(cells);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(p99_us: u64) -> Stats {
        let mut s: Stats = serde_json::from_value(serde_json::json!({
            "count": 10, "min_us": 1000, "mean_us": 2000.0, "p50_us": 2000, "p90_us": 3000,
            "p95_us": 3000, "p99_us": p99_us, "p999_us": p99_us, "max_us": p99_us,
            "stdev_us": 100.0
        }))
        .unwrap();
        s.ci = None;
        s
    }

    fn row(cells: &[&str], p99_us: u64, error_rate: f64, state: VariantState) -> VariantRow {
        VariantRow {
            run: format!("01-{}", cells[0]),
            cells: cells.iter().map(|c| c.to_string()).collect(),
            state,
            requests: 100,
            rps: 50.0,
            error_rate,
            latency: stats(p99_us),
            server_cpu: vec![None],
        }
    }

    fn table() -> MatrixTable {
        MatrixTable {
            scenario: "kv.yaml".into(),
            columns: vec!["rate".into(), "size".into()],
            cpu_columns: vec!["store CPU".into()],
            rows: vec![
                row(&["100", "256B"], 8_000, 0.0, VariantState::Completed),
                row(&["250", "5KB"], 24_000, 0.01, VariantState::Interrupted),
            ],
            by_request: Vec::new(),
            not_run: 1,
        }
    }

    #[test]
    fn the_answer_names_the_variants_at_either_end_and_the_partial_ones() {
        let doc = build(&table());
        let v = doc.answer.verdict.as_ref().unwrap();
        assert_eq!(
            v.sentence,
            "Lowest p99: 100, 256B (8.000ms); highest: 250, 5KB (24.000ms)."
        );
        assert_eq!(v.tone, Tone::Unsure);
        assert!(v
            .evidence
            .iter()
            .any(|e| e == "most errors: 250, 5KB (1.00% of its requests failed)"));
        assert_eq!(
            doc.answer.notes,
            [
                "01-250 was stopped partway: its numbers cover part of its run.",
                "The matrix was stopped: 1 variant(s) did not run."
            ]
        );
        let t = &doc.sections[0];
        let crate::report::document::Block::Table(t) = &t.blocks[0] else {
            panic!("a table")
        };
        assert_eq!(t.left, 2);
        assert_eq!(t.header.last().unwrap(), "store CPU");
        assert_eq!(t.rows[1][7].to_text(), "24.000ms");
        assert_eq!(t.rows[1][9], Cell::Empty);
    }
}
