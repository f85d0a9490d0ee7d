//! `headroom report`: re-renders a stored run.

use anyhow::Context;
use clap::Args;
use headroom::report::{self, Format};
use headroom::store::RunDir;
use headroom::summary::Summary;
use std::path::PathBuf;
use std::process::ExitCode;

/// Options of `headroom report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A run directory (attack, run, sweep) or a capacity search's directory.
    pub run: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

/// Runs `headroom report`.
pub fn run(args: ReportArgs) -> anyhow::Result<ExitCode> {
    if let Some(record) = headroom::capacity::study::CapacityRecord::load(&args.run)
        .with_context(|| format!("cannot read the search in {}", args.run.display()))?
    {
        print!("{}", report::capacity::render(&record, args.format));
        return Ok(ExitCode::SUCCESS);
    }
    let stored = RunDir::at(&args.run)
        .load()
        .with_context(|| format!("cannot read the run in {}", args.run.display()))?;
    print!("{}", report::render(&Summary::of(&stored), args.format));
    Ok(ExitCode::SUCCESS)
}
