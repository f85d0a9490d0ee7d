//! `headroom run`: a scenario file lowered to a plan, then run like an attack.

use anyhow::Context;
use headroom::engine::CancellationToken;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `headroom run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The scenario file (YAML; `headroom schema` prints its JSON Schema).
    pub scenario: PathBuf,
    /// Check the scenario and print what would run, without sending anything.
    #[arg(long)]
    pub check: bool,
    #[command(flatten)]
    pub output: super::attack::Output,
}

/// Runs `headroom run`.
pub fn run(args: RunArgs, shutdown: CancellationToken) -> anyhow::Result<ExitCode> {
    let plan = headroom::plan::scenario::load(&args.scenario, super::available_cores())?;
    if args.check {
        super::check::print(&args.scenario, &plan)
            .with_context(|| format!("scenario {}", args.scenario.display()))?;
        return Ok(ExitCode::SUCCESS);
    }
    args.output
        .execute(&plan, "run", shutdown)
        .with_context(|| format!("scenario {}", args.scenario.display()))
}
