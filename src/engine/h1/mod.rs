//! HTTP/1.1 on the load path, written for cost: one task per connection, the request written
//! pre-serialized in one call, the response head parsed by `httparse` in a reused buffer, the
//! body counted and dropped. Nothing is allocated per request.
//!
//! hyper's client costs two task hops, channels and several allocations per request, which on
//! a two-core machine is CPU stolen from the server under test; HTTP/2 stays on hyper.

mod chunked;

use super::classify;
use super::connect::Stream;
use crate::sample::ErrorKind;
use chunked::Chunked;
use std::time::Instant;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Most headers a response may have before it is called hostile.
const MAX_HEADERS: usize = 128;
/// Initial read buffer; it grows up to the head limit only for unusually large heads.
const INITIAL_BUFFER: usize = 4 * 1024;

/// The parts of a response head that decide how to read the body.
struct Head {
    status: u16,
    head_len: usize,
    framing: Framing,
    keep_alive: bool,
}

#[derive(Clone, Copy)]
enum Framing {
    None,
    Length(u64),
    Chunked,
    UntilClose,
}

/// What came back from one exchange.
pub struct Response {
    /// Status code.
    pub status: u16,
    /// When the response head arrived.
    pub head_at: Instant,
    /// Body bytes received.
    pub body_bytes: u64,
}

/// One HTTP/1.1 connection.
pub struct Connection {
    stream: Stream,
    /// Responses completed on this connection so far.
    answered: u64,
    /// Response bytes read for the exchange in progress.
    received: bool,
    buf: Vec<u8>,
    /// Unconsumed bytes are `buf[start..end]`.
    start: usize,
    end: usize,
    max_head: usize,
    open: bool,
}

impl Connection {
    /// Wraps a connected stream; response heads larger than `max_head` are refused.
    pub fn new(stream: Stream, max_head: usize) -> Self {
        Connection {
            stream,
            answered: 0,
            received: false,
            buf: vec![0; INITIAL_BUFFER.min(max_head.max(1024))],
            start: 0,
            end: 0,
            max_head: max_head.max(1024),
            open: true,
        }
    }

    /// False once the server asked to close, or an exchange failed.
    pub fn is_open(&self) -> bool {
        self.open
    }

    /// Sends `request` (a whole serialized request) and reads the whole response. A failure
    /// says whether the request went unanswered on a reused connection: the server closed
    /// an idle connection as the request left, so it cannot have processed it.
    pub async fn exchange(
        &mut self,
        request: &[u8],
        head_request: bool,
    ) -> Result<Response, (ErrorKind, bool)> {
        self.received = false;
        match self.exchange_inner(request, head_request).await {
            Ok(r) => {
                self.answered += 1;
                Ok(r)
            }
            Err(kind) => {
                self.open = false;
                let idle_close = matches!(kind, ErrorKind::Closed | ErrorKind::Reset);
                Err((kind, idle_close && self.answered > 0 && !self.received))
            }
        }
    }

    async fn exchange_inner(
        &mut self,
        request: &[u8],
        head_request: bool,
    ) -> Result<Response, ErrorKind> {
        self.stream
            .write_all(request)
            .await
            .map_err(|e| classify::io_error(&e))?;
        let head = loop {
            let head = self.read_head().await?;
            // Interim 1xx answers (100 Continue, 103 Early Hints) precede the real one.
            if (100..200).contains(&head.status) && head.status != 101 {
                self.start += head.head_len;
                continue;
            }
            break head;
        };
        let head_at = Instant::now();
        self.start += head.head_len;
        let framing = if head_request || head.status == 204 || head.status == 304 {
            Framing::None
        } else {
            head.framing
        };
        let body_bytes = self.read_body(framing).await?;
        if !head.keep_alive || matches!(framing, Framing::UntilClose) {
            self.open = false;
        }
        Ok(Response {
            status: head.status,
            head_at,
            body_bytes,
        })
    }

    /// Reads more bytes after `end`, compacting or growing the buffer as needed.
    async fn fill(&mut self) -> Result<usize, ErrorKind> {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
        if self.end == self.buf.len() {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            } else if self.buf.len() < self.max_head {
                let grown = (self.buf.len() * 2).min(self.max_head);
                self.buf.resize(grown, 0);
            } else {
                return Err(ErrorKind::HeaderTooLarge);
            }
        }
        let n = self
            .stream
            .read(&mut self.buf[self.end..])
            .await
            .map_err(|e| classify::io_error(&e))?;
        self.end += n;
        self.received |= n > 0;
        Ok(n)
    }

    async fn read_head(&mut self) -> Result<Head, ErrorKind> {
        loop {
            if self.end > self.start {
                if let Some(head) = parse_head(&self.buf[self.start..self.end])? {
                    return Ok(head);
                }
                if self.end - self.start >= self.max_head {
                    return Err(ErrorKind::HeaderTooLarge);
                }
            }
            if self.fill().await? == 0 {
                return Err(ErrorKind::Closed);
            }
        }
    }

    async fn read_body(&mut self, framing: Framing) -> Result<u64, ErrorKind> {
        match framing {
            Framing::None => Ok(0),
            Framing::Length(len) => {
                let mut left = len;
                loop {
                    let take = left.min((self.end - self.start) as u64);
                    self.start += take as usize;
                    left -= take;
                    if left == 0 {
                        return Ok(len);
                    }
                    if self.fill().await? == 0 {
                        return Err(ErrorKind::Closed);
                    }
                }
            }
            Framing::Chunked => {
                let mut decoder = Chunked::default();
                let mut total = 0;
                loop {
                    let p = decoder.feed(&self.buf[self.start..self.end])?;
                    self.start += p.consumed;
                    total += p.payload;
                    if p.done {
                        return Ok(total);
                    }
                    if self.fill().await? == 0 {
                        return Err(ErrorKind::Closed);
                    }
                }
            }
            Framing::UntilClose => {
                let mut total = (self.end - self.start) as u64;
                self.start = self.end;
                loop {
                    match self.fill().await? {
                        0 => return Ok(total),
                        n => {
                            total += n as u64;
                            self.start = self.end;
                        }
                    }
                }
            }
        }
    }
}

/// Parses a response head if `data` holds a whole one.
fn parse_head(data: &[u8]) -> Result<Option<Head>, ErrorKind> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut headers);
    let head_len = match response.parse(data) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => return Err(ErrorKind::HeaderTooLarge),
        Err(_) => return Err(ErrorKind::Protocol),
    };
    let status = response.code.ok_or(ErrorKind::Protocol)?;
    let http10 = response.version == Some(0);
    let mut keep_alive = !http10;
    let mut length = None;
    let mut chunked = false;
    for h in response.headers.iter() {
        if h.name.eq_ignore_ascii_case("content-length") {
            let text = std::str::from_utf8(h.value).map_err(|_| ErrorKind::Protocol)?;
            let n: u64 = text.trim().parse().map_err(|_| ErrorKind::Protocol)?;
            if length.is_some_and(|l| l != n) {
                return Err(ErrorKind::Protocol);
            }
            length = Some(n);
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = h
                .value
                .rsplit(|&b| b == b',')
                .next()
                .is_some_and(|last| last.trim_ascii().eq_ignore_ascii_case(b"chunked"));
        } else if h.name.eq_ignore_ascii_case("connection") {
            for token in h.value.split(|&b| b == b',') {
                let token = token.trim_ascii();
                if token.eq_ignore_ascii_case(b"close") {
                    keep_alive = false;
                } else if token.eq_ignore_ascii_case(b"keep-alive") {
                    keep_alive = true;
                }
            }
        }
    }
    // RFC 9112 §6.3: chunked wins over a length; neither means the body runs to the close.
    let framing = match (chunked, length) {
        (true, _) => Framing::Chunked,
        (false, Some(n)) => Framing::Length(n),
        (false, None) => Framing::UntilClose,
    };
    Ok(Some(Head {
        status,
        head_len,
        framing,
        keep_alive,
    }))
}

/// Serializes a request once, for every send to reuse.
pub fn serialize_request(
    method: &http::Method,
    path: &str,
    headers: &[(http::HeaderName, http::HeaderValue)],
    authority: &str,
    body: &[u8],
    keepalive: bool,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(128 + body.len());
    out.extend_from_slice(method.as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(path.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    let has = |name: &http::HeaderName| headers.iter().any(|(n, _)| n == name);
    if !has(&http::header::HOST) {
        out.extend_from_slice(b"host: ");
        out.extend_from_slice(authority.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    for (name, value) in headers {
        out.extend_from_slice(name.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    let needs_length = !body.is_empty()
        || matches!(
            *method,
            http::Method::POST | http::Method::PUT | http::Method::PATCH
        );
    if needs_length && !has(&http::header::CONTENT_LENGTH) {
        out.extend_from_slice(format!("content-length: {}\r\n", body.len()).as_bytes());
    }
    if !keepalive && !has(&http::header::CONNECTION) {
        out.extend_from_slice(b"connection: close\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_decide_framing_and_keep_alive() {
        let h = parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n")
            .unwrap()
            .unwrap();
        assert!(matches!(h.framing, Framing::Length(3)) && h.keep_alive && h.status == 200);
        let h = parse_head(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\nContent-Length: 9\r\n\r\n",
        )
        .unwrap()
        .unwrap();
        assert!(matches!(h.framing, Framing::Chunked));
        let h = parse_head(b"HTTP/1.0 200 OK\r\n\r\n").unwrap().unwrap();
        assert!(matches!(h.framing, Framing::UntilClose) && !h.keep_alive);
        let h = parse_head(b"HTTP/1.1 503 Busy\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
            .unwrap()
            .unwrap();
        assert!(!h.keep_alive && h.status == 503);
        assert!(parse_head(b"HTTP/1.1 200 OK\r\nContent-Le")
            .unwrap()
            .is_none());
    }

    #[test]
    fn hostile_heads_are_classified() {
        assert_eq!(
            parse_head(b"\x00garbage\r\n\r\n").err(),
            Some(ErrorKind::Protocol)
        );
        let conflicting = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n";
        assert_eq!(parse_head(conflicting).err(), Some(ErrorKind::Protocol));
        let mut many = b"HTTP/1.1 200 OK\r\n".to_vec();
        for i in 0..200 {
            many.extend_from_slice(format!("X-{i}: v\r\n").as_bytes());
        }
        many.extend_from_slice(b"\r\n");
        assert_eq!(parse_head(&many).err(), Some(ErrorKind::HeaderTooLarge));
    }

    #[test]
    fn requests_serialize_with_host_length_and_close() {
        let headers = vec![(http::header::ACCEPT, http::HeaderValue::from_static("*/*"))];
        let r = serialize_request(
            &http::Method::POST,
            "/a?b=1",
            &headers,
            "h:8080",
            b"{}",
            false,
        );
        assert_eq!(
            String::from_utf8(r).unwrap(),
            "POST /a?b=1 HTTP/1.1\r\nhost: h:8080\r\naccept: */*\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}"
        );
        let r = serialize_request(&http::Method::GET, "/", &[], "h", b"", true);
        assert_eq!(
            String::from_utf8(r).unwrap(),
            "GET / HTTP/1.1\r\nhost: h\r\n\r\n"
        );
    }
}
