//! Runs a matrix: each variant's plan in turn, each into its own run directory under the
//! matrix's, the record rewritten around every variant so that a stopped or killed matrix
//! still names what it ran. The table is built from the stored runs (see
//! [`summary::matrix`](crate::summary::matrix)), like every report.

use crate::engine::CancellationToken;
use crate::monitor::ServerWatch;
use crate::plan::matrix::{MatrixError, MatrixSection, Variant};
use crate::plan::AttackPlan;
use crate::run::{Observer, RunError};
use crate::store::matrix::{MatrixColumn, MatrixRecord, VariantEntry, VariantState, RECORD};
use crate::store::{RunDir, StoreError, StoredRun};
use std::collections::BTreeMap;
use std::path::Path;

/// Why a matrix stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum MatrixRunError {
    /// A variant's run failed; the variants before it are kept.
    #[error("variant {run} failed")]
    Variant {
        /// Its run directory's name.
        run: String,
        /// The cause.
        source: RunError,
    },
    /// A variant's plan could not be made again just before it ran (a file it reads
    /// changed since the matrix was checked).
    #[error("{0}")]
    Plan(String),
    /// The record cannot be written.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The record of a matrix about to run: its columns (those `section` lists, or labels then
/// values by path, each once, in order of first use) and one pending entry per variant.
pub fn record(
    variants: &[Variant],
    section: Option<&MatrixSection>,
    command: Vec<String>,
    scenario: String,
) -> Result<MatrixRecord, MatrixError> {
    let no_headings = BTreeMap::new();
    let headings = section.map_or(&no_headings, |s| &s.headings);
    let mut keys: Vec<&str> = Vec::new();
    for v in variants {
        keys.extend(v.labels.iter().map(|(k, _)| k.as_str()));
    }
    for v in variants {
        keys.extend(v.values.iter().map(|(k, _)| k.as_str()));
    }
    let mut columns: Vec<MatrixColumn> = Vec::new();
    let mut add = |key: &str| {
        if !columns.iter().any(|c| c.key == key) {
            columns.push(MatrixColumn {
                key: key.to_string(),
                heading: headings
                    .get(key)
                    .cloned()
                    .unwrap_or_else(|| key.to_string()),
            });
        }
    };
    match section.and_then(|s| s.columns.as_ref()) {
        Some(chosen) => {
            for key in chosen {
                if !keys.contains(&key.trim()) {
                    return Err(MatrixError::Section(format!(
                        "columns: {key:?} is neither a label nor a path the variants set"
                    )));
                }
                add(key.trim());
            }
        }
        None => keys.iter().for_each(|k| add(k)),
    }
    let width = variants.len().to_string().len().max(2);
    let entries = variants
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let cells: Vec<String> = columns
                .iter()
                .map(|c| {
                    let cell = v
                        .labels
                        .iter()
                        .chain(&v.values)
                        .rev()
                        .find(|(k, _)| *k == c.key)
                        .map_or("-".to_string(), |(_, cell)| cell.clone());
                    // A token or a body varied by the matrix names no row, file or table.
                    let secret = v.values.iter().any(|(k, _)| *k == c.key)
                        && crate::plan::secret_names::is_secret_path(&c.key);
                    if secret {
                        "<redacted>".to_string()
                    } else {
                        // A path's query may carry a token.
                        crate::plan::secret_names::redact_url(&cell)
                    }
                })
                .collect();
            VariantEntry {
                run: format!("{:0width$}-{}", i + 1, slug(&cells)),
                cells,
                state: VariantState::Pending,
            }
        })
        .collect();
    Ok(MatrixRecord {
        command,
        scenario,
        columns,
        variants: entries,
    })
}

/// A directory name from a variant's cells: "burst-load-95-10".
fn slug(cells: &[String]) -> String {
    let mut out = String::new();
    for c in cells.iter().filter(|c| *c != "-") {
        for ch in c.chars() {
            let ch = ch.to_ascii_lowercase();
            if ch.is_ascii_alphanumeric() || ch == '.' {
                out.push(ch);
            } else if !out.ends_with('-') {
                out.push('-');
            }
        }
        if !out.ends_with('-') {
            out.push('-');
        }
    }
    let mut out: String = out.trim_matches(['-', '.']).chars().take(48).collect();
    while out.ends_with(['-', '.']) {
        out.pop();
    }
    if out.is_empty() {
        out.push_str("variant");
    }
    out
}

/// What each variant keeps besides its interval log.
pub struct Keep {
    /// The server's watch (`--monitor-pid`), opened anew for each variant.
    pub server: Option<ServerWatch>,
    /// Each request's record too (`--raw`).
    pub raw: bool,
}

/// Runs each entry of `record` into `dir`, its plan made by `plan_of` (by index) just
/// before it runs, so that one plan's data is held at a time. `observer` gives each variant's
/// live progress, `keep` says what each keeps, and `on_variant` sees each variant as it
/// ends. A cancelled `shutdown` stops the matrix after the partial variant.
pub fn run(
    mut record: MatrixRecord,
    plan_of: &mut dyn FnMut(usize) -> Result<AttackPlan, String>,
    dir: &Path,
    shutdown: &CancellationToken,
    keep: &mut dyn FnMut() -> Keep,
    observer: &mut dyn FnMut(&AttackPlan) -> Box<dyn Observer>,
    on_variant: &mut dyn FnMut(&VariantEntry, &StoredRun),
) -> Result<MatrixRecord, MatrixRunError> {
    std::fs::create_dir_all(dir).map_err(|reason| StoreError::Io {
        path: dir.to_path_buf(),
        reason,
    })?;
    if dir.join(RECORD).exists() || dir.join("meta.json").exists() {
        return Err(StoreError::Io {
            path: dir.to_path_buf(),
            reason: std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "a run or matrix is already stored here; choose another --out",
            ),
        }
        .into());
    }
    record.save(dir)?;
    for i in 0..record.variants.len() {
        if shutdown.is_cancelled() {
            break;
        }
        let plan = &plan_of(i).map_err(MatrixRunError::Plan)?;
        record.variants[i].state = VariantState::Running;
        record.save(dir)?;
        let name = record.variants[i].run.clone();
        let mut watch = observer(plan);
        let Keep { server, raw } = keep();
        let stored = crate::run::attack_recording(
            plan,
            &record.command,
            &RunDir::at(dir.join(&name)),
            shutdown.clone(),
            watch.as_mut(),
            server,
            raw,
        )
        .map_err(|source| MatrixRunError::Variant {
            run: name.clone(),
            source,
        })?;
        drop(watch);
        // The run's own end says whether it was cut short (a signal just after its last
        // request leaves it whole).
        record.variants[i].state = match stored.end.as_ref().map(|e| e.status) {
            Some(crate::store::EndStatus::Completed) => VariantState::Completed,
            Some(crate::store::EndStatus::Aborted) => VariantState::Aborted,
            _ => VariantState::Interrupted,
        };
        record.save(dir)?;
        on_variant(&record.variants[i], &stored);
    }
    Ok(record)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_labels_then_paths_and_names_are_slugs() {
        let axes: Vec<crate::plan::matrix::Axis> = ["load.rate=10,20"]
            .iter()
            .map(|a| a.parse().unwrap())
            .collect();
        let section: crate::plan::matrix::MatrixSection = yaml_serde::from_str(
            "headings: {load.rate: rate}\nsets:\n  - labels: {category: Burst Load}\n  - labels: {category: Soak}\n    set: {load.duration: 30m}\n",
        )
        .unwrap();
        let variants = crate::plan::matrix::variants(Some(&section), &axes).unwrap();
        let r = record(&variants, Some(&section), vec![], "s.yaml".into()).unwrap();
        let headings: Vec<&str> = r.columns.iter().map(|c| c.heading.as_str()).collect();
        assert_eq!(headings, ["category", "rate", "load.duration"]);
        let names: Vec<&str> = r.variants.iter().map(|v| v.run.as_str()).collect();
        assert_eq!(
            names,
            [
                "01-burst-load-10",
                "02-burst-load-20",
                "03-soak-10-30m",
                "04-soak-20-30m"
            ]
        );
        assert_eq!(r.variants[0].cells, ["Burst Load", "10", "-"]);
        let chosen = crate::plan::matrix::MatrixSection {
            columns: Some(vec!["load.rate".into(), "category".into()]),
            ..section.clone()
        };
        let r = record(&variants, Some(&chosen), vec![], "s.yaml".into()).unwrap();
        assert_eq!(r.variants[2].cells, ["10", "Soak"]);
        let wrong = crate::plan::matrix::MatrixSection {
            columns: Some(vec!["load.users".into()]),
            ..section
        };
        assert!(record(&variants, Some(&wrong), vec![], "s.yaml".into()).is_err());
    }
}
