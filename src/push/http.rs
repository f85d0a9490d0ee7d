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
/// Body bytes read from a failed answer to find its first line.
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
    let (status, head_len, chunked) = loop {
        let n = reader.read(&mut buf).map_err(|e| SendFailure::io(&e))?;
        raw.extend_from_slice(&buf[..n]);
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut response = httparse::Response::new(&mut headers);
        match response.parse(&raw) {
            Ok(httparse::Status::Complete(len)) => {
                let chunked = response.headers.iter().any(|h| {
                    h.name.eq_ignore_ascii_case("transfer-encoding")
                        && String::from_utf8_lossy(h.value)
                            .to_ascii_lowercase()
                            .contains("chunked")
                });
                break (response.code.unwrap_or(0), len, chunked);
            }
            Ok(httparse::Status::Partial) if n > 0 => continue,
            _ => {
                return Err(SendFailure {
                    reason: DropReason::Unreachable,
                    status: None,
                    answer: None,
                })
            }
        }
    };
    let reason = match status {
        200..=299 => return Ok(()),
        400..=499 => DropReason::Rejected,
        _ => DropReason::ServerError,
    };
    // The body says why (Prometheus: "native histograms are disabled"); read a little of it,
    // until the backend closes or the excerpt's worth has come. A read error keeps what came.
    while raw.len() - head_len < ANSWER_BODY {
        match reader.read(&mut buf) {
            Ok(n) if n > 0 => raw.extend_from_slice(&buf[..n]),
            _ => break,
        }
    }
    let mut answer = &raw[head_len..];
    if chunked {
        // Skip the first chunk's size line.
        let at = answer
            .iter()
            .position(|&b| b == b'\n')
            .map_or(answer.len(), |i| i + 1);
        answer = &answer[at..];
    }
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
        answer: answer_excerpt(answer, &sent),
    })
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
