//! `headroom attack`: flags → plan → run → report.

use super::progress::Progress;
use anyhow::{bail, Context};
use clap::Args;
use headroom::engine::Shutdown;
use headroom::plan::{
    AttackPlan, ClientIdentity, ConnectionOptions, HttpVersion, Load, NamedRequest, Rate,
    RequestSpec, Slo, Stop, Target, TlsOptions,
};
use headroom::report::{self, Format};
use headroom::store::RunDir;
use headroom::summary::Summary;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Options of `headroom attack`.
#[derive(Debug, Args)]
pub struct AttackArgs {
    /// The URL to load (http:// or https://).
    pub url: String,
    /// Requests per second (open model: arrivals do not wait for responses).
    #[arg(long, allow_negative_numbers = true, conflicts_with = "concurrency")]
    pub rate: Option<f64>,
    /// Workers sending back to back (closed model).
    #[arg(short = 'c', long, allow_negative_numbers = true)]
    pub concurrency: Option<i64>,
    /// How long to send, e.g. 10s, 1m30s.
    #[arg(short, long, value_parser = super::positive_duration, allow_hyphen_values = true)]
    pub duration: Option<Duration>,
    /// How many requests to send.
    #[arg(short = 'n', long, allow_negative_numbers = true)]
    pub requests: Option<i64>,
    /// HTTP method.
    #[arg(short = 'X', long, default_value = "GET")]
    pub method: String,
    /// A request header, "Name: value" (repeatable).
    #[arg(short = 'H', long = "header")]
    pub headers: Vec<String>,
    /// Request body.
    #[arg(long, conflicts_with = "body_file")]
    pub body: Option<String>,
    /// Request body read from a file.
    #[arg(long)]
    pub body_file: Option<PathBuf>,
    /// Speak HTTP/1.1 only.
    #[arg(long, conflicts_with = "http2")]
    pub http1: bool,
    /// Speak HTTP/2 only (ALPN h2 over TLS, prior knowledge over cleartext).
    #[arg(long)]
    pub http2: bool,
    /// Open a new connection (and TLS handshake) for every request.
    #[arg(long)]
    pub no_keepalive: bool,
    /// Most connections open at once.
    #[arg(long, default_value_t = 10_000)]
    pub max_connections: u32,
    /// Most concurrent streams per HTTP/2 connection.
    #[arg(long, default_value_t = 100)]
    pub max_streams: u32,
    /// Deadline for a whole request.
    #[arg(long, default_value = "30s", value_parser = super::positive_duration)]
    pub timeout: Duration,
    /// Deadline for opening a connection (TCP and TLS).
    #[arg(long, default_value = "10s", value_parser = super::positive_duration)]
    pub connect_timeout: Duration,
    /// PEM bundle of CAs to trust instead of the system's.
    #[arg(long)]
    pub cacert: Option<PathBuf>,
    /// PEM client certificate (with chain) for mutual TLS.
    #[arg(long, requires = "key")]
    pub cert: Option<PathBuf>,
    /// PEM private key of the client certificate.
    #[arg(long, requires = "cert")]
    pub key: Option<PathBuf>,
    /// Do not verify the server's certificate.
    #[arg(short = 'k', long)]
    pub insecure: bool,
    /// Do not resume TLS sessions on new connections.
    #[arg(long)]
    pub no_session_resumption: bool,
    /// TLS server name to send and verify, when it differs from the URL's host.
    #[arg(long)]
    pub server_name: Option<String>,
    /// Send requests falling due within this window of a pacer wake-up together: early, never
    /// late, so latency is never inflated; fewer wake-ups cost less CPU (0 = exact spacing).
    #[arg(long, default_value = "1ms", value_parser = humantime::parse_duration)]
    pub coalesce: Duration,
    /// Send HTTP/1.1 from tokio event loops instead of direct workers (slower; for comparison).
    #[arg(long, hide = true)]
    pub event_loop: bool,
    /// Engine threads (default: the cores this process may use).
    #[arg(long)]
    pub threads: Option<usize>,
    /// An objective the run must meet, e.g. "p99 < 10ms" or "error_rate < 0.1%" (repeatable);
    /// the exit status is 3 when one is not met.
    #[arg(long = "slo", value_name = "OBJECTIVE")]
    pub slo: Vec<String>,
    #[command(flatten)]
    pub output: Output,
}

/// Where a run is stored and how its report is printed (`attack` and `run` alike).
#[derive(Debug, clap::Args)]
pub struct Output {
    /// Run directory to store results in (default: runs/<time>-<command>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Report format printed at the end.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// No live progress line.
    #[arg(short, long)]
    pub quiet: bool,
    /// Sample a local server process every second (CPU, memory, threads, descriptors) into the
    /// run and its reports.
    #[arg(long, value_name = "PID")]
    pub monitor_pid: Option<u32>,
}

impl Output {
    /// Runs `plan` into the asked (or a new) run directory named after `command`, prints
    /// the report and says where the run is stored.
    pub fn execute(
        &self,
        plan: &AttackPlan,
        command: &str,
        shutdown: Shutdown,
    ) -> anyhow::Result<ExitCode> {
        let dir = match &self.out {
            Some(out) => RunDir::at(out),
            None => RunDir::default_for(command),
        };
        let argv: Vec<String> = std::env::args().collect();
        let server = self
            .monitor_pid
            .map(headroom::monitor::TargetProbe::new)
            .transpose()?;
        execute(plan, &argv, &dir, shutdown, self.format, self.quiet, server)
    }
}

impl AttackArgs {
    /// Lowers the flags to a validated plan.
    pub fn plan(&self) -> anyhow::Result<AttackPlan> {
        let target = Target::parse(&self.url)?;
        let body = match (&self.body, &self.body_file) {
            (Some(b), _) => bytes::Bytes::from(b.clone()),
            (None, Some(path)) => bytes::Bytes::from(
                std::fs::read(path)
                    .with_context(|| format!("cannot read --body-file {}", path.display()))?,
            ),
            (None, None) => bytes::Bytes::new(),
        };
        let request = NamedRequest::single(
            RequestSpec::parse(&self.method, &self.headers, body)?,
            &target,
        );
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
        let plan = AttackPlan {
            connection: ConnectionOptions {
                http: match (self.http1, self.http2) {
                    (true, _) => HttpVersion::Http1,
                    (_, true) => HttpVersion::Http2,
                    _ => HttpVersion::Auto,
                },
                keepalive: !self.no_keepalive,
                max_connections: self.max_connections,
                max_streams: self.max_streams.max(1),
                timeout: self.timeout,
                connect_timeout: self.connect_timeout,
                coalesce: self.coalesce,
                event_loop: self.event_loop,
                ..ConnectionOptions::default()
            },
            tls: TlsOptions {
                ca: self.cacert.clone(),
                identity: match (&self.cert, &self.key) {
                    (Some(cert), Some(key)) => Some(ClientIdentity {
                        cert: cert.clone(),
                        key: key.clone(),
                    }),
                    _ => None,
                },
                insecure: self.insecure,
                session_resumption: !self.no_session_resumption,
                server_name: self.server_name.clone(),
            },
            threads: self.threads.unwrap_or_else(super::available_cores),
            slo: self
                .slo
                .iter()
                .map(|s| s.parse())
                .collect::<Result<Vec<Slo>, _>>()?,
            ..AttackPlan::new(target, vec![request], load, stop)
        };
        plan.validate()?;
        Ok(plan)
    }
}

/// Runs `headroom attack`.
pub fn run(args: AttackArgs, shutdown: Shutdown) -> anyhow::Result<ExitCode> {
    let plan = args.plan()?;
    args.output.execute(&plan, "attack", shutdown)
}

/// Exit status of a run that completed but missed an objective.
pub const SLO_NOT_MET: u8 = 3;

/// Runs a plan, prints the report and says where the run is stored.
pub fn execute(
    plan: &AttackPlan,
    command: &[String],
    dir: &RunDir,
    shutdown: Shutdown,
    format: Format,
    quiet: bool,
    server: Option<headroom::monitor::TargetProbe>,
) -> anyhow::Result<ExitCode> {
    let mut progress = Progress::new(plan, quiet);
    let stored =
        headroom::run::attack_watching(plan, command, dir, shutdown, &mut progress, server)
            .with_context(|| format!("attack on {} failed", plan.target.url))?;
    progress.finish();
    let summary = Summary::of(&stored);
    print!("{}", report::render(&summary, format));
    eprintln!(
        "run stored in {} (re-render: headroom report {})",
        dir.path().display(),
        dir.path().display()
    );
    Ok(if summary.partial.is_some() {
        ExitCode::from(130)
    } else if !summary.slo_met() {
        eprintln!("an objective was not met (exit status 3)");
        ExitCode::from(SLO_NOT_MET)
    } else {
        ExitCode::SUCCESS
    })
}
