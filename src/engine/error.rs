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
    /// The operating system refused a thread or event loop.
    #[error("cannot start the engine: {0}")]
    Io(#[from] std::io::Error),
    /// A worker failed mid-run: a bug in headroom. The intervals already stored are kept.
    #[error("an engine worker failed mid-run ({0}); this is a bug in headroom, please report it")]
    Worker(String),
}
