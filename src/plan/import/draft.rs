//! A request as a source describes it, before it becomes a scenario request, and the server
//! all of an import's requests go to.

use super::ImportError;
use crate::plan::scenario::file::HttpChoice;

/// Where every imported request goes: the scenario's target.
#[derive(Debug, Clone)]
pub struct Origin {
    /// `http` or `https`.
    pub scheme: String,
    /// `host:port` as written (the port left out when it is the scheme's default).
    pub authority: String,
    /// A base path every request's path goes after (`/v3` for an OpenAPI server), or empty.
    pub base_path: String,
    /// Skip verification of the server's certificate (curl's `-k`).
    pub insecure: bool,
    /// The HTTP version asked for (curl's `--http2`).
    pub http: HttpChoice,
}

impl Origin {
    /// The target URL.
    pub fn url(&self) -> String {
        format!(
            "{}://{}{}",
            self.scheme,
            self.authority,
            self.base_path.trim_end_matches('/')
        )
    }
}

/// A body and what the source said it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Body {
    /// Its bytes as sent.
    pub bytes: Vec<u8>,
    /// Its content type, when the source gave one apart from the headers.
    pub content_type: Option<String>,
}

/// One request of a source.
#[derive(Debug, Clone)]
pub struct Draft {
    /// Its name in the source (an OpenAPI operationId), if it has one.
    pub name: Option<String>,
    /// The method, upper case.
    pub method: String,
    /// Path and query, from `/`, relative to the origin (and its base path).
    pub path: String,
    /// Headers in the source's order, hop-by-hop and pseudo headers left out.
    pub headers: Vec<(String, String)>,
    /// The body, if any.
    pub body: Option<Body>,
    /// Statuses the source says are success (OpenAPI's responses), if it says.
    pub expect: Option<Vec<u16>>,
}

impl Draft {
    /// The path without its query: what the request is named after.
    pub fn path_only(&self) -> &str {
        self.path.split_once('?').map_or(&self.path, |(p, _)| p)
    }
}

/// Headers a load test does not send as recorded: the connection's own (hop-by-hop), those
/// the client computes (Host, Content-Length) and HTTP/2 pseudo headers.
pub fn is_dropped_header(name: &str) -> bool {
    const DROPPED: &[&str] = &[
        "host",
        "content-length",
        "connection",
        "keep-alive",
        "proxy-connection",
        "transfer-encoding",
        "te",
        "trailer",
        "upgrade",
        "expect",
    ];
    name.starts_with(':') || DROPPED.iter().any(|d| d.eq_ignore_ascii_case(name))
}

/// Cache validators a browser adds from its cache (`If-None-Match`, `If-Modified-Since`, …):
/// recorded, they make identical requests differ and ask the server for a 304 instead of the
/// response a load test means to measure.
pub fn is_conditional_header(name: &str) -> bool {
    const CONDITIONAL: &[&str] = &[
        "if-none-match",
        "if-modified-since",
        "if-match",
        "if-unmodified-since",
        "if-range",
    ];
    CONDITIONAL.iter().any(|c| c.eq_ignore_ascii_case(name))
}

/// A URL split into the origin's parts and its path and query. `user:password@` is split
/// off and returned apart (the caller makes it a credential); no part of the URL is put in
/// an error, as its query may hold a key.
pub fn split_url(
    url: &str,
    source: &str,
) -> Result<(String, String, String, Option<String>), ImportError> {
    let bad = |why: &str| ImportError::Unsupported(format!("{source}: {why}"));
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| bad("the URL has no scheme; write http://host/path or https://…"))?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return Err(bad(&format!(
            "the URL's scheme is {scheme:?}; only http and https can be imported"
        )));
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (mut authority, tail) = rest.split_at(end);
    let mut user_info = None;
    if let Some((info, host)) = authority.rsplit_once('@') {
        user_info = Some(info.to_string());
        authority = host;
    }
    if authority.is_empty() {
        return Err(bad("the URL has no host"));
    }
    let authority = match (scheme.as_str(), authority.rsplit_once(':')) {
        ("http", Some((host, "80"))) | ("https", Some((host, "443"))) if !host.ends_with(']') => {
            host.to_ascii_lowercase()
        }
        _ => authority.to_ascii_lowercase(),
    };
    // The fragment never goes on the wire.
    let tail = tail.split_once('#').map_or(tail, |(t, _)| t);
    let path = if tail.starts_with('/') {
        tail.to_string()
    } else {
        format!("/{tail}")
    };
    Ok((scheme, authority, path, user_info))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_into_origin_and_path() {
        let (s, a, p, u) = split_url("HTTP://Example.com:80/a/b?x=1#frag", "t").unwrap();
        assert_eq!(
            (s.as_str(), a.as_str(), p.as_str(), u),
            ("http", "example.com", "/a/b?x=1", None)
        );
        let (_, a, p, u) = split_url("https://u:pw@127.0.0.1:8443?q", "t").unwrap();
        assert_eq!((a.as_str(), p.as_str()), ("127.0.0.1:8443", "/?q"));
        assert_eq!(u.as_deref(), Some("u:pw"));
        let e = split_url("ftp://u:s3cret@h/", "t").unwrap_err().to_string();
        assert!(!e.contains("s3cret"), "{e}");
        assert!(split_url("no-scheme", "t").is_err());
        assert!(is_dropped_header(":authority") && is_dropped_header("Content-Length"));
        assert!(!is_dropped_header("Accept"));
        assert!(
            is_conditional_header("If-None-Match") && is_conditional_header("if-modified-since")
        );
        assert!(!is_conditional_header("If-Then"));
    }
}
