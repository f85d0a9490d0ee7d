//! `headroom attack`: flags → plan → run → report.

use super::progress::Progress;
use anyhow::{bail, Context};
use clap::Args;
use headroom::engine::CancellationToken;
use headroom::launch::Launch;
use headroom::monitor::{PrometheusProbe, ServerWatch, TargetProbe};
use headroom::plan::{gate, AttackPlan, Load, Rate, Slo, Stop};
use headroom::report::Format;
use headroom::store::RunDir;
use headroom::summary::Summary;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Options of `headroom attack`.
#[derive(Debug, Args)]
pub struct AttackArgs {
    /// The URL to load (http:// or https://); `-` reads targets from standard input in
    /// vegeta's http format (`GET http://host/path`, then `Name: value` headers and an
    /// `@body-file` line, a blank line between targets), sent in turn.
    #[arg(allow_hyphen_values = true)]
    pub url: String,
    /// Requests per second (open model: arrivals do not wait for responses): 100, 100/s,
    /// 100/1s or 6000/1m.
    #[arg(long, allow_negative_numbers = true, conflicts_with = "concurrency", value_parser = super::rate)]
    pub rate: Option<f64>,
    /// Workers sending back to back (closed model).
    #[arg(short = 'c', long, allow_negative_numbers = true)]
    pub concurrency: Option<i64>,
    /// With --concurrency: start at most this many requests per second in all (workers
    /// wait for their turn), e.g. 500 or 500/s; a fast server is not flooded.
    #[arg(long, value_name = "RATE", requires = "concurrency", value_parser = super::rate)]
    pub max_rate: Option<f64>,
    /// How long to send, e.g. 10s, 1m30s.
    #[arg(short, long, value_parser = super::positive_duration, allow_hyphen_values = true)]
    pub duration: Option<Duration>,
    /// How many requests to send.
    #[arg(short = 'n', long, allow_negative_numbers = true)]
    pub requests: Option<i64>,
    #[command(flatten)]
    pub request: super::request::RequestArgs,
    /// An objective the run must meet, e.g. "p99 < 10ms" or "error_rate < 0.1%" (repeatable,
    /// or a comma list as capacity takes); the exit status is 3 when one is not met (see
    /// `headroom --help`).
    #[arg(long = "slo", value_name = "OBJECTIVE")]
    pub slo: Vec<String>,
    #[command(flatten)]
    pub abort: AbortArgs,
    #[command(flatten)]
    pub output: Output,
    #[command(flatten)]
    pub sharding: super::shard::ShardArgs,
}

/// The safety stop (`attack` and `run` alike).
#[derive(Debug, clap::Args)]
pub struct AbortArgs {
    /// Stop the run early the first time a condition holds for its whole window of
    /// consecutive seconds, keeping everything sent: 'errors > 5% for 30s, p99 > 2s for 1m'
    /// (the metrics of --slo; without `for`, the first second it holds). The report says
    /// which condition and when; the exit status is 5 (docs/ci.md).
    #[arg(long, value_name = "CONDITIONS")]
    pub abort_when: Option<String>,
}

impl AbortArgs {
    /// The conditions given, read; `None` when the flag is absent.
    pub fn conditions(&self) -> anyhow::Result<Option<Vec<headroom::plan::AbortWhen>>> {
        Ok(match &self.abort_when {
            Some(text) => Some(headroom::plan::parse_abort_when(text).context("--abort-when")?),
            None => None,
        })
    }
}

/// Where a run is stored and how its report is printed (`attack` and `run` alike).
#[derive(Debug, clap::Args)]
pub struct Output {
    /// Run directory to store results in (default: runs/<time>-<command>); a name that
    /// reads as a file (results.bin, report.json) is refused: the report goes to -o FILE.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Report format printed at the end.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Write the report to this file instead of standard output (as `report -o`).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub report_file: Option<PathBuf>,
    /// No live progress line.
    #[arg(short, long)]
    pub quiet: bool,
    /// Sample local server processes every second (CPU, memory, threads, descriptors) into
    /// the run and its reports; each PID with the processes it started (nginx's master and
    /// its workers). Repeatable, or a comma list: --monitor-pid 12,34.
    #[arg(
        long,
        value_name = "PID",
        value_delimiter = ',',
        conflicts_with = "monitor_prometheus"
    )]
    pub monitor_pid: Vec<u32>,
    /// Scrape a Prometheus endpoint every second for the server's CPU and memory:
    /// node_exporter's machine metrics, or an exporter's own process metrics.
    #[arg(long, value_name = "URL")]
    pub monitor_prometheus: Option<String>,
    /// Keep every request's record (request, stage, intended and actual send time, latency,
    /// status or error, bytes) in the run directory as raw.bin, written as the run goes;
    /// `headroom export RUN` turns it into CSV or JSON lines.
    #[arg(long)]
    pub raw: bool,
    /// Write each second live to a metrics backend as the run goes (repeatable):
    /// prometheus=URL for Prometheus remote write (native histograms), e.g.
    /// prometheus=http://127.0.0.1:9090/api/v1/write; influxdb=URL for InfluxDB line
    /// protocol, one point per second per request, e.g.
    /// influxdb=http://127.0.0.1:8086/write?db=DB (1.x; credentials from
    /// HEADROOM_INFLUXDB_USER and HEADROOM_INFLUXDB_PASSWORD) or
    /// influxdb=http://127.0.0.1:8086/api/v2/write?org=ORG&bucket=BUCKET (2; token from
    /// HEADROOM_INFLUXDB_TOKEN). What was sent and dropped is in the report and in
    /// outputs.json.
    // Parsed by `push_targets`, not by clap: clap's error would echo the value, and a URL
    // may hold credentials.
    #[arg(long, value_name = "KIND=URL")]
    pub push: Vec<String>,
    /// Serve a live page of the run (or search) while it goes (server-sent events, the
    /// report's own figures and tables; it becomes the final report at the end): `--live` on loopback
    /// at a free port, `--live=ADDR` elsewhere (e.g. --live=0.0.0.0:8089; off loopback
    /// every request needs the token). The address, with the token that shows the stop
    /// button, is printed first on standard error.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, require_equals = true, default_missing_value = "127.0.0.1:0")]
    pub live: Option<std::net::SocketAddr>,
}

impl Output {
    /// Runs `plan` into the asked (or a new) run directory named after `command`, prints
    /// the report and says where the run is stored; stops the run at the first stage that
    /// meets one of `limits`.
    pub fn execute_until(
        &self,
        plan: &AttackPlan,
        command: &str,
        shutdown: CancellationToken,
        limits: Vec<Slo>,
    ) -> anyhow::Result<ExitCode> {
        let launch = Launch {
            raw: self.raw,
            ..Launch::default()
        };
        self.execute_launched(
            plan,
            command,
            shutdown,
            limits,
            launch,
            super::exit::Judged::Here,
        )
    }

    /// Like `execute_until`, launched as `launch` says (a shard, a common start), its
    /// objectives `judged` here or by a merge.
    pub fn execute_launched(
        &self,
        plan: &AttackPlan,
        command: &str,
        shutdown: CancellationToken,
        limits: Vec<Slo>,
        launch: Launch,
        judged: super::exit::Judged,
    ) -> anyhow::Result<ExitCode> {
        let launch = Launch {
            push: self.push_targets()?,
            ..launch
        };
        let dir = self.dir(command)?;
        let argv: Vec<String> = std::env::args().collect();
        let server = self.server_watch()?;
        let watching = Watching {
            format: self.format,
            report_file: self.report_file.clone(),
            quiet: self.quiet,
            server,
            limits,
            // A staged run (a sweep) is read from its figures.
            pages: !plan.stages.is_empty(),
            raw: self.raw,
            judged,
            live: self.live,
        };
        execute_launched(plan, &argv, &dir, shutdown, watching, &launch)
    }

    /// The live outputs asked for (`--push`), checked now so a wrong one fails before any load.
    pub fn push_targets(&self) -> anyhow::Result<Vec<headroom::push::PushTarget>> {
        Ok(self
            .push
            .iter()
            .map(|p| p.parse())
            .collect::<Result<_, _>>()?)
    }

    /// The server watch asked for, started now so a wrong PID or URL fails before any load.
    pub fn server_watch(&self) -> anyhow::Result<Option<ServerWatch>> {
        Ok(
            match (self.monitor_pid.as_slice(), &self.monitor_prometheus) {
                ([], Some(url)) => Some(ServerWatch::Prometheus(PrometheusProbe::new(url)?)),
                ([], None) => None,
                (pids, _) => Some(ServerWatch::Process(TargetProbe::new(pids)?)),
            },
        )
    }

    /// The run directory asked for (refused when it names a file), or a new one named
    /// after `command`.
    pub fn dir(&self, command: &str) -> anyhow::Result<RunDir> {
        super::run_dir::new_run_dir(self.out.as_deref(), command)
    }
}

impl AttackArgs {
    /// Lowers the flags to a validated plan: of a whole test run by `generators` shards (1
    /// for a run on one generator).
    pub fn plan(&self, generators: u32) -> anyhow::Result<AttackPlan> {
        let load = match (self.rate, self.concurrency) {
            (Some(rate), None) => Load::Open { rate: Rate(rate) },
            (None, Some(c)) if c >= 1 && c <= u32::MAX as i64 => Load::Closed {
                concurrency: c as u32,
            },
            (None, Some(c)) => bail!("--concurrency must be between 1 and {}, got {c}", u32::MAX),
            (None, None) => bail!("give --rate R (open model) or --concurrency C (closed model)"),
            (Some(_), Some(_)) => bail!("--rate and --concurrency cannot be used together"),
        };
        let requests = match self.requests {
            Some(n) if n < 1 => bail!("--requests must be at least 1, got {n}"),
            n => n.map(|n| n as u64),
        };
        let stop = Stop {
            duration: self.duration,
            requests,
        };
        for s in &self.slo {
            gate::given("--slo", s, gate::OBJECTIVES)?;
        }
        let plan = AttackPlan {
            // Each --slo may be a comma list, as capacity's is.
            slo: self
                .slo
                .iter()
                .flat_map(|s| s.split(','))
                .filter(|s| !s.trim().is_empty())
                .map(|s| s.parse())
                .collect::<Result<Vec<Slo>, _>>()?,
            max_rate: self.max_rate.map(Rate),
            abort: self.abort.conditions()?.unwrap_or_default(),
            ..match self.url.as_str() {
                "-" => self.request.plan_of_targets(&read_stdin()?, load, stop)?,
                url => self.request.plan(url, load, stop)?,
            }
        };
        plan.validate_for(generators)?;
        Ok(plan)
    }
}

/// Most bytes of targets read from standard input: ample for the most targets a list may
/// hold, and a bound on a stream that never ends.
const MAX_TARGETS_BYTES: u64 = 16 << 20;

/// Standard input, whole, as the targets list (`attack -`).
fn read_stdin() -> anyhow::Result<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(MAX_TARGETS_BYTES + 1)
        .read_to_end(&mut bytes)
        .context("cannot read the targets from standard input")?;
    if bytes.len() as u64 > MAX_TARGETS_BYTES {
        bail!("the targets on standard input are over 16 MiB; split the list over several runs");
    }
    String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "the targets on standard input are not UTF-8 text (first bad byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

/// Runs `headroom attack`.
pub fn run(args: AttackArgs, shutdown: CancellationToken) -> anyhow::Result<ExitCode> {
    let shard = args.sharding.shard()?;
    let whole = args.plan(shard.map_or(1, |s| s.count))?;
    let (plan, launch) = args.sharding.launch(shard, whole, args.output.raw)?;
    let judged = args.sharding.judged();
    args.output
        .execute_launched(&plan, "attack", shutdown, Vec::new(), launch, judged)
}

/// How a run is watched while it goes and shown when it ends.
pub struct Watching {
    /// Report format.
    pub format: Format,
    /// Where the report goes (`-o FILE`); standard output when `None`.
    pub report_file: Option<PathBuf>,
    /// No live progress.
    pub quiet: bool,
    /// The server process to sample.
    pub server: Option<ServerWatch>,
    /// A stage meeting one of these ends the run early.
    pub limits: Vec<Slo>,
    /// Write the figures (`plots/`) and `report.html` beside the run.
    pub pages: bool,
    /// Keep each request's record (`--raw`).
    pub raw: bool,
    /// Whether the run's objectives decide its exit status, or its merge's.
    pub judged: super::exit::Judged,
    /// Serve the live page here (`--live`).
    pub live: Option<std::net::SocketAddr>,
}

/// Runs a plan, prints the report and says where the run is stored.
pub fn execute(
    plan: &AttackPlan,
    command: &[String],
    dir: &RunDir,
    shutdown: CancellationToken,
    watching: Watching,
) -> anyhow::Result<ExitCode> {
    let launch = Launch {
        raw: watching.raw,
        ..Launch::default()
    };
    execute_launched(plan, command, dir, shutdown, watching, &launch)
}

/// Like [`execute`], launched as `launch` says.
pub fn execute_launched(
    plan: &AttackPlan,
    command: &[String],
    dir: &RunDir,
    shutdown: CancellationToken,
    watching: Watching,
    launch: &Launch,
) -> anyhow::Result<ExitCode> {
    let Watching {
        format,
        report_file,
        quiet,
        server,
        limits,
        pages,
        raw,
        judged,
        live,
    } = watching;
    let mut progress = Progress::new(plan, quiet);
    // The run stops on Ctrl-C and when a sweep's limit says so; the latter stops only this run.
    let shutdown = shutdown.child_token();
    let handle = shutdown.clone();
    let (live, mut feed) = match live {
        Some(addr) => {
            let (live, feed) = super::live::start(addr, plan, dir, &shutdown)?;
            (Some(live), Some(feed))
        }
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
    let mut watch = headroom::capacity::StopWatch::new(plan, limits, handle, observer);
    let stored = match headroom::run::attack_launched(
        plan, command, dir, shutdown, &mut watch, server, launch,
    ) {
        // Stopped before the common start: nothing to report, and the status of a stop.
        Err(e @ headroom::run::RunError::NotStarted) => {
            eprintln!("headroom: {e}");
            return Ok(super::stopped_code());
        }
        r => r.with_context(|| format!("attack on {} failed", plan.target.url))?,
    };
    drop(watch);
    if let Some(feed) = feed {
        feed.finish();
    }
    progress.finish();
    let summary = Summary::of(&stored);
    super::report::emit(
        &super::report::render_run(&stored, &summary, dir.path(), format)?,
        report_file.as_deref(),
    )?;
    super::step_summary::append(|| {
        headroom::report::run_step_summary(&summary, super::report::run_id(dir.path()).as_deref())
    });
    if pages {
        super::report::write_plots_and_page(&stored, &summary, dir.path())?;
    }
    if let Some(live) = &live {
        live.finish(&stored, &summary, dir, pages)?;
    }
    eprintln!(
        "run stored in {} (re-render: headroom report {})",
        dir.path().display(),
        dir.path().display()
    );
    if raw {
        super::export::say_raw(dir)?;
    }
    super::report::say_promql(&stored, dir.path());
    Ok(match summary.partial {
        Some(_) => super::stopped_code(),
        None => super::exit::code(super::exit::of_run(&summary, judged)),
    })
}
