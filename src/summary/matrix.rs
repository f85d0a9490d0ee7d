//! The table of a matrix: one row per variant run (done or partial), built from the stored
//! runs, with a per-request table beside it when the runs have several requests.

use super::{Stats, Summary};
use crate::store::matrix::MatrixRecord;
use serde::{Deserialize, Serialize};

/// How far a variant got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VariantState {
    /// Not started (the matrix was stopped before it).
    Pending,
    /// Running, or killed while it ran.
    Running,
    /// Ran to its end.
    Completed,
    /// Stopped by a signal: its run is partial.
    Interrupted,
    /// Stopped by its safety stop (`--abort-when`): its run says which condition held.
    Aborted,
}

/// A matrix, summarised.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MatrixTable {
    /// The scenario file.
    pub scenario: String,
    /// Headings of the columns that tell variants apart.
    pub columns: Vec<String>,
    /// Headings of the server CPU columns: one per watched process tree (or one for a
    /// server watched through Prometheus).
    pub cpu_columns: Vec<String>,
    /// One row per variant that ran, in run order.
    pub rows: Vec<VariantRow>,
    /// One table per request, when the variants send several kinds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_request: Vec<RequestTable>,
    /// Variants not run (the matrix was stopped before them).
    pub not_run: usize,
}

/// One variant over its whole run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VariantRow {
    /// Its run directory, relative to the matrix's.
    pub run: String,
    /// Its cells, one per column.
    pub cells: Vec<String>,
    /// Whether it ran to its end.
    pub state: VariantState,
    /// Requests completed.
    pub requests: u64,
    /// Completions per second after the warm-up: a variant that ramps up (its ramp a
    /// warm-up stage) is read at the load it held, not averaged with its ramp.
    pub rps: f64,
    /// Failed completions as a share of completions.
    pub error_rate: f64,
    /// Latency of the requests answered as expected.
    pub latency: Stats,
    /// Mean server CPU after the warm-up (% of one core), one per CPU column; `None` where not watched.
    pub server_cpu: Vec<Option<f64>>,
}

/// One request across the variants.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RequestTable {
    /// The request's name.
    pub request: String,
    /// One row per variant that sent it.
    pub rows: Vec<RequestVariant>,
}

/// One request in one variant.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RequestVariant {
    /// The variant's cells.
    pub cells: Vec<String>,
    /// Requests completed.
    pub requests: u64,
    /// Failed completions as a share of completions.
    pub error_rate: f64,
    /// Completions per second.
    pub rps: f64,
    /// Its latency.
    pub latency: Stats,
}

impl MatrixTable {
    /// The table of `record`, with the summary of each variant that ran (`None` for those
    /// that did not), in the record's order.
    pub fn of(record: &MatrixRecord, summaries: &[Option<Summary>]) -> MatrixTable {
        let ran: Vec<(usize, &Summary)> = summaries
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|s| (i, s)))
            .collect();
        // A column per process tree, named after its command.
        let mut trees: Vec<(u32, String)> = Vec::new();
        let mut prometheus = false;
        for (_, s) in &ran {
            if let Some(server) = &s.server {
                if server.trees.is_empty() {
                    prometheus = true;
                }
                for t in &server.trees {
                    if !trees.iter().any(|(p, n)| *p == t.pid && *n == t.name) {
                        trees.push((t.pid, t.name.clone()));
                    }
                }
            }
        }
        let mut cpu_columns: Vec<String> = trees
            .iter()
            .map(|(pid, name)| {
                if trees.iter().filter(|(_, n)| n == name).count() > 1 {
                    format!("{name} ({pid}) CPU")
                } else {
                    format!("{name} CPU")
                }
            })
            .collect();
        if prometheus {
            cpu_columns.push("server CPU".into());
        }
        let rows: Vec<VariantRow> = ran
            .iter()
            .map(|&(i, s)| {
                let entry = &record.variants[i];
                let (count, failures, rps) = s
                    .aggregated
                    .as_ref()
                    .map_or((0, 0, 0.0), |a| (a.count, a.failures, a.rps));
                let mut server_cpu: Vec<Option<f64>> = trees
                    .iter()
                    .map(|(pid, name)| {
                        s.server.as_ref().and_then(|h| {
                            h.trees
                                .iter()
                                .find(|t| t.pid == *pid && t.name == *name)
                                .map(|t| t.cpu_mean_percent)
                        })
                    })
                    .collect();
                if prometheus {
                    server_cpu.push(
                        s.server
                            .as_ref()
                            .filter(|h| h.trees.is_empty())
                            .map(|h| h.cpu_mean_percent),
                    );
                }
                VariantRow {
                    run: entry.run.clone(),
                    cells: entry.cells.clone(),
                    state: entry.state,
                    requests: count,
                    rps,
                    error_rate: ratio(failures, count),
                    latency: s.latency,
                    server_cpu,
                }
            })
            .collect();
        let mut by_request: Vec<RequestTable> = Vec::new();
        // A request a variant never sent (its weight set to 0) has no row there: its
        // latencies would read as 0 µs.
        let sent = |s: &Summary| s.by_request.iter().filter(|r| r.count > 0).count();
        if ran.iter().any(|(_, s)| sent(s) > 1) {
            for &(i, s) in &ran {
                for r in s.by_request.iter().filter(|r| r.count > 0) {
                    let row = RequestVariant {
                        cells: record.variants[i].cells.clone(),
                        requests: r.count,
                        error_rate: ratio(r.failures, r.count),
                        rps: r.rps,
                        latency: r.latency,
                    };
                    match by_request.iter_mut().find(|t| t.request == r.name) {
                        Some(t) => t.rows.push(row),
                        None => by_request.push(RequestTable {
                            request: r.name.clone(),
                            rows: vec![row],
                        }),
                    }
                }
            }
        }
        MatrixTable {
            scenario: record.scenario.clone(),
            columns: record.columns.iter().map(|c| c.heading.clone()).collect(),
            cpu_columns,
            rows,
            by_request,
            not_run: summaries.iter().filter(|s| s.is_none()).count(),
        }
    }
}

fn ratio(part: u64, whole: u64) -> f64 {
    if whole > 0 {
        part as f64 / whole as f64
    } else {
        0.0
    }
}

/// Reads the matrix stored in `dir` and summarises each variant's run; `None` when `dir`
/// holds no matrix.
pub fn load(dir: &std::path::Path) -> Result<Option<MatrixTable>, crate::store::StoreError> {
    let Some(record) = MatrixRecord::load(dir)? else {
        return Ok(None);
    };
    let mut summaries = Vec::with_capacity(record.variants.len());
    for v in &record.variants {
        let run = crate::store::RunDir::at(dir.join(&v.run));
        // A variant killed before its first line was written left no run behind.
        let started = v.state != VariantState::Pending && run.path().join("meta.json").exists();
        summaries.push(match started {
            true => Some(Summary::of(&run.load()?)),
            false => None,
        });
    }
    Ok(Some(MatrixTable::of(&record, &summaries)))
}
