//! HTTP over a connected stream: the request template, connection set-up for HTTP/1.1
//! (headroom's own lean client in [`super::h1`]) or HTTP/2 (hyper, the only user of hyper's
//! client), and one exchange: send, head, drain the body.

use super::classify;
use super::connect::Stream;
use super::h1;
use crate::plan::{HttpVersion, NamedRequest, Target};
use crate::sample::ErrorKind;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http2;
use hyper_util::rt::TokioIo;
use std::future::Future;
use std::time::Instant;

type Body = Full<Bytes>;

/// A handle that sends requests on one connection.
pub enum Sender {
    /// An HTTP/1.1 connection: one request at a time, owned by one lane.
    H1(h1::Connection),
    /// An HTTP/2 connection: lanes share it through [`H2Pool`], one stream each. The
    /// generation tells the pool which connection a lane found wanting.
    H2(http2::SendRequest<Body>, u64),
}

impl Sender {
    /// The pool generation of an HTTP/2 connection.
    pub fn generation(&self) -> Option<u64> {
        match self {
            Sender::H1(_) => None,
            Sender::H2(_, generation) => Some(*generation),
        }
    }

    /// True when the connection can no longer carry requests.
    pub fn is_closed(&self) -> bool {
        match self {
            Sender::H1(c) => !c.is_open(),
            Sender::H2(s, _) => s.is_closed(),
        }
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
    if h2 {
        let io = TokioIo::new(stream);
        let (sender, conn) = http2::Builder::new(WorkerExec)
            .max_header_list_size(max_header_bytes as u32)
            .handshake(io)
            .await
            .map_err(|e| classify::hyper_error(&e))?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(Sender::H2(sender, 0))
    } else {
        Ok(Sender::H1(h1::Connection::new(stream, max_header_bytes)))
    }
}

/// One request of a run, pre-built once so each send only clones it (or, when it has
/// templates, fills them into reused buffers).
pub struct RequestTemplate {
    method: http::Method,
    expect: crate::plan::Expect,
    dynamic: Option<Dynamic>,
    captures: Vec<crate::plan::Capture>,
    absolute_uri: http::Uri,
    h1_request: Vec<u8>,
    h2_headers: http::HeaderMap,
    body: Bytes,
}

impl RequestTemplate {
    /// The template for `request` sent to `target`.
    pub fn new(target: &Target, request: &NamedRequest, keepalive: bool) -> Result<Self, String> {
        let spec = &request.spec;
        let scheme = match target.scheme {
            crate::plan::Scheme::Http => "http",
            crate::plan::Scheme::Https => "https",
        };
        let dynamic = request.templates.as_ref().map(|t| Dynamic {
            names: t.headers.iter().map(|(n, _)| n.clone()).collect(),
            templates: t.clone(),
            data: request.data.clone(),
            data_columns: request
                .data
                .as_ref()
                .map_or(0, |b| b.dataset.columns().len()),
            batch: t.rows_per_send() as u64,
            authority: target.authority.clone(),
            scheme,
            keepalive,
        });
        // A templated path is checked (and its prebuilt parts made) with a sample filling.
        let filled = request
            .templates
            .as_ref()
            .map(|t| String::from_utf8_lossy(&t.path.sample()).into_owned());
        let path = filled
            .as_deref()
            .or(spec.path.as_deref())
            .unwrap_or(&target.path_and_query);
        let absolute_uri: http::Uri = format!("{scheme}://{}{path}", target.authority)
            .parse()
            .map_err(|e| format!("{}: path {path:?}: {e}", request.name))?;
        let mut h2_headers = http::HeaderMap::new();
        for (name, value) in &spec.headers {
            h2_headers.append(name.clone(), value.clone());
        }
        // HTTP/2 carries the host in :authority and forbids connection-specific headers.
        h2_headers.remove(http::header::HOST);
        h2_headers.remove(http::header::CONNECTION);
        let h1_request = h1::serialize_request(
            &spec.method,
            path,
            &spec.headers,
            &target.authority,
            &spec.body,
            keepalive,
        );
        Ok(RequestTemplate {
            method: spec.method.clone(),
            expect: request.expect.clone(),
            dynamic,
            captures: request.captures.clone(),
            absolute_uri,
            h1_request,
            h2_headers,
            body: spec.body.clone(),
        })
    }

    /// The HTTP/1.1 bytes of the `k`-th send of this request, and its body length: the
    /// pre-built request, or its templates filled into `scratch`.
    pub fn h1<'a>(
        &'a self,
        k: u64,
        vars: &[&[Option<Vec<u8>>]],
        scratch: &'a mut Scratch,
    ) -> Result<(&'a [u8], u64), ErrorKind> {
        let Some(d) = &self.dynamic else {
            return Ok((&self.h1_request, self.body.len() as u64));
        };
        let row = d.row(k)?;
        // Slots past the data set's columns are the flow's captured values.
        let cell = |c: usize, nth: usize, out: &mut Vec<u8>| match c.checked_sub(d.data_columns) {
            Some(var) => out.extend_from_slice(
                vars.iter()
                    .find_map(|v| v.get(var).and_then(Option::as_deref))
                    .unwrap_or_default(),
            ),
            None => d.cell(row, nth, c, out),
        };
        let Scratch { head, body } = scratch;
        body.clear();
        match &d.templates.body {
            Some(t) => t.render(k, &cell, body),
            None => body.extend_from_slice(&self.body),
        }
        head.clear();
        h1::write_request(
            head,
            &h1::Head {
                method: &self.method,
                names: &d.names,
                authority: &d.authority,
                keepalive: d.keepalive,
            },
            &|out: &mut Vec<u8>| d.templates.path.render(k, &cell, out),
            &|i, out: &mut Vec<u8>| d.templates.headers[i].1.render(k, &cell, out),
            body,
        );
        Ok((head, body.len() as u64))
    }

    /// Values this request takes from its response.
    pub fn captures(&self) -> &[crate::plan::Capture] {
        &self.captures
    }

    /// True when its response must be kept: to capture from it, or to check its body.
    pub fn keeps_response(&self) -> bool {
        !self.captures.is_empty() || self.expect.reads_body()
    }

    /// True when a kept body holds what the request expects of it.
    pub fn body_holds(&self, body: &[u8]) -> bool {
        self.expect.body_holds(body)
    }

    /// True when `status` is an answer this request expects.
    #[inline]
    pub fn expects(&self, status: u16) -> bool {
        self.expect.allows(status)
    }

    /// True for HEAD, whose answers have no body.
    pub fn is_head(&self) -> bool {
        self.method == http::Method::HEAD
    }

    fn build_h2(&self, k: u64) -> Result<(http::Request<Body>, u64), ErrorKind> {
        let Some(d) = &self.dynamic else {
            let mut req = http::Request::new(Full::new(self.body.clone()));
            *req.method_mut() = self.method.clone();
            *req.uri_mut() = self.absolute_uri.clone();
            *req.headers_mut() = self.h2_headers.clone();
            return Ok((req, self.body.len() as u64));
        };
        let row = d.row(k)?;
        let cell = |c: usize, nth: usize, out: &mut Vec<u8>| d.cell(row, nth, c, out);
        let body = match &d.templates.body {
            Some(t) => {
                let mut out = Vec::new();
                t.render(k, &cell, &mut out);
                Bytes::from(out)
            }
            None => self.body.clone(),
        };
        let mut uri = format!("{}://{}", d.scheme, d.authority).into_bytes();
        d.templates.path.render(k, &cell, &mut uri);
        let mut headers = self.h2_headers.clone();
        for (name, t) in &d.templates.headers {
            if headers.contains_key(name) {
                let mut value = Vec::new();
                t.render(k, &cell, &mut value);
                let value =
                    http::HeaderValue::from_bytes(&value).map_err(|_| ErrorKind::ClientOther)?;
                headers.insert(name.clone(), value);
            }
        }
        let len = body.len() as u64;
        let mut req = http::Request::new(Full::new(body));
        *req.method_mut() = self.method.clone();
        *req.uri_mut() = http::Uri::try_from(uri).map_err(|_| ErrorKind::ClientOther)?;
        *req.headers_mut() = headers;
        Ok((req, len))
    }
}

/// Buffers a caller keeps for filling templated requests, so a send allocates nothing.
#[derive(Debug, Default)]
pub struct Scratch {
    head: Vec<u8>,
    body: Vec<u8>,
}

/// The varying parts of a templated request, ready to fill.
struct Dynamic {
    templates: crate::plan::Templates,
    names: Vec<http::HeaderName>,
    data: Option<crate::plan::DataBinding>,
    /// Columns of the data set; template slots beyond are captured variables.
    data_columns: usize,
    /// Data rows each send takes (a batch: "get many").
    batch: u64,
    authority: String,
    scheme: &'static str,
    keepalive: bool,
}

impl Dynamic {
    /// The first draw of the `k`-th send (each send takes `batch` draws), if the request has
    /// data; fails when a unique pick has no rows left for the whole send.
    fn row(&self, k: u64) -> Result<Option<u64>, ErrorKind> {
        match &self.data {
            None => Ok(None),
            Some(b) => {
                let first = k * self.batch;
                b.pick
                    .row(first + self.batch - 1, b.dataset.rows())
                    .ok_or(ErrorKind::DataExhausted)?;
                Ok(Some(first))
            }
        }
    }

    /// Writes `column` of the `nth` row of a send whose first draw is `first`.
    fn cell(&self, first: Option<u64>, nth: usize, column: usize, out: &mut Vec<u8>) {
        if let (Some(b), Some(first)) = (&self.data, first) {
            if let Some(row) = b.pick.row(first + nth as u64, b.dataset.rows()) {
                b.dataset.write_cell(row, column, out);
            }
        }
    }
}

/// Why an exchange failed, and whether the server can have seen the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failure {
    /// The classified error.
    pub kind: ErrorKind,
    /// True when the server cannot have processed the request, so one retry on a fresh
    /// connection is what any real client would do.
    pub unprocessed: bool,
}

impl From<ErrorKind> for Failure {
    fn from(kind: ErrorKind) -> Self {
        Failure {
            kind,
            unprocessed: false,
        }
    }
}

fn hyper_failure(e: &hyper::Error) -> Failure {
    Failure {
        kind: classify::hyper_error(e),
        unprocessed: classify::hyper_unprocessed(e),
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
    /// Body bytes sent.
    pub body_sent: u64,
}

/// Sends the `k`-th send of `template` and reads the whole response, discarding the body as
/// it streams.
pub async fn exchange(
    sender: &mut Sender,
    template: &RequestTemplate,
    k: u64,
    scratch: &mut Scratch,
) -> Result<Exchange, Failure> {
    let s = match sender {
        Sender::H1(c) => {
            let head = template.method == http::Method::HEAD;
            let (bytes, body_sent) = template.h1(k, &[], scratch)?;
            let r = c
                .exchange(bytes, head)
                .await
                .map_err(|(kind, unanswered)| Failure {
                    kind,
                    unprocessed: unanswered && template.method.is_idempotent(),
                })?;
            return Ok(Exchange {
                status: r.status,
                head_at: r.head_at,
                body_bytes: r.body_bytes,
                body_sent,
            });
        }
        Sender::H2(s, _) => s,
    };
    let (request, body_sent) = template.build_h2(k)?;
    // A connection that cannot take another stream has not seen this request.
    s.ready().await.map_err(|e| Failure {
        kind: classify::hyper_error(&e),
        unprocessed: true,
    })?;
    let response = s
        .send_request(request)
        .await
        .map_err(|e| hyper_failure(&e))?;
    let head_at = Instant::now();
    let status = response.status().as_u16();
    let mut body = response.into_body();
    let mut body_bytes = 0u64;
    // Frames are counted and dropped, so an endless body costs time (bounded by the
    // request timeout), never memory.
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| Failure::from(classify::hyper_error(&e)))?;
        if let Some(data) = frame.data_ref() {
            body_bytes += data.len() as u64;
        }
    }
    Ok(Exchange {
        status,
        head_at,
        body_bytes,
        body_sent,
    })
}

/// A worker's shared HTTP/2 connections: lanes are spread over the slots, and a slot is
/// reconnected by the first lane that finds it closed.
pub(crate) struct H2Pool {
    slots: Vec<tokio::sync::Mutex<Slot>>,
}

/// One pooled connection and how many times its slot has been (re)connected.
#[derive(Default)]
struct Slot {
    live: Option<http2::SendRequest<Body>>,
    generation: u64,
}

impl H2Pool {
    /// A pool of `connections` slots (at least one).
    pub fn new(connections: usize) -> Self {
        H2Pool {
            slots: (0..connections.max(1))
                .map(|_| tokio::sync::Mutex::new(Slot::default()))
                .collect(),
        }
    }

    /// Number of connection slots.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// A sender for `lane`: a share of its slot's live connection, or a new one opened by
    /// `open`, whose timings are returned only to the lane that opened it. `stale` names a
    /// generation the lane found closing (GOAWAY): that one is replaced, once, however many
    /// lanes found it. A server that answers ALPN with HTTP/1.1 gets a private HTTP/1.1
    /// connection instead.
    pub async fn acquire<F, Fut, T>(
        &self,
        lane: usize,
        stale: Option<u64>,
        open: F,
    ) -> Result<(Sender, Option<T>), Failure>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<(Sender, T), ErrorKind>>,
    {
        let mut slot = self.slots[lane % self.slots.len()].lock().await;
        let generation = slot.generation;
        if let Some(live) = slot.live.as_ref() {
            if !live.is_closed() && stale != Some(generation) {
                return Ok((Sender::H2(live.clone(), generation), None));
            }
        }
        let (sender, timings) = open().await?;
        slot.generation += 1;
        slot.live = None;
        let sender = match sender {
            Sender::H2(s, _) => {
                slot.live = Some(s.clone());
                Sender::H2(s, slot.generation)
            }
            h1 => h1,
        };
        Ok((sender, Some(timings)))
    }
}
