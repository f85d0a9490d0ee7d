//! The command line: clap types and one file per subcommand's wiring onto the library.

mod attack;
mod capacity;
mod check;
mod command_pages;
mod compare;
mod demo;
mod docs;
pub mod exit;
mod export;
mod import;
mod kube;
mod live;
mod matrix;
mod merge;
mod progress;
mod report;
mod request;
mod run;
mod run_dir;
mod schema_page;
mod shard;
mod step_summary;
mod stoppable;
mod sweep;
mod target;
mod unechoed;
mod watch;

use clap::{Parser, Subcommand};
use headroom::engine::CancellationToken;
use std::process::ExitCode;

/// headroom: exact, cheap HTTP load generation and capacity reports.
#[derive(Debug, Parser)]
#[command(name = "headroom", version = env!("HEADROOM_VERSION"), about, long_about = None, after_help = exit::TABLE)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Send load to a URL at a rate (open model) or a concurrency (closed model).
    Attack(Box<attack::AttackArgs>),
    /// Run a scenario file: named requests in a weighted mix, load, objectives.
    Run(Box<run::RunArgs>),
    /// Step the rate or the concurrency on warm connections; a table and plots per step.
    Sweep(Box<sweep::SweepArgs>),
    /// Search for the highest rate that meets an SLO, and name the tipping point.
    Capacity(Box<capacity::CapacityArgs>),
    /// Print the JSON Schema of scenario files (for editor completion), or their reference.
    Schema(docs::SchemaArgs),
    /// Stored runs side by side: a table and overlaid plots.
    Compare(compare::CompareArgs),
    /// Re-render a stored run or search (text, markdown, JSON, HTML) and its plots.
    Report(report::ReportArgs),
    /// Write a run's per-request records (kept with --raw) as CSV or JSON lines.
    Export(export::ExportArgs),
    /// Merge the shard runs of one test (`--shard I/N`) into one run, exactly.
    Merge(merge::MergeArgs),
    /// Serve the live page of runs other processes write (one run, or the shards of one
    /// test merged exactly), from their directories as they grow.
    Watch(watch::WatchArgs),
    /// Write Kubernetes manifests that run a scenario as N shards of one test.
    Kube(Box<kube::KubeArgs>),
    /// Write a scenario from a HAR file, curl command lines or an OpenAPI 3 document.
    Import(import::ImportArgs),
    /// Run the built-in test server.
    Target(target::TargetArgs),
    /// Start the built-in target, attack it briefly and print the report.
    Demo(demo::DemoArgs),
    /// Print a shell completion script: headroom completions bash > /etc/bash_completion.d/headroom.
    Completions(docs::CompletionsArgs),
    /// Print the man page, or write one page per command into a directory (--dir, --markdown).
    Man(docs::ManArgs),
}

/// Runs the parsed command; errors carry context for the user.
pub fn dispatch(cli: Cli, shutdown: CancellationToken) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Attack(args) => attack::run(*args, shutdown),
        Command::Run(args) => run::run(*args, shutdown),
        Command::Sweep(args) => sweep::run(*args, shutdown),
        Command::Capacity(args) => capacity::run(*args, shutdown),
        Command::Schema(args) => docs::schema(args),
        Command::Report(args) => report::run(args),
        Command::Export(args) => export::run(args),
        Command::Merge(args) => merge::run(args),
        Command::Watch(args) => watch::run(args, shutdown),
        Command::Compare(args) => compare::run(args),
        // It holds no run: the first stop signal ends it at once.
        Command::Kube(args) => stoppable::run(&shutdown, "kube stopped", move |_| kube::run(*args)),
        Command::Import(args) => import::run(args, shutdown),
        Command::Target(args) => target::run(args, shutdown),
        Command::Demo(args) => demo::run(args, shutdown),
        Command::Completions(args) => docs::completions(args),
        Command::Man(args) => docs::man(args),
    }
}

/// The signal that stopped the run (SIGINT until one arrives).
pub static STOP_SIGNAL: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(2);

/// The exit status of a run a signal stopped: 128 + the signal, as a shell reports it
/// (130 after Ctrl-C, 143 after SIGTERM, 129 after SIGHUP).
pub fn stopped_code() -> ExitCode {
    let signal = STOP_SIGNAL.load(std::sync::atomic::Ordering::Relaxed);
    let base = i32::from(exit::SIGNAL_BASE);
    ExitCode::from(u8::try_from(base + signal).unwrap_or(exit::SIGNAL_BASE + 2))
}

/// Parses a duration such as `10s`, `1m30s` or `250ms`, at most a year.
pub fn duration(s: &str) -> Result<std::time::Duration, String> {
    headroom::units::parse_duration(s)
}

/// Parses a positive duration such as `10s`, `1m30s` or `250ms`, at most a year.
pub fn positive_duration(s: &str) -> Result<std::time::Duration, String> {
    let d = duration(s)?;
    if d.is_zero() {
        return Err("must be greater than 0".into());
    }
    Ok(d)
}

/// Parses a rate in requests per second: `100`, `100/s`, `100/1s`, `6000/1m`.
pub fn rate(s: &str) -> Result<f64, String> {
    headroom::units::parse_rate(s)
}

/// Number of cores this process may run on (respects taskset).
pub fn available_cores() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}
