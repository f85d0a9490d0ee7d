//! The `headroom` binary: parses arguments, wires Ctrl-C and the stop signals, maps errors
//! to exit codes.

// First: its macros shadow the standard printing macros in every module after it.
#[macro_use]
#[path = "say.rs"]
mod say;
mod cli;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let shutdown = headroom::engine::CancellationToken::new();
    let handle = shutdown.clone();
    listen_for_stop_signals(handle);
    match cli::dispatch(cli, shutdown) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("headroom: {e:#}");
            cli::exit::code(cli::exit::ERROR)
        }
    }
}

/// The first SIGINT (Ctrl-C), SIGTERM (what `timeout`, CI runners, Kubernetes and systemd
/// send) or SIGHUP (a closed terminal) stops the run gracefully: its results are kept, its
/// report printed and `end.json` written. A second signal exits at once, which still leaves
/// every interval already written readable.
fn listen_for_stop_signals(handle: headroom::engine::CancellationToken) {
    use std::sync::atomic::Ordering;
    use tokio::signal::unix::{signal, SignalKind};
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
                let (Ok(mut int), Ok(mut term), Ok(mut hup)) = (
                    signal(SignalKind::interrupt()),
                    signal(SignalKind::terminate()),
                    signal(SignalKind::hangup()),
                ) else {
                    eprintln!("headroom: cannot listen for signals; a signal will end runs without their report");
                    return;
                };
                let mut first = true;
                loop {
                    let (raw, name) = tokio::select! {
                        _ = int.recv() => (2, "Ctrl-C"),
                        _ = term.recv() => (15, "SIGTERM"),
                        _ = hup.recv() => (1, "SIGHUP"),
                    };
                    if first {
                        first = false;
                        cli::STOP_SIGNAL.store(raw, Ordering::Relaxed);
                        eprintln!("\nheadroom: stopping on {name} (send it again to quit at once)");
                        handle.cancel();
                    } else {
                        std::process::exit(i32::from(cli::exit::SIGNAL_BASE) + raw);
                    }
                }
            });
        });
}
