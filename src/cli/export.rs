//! `headroom export`: a run's per-request records (kept with `--raw`) as CSV or JSON lines.

use anyhow::Context;
use clap::Args;
use headroom::store::export::{export_raw, RawFormat};
use headroom::store::{RawEnd, RunDir};
use std::path::PathBuf;
use std::process::ExitCode;

/// Options of `headroom export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A run directory of a run made with --raw (attack, run or sweep).
    pub run: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "csv")]
    pub format: RawFormat,
    /// Write to this file instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// Runs `headroom export`.
pub fn run(args: ExportArgs) -> anyhow::Result<ExitCode> {
    let dir = RunDir::at(&args.run);
    let meta = dir.meta()?;
    let Some(mut reader) = dir.open_raw(&meta)? else {
        anyhow::bail!(
            "{} holds no per-request records: run with --raw (attack, run or sweep) to keep them",
            args.run.display()
        );
    };
    let end = dir.raw_end()?;
    match end {
        None => eprintln!(
            "warning: {} did not finish writing its records (stopped by a kill or a crash?): exporting those it wrote",
            args.run.display()
        ),
        Some(RawEnd { dropped, records }) if dropped > 0 => eprintln!(
            "warning: {dropped} record(s) were dropped during the run because the disk did not keep up; {records} were kept (the run's report counts every request)"
        ),
        Some(_) => {}
    }
    let exported = match &args.output {
        Some(path) => {
            let mut file = std::fs::File::create(path)
                .with_context(|| format!("cannot write {}", path.display()))?;
            export_raw(&meta, &mut reader, end, args.format, &mut file)?
        }
        None => export_raw(
            &meta,
            &mut reader,
            end,
            args.format,
            &mut std::io::stdout().lock(),
        )?,
    };
    match (exported.torn_tail, end) {
        (false, _) => {}
        (true, None) => eprintln!(
            "warning: the last record was cut short (the run was killed mid-write) and is left out"
        ),
        // Every record the run wrote is there (or the export would have failed): what
        // follows them came later.
        (true, Some(_)) => eprintln!(
            "warning: raw.bin ends with bytes that are not a whole record, after all the records the run wrote (added after the run?): they are left out"
        ),
    }
    if let Some(path) = &args.output {
        eprintln!(
            "{} record(s) written to {}",
            exported.records,
            path.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Says where a run's records are and whether any were dropped (after a `--raw` run).
pub fn say_raw(dir: &RunDir) -> anyhow::Result<()> {
    let path = dir.path().display();
    match dir.raw_end()? {
        Some(RawEnd { records, dropped }) => {
            eprintln!(
                "{records} request record(s) kept in {path}/raw.bin (export: headroom export {path} --format csv|jsonl)"
            );
            if dropped > 0 {
                eprintln!("warning: {dropped} request record(s) were dropped because the disk did not keep up (the report above counts every request)");
            }
        }
        None => eprintln!("warning: the request records in {path}/raw.bin were not finished"),
    }
    Ok(())
}
