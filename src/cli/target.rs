//! `headroom target`: runs the built-in server until Ctrl-C.

use anyhow::Context;
use clap::Args;
use headroom::engine::CancellationToken;
use headroom::target::{self, TargetConfig, TargetTls};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Options of `headroom target`.
#[derive(Debug, Args)]
pub struct TargetArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Serve HTTPS (needs --cert and --key).
    #[arg(long, requires_all = ["cert", "key"])]
    pub tls: bool,
    /// PEM certificate chain for --tls.
    #[arg(long)]
    pub cert: Option<PathBuf>,
    /// PEM private key for --tls.
    #[arg(long)]
    pub key: Option<PathBuf>,
    /// Require client certificates signed by this PEM CA bundle.
    #[arg(long, requires = "tls")]
    pub client_ca: Option<PathBuf>,
    /// Delay before answering (routes /delay/{ms} have their own).
    #[arg(long, default_value = "0ms", value_parser = super::duration)]
    pub latency: Duration,
    /// Event-loop threads.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Answer at most this many requests per second, queueing the rest (a server whose
    /// capacity is known, to check `headroom capacity` against).
    #[arg(long)]
    pub capacity: Option<f64>,
}

/// Runs `headroom target`.
pub fn run(args: TargetArgs, shutdown: CancellationToken) -> anyhow::Result<ExitCode> {
    let tls = match (args.tls, args.cert, args.key) {
        (true, Some(cert), Some(key)) => Some(TargetTls {
            cert,
            key,
            client_ca: args.client_ca,
        }),
        _ => None,
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    let running = target::spawn(TargetConfig {
        listen: args.listen,
        tls,
        latency: args.latency,
        threads: args.threads.unwrap_or_else(super::available_cores),
        capacity: args.capacity,
    })
    .context("cannot start the target")?;
    eprintln!(
        "headroom target listening on {scheme}://{} (Ctrl-C to stop)",
        running.addr()
    );
    let rt = tokio::runtime::Builder::new_current_thread().build()?;
    rt.block_on(shutdown.cancelled());
    running.stop();
    Ok(ExitCode::SUCCESS)
}
