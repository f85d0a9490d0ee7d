//! Commands that hold no run to keep (`import`, `run --check`, `kube`) stop at the first stop
//! signal, wherever they are: their work goes on a thread of its own while the command's
//! thread waits for it or for the signal. A read that blocks or a long parse then cannot keep
//! the process alive: the command returns, and the process ends with it.
//!
//! What must be written whole is written while the work holds the [`Gate`]: a stop waits for
//! it to be let go (the work checks the signal between files, so that is short), so a signal
//! never leaves half of it.

use headroom::engine::CancellationToken;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// Held by the work while it writes what must be whole.
#[derive(Debug, Clone, Default)]
pub struct Gate(Arc<Mutex<()>>);

impl Gate {
    /// Holds the gate until the guard is dropped.
    pub fn hold(&self) -> MutexGuard<'_, ()> {
        // A panic while held poisons it; the files are then as the panic left them.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Runs `work` to its end, or until the first stop signal (then, once the gate is let go,
/// prints `stopped` and returns the stopped status: 130 after Ctrl-C, 143 after SIGTERM).
pub fn run(
    shutdown: &CancellationToken,
    stopped: &str,
    work: impl FnOnce(Gate) -> anyhow::Result<ExitCode> + Send + 'static,
) -> anyhow::Result<ExitCode> {
    let gate = Gate::default();
    let given = gate.clone();
    let worker = std::thread::Builder::new()
        .name("headroom-work".into())
        // The main thread's stack (8 MiB), which the work had before it moved here: parsers
        // recurse as deep as their limits let them.
        .stack_size(8 << 20)
        .spawn(move || work(given))?;
    loop {
        if worker.is_finished() {
            return match worker.join() {
                Ok(result) => result,
                Err(panic) => std::panic::resume_unwind(panic),
            };
        }
        if shutdown.is_cancelled() {
            drop(gate.hold());
            // It may have finished its work meanwhile: then what it did stands. Otherwise
            // (still working, or given up on seeing the signal) it was stopped.
            if worker.is_finished() {
                if let Ok(Ok(code)) = worker.join() {
                    return Ok(code);
                }
            }
            eprintln!("headroom: {stopped}");
            return Ok(super::stopped_code());
        }
        // The signal comes on another thread; a twentieth of a second is soon enough to
        // notice it, and costs nothing while waiting.
        std::thread::sleep(Duration::from_millis(20));
    }
}
