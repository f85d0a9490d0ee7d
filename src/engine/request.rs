//! The run's requests, built once and rendered per send for either protocol: the HTTP/1.1
//! bytes (pre-serialized, or templates filled into reused buffers) or the parts of an HTTP/2
//! request. Both renderings fill the same slots from the same data rows and captured values.

use super::http1;
use super::job::Vars;
use crate::plan::{NamedRequest, Target, Unreadable};
use crate::sample::ErrorKind;
use bytes::Bytes;

/// One request of a run for one instance of the service.
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

/// An HTTP/2 request, ready for the client: the HTTP/2 driver sends its head and body.
pub struct H2Request {
    /// Method.
    pub method: http::Method,
    /// Scheme, authority, path and query.
    pub uri: http::Uri,
    /// Headers, without the connection-specific ones HTTP/2 forbids.
    pub headers: http::HeaderMap,
    /// Body.
    pub body: Bytes,
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
        for name in [
            http::header::HOST,
            http::header::CONNECTION,
            http::header::TRANSFER_ENCODING,
            http::header::UPGRADE,
            http::HeaderName::from_static("keep-alive"),
            http::HeaderName::from_static("proxy-connection"),
        ] {
            h2_headers.remove(name);
        }
        let h1_request = http1::serialize_request(
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
        vars: Vars<'_>,
        scratch: &'a mut Scratch,
    ) -> Result<(&'a [u8], u64), ErrorKind> {
        let Some(d) = &self.dynamic else {
            return Ok((&self.h1_request, self.body.len() as u64));
        };
        let row = d.row(k)?;
        let failed = std::cell::Cell::new(false);
        let cell = d.filler(row, vars, &failed);
        let len = self.write_h1(d, k, &cell, scratch);
        if failed.get() {
            return Err(ErrorKind::DataUnreadable);
        }
        Ok((&scratch.head, len))
    }

    /// The HTTP/1.1 bytes of a send with every template slot written as `$name` (`names`:
    /// the data set's columns, then the captured values), and its body length: what
    /// `run --check` shows, holding nothing read from a data file.
    pub fn h1_placeholders<'a>(
        &'a self,
        names: &[String],
        scratch: &'a mut Scratch,
    ) -> (&'a [u8], u64) {
        let Some(d) = &self.dynamic else {
            return (&self.h1_request, self.body.len() as u64);
        };
        let cell = |slot: usize, _nth: usize, out: &mut Vec<u8>| {
            out.push(b'$');
            out.extend_from_slice(names.get(slot).map_or("value", String::as_str).as_bytes());
        };
        let len = self.write_h1(d, 0, &cell, scratch);
        (&scratch.head, len)
    }

    /// Fills the templates of the `k`-th send from `cell` into `scratch`; returns the
    /// body's length.
    fn write_h1(
        &self,
        d: &Dynamic,
        k: u64,
        cell: &dyn Fn(usize, usize, &mut Vec<u8>),
        scratch: &mut Scratch,
    ) -> u64 {
        let Scratch { head, body } = scratch;
        body.clear();
        match &d.templates.body {
            Some(t) => t.render(k, cell, body),
            None => body.extend_from_slice(&self.body),
        }
        head.clear();
        http1::write_request(
            head,
            &http1::Head {
                method: &self.method,
                names: &d.names,
                authority: &d.authority,
                keepalive: d.keepalive,
            },
            &|out: &mut Vec<u8>| d.templates.path.render(k, cell, out),
            &|i, out: &mut Vec<u8>| d.templates.headers[i].1.render(k, cell, out),
            body,
        );
        body.len() as u64
    }

    /// The HTTP/2 request of the `k`-th send, filled from the same rows and values as
    /// [`RequestTemplate::h1`].
    pub fn h2(&self, k: u64, vars: Vars<'_>) -> Result<H2Request, ErrorKind> {
        let Some(d) = &self.dynamic else {
            return Ok(H2Request {
                method: self.method.clone(),
                uri: self.absolute_uri.clone(),
                headers: self.h2_headers.clone(),
                body: self.body.clone(),
            });
        };
        let row = d.row(k)?;
        let failed = std::cell::Cell::new(false);
        let cell = d.filler(row, vars, &failed);
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
                // The scenario check refuses values that could hold a line break.
                let value =
                    http::HeaderValue::from_bytes(&value).map_err(|_| ErrorKind::ClientOther)?;
                headers.insert(name.clone(), value);
            }
        }
        if failed.get() {
            return Err(ErrorKind::DataUnreadable);
        }
        Ok(H2Request {
            method: self.method.clone(),
            uri: http::Uri::try_from(uri).map_err(|_| ErrorKind::ClientOther)?,
            headers,
            body,
        })
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

    /// The method: whether a request may be sent again depends on it.
    pub fn method(&self) -> &http::Method {
        &self.method
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
                b.row(first + self.batch - 1)
                    .ok_or(ErrorKind::DataExhausted)?;
                Ok(Some(first))
            }
        }
    }

    /// Writes slot `slot` of a send: a column of its `nth` row, or (past the data set's
    /// columns) a captured value, the iteration's own before the connection's login.
    fn fill(
        &self,
        first: Option<u64>,
        vars: Vars<'_>,
        nth: usize,
        slot: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), Unreadable> {
        match slot.checked_sub(self.data_columns) {
            Some(var) => out.extend_from_slice(
                vars.iter()
                    .find_map(|v| v.get(var).and_then(Option::as_deref))
                    .unwrap_or_default(),
            ),
            None => {
                if let (Some(b), Some(first)) = (&self.data, first) {
                    if let Some(row) = b.row(first + nth as u64) {
                        b.dataset.write_cell(row, slot, out)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// A template filler for the `k`-th send, and the flag it raises when a row could not
    /// be read (templates fill infallibly; the send is failed after).
    fn filler<'a>(
        &'a self,
        row: Option<u64>,
        vars: Vars<'a>,
        failed: &'a std::cell::Cell<bool>,
    ) -> impl Fn(usize, usize, &mut Vec<u8>) + 'a {
        move |c: usize, nth: usize, out: &mut Vec<u8>| {
            if self.fill(row, vars, nth, c, out).is_err() {
                failed.set(true);
            }
        }
    }
}
