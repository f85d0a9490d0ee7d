//! Appends a step summary to the file GitHub Actions names in `GITHUB_STEP_SUMMARY`.

use std::io::Write as _;

/// The variable GitHub Actions sets to the step's summary file.
pub const VARIABLE: &str = "GITHUB_STEP_SUMMARY";

/// Appends `markdown` to the step summary file when `GITHUB_STEP_SUMMARY` names one. The file
/// is opened for appending, never truncated (the steps of a job share it); a failure to write
/// is a warning, never a failed run: the run's own results are already stored.
pub fn append(markdown: impl FnOnce() -> String) {
    let Some(path) = std::env::var_os(VARIABLE).filter(|p| !p.is_empty()) else {
        return;
    };
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(markdown().as_bytes()));
    if let Err(e) = written {
        eprintln!(
            "warning: cannot append the step summary to {} ({VARIABLE}): {e}",
            std::path::Path::new(&path).display()
        );
    }
}
