//! Opening an HTTP/2 connection: TCP (with `TCP_NODELAY`), TLS with ALPN `h2` for https
//! (prior knowledge over cleartext), then hyper's handshake; the connection is driven by a
//! task on the worker's own runtime.

use super::Body;
use crate::engine::classify;
use crate::engine::job::Failure;
use crate::engine::spec::{ConnSpec, Endpoint};
use crate::sample::{ErrorKind, Opened};
use hyper::client::conn::http2::{self, SendRequest};
use hyper_util::rt::TokioIo;
use std::future::Future;
use std::time::Instant;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

/// Runs hyper's connection tasks on the worker's own (current-thread) runtime.
#[derive(Clone, Copy)]
struct WorkerExec;

impl<F> hyper::rt::Executor<F> for WorkerExec
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn execute(&self, fut: F) {
        tokio::spawn(fut);
    }
}

/// Opens one HTTP/2 connection to `endpoint` within the connect timeout.
pub async fn open(
    endpoint: &Endpoint,
    conn: &ConnSpec,
) -> Result<(SendRequest<Body>, Opened), Failure> {
    match tokio::time::timeout(conn.connect_timeout, open_inner(endpoint, conn)).await {
        Ok(r) => r,
        Err(_) => Err(ErrorKind::ConnectTimeout.into()),
    }
}

async fn open_inner(
    endpoint: &Endpoint,
    conn: &ConnSpec,
) -> Result<(SendRequest<Body>, Opened), Failure> {
    let io = |e: std::io::Error| Failure::from(classify::io_error(&e));
    let start = Instant::now();
    let tcp = TcpStream::connect(endpoint.addr).await.map_err(io)?;
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

async fn handshake<T>(io: T, max_header: usize) -> Result<SendRequest<Body>, Failure>
where
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (sender, connection) = http2::Builder::new(WorkerExec)
        .max_header_list_size(u32::try_from(max_header).unwrap_or(u32::MAX))
        .handshake(TokioIo::new(io))
        .await
        .map_err(|e| Failure::from(classify::hyper_error(&e)))?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(sender)
}
