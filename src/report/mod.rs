//! Reports: a subject (a run, a capacity search, a comparison, …) is turned into one
//! format-neutral [`document::Document`] by its builder ([`build`]), and the document into
//! text, markdown, JSON, HTML or JUnit by a writer ([`write`]). Builders read the model
//! (`summary`, `capacity`, `plot`), never the store or the engine; writers read only the
//! document.

pub mod build;
pub mod document;
pub mod plot;
pub mod write;

#[cfg(test)]
mod layout_tests;

pub use build::run::Extras;

use crate::summary::Summary;
use document::Document;

/// Output formats of `headroom report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Human-readable text, like vegeta's report.
    Text,
    /// The summary as JSON, for machines.
    Json,
    /// Markdown tables, ready to paste into a performance report.
    Markdown,
    /// One self-contained HTML page with the tables and the figures.
    Html,
    /// JUnit XML for CI: a test case per objective, and one that the generator kept up.
    Junit,
}

/// Why a report cannot be rendered.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// A figure could not be drawn.
    #[error(transparent)]
    Plot(#[from] plot::PlotError),
    /// The report has no form in the format asked.
    #[error("{what} has no {format} report; {hint}")]
    Unsupported {
        /// What was to be rendered.
        what: &'static str,
        /// The format asked.
        format: &'static str,
        /// What to do instead.
        hint: &'static str,
    },
}

/// `doc` in `format`: the one place a document meets its writer. JUnit writes the
/// document's checks; see [`unsupported`] for subjects that have none.
pub fn write(doc: &Document, format: Format) -> Result<String, RenderError> {
    Ok(match format {
        Format::Text => write::text::write(doc),
        Format::Markdown => write::markdown::write(doc, 2),
        Format::Json => write::json::write(doc) + "\n",
        Format::Html => write::html::write(doc)?,
        Format::Junit => write::junit::write(doc),
    })
}

/// Refuses `format` when it is JUnit: `what` has no checks to report (`hint` says what
/// to run instead), and an empty test suite would pass a CI job for nothing.
fn unsupported(format: Format, what: &'static str, hint: &'static str) -> Result<(), RenderError> {
    match format {
        Format::Junit => Err(RenderError::Unsupported {
            what,
            format: "JUnit",
            hint,
        }),
        _ => Ok(()),
    }
}

/// The run summarised as `summary` in `format`; `extras` brings what the summary does not
/// hold (the figures and options an HTML page shows, the run's id JUnit keeps).
pub fn render_run(
    summary: &Summary,
    format: Format,
    extras: Extras<'_>,
) -> Result<String, RenderError> {
    // A run always has checks (that it completed, at least).
    write(&build::run::build(summary, extras), format)
}

/// The run summarised as `s` as the end-of-run text report.
pub fn render_text(s: &Summary) -> String {
    write::text::write(&build::run::build(s, Extras::default()))
}

/// The run summarised as `s` as JSON: the summary, with the answer typed beside it.
pub fn render_json(s: &Summary) -> String {
    write::json::write(&build::run::build(s, Extras::default())) + "\n"
}

/// The run summarised as `s` as markdown.
pub fn render_markdown(s: &Summary) -> String {
    write::markdown::write(&build::run::build(s, Extras::default()), 2)
}

/// The run summarised as `s` as the compact Markdown of a CI job's summary page; `run_id`
/// names its directory when known.
pub fn run_step_summary(s: &Summary, run_id: Option<&str>) -> String {
    let extras = Extras {
        run_id,
        ..Extras::default()
    };
    write::step_summary::write(&build::run::build(s, extras))
}

/// A capacity search in `format`.
pub fn capacity(
    record: &crate::capacity::study::CapacityRecord,
    format: Format,
) -> Result<String, RenderError> {
    write(&build::capacity::build(record), format)
}

/// Runs side by side in `format`, with the comparison's `figures`.
pub fn compare(
    runs: &[build::compare::Compared<'_>],
    figures: plot::Figures,
    format: Format,
) -> Result<String, RenderError> {
    unsupported(
        format,
        "a comparison without rules",
        "give the rules it must pass: headroom compare --baseline BASE CANDIDATE --fail-on 'p99 +10%' --format junit",
    )?;
    write(&build::compare::build(runs, figures), format)
}

/// A matrix in `format`.
pub fn matrix(
    table: &crate::summary::matrix::MatrixTable,
    format: Format,
) -> Result<String, RenderError> {
    unsupported(
        format,
        "a matrix",
        "render each variant's run directory: headroom report DIR/VARIANT --format junit",
    )?;
    write(&build::matrix::build(table), format)
}

/// A regression gate in `format`.
pub fn regression(
    judged: &build::regression::Judged<'_>,
    format: Format,
) -> Result<String, RenderError> {
    write(&build::regression::build(judged), format)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subject_without_checks_refuses_junit_and_says_what_to_run() {
        let empty = crate::summary::matrix::MatrixTable {
            scenario: "s.yaml".into(),
            columns: vec!["rate".into()],
            cpu_columns: Vec::new(),
            rows: Vec::new(),
            by_request: Vec::new(),
            not_run: 2,
        };
        let err = matrix(&empty, Format::Junit).unwrap_err().to_string();
        assert_eq!(
            err,
            "a matrix has no JUnit report; render each variant's run directory: headroom report DIR/VARIANT --format junit"
        );
        // Nothing ran: the table says so rather than failing.
        let text = matrix(&empty, Format::Text).unwrap();
        assert!(
            text.starts_with("Matrix of s.yaml: 0 variant(s) run, 2 not run\n"),
            "{text}"
        );
        assert!(
            text.contains("The matrix was stopped: 2 variant(s) did not run."),
            "{text}"
        );
    }
}
