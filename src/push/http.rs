//! A small blocking HTTP/1.1 POST over `std::net::TcpStream`, for the live outputs.
//!
//! Why not hyper: the outputs send one batch a second from a thread of their own, to a
//! metrics backend that is usually on the same machine or network (plain `http://`); a
//! runtime and a connection pool would buy nothing there. TLS to the backend is not
//! supported (an `https://` URL is refused when the run starts, saying so).

use crate::plan::{Scheme, Target};
use crate::store::DropReason;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// Longest a connection may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);
/// Longest one send may take, answer included.
const SEND_TIMEOUT: Duration = Duration::from_secs(5);
/// Largest answer read: backends answer a write with a status and a short message.
const MAX_ANSWER: u64 = 64 * 1024;

/// Where a live output writes: a plain-HTTP URL, checked when the run starts.
#[derive(Debug, Clone)]
pub struct Endpoint {
    target: Target,
}

impl Endpoint {
    /// Parses `url`; only `http://` is taken (see the module docs).
    pub fn parse(url: &str) -> Result<Endpoint, String> {
        let target = Target::parse(url).map_err(|e| e.to_string())?;
        if target.scheme != Scheme::Http {
            return Err(format!(
                "{url}: only http:// is supported for live outputs (TLS to the metrics backend is not); use a plain-HTTP listener or a local proxy"
            ));
        }
        Ok(Endpoint { target })
    }

    /// The URL as given, without user info.
    pub fn url(&self) -> &str {
        &self.target.url
    }

    /// Path and query, at least `/`.
    pub fn path_and_query(&self) -> &str {
        &self.target.path_and_query
    }
}

/// Why a send failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendFailure {
    /// The reason recorded.
    pub reason: DropReason,
    /// The status, when the backend answered.
    pub status: Option<u16>,
}

impl SendFailure {
    fn io(e: &std::io::Error) -> SendFailure {
        use std::io::ErrorKind::*;
        let reason = match e.kind() {
            ConnectionRefused => DropReason::Refused,
            TimedOut | WouldBlock => DropReason::Timeout,
            _ => DropReason::Unreachable,
        };
        SendFailure {
            reason,
            status: None,
        }
    }

    /// Whether sending the same batch again may succeed (a 4xx would be refused again).
    pub fn retryable(&self) -> bool {
        self.reason != DropReason::Rejected
    }
}

/// POSTs `body` to `endpoint` with `headers`, finishing by `deadline` at the latest;
/// `Ok` when the backend answered 2xx.
pub fn post(
    endpoint: &Endpoint,
    headers: &[(&str, String)],
    body: &[u8],
    deadline: Instant,
) -> Result<(), SendFailure> {
    let left = |cap: Duration| -> Result<Duration, SendFailure> {
        let left = deadline.saturating_duration_since(Instant::now()).min(cap);
        if left.is_zero() {
            Err(SendFailure {
                reason: DropReason::Timeout,
                status: None,
            })
        } else {
            Ok(left)
        }
    };
    let t = &endpoint.target;
    let addr = (t.host.as_str(), t.port)
        .to_socket_addrs()
        .map_err(|e| SendFailure::io(&e))?
        .next()
        .ok_or(SendFailure {
            reason: DropReason::Unreachable,
            status: None,
        })?;
    let mut stream = TcpStream::connect_timeout(&addr, left(CONNECT_TIMEOUT)?)
        .map_err(|e| SendFailure::io(&e))?;
    let io = left(SEND_TIMEOUT)?;
    let _ = stream.set_write_timeout(Some(io));
    let _ = stream.set_read_timeout(Some(io));
    let _ = stream.set_nodelay(true);
    let mut head = format!(
        "POST {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: headroom/{}\r\nContent-Length: {}\r\nConnection: close\r\n",
        t.path_and_query,
        t.authority,
        env!("CARGO_PKG_VERSION"),
        body.len()
    );
    for (name, value) in headers {
        head.push_str(name);
        head.push_str(": ");
        head.push_str(value);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    stream
        .write_all(head.as_bytes())
        .and_then(|()| stream.write_all(body))
        .map_err(|e| SendFailure::io(&e))?;
    // `Connection: close`: the answer ends when the backend closes; its head is all we need.
    let mut raw = Vec::new();
    let mut reader = (&mut stream).take(MAX_ANSWER);
    let mut buf = [0u8; 4096];
    let status = loop {
        let n = reader.read(&mut buf).map_err(|e| SendFailure::io(&e))?;
        raw.extend_from_slice(&buf[..n]);
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut response = httparse::Response::new(&mut headers);
        match response.parse(&raw) {
            Ok(httparse::Status::Complete(_)) => break response.code.unwrap_or(0),
            Ok(httparse::Status::Partial) if n > 0 => continue,
            _ => {
                return Err(SendFailure {
                    reason: DropReason::Unreachable,
                    status: None,
                })
            }
        }
    };
    match status {
        200..=299 => Ok(()),
        400..=499 => Err(SendFailure {
            reason: DropReason::Rejected,
            status: Some(status),
        }),
        _ => Err(SendFailure {
            reason: DropReason::ServerError,
            status: Some(status),
        }),
    }
}
