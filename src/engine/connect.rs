//! Opens connections: TCP (with `TCP_NODELAY`) and, for https, the TLS handshake.

use super::classify;
use super::h1::dial::DialTarget;
use crate::plan::Scheme;
use crate::sample::ErrorKind;
use rustls::pki_types::ServerName;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

/// A connected byte stream, plain or TLS.
pub enum Stream {
    /// Cleartext TCP.
    Plain(TcpStream),
    /// TLS over TCP.
    Tls(Box<TlsStream<TcpStream>>),
}

impl Stream {
    /// The ALPN protocol the server chose, if any.
    pub fn alpn(&self) -> Option<&[u8]> {
        match self {
            Stream::Plain(_) => None,
            Stream::Tls(s) => s.get_ref().1.alpn_protocol(),
        }
    }
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Stream::Plain(s) => s.is_write_vectored(),
            Stream::Tls(s) => s.is_write_vectored(),
        }
    }
}

/// How long the parts of opening a connection took.
#[derive(Debug, Clone, Copy, Default)]
pub struct ConnectTimings {
    /// TCP connect.
    pub tcp: Duration,
    /// TLS handshake, for https.
    pub tls: Option<Duration>,
}

/// Everything needed to open a connection to the target; shared by a worker's lanes.
#[derive(Clone)]
pub struct Connector {
    addr: SocketAddr,
    tls: Option<(Arc<rustls::ClientConfig>, ServerName<'static>)>,
    timeout: Duration,
}

impl Connector {
    /// A connector to `addr`, with TLS when `scheme` is https.
    pub fn new(
        addr: SocketAddr,
        scheme: Scheme,
        tls: Option<(Arc<rustls::ClientConfig>, ServerName<'static>)>,
        timeout: Duration,
    ) -> Self {
        let tls = match scheme {
            Scheme::Https => tls,
            Scheme::Http => None,
        };
        Connector { addr, tls, timeout }
    }

    /// The same target, for opening connections without tokio.
    pub fn dial_target(&self, max_head: usize) -> DialTarget {
        DialTarget {
            addr: self.addr,
            tls: self.tls.clone(),
            max_head,
        }
    }

    /// How long opening a connection may take.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Opens one connection within the connect timeout.
    pub async fn connect(&self) -> Result<(Stream, ConnectTimings), ErrorKind> {
        match tokio::time::timeout(self.timeout, self.connect_inner()).await {
            Ok(r) => r,
            Err(_) => Err(ErrorKind::ConnectTimeout),
        }
    }

    async fn connect_inner(&self) -> Result<(Stream, ConnectTimings), ErrorKind> {
        let start = Instant::now();
        let tcp = TcpStream::connect(self.addr)
            .await
            .map_err(|e| classify::io_error(&e))?;
        // Small requests must not wait for Nagle.
        let _ = tcp.set_nodelay(true);
        let tcp_time = start.elapsed();
        match &self.tls {
            None => Ok((
                Stream::Plain(tcp),
                ConnectTimings {
                    tcp: tcp_time,
                    tls: None,
                },
            )),
            Some((config, name)) => {
                let t = Instant::now();
                let tls = TlsConnector::from(config.clone())
                    .connect(name.clone(), tcp)
                    .await
                    .map_err(|e| classify::io_error(&e))?;
                Ok((
                    Stream::Tls(Box::new(tls)),
                    ConnectTimings {
                        tcp: tcp_time,
                        tls: Some(t.elapsed()),
                    },
                ))
            }
        }
    }
}
