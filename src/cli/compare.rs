//! `headroom compare`: stored runs side by side, as a table and overlaid plots.

use anyhow::{bail, Context};
use headroom::report::{compare, plot};
use headroom::store::RunDir;
use headroom::summary::Summary;
use std::path::PathBuf;
use std::process::ExitCode;

/// Options of `headroom compare`.
#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// Two or more run directories.
    #[arg(required = true, num_args = 2..)]
    pub runs: Vec<PathBuf>,
    /// Their names in the table and legends, comma-separated (default: directory names).
    #[arg(long)]
    pub labels: Option<String>,
    #[command(flatten)]
    pub rendering: super::report::Rendering,
}

/// Runs `headroom compare`.
pub fn run(args: CompareArgs) -> anyhow::Result<ExitCode> {
    let labels: Vec<String> = match &args.labels {
        Some(l) => l.split(',').map(|s| s.trim().to_string()).collect(),
        None => args
            .runs
            .iter()
            .map(|p| {
                p.file_name()
                    .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into())
            })
            .collect(),
    };
    if labels.len() != args.runs.len() {
        bail!(
            "--labels names {} runs but {} were given",
            labels.len(),
            args.runs.len()
        );
    }
    let stored = args
        .runs
        .iter()
        .map(|p| {
            RunDir::at(p)
                .load()
                .with_context(|| format!("cannot read the run in {}", p.display()))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let summaries: Vec<Summary> = stored.iter().map(Summary::of).collect();
    let views: Vec<plot::RunView<'_>> = stored
        .iter()
        .zip(&summaries)
        .zip(labels)
        .map(|((run, summary), label)| plot::RunView {
            label,
            run,
            summary,
            scatter: None,
        })
        .collect();
    let r = &args.rendering;
    if let Some(dir) = &r.plots {
        super::report::announce(plot::write_all(&plot::for_comparison(&views), dir)?);
    }
    let text = compare::render(&views, r.format)?;
    super::report::emit(&text, r.output.as_deref())?;
    Ok(ExitCode::SUCCESS)
}
