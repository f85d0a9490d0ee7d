//! HTTP over a connected stream: HTTP/1.1 or HTTP/2 handshakes, the request template, and one
//! exchange (send, head, drain the body). The only module that knows hyper.

use super::classify;
use super::connect::Stream;
use crate::plan::{HttpVersion, RequestSpec, Target};
use crate::sample::ErrorKind;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::{http1, http2};
use hyper_util::rt::TokioIo;
use std::future::Future;
use std::time::Instant;

type Body = Full<Bytes>;

/// A handle that sends requests on one connection.
pub enum Sender {
    /// An HTTP/1.1 connection: one request at a time, owned by one lane.
    H1(http1::SendRequest<Body>),
    /// An HTTP/2 connection: lanes share it through [`H2Pool`], one stream each.
    H2(http2::SendRequest<Body>),
}

impl Sender {
    /// True when the connection can no longer carry requests.
    pub fn is_closed(&self) -> bool {
        match self {
            Sender::H1(s) => s.is_closed(),
            Sender::H2(s) => s.is_closed(),
        }
    }

    /// True for HTTP/2.
    pub fn is_h2(&self) -> bool {
        matches!(self, Sender::H2(_))
    }
}

/// Runs hyper's HTTP/2 connection tasks on the worker's own (current-thread) runtime.
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

/// Whether a connection speaks HTTP/2, from the version asked and what ALPN chose.
pub fn speaks_h2(version: HttpVersion, stream: &Stream) -> Result<bool, ErrorKind> {
    match (stream, version) {
        (Stream::Plain(_), v) => Ok(v == HttpVersion::Http2),
        (Stream::Tls(_), v) => {
            let h2 = stream.alpn() == Some(b"h2");
            if v == HttpVersion::Http2 && !h2 {
                // The server did not agree to h2: the request cannot be made as asked.
                return Err(ErrorKind::Protocol);
            }
            Ok(h2)
        }
    }
}

/// Performs the HTTP handshake on a fresh stream; the connection is driven by a local task.
pub async fn handshake(
    stream: Stream,
    version: HttpVersion,
    max_header_bytes: usize,
) -> Result<Sender, ErrorKind> {
    let h2 = speaks_h2(version, &stream)?;
    let io = TokioIo::new(stream);
    if h2 {
        let (sender, conn) = http2::Builder::new(WorkerExec)
            .max_header_list_size(max_header_bytes as u32)
            .handshake(io)
            .await
            .map_err(|e| classify::hyper_error(&e))?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(Sender::H2(sender))
    } else {
        let (sender, conn) = http1::Builder::new()
            .max_buf_size(max_header_bytes.max(8192))
            .handshake(io)
            .await
            .map_err(|e| classify::hyper_error(&e))?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(Sender::H1(sender))
    }
}

/// The request of a run, pre-built once per worker so each send only clones it.
pub struct RequestTemplate {
    method: http::Method,
    origin_uri: http::Uri,
    absolute_uri: http::Uri,
    h1_headers: http::HeaderMap,
    h2_headers: http::HeaderMap,
    body: Bytes,
}

impl RequestTemplate {
    /// The template for `spec` sent to `target`.
    pub fn new(target: &Target, spec: &RequestSpec, keepalive: bool) -> Result<Self, String> {
        let origin_uri: http::Uri = target
            .path_and_query
            .parse()
            .map_err(|e| format!("path {:?}: {e}", target.path_and_query))?;
        let scheme = match target.scheme {
            crate::plan::Scheme::Http => "http",
            crate::plan::Scheme::Https => "https",
        };
        let absolute_uri: http::Uri =
            format!("{scheme}://{}{}", target.authority, target.path_and_query)
                .parse()
                .map_err(|e| format!("URL {}: {e}", target.url))?;
        let mut h2_headers = http::HeaderMap::new();
        for (name, value) in &spec.headers {
            h2_headers.append(name.clone(), value.clone());
        }
        // HTTP/2 carries the host in :authority and forbids connection-specific headers.
        h2_headers.remove(http::header::HOST);
        h2_headers.remove(http::header::CONNECTION);
        let mut h1_headers = http::HeaderMap::new();
        if !spec.headers.iter().any(|(n, _)| n == http::header::HOST) {
            let host = http::HeaderValue::from_str(&target.authority).map_err(|e| e.to_string())?;
            h1_headers.insert(http::header::HOST, host);
        }
        for (name, value) in &spec.headers {
            h1_headers.append(name.clone(), value.clone());
        }
        if !keepalive {
            h1_headers.insert(
                http::header::CONNECTION,
                http::HeaderValue::from_static("close"),
            );
        }
        Ok(RequestTemplate {
            method: spec.method.clone(),
            origin_uri,
            absolute_uri,
            h1_headers,
            h2_headers,
            body: spec.body.clone(),
        })
    }

    /// Body bytes each request sends.
    pub fn body_len(&self) -> u64 {
        self.body.len() as u64
    }

    fn build(&self, h2: bool) -> http::Request<Body> {
        let mut req = http::Request::new(Full::new(self.body.clone()));
        *req.method_mut() = self.method.clone();
        if h2 {
            *req.uri_mut() = self.absolute_uri.clone();
            *req.headers_mut() = self.h2_headers.clone();
        } else {
            *req.uri_mut() = self.origin_uri.clone();
            *req.headers_mut() = self.h1_headers.clone();
        }
        req
    }
}

/// What came back from one exchange.
pub struct Exchange {
    /// Status code.
    pub status: u16,
    /// When the response head arrived.
    pub head_at: Instant,
    /// Body bytes received.
    pub body_bytes: u64,
}

/// Sends one request and reads the whole response, discarding the body as it streams.
pub async fn exchange(
    sender: &mut Sender,
    template: &RequestTemplate,
) -> Result<Exchange, ErrorKind> {
    let response = match sender {
        Sender::H1(s) => {
            s.ready().await.map_err(|e| classify::hyper_error(&e))?;
            s.send_request(template.build(false)).await
        }
        Sender::H2(s) => {
            s.ready().await.map_err(|e| classify::hyper_error(&e))?;
            s.send_request(template.build(true)).await
        }
    }
    .map_err(|e| classify::hyper_error(&e))?;
    let head_at = Instant::now();
    let status = response.status().as_u16();
    let mut body = response.into_body();
    let mut body_bytes = 0u64;
    // Frames are counted and dropped, so an endless body costs time (bounded by the
    // request timeout), never memory.
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| classify::hyper_error(&e))?;
        if let Some(data) = frame.data_ref() {
            body_bytes += data.len() as u64;
        }
    }
    Ok(Exchange {
        status,
        head_at,
        body_bytes,
    })
}

/// A worker's shared HTTP/2 connections: lanes are spread over the slots, and a slot is
/// reconnected by the first lane that finds it closed.
pub(crate) struct H2Pool {
    slots: Vec<tokio::sync::Mutex<Option<http2::SendRequest<Body>>>>,
}

impl H2Pool {
    /// A pool of `connections` slots (at least one).
    pub fn new(connections: usize) -> Self {
        H2Pool {
            slots: (0..connections.max(1))
                .map(|_| tokio::sync::Mutex::new(None))
                .collect(),
        }
    }

    /// Number of connection slots.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// A sender for `lane`: a share of its slot's live connection, or a new one opened by
    /// `open`, whose timings are returned only to the lane that opened it. A server that
    /// answers ALPN with HTTP/1.1 gets a private HTTP/1.1 connection instead.
    pub async fn acquire<F, Fut, T>(
        &self,
        lane: usize,
        open: F,
    ) -> Result<(Sender, Option<T>), ErrorKind>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<(Sender, T), ErrorKind>>,
    {
        let mut slot = self.slots[lane % self.slots.len()].lock().await;
        if let Some(live) = slot.as_ref().filter(|s| !s.is_closed()) {
            return Ok((Sender::H2(live.clone()), None));
        }
        let (sender, timings) = open().await?;
        if let Sender::H2(s) = &sender {
            *slot = Some(s.clone());
        }
        Ok((sender, Some(timings)))
    }
}
