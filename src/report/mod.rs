//! Renderers of a [`Summary`](crate::summary::Summary): they read the model, never the engine.

mod by_flow;
mod by_request;
mod by_stage;
pub mod capacity;
pub mod compare;
mod compare_breakdown;
pub mod export;
mod failures;
pub mod html;
mod html_fit;
mod html_tables;
mod json;
mod markdown;
pub mod matrix;
pub mod outputs;
pub mod plot;
mod request_stage;
mod request_status;
mod sections;
mod shards;
mod steps;
mod table;
mod text;
pub mod verdict;

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
}

/// Renders the stored `run` (summarised as `summary`) in `format`.
pub fn render(
    run: &crate::store::StoredRun,
    summary: &crate::summary::Summary,
    format: Format,
) -> Result<String, plot::PlotError> {
    Ok(match format {
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
