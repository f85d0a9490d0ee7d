//! `headroom merge`: one run directory from the shard runs of one test.

use anyhow::Context;
use headroom::store::merge::merge;
use headroom::store::RunDir;
use std::path::PathBuf;
use std::process::ExitCode;

/// Options of `headroom merge`.
#[derive(Debug, clap::Args)]
pub struct MergeArgs {
    /// The shard run directories (made with `--shard I/N`), each shard once.
    #[arg(required = true, num_args = 1..)]
    pub runs: Vec<PathBuf>,
    /// Where to write the merged run (default: a new directory under runs/).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Merge the shards given even when some of the test's are missing; the report then
    /// names the missing shards and marks the run partial.
    #[arg(long)]
    pub partial: bool,
}

/// Runs `headroom merge`.
pub fn run(args: MergeArgs) -> anyhow::Result<ExitCode> {
    let out = args
        .out
        .map_or_else(|| RunDir::default_for("merge"), RunDir::at);
    let command: Vec<String> = std::env::args().collect();
    let done = merge(&args.runs, &out, args.partial, &command)
        .with_context(|| format!("cannot merge into {}", out.path().display()))?;
    let merged = done.meta.merged.as_ref().expect("a merged run says so");
    eprintln!(
        "merged {} of {} shard(s) into {} ({} second(s), starts {:.3}s apart)",
        merged.shards.len(),
        merged.set.count,
        out.path().display(),
        done.intervals,
        merged.set.start_spread_secs
    );
    if !merged.set.missing.is_empty() {
        eprintln!(
            "warning: {} missing: the merged run is partial",
            headroom::units::shard_list(&merged.set.missing)
        );
    }
    if done.end.is_none() {
        eprintln!("warning: a shard did not finish (no end.json): the merged run is partial");
    }
    if !done.raw_left.is_empty() {
        eprintln!(
            "note: per-request records (raw.bin) are not merged; export them from each shard's run"
        );
    }
    println!("{}", out.path().display());
    Ok(ExitCode::SUCCESS)
}
