//! Writes an imported scenario: `scenario.yaml` (the scenario file model serialized, with
//! comments saying where it came from and which variables to set) and its body files.

use super::staging::Staging;
use super::{ImportError, Imported};
use std::path::{Path, PathBuf};
use tokio_util::sync::CancellationToken;
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

/// Writes `imported` into `dir` (created if missing): `scenario.yaml` and `bodies/…`, all
/// or nothing (see `staging`). Refuses to replace a file that is there unless `force`; stops,
/// leaving nothing, when `stop` is cancelled before the files are placed.
pub fn write(
    imported: &Imported,
    dir: &Path,
    force: bool,
    stop: &CancellationToken,
) -> Result<Written, ImportError> {
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
    let staging = Staging::inside(dir)?;
    for (relative, bytes) in &imported.bodies {
        if stop.is_cancelled() {
            return Err(ImportError::Stopped);
        }
        staging.write(relative, bytes)?;
    }
    staging.write(Path::new("scenario.yaml"), text.as_bytes())?;
    if stop.is_cancelled() {
        return Err(ImportError::Stopped);
    }
    let folders: &[&Path] = if bodies.is_empty() {
        &[]
    } else {
        &[Path::new("bodies")]
    };
    staging.place(folders, Path::new("scenario.yaml"))?;
    Ok(Written { scenario, bodies })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::import::curl;

    fn imported() -> Imported {
        curl::import(&[(
            "curl line 1".into(),
            "curl -d 'a=1' -H 'Content-Type: text/plain' http://h/x".into(),
        )])
        .unwrap()
    }

    /// Everything under `dir`, relative, sorted (hidden entries too).
    fn listing(dir: &Path) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                out.push(p.strip_prefix(dir).unwrap().display().to_string());
                if p.is_dir() {
                    stack.push(p);
                }
            }
        }
        out.sort();
        out
    }

    /// A header named with a line break (a HAR file can hold any text) was written as it was
    /// into the comment that names its variable: the rest of the name was read as scenario.
    #[test]
    fn names_from_the_input_cannot_break_out_of_a_comment() {
        let mut i = imported();
        i.variables.push(crate::plan::import::Variable {
            name: "HEADROOM_X".into(),
            what: "the X-Token\ntarget: {url: 'http://evil/'}\u{85}\u{2028} header".into(),
        });
        i.notes.push("a note\r\nrequests: []".into());
        let text = render(&i).unwrap();
        assert!(text.contains("X-Token\\ntarget"), "{text}");
        let back: yaml_serde::Value = yaml_serde::from_str(&text).unwrap();
        assert_eq!(back["target"]["url"], yaml_serde::Value::from("http://h"));
        assert_eq!(back["requests"].as_sequence().map(Vec::len), Some(1));
    }

    #[test]
    fn files_are_placed_whole_and_a_second_write_needs_force() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("new/deeper");
        let i = imported();
        let stop = CancellationToken::new();
        let w = write(&i, &out, false, &stop).unwrap();
        assert_eq!(w.scenario, out.join("scenario.yaml"));
        assert_eq!(
            listing(&out),
            ["bodies", "bodies/post-x.txt", "scenario.yaml"]
        );
        let e = write(&i, &out, false, &stop).unwrap_err();
        assert!(matches!(e, ImportError::Exists(_)), "{e}");
        // Into bodies/ that is there: file by file, and nothing hidden is left.
        write(&i, &out, true, &stop).unwrap();
        assert_eq!(
            listing(&out),
            ["bodies", "bodies/post-x.txt", "scenario.yaml"]
        );
    }

    #[test]
    fn a_stop_leaves_nothing_not_even_the_directories_made() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("new/deeper");
        let stop = CancellationToken::new();
        stop.cancel();
        let e = write(&imported(), &out, false, &stop).unwrap_err();
        assert!(matches!(e, ImportError::Stopped), "{e}");
        assert!(listing(dir.path()).is_empty(), "{:?}", listing(dir.path()));
    }
}
