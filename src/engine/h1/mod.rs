//! HTTP/1.1 on the load path, written for cost: one task per connection, the request written
//! pre-serialized in one call, the response head parsed by `httparse` in a reused buffer, the
//! body counted and dropped. Nothing is allocated per request.
//!
//! hyper's client costs two task hops, channels and several allocations per request, which on
//! a two-core machine is CPU stolen from the server under test; HTTP/2 stays on hyper.

mod buffer;
mod chunked;
pub mod dial;
pub mod polled;
pub mod reader;

use super::classify;
use super::connect::Stream;
use crate::sample::ErrorKind;
use buffer::ReadBuffer;
use reader::{Complete, ResponseReader};
use std::time::Instant;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

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
    buf: ReadBuffer,
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
            buf: ReadBuffer::new(max_head),
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
                Err((kind, closed_unanswered(kind, self.answered, self.received)))
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
        let mut reader = ResponseReader::new(head_request, self.max_head);
        let mut head_at = None;
        loop {
            let fed = reader.feed(self.buf.data())?;
            self.buf.consume(fed.consumed);
            if fed.head_done {
                head_at = Some(Instant::now());
            }
            if let Some(complete) = fed.complete {
                return Ok(self.finish(complete, head_at));
            }
            if self.fill().await? == 0 {
                let complete = reader.eof()?;
                return Ok(self.finish(complete, head_at));
            }
        }
    }

    fn finish(&mut self, complete: Complete, head_at: Option<Instant>) -> Response {
        if !complete.keep_alive {
            self.open = false;
        }
        Response {
            status: complete.status,
            head_at: head_at.unwrap_or_else(Instant::now),
            body_bytes: complete.body_bytes,
        }
    }

    /// Reads more bytes into the buffer.
    async fn fill(&mut self) -> Result<usize, ErrorKind> {
        let room = self.buf.spare()?;
        let n = self
            .stream
            .read(room)
            .await
            .map_err(|e| classify::io_error(&e))?;
        self.buf.filled(n);
        self.received |= n > 0;
        Ok(n)
    }
}

/// True when a failure means the server closed a reused connection before answering a byte:
/// it closed it while idle, so it cannot have processed the request.
fn closed_unanswered(kind: ErrorKind, answered: u64, received: bool) -> bool {
    matches!(kind, ErrorKind::Closed | ErrorKind::Reset) && answered > 0 && !received
}

/// Serializes a request once: the head with `host` (unless given), `content-length` when
/// there is a body or the method expects one, and `connection: close` without keep-alive.
pub fn serialize_request(
    method: &http::Method,
    path: &str,
    headers: &[(http::HeaderName, http::HeaderValue)],
    authority: &str,
    body: &[u8],
    keepalive: bool,
) -> Vec<u8> {
    let names: Vec<http::HeaderName> = headers.iter().map(|(n, _)| n.clone()).collect();
    let mut out = Vec::with_capacity(128 + body.len());
    write_request(
        &mut out,
        &Head {
            method,
            names: &names,
            authority,
            keepalive,
        },
        &|out: &mut Vec<u8>| out.extend_from_slice(path.as_bytes()),
        &|i, out: &mut Vec<u8>| out.extend_from_slice(headers[i].1.as_bytes()),
        body,
    );
    out
}

/// What a request head is made of, besides its path and header values.
pub struct Head<'a> {
    /// The method.
    pub method: &'a http::Method,
    /// Header names, in order.
    pub names: &'a [http::HeaderName],
    /// Sent as `host` unless a header gives it.
    pub authority: &'a str,
    /// Without it, `connection: close` is added.
    pub keepalive: bool,
}

/// Appends a request to `out`: `path` writes the path and query, `value(i)` the value of
/// header `i` (templated requests fill both per send).
pub fn write_request(
    out: &mut Vec<u8>,
    head: &Head<'_>,
    path: &dyn Fn(&mut Vec<u8>),
    value: &dyn Fn(usize, &mut Vec<u8>),
    body: &[u8],
) {
    out.extend_from_slice(head.method.as_str().as_bytes());
    out.push(b' ');
    path(out);
    out.extend_from_slice(b" HTTP/1.1\r\n");
    let has = |name: &http::HeaderName| head.names.iter().any(|n| n == name);
    if !has(&http::header::HOST) {
        out.extend_from_slice(b"host: ");
        out.extend_from_slice(head.authority.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    for (i, name) in head.names.iter().enumerate() {
        out.extend_from_slice(name.as_str().as_bytes());
        out.extend_from_slice(b": ");
        value(i, out);
        out.extend_from_slice(b"\r\n");
    }
    let needs_length = !body.is_empty()
        || matches!(
            *head.method,
            http::Method::POST | http::Method::PUT | http::Method::PATCH
        );
    if needs_length && !has(&http::header::CONTENT_LENGTH) {
        use std::io::Write;
        let _ = write!(out, "content-length: {}\r\n", body.len());
    }
    if !head.keepalive && !has(&http::header::CONNECTION) {
        out.extend_from_slice(b"connection: close\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
}

#[cfg(test)]
mod tests {
    use super::*;

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
