//! The `headroom` binary: parses arguments, wires Ctrl-C, maps errors to exit codes.

mod cli;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let shutdown = headroom::engine::CancellationToken::new();
    let handle = shutdown.clone();
    listen_for_ctrl_c(handle);
    match cli::dispatch(cli, shutdown) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("headroom: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// First Ctrl-C stops the run gracefully (its results are kept); a second one exits at once,
/// which still leaves every interval already written readable.
fn listen_for_ctrl_c(handle: headroom::engine::CancellationToken) {
    let _ = std::thread::Builder::new()
        .name("headroom-signals".into())
        .spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_io()
                .build()
            else {
                return;
            };
            rt.block_on(async {
                if tokio::signal::ctrl_c().await.is_ok() {
                    eprintln!("\nheadroom: stopping (Ctrl-C again to quit at once)");
                    handle.cancel();
                }
                if tokio::signal::ctrl_c().await.is_ok() {
                    std::process::exit(130);
                }
            });
        });
}
