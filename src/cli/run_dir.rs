//! Where a new run is stored (`--out`), refusing a path the user meant as a report file.
//!
//! vegeta's `-output results.bin` names a file; headroom's `--out` names a directory, and a
//! vegeta user's `--out results.bin` would quietly become a directory beside the report they
//! expected. A name that reads as a file is refused with the flag they wanted (`-o FILE`).

use headroom::store::RunDir;
use std::path::Path;

/// Extensions of report and results files; a run directory never needs one.
const FILE_EXTENSIONS: &[&str] = &[
    "bin", "gob", "json", "jsonl", "txt", "md", "html", "htm", "csv", "xml", "svg", "png",
];

/// The run directory at `out` when given (checked), or a new one named after `command`.
pub fn new_run_dir(out: Option<&Path>, command: &str) -> anyhow::Result<RunDir> {
    match out {
        Some(out) => {
            check(out)?;
            Ok(RunDir::at(out))
        }
        None => Ok(RunDir::default_for(command)),
    }
}

/// Refuses `--out` paths that look like a file: an existing non-directory, or a name with a
/// report or results file's extension (an existing directory of that name is taken as asked).
pub fn check(out: &Path) -> anyhow::Result<()> {
    let advice = "--out is the run directory; for the report file use -o FILE";
    match std::fs::metadata(out) {
        Ok(m) if m.is_dir() => return Ok(()),
        Ok(_) => anyhow::bail!(
            "--out {}: that is an existing file, not a directory; {advice}",
            out.display()
        ),
        Err(_) => {}
    }
    let ext = out
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    if let Some(ext) = ext.filter(|e| FILE_EXTENSIONS.contains(&e.as_str())) {
        anyhow::bail!(
            "--out {}: a .{ext} name reads as a report or results file; {advice} (e.g. --out runs/first -o {})",
            out.display(),
            out.display()
        );
    }
    Ok(())
}
