//! `headroom report`: re-renders a stored run or capacity search, with its plots.

use anyhow::Context;
use clap::Args;
use headroom::capacity::study::CapacityRecord;
use headroom::report::{self, plot, Format};
use headroom::store::{RunDir, StoredRun};
use headroom::summary::Summary;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Options of `headroom report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A run directory (attack, run, sweep), a capacity search's or a matrix's directory.
    pub run: PathBuf,
    #[command(flatten)]
    pub rendering: Rendering,
    /// Exit 3 when the run missed an objective or nothing succeeded, as the run itself would
    /// have (a merged run: the whole test's verdict, which its shards leave to it); a partial
    /// run exits 3 too, its objectives unjudged.
    #[arg(long)]
    pub exit_status: bool,
}

/// How a report is rendered and where it goes (`report` and `compare` alike).
#[derive(Debug, Args)]
pub struct Rendering {
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Write the report to this file instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write the figures as PNG and SVG into this directory.
    #[arg(long, value_name = "DIR")]
    pub plots: Option<PathBuf>,
}

/// Runs `headroom report`.
pub fn run(args: ReportArgs) -> anyhow::Result<ExitCode> {
    let Rendering {
        format,
        output,
        plots,
    } = &args.rendering;
    if let Some(table) = headroom::summary::matrix::load(&args.run)
        .with_context(|| format!("cannot read the matrix in {}", args.run.display()))?
    {
        if args.exit_status {
            anyhow::bail!("--exit-status judges one run; {} is a matrix: give one of its variants' run directories", args.run.display());
        }
        if plots.is_some() {
            eprintln!(
                "a matrix has no figures of its own; give a variant's directory for its figures"
            );
        }
        emit(&report::matrix(&table, *format)?, output.as_deref())?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut status = super::exit::SUCCESS;
    let text = match CapacityRecord::load(&args.run)
        .with_context(|| format!("cannot read the search in {}", args.run.display()))?
    {
        Some(record) => {
            if args.exit_status {
                anyhow::bail!("--exit-status judges one run; {} is a capacity search: give one of its probes' run directories", args.run.display());
            }
            if let Some(dir) = plots {
                announce(plot::write_all(&plot::for_capacity(&record), dir)?);
            }
            report::capacity(&record, *format)?
        }
        None => {
            let stored = RunDir::at(&args.run)
                .load()
                .with_context(|| format!("cannot read the run in {}", args.run.display()))?;
            let summary = Summary::of(&stored);
            let drawn = plots.is_some() || matches!(format, Format::Html);
            let view = view(&stored, &summary, &args.run, drawn);
            say_promql(&stored, &args.run);
            if let Some(dir) = plots {
                let drawn = plot::for_run(&view);
                say_left_out(&drawn.left_out);
                announce(plot::write_all(&drawn.shown, dir)?);
            }
            if args.exit_status {
                status = match &summary.partial {
                    Some(why) => {
                        eprintln!("the run is partial ({why}): its objectives are not judged (exit status {})", super::exit::SLO_NOT_MET);
                        super::exit::SLO_NOT_MET
                    }
                    None => super::exit::of_run(&summary, super::exit::Judged::Here),
                };
            }
            render_view(&view, *format, &args.run)?
        }
    };
    emit(&text, output.as_deref())?;
    Ok(super::exit::code(status))
}

/// The stored run in `dir` rendered in `format`; its HTML page has each request's latency
/// when the run kept its raw records.
pub fn render_run(
    stored: &StoredRun,
    summary: &Summary,
    dir: &Path,
    format: Format,
) -> anyhow::Result<String> {
    let drawn = matches!(format, Format::Html);
    render_view(&view(stored, summary, dir, drawn), format, dir)
}

fn render_view(view: &plot::RunView<'_>, format: Format, dir: &Path) -> anyhow::Result<String> {
    let figures = matches!(format, Format::Html).then(|| plot::for_run(view));
    Ok(report::render_run(
        view.summary,
        format,
        extras(view.run, figures, run_id(dir).as_deref()),
    )?)
}

/// What a run's report needs beside its summary: its figures when drawn, its stored options
/// (secrets already redacted when stored) for the HTML page, its id for JUnit.
fn extras<'a>(
    stored: &StoredRun,
    figures: Option<plot::Figures>,
    run_id: Option<&'a str>,
) -> report::Extras<'a> {
    report::Extras {
        options: figures
            .is_some()
            .then(|| serde_json::to_value(&stored.meta).unwrap_or_default()),
        figures,
        run_id,
    }
}

/// The PromQL that reads the run back, on stderr, when it pushed to Prometheus: printed at
/// the end of the run and again by `report`, so it is never lost with the terminal.
pub fn say_promql(stored: &StoredRun, dir: &Path) {
    let name = run_id(dir).unwrap_or_default();
    if let Some(queries) = headroom::push::promql::for_run(stored, &name) {
        eprintln!("this run in Prometheus (the count and p99 over the whole run, exactly):");
        for q in queries {
            eprintln!("  {q}");
        }
    }
}

/// A run's id: its directory's name (`20250101T120000.000-attack`), as `report` and
/// `compare` are given it.
pub fn run_id(dir: &Path) -> Option<String> {
    dir.file_name().map(|n| n.to_string_lossy().into_owned())
}

/// The run as figures see it, with each request's latency when it kept its raw records and
/// the figures are `drawn` (a damaged raw file costs that figure alone, with a warning; a
/// text report does not read the raw file at all).
fn view<'a>(
    stored: &'a StoredRun,
    summary: &'a Summary,
    dir: &Path,
    drawn: bool,
) -> plot::RunView<'a> {
    let scatter = if drawn {
        plot::scatter::of_run(&RunDir::at(dir), &stored.meta, summary.duration.total_secs)
            .unwrap_or_else(|e| {
                eprintln!("warning: no per-request figure: {e}");
                None
            })
    } else {
        None
    };
    plot::RunView {
        label: "all requests".into(),
        run: stored,
        summary,
        scatter,
    }
}

/// Writes `text` to `output`, or to standard output.
pub fn emit(text: &str, output: Option<&Path>) -> anyhow::Result<()> {
    match output {
        Some(path) => {
            std::fs::write(path, text)
                .with_context(|| format!("cannot write {}", path.display()))?;
            eprintln!("wrote {}", path.display());
        }
        None => print!("{text}"),
    }
    Ok(())
}

/// Says where the plot files went.
pub fn announce(files: Vec<PathBuf>) {
    if let Some(first) = files.first() {
        eprintln!(
            "wrote {} plot files in {}",
            files.len(),
            first.parent().unwrap_or(Path::new(".")).display()
        );
    }
}

/// Writes a staged run's figures into `DIR/plots` and its HTML page as `DIR/report.html`.
pub fn write_plots_and_page(
    stored: &StoredRun,
    summary: &Summary,
    dir: &Path,
) -> anyhow::Result<()> {
    let view = view(stored, summary, dir, true);
    let drawn = plot::for_run(&view);
    let id = run_id(dir);
    let page = report::render_run(
        summary,
        Format::Html,
        extras(stored, Some(drawn.clone()), id.as_deref()),
    )?;
    say_left_out(&drawn.left_out);
    write_page(&drawn.shown, &page, dir)
}

/// Says which figures were not written, and why.
pub fn say_left_out(left_out: &[plot::LeftOut]) {
    for note in left_out {
        eprintln!("{}", note.sentence());
    }
}

/// Writes a search's figures into `DIR/plots` and its HTML page as `DIR/report.html`.
pub fn write_capacity_plots_and_page(record: &CapacityRecord, dir: &Path) -> anyhow::Result<()> {
    let page = report::capacity(record, Format::Html)?;
    write_page(&plot::for_capacity(record), &page, dir)
}

fn write_page(figures: &[plot::Figure], page: &str, dir: &Path) -> anyhow::Result<()> {
    let written = plot::write_all(figures, &dir.join("plots"))?;
    let path = dir.join("report.html");
    std::fs::write(&path, page).with_context(|| format!("cannot write {}", path.display()))?;
    eprintln!(
        "plots in {} ({} files), HTML report in {}",
        dir.join("plots").display(),
        written.len(),
        path.display()
    );
    Ok(())
}
