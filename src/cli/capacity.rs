//! `headroom capacity`: the search for the highest rate that meets an SLO.

use super::attack::Output;
use super::request::Subject;
use anyhow::Context;
use headroom::capacity::parse_objectives;
use headroom::capacity::search::SearchSettings;
use headroom::capacity::study::{self, StudySettings};
use headroom::engine::CancellationToken;
use headroom::plan::gate;
use headroom::report::build::capacity as build;
use std::process::ExitCode;
use std::time::Duration;

/// Options of `headroom capacity`.
#[derive(Debug, clap::Args)]
pub struct CapacityArgs {
    #[command(flatten)]
    pub subject: Subject,
    /// The objectives every probe must meet, e.g. "p99 < 250ms, errors < 0.1%" (default: the
    /// scenario's `slo`).
    #[arg(long, value_name = "OBJECTIVES")]
    pub slo: Option<String>,
    /// First rate tried, req/s.
    #[arg(long, default_value = "100", value_parser = super::rate)]
    pub start: f64,
    /// Highest rate tried, req/s; a search that meets the objectives there says so and
    /// stops rather than raising the load further.
    #[arg(long, default_value_t = headroom::capacity::search::DEFAULT_MAX, value_parser = super::rate)]
    pub max: f64,
    /// Factor between rates while growing.
    #[arg(long, default_value_t = 2.0)]
    pub growth: f64,
    /// Stop narrowing once the tipping point is within this share of the capacity.
    #[arg(long, default_value = "2%", value_parser = percent)]
    pub precision: f64,
    /// Steady-state window each probe is judged on (default: 10s, or 20 times the
    /// objectives' tightest latency bound when that is longer; a shorter one is refused).
    #[arg(long, value_parser = super::positive_duration)]
    pub window: Option<Duration>,
    /// Warm-up before each window (connections open, caches fill), left out of the numbers.
    #[arg(long, default_value = "2s", value_parser = super::duration)]
    pub warmup: Duration,
    /// Most probes in all (holds included).
    #[arg(long, default_value_t = 20)]
    pub max_probes: usize,
    /// Hold the answer this long before giving it: burst credits running out, a cache
    /// filling or a leak show only after a while. A rate that breaks during the hold is
    /// broken, and the search goes on below it with holds only. `0` skips the hold.
    #[arg(long, default_value = "60s", value_parser = super::duration)]
    pub confirm: Duration,
    #[command(flatten)]
    pub output: Output,
}

fn percent(s: &str) -> Result<f64, String> {
    let s = s.trim();
    let v = match s.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|p| p / 100.0),
        None => s.parse::<f64>(),
    };
    v.map_err(|_| format!("{s:?} is not a share; write 5% or 0.05"))
}

/// Runs `headroom capacity`.
pub fn run(args: CapacityArgs, shutdown: CancellationToken) -> anyhow::Result<ExitCode> {
    let plan = args.subject.plan()?;
    let objectives = match &args.slo {
        Some(text) => {
            gate::given("--slo", text, gate::OBJECTIVES)?;
            parse_objectives(text)?
        }
        None => plan.slo.clone(),
    };
    if objectives.is_empty() {
        anyhow::bail!("give the objectives to meet: --slo \"p99 < 250ms, errors < 0.1%\" (or a scenario with slo:)");
    }
    let window = headroom::capacity::steady::window(&objectives, args.window)?;
    if args.output.raw {
        anyhow::bail!("--raw is for attack, run and sweep; to keep each request of a rate the search found, run it again with headroom attack --raw");
    }
    let dir = args.output.dir("capacity")?;
    // One clear error before the first probe rather than a silent gap in every report.
    args.output.server_watch()?;
    let mut server = || args.output.server_watch().ok().flatten();
    let argv: Vec<String> = std::env::args().collect();
    let quiet = args.output.quiet;
    let mut progress = super::progress::Progress::new(&plan, true);
    let live = match args.output.live {
        Some(addr) => Some(super::live::start_search(addr, dir.path(), &shutdown)?),
        None => None,
    };
    let (live, mut feed) = match live {
        Some((live, feed)) => (Some(live), Some(feed)),
        None => (None, None),
    };
    let mut both;
    let observer: &mut dyn headroom::run::Observer = match feed.as_mut() {
        Some(f) => {
            both = headroom::live::Tee(&mut progress, f);
            &mut both
        }
        None => &mut progress,
    };
    let record = study::run(
        &plan,
        StudySettings {
            objectives,
            search: SearchSettings {
                start: args.start,
                max: args.max,
                growth: args.growth,
                precision: args.precision,
                max_probes: args.max_probes,
                hold: !args.confirm.is_zero(),
            },
            window,
            warmup: args.warmup,
            confirm: args.confirm,
            command: headroom::store::redact_args(&argv),
            server: &mut server,
            push: args.output.push_targets()?,
        },
        dir.path(),
        &shutdown,
        observer,
        &mut |probe| {
            if !quiet {
                eprintln!("{}", build::probe_line(probe));
            }
        },
    )
    .with_context(|| format!("capacity search on {} failed", plan.target.url))?;
    super::report::emit(
        &headroom::report::capacity(&record, args.output.format)?,
        args.output.report_file.as_deref(),
    )?;
    // The answer alone: a CI page reads several steps' summaries one after another.
    super::step_summary::append(|| {
        headroom::report::write::step_summary::write(&build::build(&record))
    });
    if let Some(feed) = feed {
        feed.finish();
    }
    super::report::write_capacity_plots_and_page(&record, dir.path())?;
    if let Some(live) = &live {
        live.show_report(dir.path());
    }
    eprintln!(
        "search stored in {} (re-render: headroom report {})",
        dir.path().display(),
        dir.path().display()
    );
    Ok(match record.outcome.map(|o| o.verdict) {
        Some(headroom::capacity::search::Verdict::Interrupted) | None => super::stopped_code(),
        _ => super::exit::code(super::exit::of_search(&record)),
    })
}
