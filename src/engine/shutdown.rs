//! Stopping a run early (Ctrl-C), passed in rather than global.

use tokio::sync::watch;

/// The side that asks a run to stop.
#[derive(Debug, Clone)]
pub struct ShutdownHandle(std::sync::Arc<watch::Sender<bool>>);

/// The side a run listens on; cheap to clone into every worker.
#[derive(Debug, Clone)]
pub struct Shutdown {
    own: watch::Receiver<bool>,
    /// The listener this one was derived from: its stop (Ctrl-C) stops this one too.
    parent: Option<watch::Receiver<bool>>,
}

/// A connected handle and listener.
pub fn shutdown_pair() -> (ShutdownHandle, Shutdown) {
    let (tx, rx) = watch::channel(false);
    (
        ShutdownHandle(std::sync::Arc::new(tx)),
        Shutdown {
            own: rx,
            parent: None,
        },
    )
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

    /// A listener that stops when this one does or when its own handle is triggered (a
    /// sweep stopping itself early, while Ctrl-C still works).
    pub fn with_own_stop(&self) -> (ShutdownHandle, Shutdown) {
        let (handle, mut child) = shutdown_pair();
        child.parent = Some(self.own.clone());
        (handle, child)
    }

    /// True once a stop was asked for.
    pub fn is_triggered(&self) -> bool {
        *self.own.borrow() || self.parent.as_ref().is_some_and(|p| *p.borrow())
    }

    /// Completes when a stop is asked for; pends forever if the handles are dropped unused.
    pub async fn wait(&mut self) {
        let mut parent = self.parent.clone();
        tokio::select! {
            () = wait_on(&mut self.own) => {}
            () = async {
                match parent.as_mut() {
                    Some(p) => wait_on(p).await,
                    None => std::future::pending().await,
                }
            } => {}
        }
    }
}

async fn wait_on(rx: &mut watch::Receiver<bool>) {
    loop {
        if *rx.borrow_and_update() {
            return;
        }
        if rx.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}
