//! Renderers of a [`Summary`](crate::summary::Summary): they read the model, never the engine.

mod arrivals;
mod by_flow;
mod by_request;
mod by_stage;
pub mod capacity;
pub mod compare;
mod compare_breakdown;
pub mod document;
pub mod export;
mod failures;
pub mod html;
mod html_tables;
mod interval;
mod json;
pub mod junit;
mod markdown;
pub mod matrix;
pub mod outputs;
pub mod plot;
pub mod regression;
mod request_stage;
mod request_status;
mod sections;
mod shards;
pub mod step_summary;
mod steps;
mod table;
mod text;
pub mod verdict;
pub mod write;

pub use json::render_json;
pub use markdown::render_markdown;
pub use text::render_text;

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

/// Renders the stored `run` (summarised as `summary`) in `format`; `run_id` (the run
/// directory's name) names it where the format keeps one (JUnit).
pub fn render(
    run: &crate::store::StoredRun,
    summary: &crate::summary::Summary,
    format: Format,
    run_id: Option<&str>,
) -> Result<String, RenderError> {
    Ok(match format {
        Format::Junit => junit::render(summary, run_id),
        Format::Text => render_text(summary),
        Format::Json => render_json(summary),
        Format::Markdown => render_markdown(summary),
        Format::Html => html::run_page(&plot::RunView {
            label: "all requests".into(),
            run,
            summary,
            scatter: None,
        })?,
    })
}
