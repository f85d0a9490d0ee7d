//! The built-in target: a small HTTP/1.1 + HTTP/2 server, optionally TLS with client
//! certificates, with configurable delays. For demos and fast self-tests; integration tests
//! of real behaviour use real servers (nginx).
//!
//! Routes: `/delay/{ms}` answers after `ms` milliseconds, `/status/{code}` answers with that
//! status, `/bytes/{n}` with an `n`-byte body; anything else answers `ok` after the
//! configured default latency.

mod routes;
mod tls;

pub use routes::Routes;

use crate::engine::CancellationToken;
use hyper_util::rt::{TokioExecutor, TokioIo};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// TLS settings of the target.
#[derive(Debug, Clone)]
pub struct TargetTls {
    /// PEM certificate chain.
    pub cert: PathBuf,
    /// PEM private key.
    pub key: PathBuf,
    /// When set, clients must present a certificate signed by this CA bundle.
    pub client_ca: Option<PathBuf>,
}

/// How the target behaves.
#[derive(Debug, Clone)]
pub struct TargetConfig {
    /// Address to listen on (port 0 picks a free one).
    pub listen: SocketAddr,
    /// TLS, when set.
    pub tls: Option<TargetTls>,
    /// Delay before answering routes without their own delay.
    pub latency: Duration,
    /// Most requests answered per second, as by one worker serving a queue: beyond it the
    /// queue (and the latency) grows, so its capacity is known exactly.
    pub capacity: Option<f64>,
    /// Event-loop threads.
    pub threads: usize,
}

/// Why the target cannot start.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// The address cannot be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The cause.
        source: std::io::Error,
    },
    /// The TLS files cannot be used.
    #[error("{0}")]
    Tls(String),
    /// The runtime cannot start.
    #[error("cannot start the target: {0}")]
    Io(#[from] std::io::Error),
}

/// A target running on its own threads; stops when [`RunningTarget::stop`] is called or dropped.
pub struct RunningTarget {
    addr: SocketAddr,
    handle: CancellationToken,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl RunningTarget {
    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting and waits for the server thread to end.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        self.handle.cancel();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for RunningTarget {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Starts the target on background threads and returns once it is listening.
pub fn spawn(config: TargetConfig) -> Result<RunningTarget, TargetError> {
    let acceptor = config.tls.as_ref().map(tls::acceptor).transpose()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(config.threads.max(1))
        .thread_name("headroom-target")
        .enable_all()
        .build()?;
    let std_listener =
        std::net::TcpListener::bind(config.listen).map_err(|source| TargetError::Bind {
            addr: config.listen,
            source,
        })?;
    std_listener.set_nonblocking(true)?;
    let addr = std_listener.local_addr()?;
    let shutdown = CancellationToken::new();
    let handle = shutdown.clone();
    let routes = routes::Routes::new(config.latency, config.capacity);
    let thread = std::thread::Builder::new()
        .name("headroom-target-main".into())
        .spawn(move || {
            rt.block_on(async move {
                match tokio::net::TcpListener::from_std(std_listener) {
                    Ok(listener) => serve(listener, acceptor, routes, shutdown).await,
                    Err(e) => eprintln!("headroom target: {e}"),
                }
            });
            rt.shutdown_timeout(Duration::from_millis(100));
        })?;
    Ok(RunningTarget {
        addr,
        handle,
        thread: Some(thread),
    })
}

/// Serves connections from `listener` until `shutdown` fires.
pub async fn serve(
    listener: tokio::net::TcpListener,
    acceptor: Option<tokio_rustls::TlsAcceptor>,
    routes: routes::Routes,
    shutdown: CancellationToken,
) {
    let routes = Arc::new(routes);
    loop {
        let (tcp, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(c) => c,
                // EMFILE and friends: back off instead of spinning.
                Err(_) => { tokio::time::sleep(Duration::from_millis(10)).await; continue; }
            },
            _ = shutdown.cancelled() => return,
        };
        let _ = tcp.set_nodelay(true);
        let routes = routes.clone();
        let acceptor = acceptor.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let routes = routes.clone();
                async move { routes.answer(req).await }
            });
            let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            match acceptor {
                Some(acceptor) => {
                    if let Ok(tls) = acceptor.accept(tcp).await {
                        let _ = builder.serve_connection(TokioIo::new(tls), service).await;
                    }
                }
                None => {
                    let _ = builder.serve_connection(TokioIo::new(tcp), service).await;
                }
            }
        });
    }
}
