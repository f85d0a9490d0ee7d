//! `headroom demo`: the built-in target and a short attack on it, in one process.

use clap::Args;
use headroom::engine::CancellationToken;
use headroom::plan::{AttackPlan, Load, NamedRequest, Rate, RequestSpec, Stop, Target};
use headroom::report::Format;
use headroom::target::{self, TargetConfig};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Options of `headroom demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Requests per second: 1000, 1000/s or 60000/1m.
    #[arg(long, default_value = "1000", value_parser = super::rate)]
    pub rate: f64,
    /// How long to send.
    #[arg(short, long, default_value = "3s", value_parser = super::positive_duration)]
    pub duration: Duration,
    /// The target's delay before answering.
    #[arg(long, default_value = "2ms", value_parser = super::duration)]
    pub latency: Duration,
    /// Run directory (default: runs/<time>-demo).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Runs `headroom demo`.
pub fn run(args: DemoArgs, shutdown: CancellationToken) -> anyhow::Result<ExitCode> {
    let running = target::spawn(TargetConfig {
        listen: "127.0.0.1:0".parse().expect("a valid address"),
        tls: None,
        latency: args.latency,
        threads: 1,
        capacity: None,
    })?;
    let url = format!("http://{}/", running.addr());
    eprintln!(
        "demo: built-in target on {url} answering after {}; attacking at {} req/s for {}",
        humantime::format_duration(args.latency),
        args.rate,
        humantime::format_duration(args.duration)
    );
    let target = Target::parse(&url)?;
    let request = NamedRequest::single(
        RequestSpec::parse("GET", &[], bytes::Bytes::new())?,
        &target,
    );
    let plan = AttackPlan::new(
        target,
        vec![request],
        Load::Open {
            rate: Rate(args.rate),
        },
        Stop {
            duration: Some(args.duration),
            requests: None,
        },
    );
    plan.validate()?;
    let dir = super::run_dir::new_run_dir(args.out.as_deref(), "demo")?;
    let command: Vec<String> = std::env::args().collect();
    let code = super::attack::execute(
        &plan,
        &command,
        &dir,
        shutdown,
        super::attack::Watching {
            format: Format::Text,
            report_file: None,
            quiet: false,
            server: None,
            limits: Vec::new(),
            pages: true,
            raw: false,
            judged: super::exit::Judged::Here,
            live: None,
        },
    );
    running.stop();
    code
}
