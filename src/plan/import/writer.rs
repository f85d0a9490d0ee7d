//! Writes an imported scenario: `scenario.yaml` (the scenario file model serialized, with
//! comments saying where it came from and which variables to set) and its body files.

use super::{ImportError, Imported};
use std::path::{Path, PathBuf};
use yaml_serde::Value;

/// What was written.
#[derive(Debug)]
pub struct Written {
    /// The scenario file.
    pub scenario: PathBuf,
    /// The body files.
    pub bodies: Vec<PathBuf>,
}

/// The scenario's text: the model as YAML, values the loader takes by default left out.
pub fn render(imported: &Imported) -> Result<String, ImportError> {
    let failed = |e: yaml_serde::Error| ImportError::Write {
        path: "scenario.yaml".into(),
        reason: e.to_string(),
    };
    let mut value = yaml_serde::to_value(&imported.scenario).map_err(failed)?;
    prune(&mut value);
    let body = crate::yaml::to_string(&value).map_err(|e| ImportError::Write {
        path: "scenario.yaml".into(),
        reason: e.to_string(),
    })?;
    // Comment lines go through the one writer of comments: an origin, a header's name or a
    // note taken from the imported file may hold a line break.
    let mut lines = vec![
        format!("Imported by `headroom import` from {}.", imported.origin),
        "Edit it (names, weights, load, expectations, slo), then: headroom run --check scenario.yaml"
            .to_string(),
    ];
    if !imported.variables.is_empty() {
        lines.push(
            "Credentials were taken out: set these environment variables before the run.".into(),
        );
        let width = imported
            .variables
            .iter()
            .map(|v| v.name.len())
            .max()
            .unwrap_or(0);
        for v in &imported.variables {
            lines.push(format!("  {:width$}  {}", v.name, v.what));
        }
    }
    lines.extend(imported.notes.iter().cloned());
    let mut out = crate::yaml::comment(&lines);
    for line in body.lines() {
        if line.starts_with("load:") {
            out.push_str(&crate::yaml::comment(&[
                "A placeholder load: set the rate (or users) and duration the test needs.",
            ]));
        }
        out.push_str(line);
        out.push('\n');
    }
    Ok(out)
}

/// Takes out what the loader would assume anyway: nulls, empty lists and maps, `false`,
/// the default HTTP choice, pick and weight.
fn prune(value: &mut Value) {
    match value {
        Value::Mapping(map) => {
            map.retain(|k, v| {
                prune(v);
                let default = match (k.as_str(), &*v) {
                    (Some("http"), Value::String(s)) => s == "auto",
                    (Some("pick"), Value::String(s)) => s == "sequential",
                    (Some("weight"), Value::Number(n)) => n.as_u64() == Some(1),
                    _ => false,
                };
                !(default
                    || v.is_null()
                    || v == &Value::Bool(false)
                    || v.as_mapping().is_some_and(|m| m.is_empty())
                    || v.as_sequence().is_some_and(|s| s.is_empty()))
            });
        }
        Value::Sequence(items) => items.iter_mut().for_each(prune),
        _ => {}
    }
}

/// Writes `imported` into `dir` (created if missing): `scenario.yaml` and `bodies/…`. Refuses
/// to replace a file that is there unless `force`.
pub fn write(imported: &Imported, dir: &Path, force: bool) -> Result<Written, ImportError> {
    let text = render(imported)?;
    let scenario = dir.join("scenario.yaml");
    let bodies: Vec<PathBuf> = imported.bodies.iter().map(|(p, _)| dir.join(p)).collect();
    if !force {
        // Checked before anything is written, so a refusal leaves the directory as it was.
        if let Some(there) = std::iter::once(&scenario)
            .chain(&bodies)
            .find(|p| p.exists())
        {
            return Err(ImportError::Exists(there.clone()));
        }
    }
    let write_error = |path: &Path, e: std::io::Error| ImportError::Write {
        path: path.to_path_buf(),
        reason: e.to_string(),
    };
    std::fs::create_dir_all(dir).map_err(|e| write_error(dir, e))?;
    if !bodies.is_empty() {
        let folder = dir.join("bodies");
        std::fs::create_dir_all(&folder).map_err(|e| write_error(&folder, e))?;
    }
    for ((_, bytes), path) in imported.bodies.iter().zip(&bodies) {
        std::fs::write(path, bytes).map_err(|e| write_error(path, e))?;
    }
    std::fs::write(&scenario, text).map_err(|e| write_error(&scenario, e))?;
    Ok(Written { scenario, bodies })
}
