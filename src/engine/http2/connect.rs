//! Opening an HTTP/2 connection: TCP (with `TCP_NODELAY`), TLS with ALPN `h2` for https
//! (prior knowledge over cleartext), then the HTTP/2 handshake; the connection is driven by
//! a task on the worker's own runtime.

use super::Sender;
use crate::engine::classify;
use crate::engine::job::Failure;
use crate::engine::spec::{ConnSpec, Endpoint};
use crate::sample::{ErrorKind, Opened};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

/// Flow-control windows, as hyper's client sets them: large enough that a response body is
/// never held back by the generator's window on loopback.
const STREAM_WINDOW: u32 = 2 * 1024 * 1024;
/// The connection's window.
const CONNECTION_WINDOW: u32 = 5 * 1024 * 1024;

/// Opens one HTTP/2 connection to `endpoint` within the connect timeout.
pub async fn open(endpoint: &Endpoint, conn: &ConnSpec) -> Result<(Sender, Opened), Failure> {
    match tokio::time::timeout(conn.connect_timeout, open_inner(endpoint, conn)).await {
        Ok(r) => r,
        Err(_) => Err(ErrorKind::ConnectTimeout.into()),
    }
}

async fn open_inner(endpoint: &Endpoint, conn: &ConnSpec) -> Result<(Sender, Opened), Failure> {
    let io = |e: std::io::Error| Failure::from(classify::io_error(&e));
    let start = Instant::now();
    let tcp = TcpStream::connect(endpoint.addr).await.map_err(|e| {
        // A timeout there is the connect's own.
        Failure::from(match classify::io_error(&e) {
            ErrorKind::Timeout => ErrorKind::ConnectTimeout,
            kind => kind,
        })
    })?;
    // Small requests must not wait for Nagle.
    let _ = tcp.set_nodelay(true);
    let tcp_time = start.elapsed();
    let max_header = conn.max_header_bytes;
    match &endpoint.tls {
        None => {
            let sender = handshake(tcp, max_header).await?;
            Ok((
                sender,
                Opened {
                    tcp: tcp_time,
                    tls: None,
                },
            ))
        }
        Some((config, name)) => {
            let t = Instant::now();
            let tls = TlsConnector::from(config.clone())
                .connect(name.clone(), tcp)
                .await
                .map_err(io)?;
            let tls_time = t.elapsed();
            if tls.get_ref().1.alpn_protocol() != Some(b"h2") {
                // The server did not agree to h2: the request cannot be made as asked.
                return Err(ErrorKind::TlsNoAlpn.into());
            }
            let sender = handshake(tls, max_header).await?;
            Ok((
                sender,
                Opened {
                    tcp: tcp_time,
                    tls: Some(tls_time),
                },
            ))
        }
    }
}

async fn handshake<T>(io: T, max_header: usize) -> Result<Sender, Failure>
where
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (send, connection) = h2::client::Builder::new()
        .max_header_list_size(u32::try_from(max_header).unwrap_or(u32::MAX))
        .initial_window_size(STREAM_WINDOW)
        .initial_connection_window_size(CONNECTION_WINDOW)
        .enable_push(false)
        .handshake::<T, bytes::Bytes>(io)
        .await
        .map_err(|e| Failure::from(classify::h2_error(&e)))?;
    let closed = Arc::new(AtomicBool::new(false));
    let gone = closed.clone();
    tokio::spawn(async move {
        let _ = connection.await;
        gone.store(true, Ordering::Relaxed);
    });
    Ok(Sender { send, closed })
}
