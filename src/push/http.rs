//! A small blocking HTTP/1.1 POST over `std::net::TcpStream`, for the live outputs.
//!
//! Why not hyper: the outputs send one batch a second from a thread of their own, to a
//! metrics backend that is usually on the same machine or network (plain `http://`); a
//! runtime and a connection pool would buy nothing there. TLS to the backend is not
//! supported (an `https://` URL is refused when the run starts, saying so).

use crate::engine::http1::response::ResponseReader;
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
const MAX_ANSWER: usize = 64 * 1024;

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
                "{}: only http:// is supported for live outputs (TLS to the metrics backend is not); use a plain-HTTP listener or a local proxy",
                crate::plan::secret_names::redact_url(url)
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

/// Longest excerpt of a failed answer's body kept for the report.
const ANSWER_EXCERPT: usize = 200;
/// Body bytes of a failed answer searched for its first line.
const ANSWER_BODY: usize = 1024;
/// A run of this many bytes of what was sent, found in the answer, is an echo: cut there.
const ECHO: usize = 12;

/// Why a send failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendFailure {
    /// The reason recorded.
    pub reason: DropReason,
    /// The status, when the backend answered.
    pub status: Option<u16>,
    /// The first line of the answer's body, cleaned (see [`answer_excerpt`]).
    pub answer: Option<String>,
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
            answer: None,
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
                answer: None,
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
            answer: None,
        })?;
    let mut stream = TcpStream::connect_timeout(&addr, left(CONNECT_TIMEOUT)?)
        .map_err(|e| SendFailure::io(&e))?;
    let io = left(SEND_TIMEOUT)?;
    let until = Instant::now() + io;
    let _ = stream.set_write_timeout(Some(io));
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
    let (status, answer) = read_answer(&mut stream, until)?;
    let reason = match status {
        200..=299 => return Ok(()),
        400..=499 => DropReason::Rejected,
        _ => DropReason::ServerError,
    };
    // What could carry a secret or the user's data: the path and query (InfluxDB 1.x takes
    // `u`/`p` there), each header's value (a token) and the body; not the header names,
    // which a backend's message may well use ("authorization failed").
    let sent: Vec<&[u8]> = std::iter::once(t.path_and_query.as_bytes())
        .chain(headers.iter().map(|(_, v)| v.as_bytes()))
        .chain(std::iter::once(body))
        .collect();
    Err(SendFailure {
        reason,
        status: Some(status),
        answer: answer_excerpt(&answer, &sent),
    })
}

/// Reads the backend's answer: its status and, for a failure, its body (the first
/// [`MAX_ANSWER`] bytes of the exchange at most). The answer ends where its framing says
/// (Content-Length, chunked) or at the close, read by the engine's own HTTP/1.1 reader: a
/// backend that keeps the connection open after a whole answer (`Connection: close`
/// notwithstanding) must not cost each send the read timeout. Once the status is known, a
/// body cut short, too long or too slow keeps what came: the status is what matters. The
/// whole answer must come by `until` (a backend dripping a byte at a time included).
fn read_answer(stream: &mut TcpStream, until: Instant) -> Result<(u16, Vec<u8>), SendFailure> {
    let broken = SendFailure {
        reason: DropReason::Unreachable,
        status: None,
        answer: None,
    };
    let mut reader = ResponseReader::new(false, MAX_ANSWER).keeping();
    let mut pending = Vec::new();
    let mut read = 0;
    let mut buf = [0u8; 4096];
    let status = loop {
        let left = until.saturating_duration_since(Instant::now());
        let got = if left.is_zero() {
            Err(std::io::ErrorKind::TimedOut.into())
        } else {
            stream
                .set_read_timeout(Some(left))
                .and_then(|()| stream.read(&mut buf))
        };
        let n = match got {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => match reader.status() {
                Some(status) => break status,
                None => return Err(SendFailure::io(&e)),
            },
        };
        if n == 0 {
            // Closed: the end of a body that runs to the close, or an answer cut short.
            match (reader.status(), reader.eof()) {
                (_, Ok(complete)) => break complete.status,
                (Some(status), Err(_)) => break status,
                (None, Err(_)) => return Err(broken),
            }
        }
        read += n;
        pending.extend_from_slice(&buf[..n]);
        let fed = match reader.feed(&pending) {
            Ok(fed) => fed,
            Err(_) => match reader.status() {
                Some(status) => break status,
                None => return Err(broken),
            },
        };
        pending.drain(..fed.consumed);
        if let Some(complete) = fed.complete {
            break complete.status;
        }
        match reader.status() {
            // A success needs no body: the connection is closed unread.
            Some(status @ 200..=299) => return Ok((status, Vec::new())),
            Some(status) if read >= MAX_ANSWER => break status,
            Some(_) => {}
            None if read >= MAX_ANSWER => return Err(broken),
            None => {}
        }
    };
    let body = reader.take_kept().map(|k| k.body).unwrap_or_default();
    Ok((status, body))
}

/// The first line of `answer`, control characters removed, at most [`ANSWER_EXCERPT`] bytes,
/// and cut where it starts repeating any of `sent` (a backend quoting back a header, a token
/// or the points it could not parse): the report and `outputs.json` never echo what headroom
/// sent. `None` when nothing is left.
pub fn answer_excerpt(answer: &[u8], sent: &[&[u8]]) -> Option<String> {
    let first = answer.split(|&b| b == b'\n').next().unwrap_or_default();
    let first = &first[..first.len().min(ANSWER_BODY)];
    let echoed = |at: usize| {
        first.get(at..at + ECHO).is_some_and(|needle| {
            sent.iter()
                .any(|s| s.windows(ECHO).any(|window| window == needle))
        })
    };
    let end = (0..first.len())
        .find(|&at| echoed(at))
        .unwrap_or(first.len());
    let cut = end < first.len();
    let mut text: String = String::from_utf8_lossy(&first[..end])
        .chars()
        .filter(|c| !c.is_control())
        .collect();
    let mut limit = ANSWER_EXCERPT.min(text.len());
    while !text.is_char_boundary(limit) {
        limit -= 1;
    }
    let cut = cut || limit < text.len();
    text.truncate(limit);
    let text = text.trim();
    match (text.is_empty(), cut) {
        (true, _) => None,
        (false, true) => Some(format!("{text}…")),
        (false, false) => Some(text.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader};
    use std::net::TcpListener;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    /// A backend answering every request with `answer` and keeping each connection open
    /// until the client closes it, whatever the request asked; returns its URL and how many
    /// requests it answered.
    fn keeping_open(answer: &'static [u8]) -> (String, Arc<AtomicU64>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/write", listener.local_addr().unwrap());
        let answered = Arc::new(AtomicU64::new(0));
        let count = answered.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { return };
                let count = count.clone();
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(conn);
                    loop {
                        let mut length = 0usize;
                        let mut line = String::new();
                        loop {
                            line.clear();
                            match reader.read_line(&mut line) {
                                Ok(0) | Err(_) => return,
                                Ok(_) if line == "\r\n" => break,
                                Ok(_) => {}
                            }
                            let lower = line.to_ascii_lowercase();
                            if let Some(v) = lower.strip_prefix("content-length:") {
                                length = v.trim().parse().unwrap();
                            }
                        }
                        let mut body = vec![0; length];
                        if reader.read_exact(&mut body).is_err() {
                            return;
                        }
                        // Counted before it is answered, so the count is whole once the
                        // client has its answer.
                        count.fetch_add(1, Ordering::Relaxed);
                        if reader.get_mut().write_all(answer).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        (url, answered)
    }

    #[test]
    fn a_whole_answer_ends_the_read_though_the_backend_keeps_the_connection() {
        // Found trying a backend that keeps connections alive: each 500 waited out the read
        // timeout (5 s), Content-Length ignored. Twenty sends under one 20 s deadline: the
        // old reader gave up on the fifth.
        for answer in [
            &b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\nbusy"[..],
            b"HTTP/1.1 500 Internal Server Error\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nbu\r\n2\r\nsy\r\n0\r\n\r\n",
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy",
        ] {
            let (url, answered) = keeping_open(answer);
            let endpoint = Endpoint::parse(&url).unwrap();
            let deadline = Instant::now() + Duration::from_secs(20);
            for i in 0..20 {
                let failure = post(&endpoint, &[], b"points", deadline).unwrap_err();
                assert_eq!(failure.reason, DropReason::ServerError, "send {i}: {failure:?}");
                assert!(matches!(failure.status, Some(500 | 503)), "{failure:?}");
                assert_eq!(failure.answer.as_deref(), Some("busy"), "{failure:?}");
            }
            assert_eq!(answered.load(Ordering::Relaxed), 20);
        }
        let (url, _) = keeping_open(b"HTTP/1.1 204 No Content\r\n\r\n");
        let endpoint = Endpoint::parse(&url).unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        for _ in 0..20 {
            assert_eq!(post(&endpoint, &[], b"points", deadline), Ok(()));
        }
    }

    #[test]
    fn an_answer_without_an_end_keeps_its_status_at_the_deadline() {
        // No length, no chunks, never closed: the body runs to a close that never comes.
        // The send ends at its deadline with the status and what came of the body.
        let (url, _) = keeping_open(b"HTTP/1.1 500 Internal Server Error\r\n\r\nbusy");
        let endpoint = Endpoint::parse(&url).unwrap();
        let failure = post(
            &endpoint,
            &[],
            b"points",
            Instant::now() + Duration::from_secs(2),
        )
        .unwrap_err();
        assert_eq!(
            (failure.reason, failure.status, failure.answer.as_deref()),
            (DropReason::ServerError, Some(500), Some("busy"))
        );
    }

    #[test]
    fn an_answer_is_its_first_line_cleaned_and_bounded() {
        assert_eq!(
            answer_excerpt(b"native histograms are disabled\nmore\n", &[]).as_deref(),
            Some("native histograms are disabled")
        );
        assert_eq!(
            answer_excerpt(b"bad\x1b[31m thing\r\n", &[]).as_deref(),
            Some("bad[31m thing")
        );
        let long = "x".repeat(500);
        let got = answer_excerpt(long.as_bytes(), &[]).unwrap();
        assert_eq!(got, format!("{}…", "x".repeat(ANSWER_EXCERPT)));
        assert_eq!(answer_excerpt(b"\n", &[]), None);
        assert_eq!(answer_excerpt(b"", &[]), None);
    }

    #[test]
    fn an_answer_never_echoes_what_was_sent() {
        let head = b"Token s3cr3t-t0ken-value";
        let got = answer_excerpt(
            b"invalid token: Token s3cr3t-t0ken-value was not accepted",
            &[head, b"points"],
        )
        .unwrap();
        assert!(!got.contains("s3cr3t"), "{got}");
        assert_eq!(got, "invalid token:…");
        // Words a header's name shares with the message are kept.
        assert_eq!(
            answer_excerpt(
                b"{\"error\":\"authorization failed\"}",
                &[b"Token abcdefghijklmnop"]
            )
            .as_deref(),
            Some("{\"error\":\"authorization failed\"}")
        );
        let points = b"http_req,name=get count=3i 1700000000000000000\n";
        let got = answer_excerpt(
            b"{\"error\":\"unable to parse 'http_req,name=get count=3i 17': bad\"}",
            &[b"head", points],
        )
        .unwrap();
        assert!(!got.contains("count=3i"), "{got}");
    }
}
