//! HTTP/1.1 without sockets (sans-IO), written for cost: requests serialized once (or
//! filled into reused buffers), response heads parsed by `httparse` in a reused buffer,
//! bodies counted and dropped. The direct driver moves the bytes; this module only says what
//! they mean, so a reply is read the same way whatever the socket did after its last byte.
//!
//! hyper's client costs two task hops, channels and several allocations per request, which on
//! a two-core machine is CPU stolen from the server under test. HTTP/2 uses the `h2` crate.

mod buffer;
pub(crate) mod chunked;
mod codec;
pub(crate) mod response;

pub use codec::Codec;

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
