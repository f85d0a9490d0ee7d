//! The flags that say what to send and how to connect, shared by `attack`, `sweep` and
//! `capacity`.

use anyhow::Context;
use clap::Args;
use headroom::plan::{
    ArrivalKind, Arrivals, AttackPlan, ClientIdentity, ConnectionOptions, HttpVersion, Load,
    NamedRequest, RequestSpec, Stop, Target, TlsOptions,
};
use std::path::PathBuf;
use std::time::Duration;

/// What to send to the URL and how to connect to it.
#[derive(Debug, Args)]
pub struct RequestArgs {
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
    /// Even arrivals only: Poisson arrivals each leave at their own time.
    #[arg(long, default_value = "1ms", value_parser = super::duration)]
    pub coalesce: Duration,
    /// Engine threads (default: the cores this process may use).
    #[arg(long)]
    pub threads: Option<usize>,
    #[command(flatten)]
    pub arrivals: ArrivalArgs,
}

/// How the open model's arrivals are spaced (`attack`, `sweep`, `capacity`).
#[derive(Debug, Args)]
pub struct ArrivalArgs {
    /// How requests arrive at the rate: even (evenly spaced; the default, or a scenario's
    /// own) or poisson (exponential gaps, as independent users send: bursts and lulls at
    /// the same mean rate). A capacity found with even arrivals overstates what bursty
    /// traffic gets at the same p99.
    #[arg(long, value_name = "even|poisson")]
    pub arrivals: Option<ArrivalKind>,
    /// Seed of Poisson arrivals: the same seed sends the same schedule (default: drawn at
    /// random, and stored with the run).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
}

impl ArrivalArgs {
    /// Applies the flags to `plan`'s arrivals (a scenario's own, unless the flags say
    /// otherwise).
    pub fn apply(&self, plan: &mut AttackPlan) -> anyhow::Result<()> {
        let kind = self.arrivals.unwrap_or(plan.arrivals.kind());
        if kind == ArrivalKind::Even && self.seed.is_some() {
            anyhow::bail!(
                "--seed seeds Poisson arrivals: add --arrivals poisson, or leave out --seed"
            );
        }
        plan.arrivals = Arrivals::of(kind, self.seed.or(plan.arrivals.seed()));
        Ok(())
    }
}

impl RequestArgs {
    /// A plan sending this request to `url` with `load` until `stop` (not yet validated).
    pub fn plan(&self, url: &str, load: Load, stop: Stop) -> anyhow::Result<AttackPlan> {
        let target = Target::parse(url)?;
        let body = match (&self.body, &self.body_file) {
            (Some(b), _) => bytes::Bytes::from(b.clone()),
            (None, Some(path)) => {
                bytes::Bytes::from(headroom::plan::read_body_file(path).context("--body-file")?)
            }
            (None, None) => bytes::Bytes::new(),
        };
        let request = NamedRequest::single(
            RequestSpec::parse(&self.method, &self.headers, body)?,
            &target,
        );
        self.plan_of(target, vec![request], load, stop)
    }

    /// A plan sending the targets of vegeta's http format in `text` in turn (`attack -`),
    /// each with the `-H` headers too, with `load` until `stop` (not yet validated).
    pub fn plan_of_targets(
        &self,
        text: &str,
        load: Load,
        stop: Stop,
    ) -> anyhow::Result<AttackPlan> {
        if self.body.is_some() || self.body_file.is_some() {
            anyhow::bail!("with targets from standard input each target's body is its own `@file` line: leave out --body and --body-file");
        }
        if !self.method.eq_ignore_ascii_case("GET") {
            anyhow::bail!("with targets from standard input each target's method is on its line (`POST http://…`): leave out -X");
        }
        let (target, mut requests) =
            headroom::plan::vegeta_targets::parse(text).context("targets from standard input")?;
        // The -H headers go to every target, after its own (as vegeta's -header does).
        let extra = RequestSpec::parse("GET", &self.headers, bytes::Bytes::new())?.headers;
        for r in &mut requests {
            r.spec.headers.extend(extra.iter().cloned());
        }
        self.plan_of(target, requests, load, stop)
    }

    fn plan_of(
        &self,
        target: Target,
        requests: Vec<NamedRequest>,
        load: Load,
        stop: Stop,
    ) -> anyhow::Result<AttackPlan> {
        let mut plan = AttackPlan {
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
            ..AttackPlan::new(target, requests, load, stop)
        };
        self.arrivals.apply(&mut plan)?;
        Ok(plan)
    }
}

/// What a sweep or a search loads: a URL with the request flags, or a scenario file.
#[derive(Debug, Args)]
pub struct Subject {
    /// The URL to load (http:// or https://); or give --scenario.
    #[arg(required_unless_present = "scenario", conflicts_with = "scenario")]
    pub url: Option<String>,
    /// A scenario file whose requests, mix, data and connection settings are used (its own
    /// load and stages are replaced).
    #[arg(long, value_name = "FILE")]
    pub scenario: Option<PathBuf>,
    /// Replace a value of the scenario (repeatable), as `run --set` does:
    /// requests.read.weight=90, target.headers.X-Env=staging.
    #[arg(long = "set", value_name = "PATH=VALUE", value_parser = super::unechoed::Unechoed::<headroom::plan::scenario::Override>::default())]
    pub set: Vec<headroom::plan::scenario::Override>,
    #[command(flatten)]
    pub request: RequestArgs,
}

impl Subject {
    /// The plan to sweep or search, with a placeholder load the caller replaces.
    pub fn plan(&self) -> anyhow::Result<AttackPlan> {
        let load = Load::Open {
            rate: headroom::plan::Rate(1.0),
        };
        let stop = Stop {
            duration: Some(Duration::from_secs(1)),
            requests: None,
        };
        match (&self.url, &self.scenario) {
            (_, Some(path)) => {
                let mut plan = headroom::plan::scenario::Document::read(path)
                    .and_then(|doc| doc.lower(&self.set, super::available_cores()))
                    .with_context(|| format!("scenario {}", path.display()))?;
                plan.load = load;
                plan.stop = stop;
                plan.stages.clear();
                // A sweep stops at its own limits (--stop-when) and a search judges each
                // probe whole: the scenario's safety stop is `run`'s. Said, not dropped
                // silently: someone relying on it should know it is not watching.
                if !plan.abort.is_empty() {
                    eprintln!("warning: the scenario's abort_when is not used here: a sweep stops at its --stop-when limits and a capacity search judges each probe by its objectives (abort_when is for `headroom run`)");
                }
                plan.abort.clear();
                self.request.arrivals.apply(&mut plan)?;
                Ok(plan)
            }
            (Some(_), None) if !self.set.is_empty() => {
                anyhow::bail!("--set replaces values of a scenario: give --scenario FILE")
            }
            (Some(url), None) => self.request.plan(url, load, stop),
            (None, None) => anyhow::bail!("give a URL or --scenario FILE"),
        }
    }
}
