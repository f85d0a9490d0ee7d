//! Why a run could not start, or broke off.

use crate::sample::ErrorKind;
use std::net::SocketAddr;

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The host name does not resolve.
    #[error("cannot resolve {host}: {reason}")]
    Resolve {
        /// The host.
        host: String,
        /// The resolver's answer.
        reason: String,
    },
    /// The preflight connection failed: the cause, and what to do about it.
    #[error("cannot connect to {url} ({addr}): {kind}{}", detail.as_deref().map(|d| format!("; {d}")).unwrap_or_default())]
    Unreachable {
        /// The target URL.
        url: String,
        /// The address tried.
        addr: SocketAddr,
        /// What went wrong.
        kind: ErrorKind,
        /// What makes it specific (what the certificate is valid for, which alert came).
        detail: Option<String>,
    },
    /// The TLS settings cannot be used.
    #[error(transparent)]
    Tls(#[from] super::tls::TlsError),
    /// The request cannot be built.
    #[error("cannot build the request: {0}")]
    Request(String),
    /// The run would need more connections than the process may hold descriptors for.
    #[error("the run needs {needed} connections ({wanted}), but this process may open {open_files} files (ulimit -n) and keeps {reserved} for itself; {advice}")]
    Descriptors {
        /// What asks for them ("30000 users over HTTP/1.1").
        wanted: String,
        /// Connections it would open.
        needed: u64,
        /// The open-files limit in force.
        open_files: u64,
        /// Descriptors kept for other things than connections.
        reserved: u64,
        /// What to change.
        advice: String,
    },
    /// The operating system refused a thread or event loop.
    #[error("cannot start the engine: {0}")]
    Io(#[from] std::io::Error),
    /// A worker failed mid-run: a bug in headroom. The intervals already stored are kept.
    #[error("an engine worker failed mid-run ({0}); this is a bug in headroom, please report it")]
    Worker(String),
}
