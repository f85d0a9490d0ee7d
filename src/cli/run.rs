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
        println!("{}: ok", args.scenario.display());
        for r in &plan.requests {
            println!(
                "  {:<24} weight {:<5} {} {}",
                r.name,
                r.weight,
                r.spec.method,
                r.spec.path.as_deref().unwrap_or("")
            );
        }
        for f in &plan.flows {
            let steps: Vec<&str> = f
                .steps
                .iter()
                .map(|&i| plan.requests[usize::from(i)].name.as_str())
                .collect();
            println!(
                "  flow {:?} (weight {}): {}",
                f.name,
                f.weight,
                steps.join(" → ")
            );
        }
        for s in &plan.slo {
            println!("  SLO {s}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    args.output
        .execute(&plan, "run", shutdown)
        .with_context(|| format!("scenario {}", args.scenario.display()))
}
