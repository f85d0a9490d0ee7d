//! `headroom compare`: stored runs side by side, as a table and overlaid plots; with
//! `--baseline`, a candidate judged against a baseline run by regression rules.

use anyhow::{bail, Context};
use headroom::plan::gate;
use headroom::report::build::compare::{build as build_compare, Compared};
use headroom::report::build::regression::{self as gate_report, Judged};
use headroom::report::plot;
use headroom::store::{RunDir, StoredRun};
use headroom::summary::regression;
use headroom::summary::Summary;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Options of `headroom compare`.
#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// Two or more run directories; with --baseline, the candidate run.
    #[arg(required = true, num_args = 1..)]
    pub runs: Vec<PathBuf>,
    /// The baseline run the candidate is judged against (with --fail-on).
    #[arg(long, value_name = "RUN")]
    pub baseline: Option<PathBuf>,
    /// How much worse than the baseline the candidate may be, e.g. 'p99 +10%, errors
    /// +0.1pp, rps -5%' (latency p50/p90/p95/p99/p99.9/max/mean +N% or +Nms, errors +Npp,
    /// rps -N%); the exit status is 4 when a rule fails.
    #[arg(long, value_name = "RULES", requires = "baseline")]
    pub fail_on: Option<String>,
    /// Their names in the table and legends, comma-separated (default: directory names).
    #[arg(long)]
    pub labels: Option<String>,
    #[command(flatten)]
    pub rendering: super::report::Rendering,
}

fn load(path: &Path) -> anyhow::Result<StoredRun> {
    RunDir::at(path)
        .load()
        .with_context(|| format!("cannot read the run in {}", path.display()))
}

fn label(p: &Path) -> String {
    super::report::run_id(p).unwrap_or_else(|| p.display().to_string())
}

/// Runs `headroom compare`.
pub fn run(args: CompareArgs) -> anyhow::Result<ExitCode> {
    if let Some(text) = &args.fail_on {
        // Read before any run is loaded, so a typo costs nothing.
        gate::given("--fail-on", text, gate::RULES)?;
        let rules = regression::parse_rules(text)?;
        return judge(&args, &rules);
    }
    let mut paths = args.runs.clone();
    if let Some(base) = &args.baseline {
        // A CI step that forgot its rules would otherwise pass for ever in silence.
        eprintln!("warning: --baseline without --fail-on shows the runs side by side and gates nothing (exit 0); add --fail-on RULES to fail on a regression");
        paths.insert(0, base.clone());
    }
    if paths.len() < 2 {
        bail!("give two or more runs to compare, or --baseline RUN CANDIDATE --fail-on RULES");
    }
    let labels: Vec<String> = match &args.labels {
        Some(l) => l.split(',').map(|s| s.trim().to_string()).collect(),
        None => paths.iter().map(|p| label(p)).collect(),
    };
    if labels.len() != paths.len() {
        bail!(
            "--labels names {} runs but {} were given",
            labels.len(),
            paths.len()
        );
    }
    let stored = paths
        .iter()
        .map(|p| load(p))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let summaries: Vec<Summary> = stored.iter().map(Summary::of).collect();
    let views: Vec<plot::RunView<'_>> = stored
        .iter()
        .zip(&summaries)
        .zip(labels)
        .map(|((run, summary), label)| plot::RunView {
            label,
            run,
            summary,
            scatter: None,
        })
        .collect();
    let r = &args.rendering;
    let drawn = plot::for_comparison(&views);
    if let Some(dir) = &r.plots {
        super::report::say_left_out(&drawn.left_out);
        super::report::announce(plot::write_all(&drawn.shown, dir)?);
    }
    let runs: Vec<Compared<'_>> = views
        .iter()
        .map(|v| Compared {
            label: &v.label,
            summary: v.summary,
        })
        .collect();
    let text = headroom::report::compare(&runs, drawn.clone(), r.format)?;
    super::report::emit(&text, r.output.as_deref())?;
    super::step_summary::append(|| {
        headroom::report::write::step_summary::write(&build_compare(&runs, drawn))
    });
    Ok(super::exit::code(super::exit::SUCCESS))
}

/// `compare --baseline BASE CANDIDATE --fail-on RULES`: each rule judged and printed; exit
/// status 4 when one fails.
fn judge(args: &CompareArgs, rules: &[regression::Rule]) -> anyhow::Result<ExitCode> {
    let (Some(base_path), [candidate_path]) = (&args.baseline, args.runs.as_slice()) else {
        bail!("--fail-on judges one candidate against the baseline: headroom compare --baseline BASE CANDIDATE --fail-on RULES");
    };
    if args.labels.is_some() || args.rendering.plots.is_some() {
        bail!("--labels and --plots are for runs side by side; drop them with --fail-on");
    }
    let baseline = Summary::of(&load(base_path)?);
    let candidate = Summary::of(&load(candidate_path)?);
    let mismatches = regression::mismatches(&baseline, &candidate);
    for m in &mismatches {
        let line = gate_report::mismatch_line(m, &baseline, &candidate);
        if m.refuses() {
            bail!("{line}: a regression check compares runs of one test; compare them without --fail-on to see them side by side");
        }
        eprintln!("warning: {line}");
    }
    let verdicts = regression::judge(rules, &baseline, &candidate);
    let incomplete = regression::incomplete(&baseline, &candidate);
    let judged = Judged {
        baseline_label: &label(base_path),
        baseline: &baseline,
        candidate_label: &label(candidate_path),
        candidate: &candidate,
        verdicts: &verdicts,
        incomplete: &incomplete,
    };
    let r = &args.rendering;
    let text = headroom::report::regression(&judged, r.format)?;
    super::report::emit(&text, r.output.as_deref())?;
    super::step_summary::append(|| {
        headroom::report::write::step_summary::write(&gate_report::build(&judged))
    });
    let failed = gate_report::failure_lines(&judged);
    if failed.is_empty() {
        return Ok(super::exit::code(super::exit::SUCCESS));
    }
    for line in failed {
        eprintln!("regression: {line}");
    }
    eprintln!(
        "the regression check did not pass (exit status {})",
        super::exit::REGRESSION
    );
    Ok(super::exit::code(super::exit::REGRESSION))
}
