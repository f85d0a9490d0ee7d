//! `headroom run`: a scenario file lowered to a plan, then run like an attack; with
//! overrides of its values, and as a matrix of variants.

use anyhow::Context;
use headroom::engine::CancellationToken;
use headroom::plan::matrix::Axis;
use headroom::plan::scenario::{Document, Override};
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
    /// Requests per second, instead of the scenario's load (its rate, users or stages): 100,
    /// 100/s, 100/1s or 6000/1m.
    #[arg(long, allow_negative_numbers = true, conflicts_with_all = ["users", "stages"], value_parser = super::rate)]
    pub rate: Option<f64>,
    /// Virtual users, instead of the scenario's load (its rate, users or stages).
    #[arg(long, conflicts_with = "stages")]
    pub users: Option<u32>,
    /// With users (the closed model): start at most this many requests per second in all
    /// (users wait for their turn), e.g. 500 or 500/s.
    #[arg(long, value_name = "RATE", value_parser = super::rate)]
    pub max_rate: Option<f64>,
    /// How long to run, instead of the scenario's duration, e.g. 30s, 5m.
    #[arg(long, value_parser = duration_text)]
    pub duration: Option<String>,
    /// Stages instead of the scenario's load, as the file writes them, in YAML flow style:
    /// '[{rate: [0, 50], duration: 1m}, {rate: 50, duration: 5m}]'.
    #[arg(long, value_name = "YAML")]
    pub stages: Option<String>,
    /// Replace a value of the scenario (repeatable): load.rate=50, requests.read.weight=90,
    /// requests[0].path=/v2/keys, target.headers.X-Env=staging.
    #[arg(long = "set", value_name = "PATH=VALUE", value_parser = super::unechoed::Unechoed::<Override>::default())]
    pub set: Vec<Override>,
    /// Run a variant per value (repeatable; several are crossed): load.rate=10,20,30.
    /// Crossed with the scenario's `matrix:` section when it has one.
    #[arg(long = "matrix", value_name = "PATH=V1,V2,…", value_parser = super::unechoed::Unechoed::<Axis>::default())]
    pub matrix: Vec<Axis>,
    #[command(flatten)]
    pub abort: super::attack::AbortArgs,
    #[command(flatten)]
    pub output: super::attack::Output,
    #[command(flatten)]
    pub sharding: super::shard::ShardArgs,
}

fn duration_text(s: &str) -> Result<String, String> {
    super::positive_duration(s).map(|_| s.trim().to_string())
}

/// Runs `headroom run`.
pub fn run(args: RunArgs, shutdown: CancellationToken) -> anyhow::Result<ExitCode> {
    if args.check {
        // Nothing is sent, so nothing is kept: the first stop signal ends it, even mid-read.
        let token = shutdown.clone();
        return super::stoppable::run(&shutdown, "check stopped", move |_| execute(args, token));
    }
    execute(args, shutdown)
}

fn execute(args: RunArgs, shutdown: CancellationToken) -> anyhow::Result<ExitCode> {
    let doc = Document::read(&args.scenario)?;
    let mut overrides = Override::load(
        args.rate,
        args.users,
        args.duration.as_deref(),
        args.stages.as_deref(),
    );
    overrides.extend(args.set.iter().cloned());
    if doc.matrix().is_some() || !args.matrix.is_empty() {
        if args.sharding.asked() {
            anyhow::bail!("a matrix runs several plans one after another and cannot be sharded or started at a set time; shard each variant as a run of its own (--set)");
        }
        return super::matrix::run(&args, &doc, &overrides, shutdown);
    }
    let shard = args.sharding.shard()?;
    let generators = shard.map_or(1, |s| s.count);
    let mut plan = doc.lower_for(&overrides, super::available_cores(), generators)?;
    if let Some(cap) = args.max_rate {
        plan.max_rate = Some(headroom::plan::Rate(cap));
    }
    // The flag wins over the scenario's `abort_when`.
    if let Some(abort) = args.abort.conditions()? {
        plan.abort = abort;
    }
    if args.max_rate.is_some() || args.abort.abort_when.is_some() {
        plan.validate_for(generators)?;
    }
    if args.check {
        // A shard checks (and shows) its own part, as it would run it.
        let plan = match shard {
            Some(s) => {
                println!("shard {s} of the test: its part of the load below");
                headroom::launch::Launch::sharded(&plan, s, false, None)?.0
            }
            None => plan,
        };
        super::check::print(&args.scenario, &plan, &|line| doc.scrub(line))
            .with_context(|| format!("scenario {}", args.scenario.display()))?;
        return Ok(ExitCode::SUCCESS);
    }
    let (plan, launch) = args
        .sharding
        .launch(shard, plan, args.output.raw)
        .with_context(|| format!("scenario {}", args.scenario.display()))?;
    let judged = args.sharding.judged();
    args.output
        .execute_launched(&plan, "run", shutdown, Vec::new(), launch, judged)
        .with_context(|| format!("scenario {}", args.scenario.display()))
}
