//! Stopping a run early (Ctrl-C), passed in rather than global.

use tokio::sync::watch;

/// The side that asks a run to stop.
#[derive(Debug, Clone)]
pub struct ShutdownHandle(std::sync::Arc<watch::Sender<bool>>);

/// The side a run listens on; cheap to clone into every worker.
#[derive(Debug, Clone)]
pub struct Shutdown(watch::Receiver<bool>);

/// A connected handle and listener.
pub fn shutdown_pair() -> (ShutdownHandle, Shutdown) {
    let (tx, rx) = watch::channel(false);
    (ShutdownHandle(std::sync::Arc::new(tx)), Shutdown(rx))
}

impl ShutdownHandle {
    /// Asks the run to stop sending and wrap up.
    pub fn trigger(&self) {
        let _ = self.0.send(true);
    }
}

impl Shutdown {
    /// A listener that never fires, for runs nobody interrupts.
    pub fn never() -> Shutdown {
        let (handle, rx) = shutdown_pair();
        // Keep the sender alive forever so `wait` pends rather than firing on close.
        std::mem::forget(handle);
        rx
    }

    /// True once a stop was asked for.
    pub fn is_triggered(&self) -> bool {
        *self.0.borrow()
    }

    /// Completes when a stop is asked for; pends forever if the handle is dropped unused.
    pub async fn wait(&mut self) {
        loop {
            if *self.0.borrow_and_update() {
                return;
            }
            if self.0.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }
}
