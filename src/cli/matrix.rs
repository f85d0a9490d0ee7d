//! `headroom run` with a matrix: every variant checked, then run one after another into
//! the matrix directory, and one table of them printed.

use super::progress::Progress;
use super::run::RunArgs;
use anyhow::Context;
use headroom::engine::CancellationToken;
use headroom::plan::scenario::{Document, Override};
use headroom::plan::AttackPlan;
use headroom::run::Observer;
use headroom::store::IntervalLine;
use headroom::summary::matrix::VariantState;
use headroom::summary::Summary;
use std::process::ExitCode;

/// Runs the matrix of `doc` (its `matrix:` section crossed with `--matrix`), each variant
/// with `base` (the load flags and `--set`) applied first.
pub fn run(
    args: &RunArgs,
    doc: &Document,
    base: &[Override],
    shutdown: CancellationToken,
) -> anyhow::Result<ExitCode> {
    if args.output.format == headroom::report::Format::Junit {
        anyhow::bail!("a matrix has no JUnit report; run it with another --format, then render each variant: headroom report DIR/VARIANT --format junit");
    }
    // Said, not ignored: a page that never comes would be waited for.
    if args.output.live.is_some() {
        anyhow::bail!("--live follows one run, and a matrix runs several one after another; run a variant on its own with --live (--set … as its row says), or follow the variants' directories as they are written: headroom watch DIR/VARIANT");
    }
    let variants = headroom::plan::matrix::variants(doc.matrix(), &args.matrix)
        .with_context(|| format!("scenario {}", args.scenario.display()))?;
    let argv: Vec<String> = std::env::args().collect();
    let record = headroom::matrix::record(
        &variants,
        doc.matrix(),
        headroom::store::redact_args(&argv),
        args.scenario.display().to_string(),
    )
    .with_context(|| format!("scenario {}", args.scenario.display()))?;
    // Every variant is checked before the first one sends anything, and dropped again: a
    // plan holds its data tables, and a matrix of many must not hold them all at once.
    let lower = |i: usize| -> anyhow::Result<AttackPlan> {
        let mut overrides = base.to_vec();
        overrides.extend(variants[i].overrides.iter().cloned());
        let mut plan = doc
            .lower(&overrides, super::available_cores())
            .with_context(|| format!("variant {}", record.variants[i].run))?;
        if let Some(abort) = args.abort.conditions()? {
            plan.abort = abort;
        }
        if let Some(cap) = args.max_rate {
            plan.max_rate = Some(headroom::plan::Rate(cap));
        }
        if args.max_rate.is_some() || args.abort.abort_when.is_some() {
            plan.validate()
                .with_context(|| format!("variant {}", record.variants[i].run))?;
        }
        Ok(plan)
    };
    let mut described = Vec::with_capacity(variants.len());
    for (i, entry) in record.variants.iter().enumerate() {
        let plan = lower(i)?;
        if args.check {
            headroom::engine::preview::check_tls(&plan)
                .with_context(|| format!("variant {}", entry.run))?;
            described.push(describe(&record.columns, &entry.cells, &plan));
        }
    }
    if args.check {
        println!(
            "{}: ok, {} variant(s)",
            args.scenario.display(),
            record.variants.len()
        );
        for (entry, line) in record.variants.iter().zip(&described) {
            println!("  {:<32} {line}", entry.run);
        }
        return Ok(ExitCode::SUCCESS);
    }
    if !args.output.push.is_empty() {
        anyhow::bail!("--push is for attack, run, sweep and capacity; push a variant by running it with headroom run --push");
    }
    let dir = args.output.dir("matrix")?;
    // One clear error before the first variant rather than a gap in every row.
    args.output.server_watch()?;
    let mut keep = || headroom::matrix::Keep {
        server: args.output.server_watch().ok().flatten(),
        raw: args.output.raw,
    };
    let quiet = args.output.quiet;
    let mut missed = false;
    let mut plan_of = |i: usize| lower(i).map_err(|e| format!("{e:#}"));
    let record = headroom::matrix::run(
        record.clone(),
        &mut plan_of,
        dir.path(),
        &shutdown,
        &mut keep,
        &mut |plan| Box::new(Line(Progress::new(plan, quiet))),
        &mut |entry, stored| {
            let s = Summary::of(stored);
            missed |= !s.slo_met() || s.nothing_succeeded();
            if !quiet {
                eprintln!(
                    "variant {}: {} requests, {:.2} req/s, p99 {}{}",
                    entry.run,
                    s.requests.total,
                    s.requests.rate,
                    headroom::units::fmt_us(s.latency.p99_us),
                    match entry.state {
                        VariantState::Interrupted => " (stopped partway)",
                        VariantState::Aborted => " (aborted: an --abort-when condition held)",
                        _ => "",
                    }
                );
            }
        },
    )
    .with_context(|| format!("matrix of {} failed", args.scenario.display()))?;
    let table = headroom::summary::matrix::load(dir.path())?
        .context("the matrix record vanished while it ran")?;
    super::report::emit(
        &headroom::report::matrix(&table, args.output.format)?,
        args.output.report_file.as_deref(),
    )?;
    let page = dir.path().join("report.html");
    std::fs::write(
        &page,
        headroom::report::matrix(&table, headroom::report::Format::Html)?,
    )
    .with_context(|| format!("cannot write {}", page.display()))?;
    eprintln!(
        "matrix stored in {} (re-render: headroom report {}), HTML report in {}",
        dir.path().display(),
        dir.path().display(),
        page.display()
    );
    let stopped = record
        .variants
        .iter()
        .any(|v| !matches!(v.state, VariantState::Completed | VariantState::Aborted));
    let aborted = record
        .variants
        .iter()
        .any(|v| v.state == VariantState::Aborted);
    Ok(if stopped {
        super::stopped_code()
    } else if aborted {
        eprintln!(
            "at least one variant was aborted by --abort-when (exit status {})",
            super::exit::ABORTED
        );
        super::exit::code(super::exit::ABORTED)
    } else if missed {
        eprintln!("an objective was not met, or nothing succeeded, in at least one variant (exit status 3)");
        super::exit::code(super::exit::SLO_NOT_MET)
    } else {
        ExitCode::SUCCESS
    })
}

/// A variant as `--check` shows it: its cells, then the load it lowers to.
fn describe(
    columns: &[headroom::store::matrix::MatrixColumn],
    cells: &[String],
    plan: &AttackPlan,
) -> String {
    let cells: Vec<String> = columns
        .iter()
        .zip(cells)
        .map(|(c, v)| format!("{}={v}", c.heading))
        .collect();
    let mut out = cells.join("  ");
    for line in super::check::load(plan) {
        out.push_str("\n      ");
        out.push_str(line.trim());
    }
    out
}

/// A variant's progress line, ended when the variant ends.
struct Line(Progress);

impl Observer for Line {
    fn interval(&mut self, line: &IntervalLine) {
        self.0.interval(line);
    }

    fn notice(&mut self, notice: &headroom::sample::Notice) {
        self.0.notice(notice);
    }

    fn aborting(&mut self, aborted: &headroom::store::Aborted) {
        self.0.aborting(aborted);
    }

    fn stopping(&mut self) {
        self.0.stopping();
    }

    fn stopped_early(&self) -> Option<String> {
        self.0.stopped_early()
    }
}

impl Drop for Line {
    fn drop(&mut self) {
        self.0.finish();
    }
}
