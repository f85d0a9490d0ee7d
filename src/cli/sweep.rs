//! `headroom sweep`: one run stepping the rate or the concurrency on warm connections.

use super::attack::Output;
use super::request::Subject;
use anyhow::bail;
use headroom::capacity::{parse_limits, Axis, Ladder, StepLength, Sweep, DEFAULT_LIMITS};
use headroom::engine::CancellationToken;
use headroom::plan::gate;
use std::process::ExitCode;
use std::time::Duration;

/// Options of `headroom sweep`.
#[derive(Debug, clap::Args)]
pub struct SweepArgs {
    #[command(flatten)]
    pub subject: Subject,
    /// Rates to step through (open model): "1000..20000" with --step, or "1000,2000,3200".
    #[arg(long, value_name = "LADDER", conflicts_with = "concurrency")]
    pub rate: Option<String>,
    /// Users to step through (closed model): "1..120" with --step, or "1,2,4,8".
    #[arg(short = 'c', long, value_name = "LADDER")]
    pub concurrency: Option<String>,
    /// With --concurrency: start at most this many requests per second in all at every
    /// step (users wait for their turn), e.g. 500 or 500/s.
    #[arg(long, value_name = "RATE", requires = "concurrency", value_parser = super::rate)]
    pub max_rate: Option<f64>,
    /// Distance between steps of a range: a number to add, or "x2" to multiply (default:
    /// ten equal steps).
    #[arg(long, allow_hyphen_values = true)]
    pub step: Option<String>,
    /// How long each step is measured (whole seconds).
    #[arg(long, default_value = "10s", value_parser = super::positive_duration, conflicts_with = "step_requests")]
    pub step_duration: Duration,
    /// Requests per step instead of a duration (concurrency sweeps, as "500 requests per
    /// step").
    #[arg(long, value_name = "N")]
    pub step_requests: Option<u64>,
    /// Warm-up at each step's load before it is measured (whole seconds).
    #[arg(long, default_value = "0s", value_parser = super::duration)]
    pub warmup: Duration,
    /// Stop the sweep at the first step meeting one of these, e.g. "errors > 10%, p99 > 2s"
    /// ("none" never stops early).
    #[arg(long, value_name = "LIMITS", default_value = DEFAULT_LIMITS)]
    pub stop_when: String,
    #[command(flatten)]
    pub output: Output,
}

/// Runs `headroom sweep`.
pub fn run(args: SweepArgs, shutdown: CancellationToken) -> anyhow::Result<ExitCode> {
    let (axis, levels) = match (&args.rate, &args.concurrency) {
        (Some(r), None) => (Axis::Rate, r),
        (None, Some(c)) => (Axis::Concurrency, c),
        _ => bail!("give the loads to step through: --rate 1000..20000 --step 1000, or --concurrency 1..120 --step 1"),
    };
    let sweep = Sweep {
        axis,
        ladder: match axis {
            Axis::Rate => Ladder::parse(levels, args.step.as_deref())?,
            Axis::Concurrency => Ladder::parse_users(levels, args.step.as_deref())?,
        },
        length: match args.step_requests {
            Some(0) => bail!("--step-requests must be at least 1"),
            Some(n) if args.warmup.is_zero() => StepLength::Requests(n),
            Some(_) => bail!("--warmup goes with timed steps, not with --step-requests"),
            None => StepLength::Time {
                duration: args.step_duration,
                warmup: args.warmup,
            },
        },
    };
    gate::given("--stop-when", &args.stop_when, gate::LIMITS)?;
    let limits = parse_limits(&args.stop_when)?;
    let mut plan = args.subject.plan()?;
    if axis == Axis::Concurrency && !plan.arrivals.is_even() {
        bail!("--arrivals poisson spaces the arrivals of a rate; a concurrency sweep's users send when they are answered: sweep --rate, or leave arrivals even");
    }
    sweep.apply(&mut plan)?;
    if let Some(cap) = args.max_rate {
        plan.max_rate = Some(headroom::plan::Rate(cap));
        plan.validate()?;
    }
    args.output.execute_until(&plan, "sweep", shutdown, limits)
}
