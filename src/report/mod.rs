//! Reports: a subject (a run, a capacity search, a comparison, …) is turned into one
//! format-neutral [`document::Document`] by its builder ([`build`]), and the document into
//! text, markdown, JSON, HTML or JUnit by a writer ([`write`]). Builders read the model
//! (`summary`, `capacity`, `plot`), never the store or the engine; writers read only the
//! document.

pub mod build;
pub mod capacity;
pub mod compare;
mod compare_breakdown;
pub mod document;

pub mod html;
mod interval;
pub mod junit;
pub mod matrix;
pub mod plot;
pub mod regression;
pub mod step_summary;
mod table;
pub mod write;

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

/// `doc` in `format`: the one place a document meets its writer. A subject with no checks
/// has no JUnit form (`what` names it, `hint` says what to run instead).
pub fn write(
    doc: &Document,
    format: Format,
    what: &'static str,
    hint: &'static str,
) -> Result<String, RenderError> {
    Ok(match format {
        Format::Text => write::text::write(doc),
        Format::Markdown => write::markdown::write(doc, 2),
        Format::Json => write::json::write(doc) + "\n",
        Format::Html => write::html::write(doc)?,
        Format::Junit if doc.checks.is_empty() => {
            return Err(RenderError::Unsupported {
                what,
                format: "JUnit",
                hint,
            })
        }
        Format::Junit => write::junit::write(doc),
    })
}

/// The run summarised as `summary` in `format`; `extras` brings what the summary does not
/// hold (the figures and options an HTML page shows, the run's id JUnit keeps).
pub fn render_run(
    summary: &Summary,
    format: Format,
    extras: Extras<'_>,
) -> Result<String, RenderError> {
    // A run always has checks (that it completed, at least).
    write(&build::run::build(summary, extras), format, "a run", "")
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
