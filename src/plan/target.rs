//! Where requests go: a parsed, checked `http(s)://host:port/path` URL.

use super::secret_names::redact_url;
use super::PlanError;

/// The URL scheme, which decides whether TLS is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scheme {
    /// Cleartext HTTP.
    Http,
    /// HTTP over TLS.
    Https,
}

/// A request target split into the parts the engine needs.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Target {
    /// The URL as given (without user info).
    pub url: String,
    /// http or https.
    pub scheme: Scheme,
    /// Host name or IP literal (without brackets), used for DNS and TLS server name.
    pub host: String,
    /// TCP port.
    pub port: u16,
    /// `host[:port]` as sent in `Host` / `:authority`.
    pub authority: String,
    /// Path and query, at least `/`.
    pub path_and_query: String,
}

impl Target {
    /// Parses an absolute http(s) URL.
    pub fn parse(url: &str) -> Result<Target, PlanError> {
        let bad = |reason: &str| PlanError::Url {
            url: redact_url(url),
            reason: reason.to_string(),
        };
        let uri: http::Uri = url
            .parse()
            .map_err(|e: http::uri::InvalidUri| bad(&e.to_string()))?;
        let scheme = match uri.scheme_str() {
            Some("http") => Scheme::Http,
            Some("https") => Scheme::Https,
            Some(other) => return Err(bad(&format!("scheme {other:?} is not http or https"))),
            None => return Err(bad("missing scheme; write http://host/path or https://…")),
        };
        let authority = uri.authority().ok_or_else(|| bad("missing host"))?;
        if authority.as_str().contains('@') {
            return Err(bad(
                "user info in URLs is not supported; send credentials with -H 'Authorization: …'",
            ));
        }
        let host = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']');
        if host.is_empty() {
            return Err(bad("missing host"));
        }
        // `http::Uri` takes anything after the host's colon and reports a port it cannot
        // read as no port at all: that is a bad port, not the scheme's default.
        let after_host = authority
            .as_str()
            .rsplit_once(']')
            .map_or(authority.as_str(), |(_, rest)| rest);
        let port = match after_host.rsplit_once(':') {
            None => match scheme {
                Scheme::Http => 80,
                Scheme::Https => 443,
            },
            Some((_, p)) => p
                .parse::<u16>()
                .map_err(|_| bad(&format!("port {p:?} is not a number from 1 to 65535")))?,
        };
        if port == 0 {
            return Err(bad("port 0 cannot be connected to"));
        }
        // `http://h?x=1` has an empty path, which a request line cannot carry before its
        // query: the path is `/` (RFC 9112 §3.2.1).
        let path_and_query = match uri.path_and_query().map(|p| p.as_str()) {
            None | Some("") => "/".to_string(),
            Some(p) if p.starts_with('/') => p.to_string(),
            Some(p) => format!("/{p}"),
        };
        Ok(Target {
            // What is shown of the URL; the request sends `path_and_query` as given.
            url: crate::plan::secret_names::redact_query(url),
            scheme,
            host: host.to_string(),
            port,
            authority: authority.as_str().to_string(),
            path_and_query,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_defaults_and_ipv6() {
        let t = Target::parse("https://[::1]/status?x=1").unwrap();
        assert_eq!(t.scheme, Scheme::Https);
        assert_eq!(t.host, "::1");
        assert_eq!(t.port, 443);
        assert_eq!(t.authority, "[::1]");
        assert_eq!(t.path_and_query, "/status?x=1");
        let t = Target::parse("http://127.0.0.1:8080").unwrap();
        assert_eq!((t.port, t.path_and_query.as_str()), (8080, "/"));
    }

    #[test]
    fn a_query_without_a_path_gets_the_root_path() {
        // Found by fuzzing (fuzz/fuzz_targets/url_header.rs): "?0.0.1:8080" was sent as the
        // request line's target, which no server can read.
        let t = Target::parse("http://17?0.0.1:8080").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("17", 80));
        assert_eq!(t.path_and_query, "/?0.0.1:8080");
        assert_eq!(
            Target::parse("https://h:8443?q=1").unwrap().path_and_query,
            "/?q=1"
        );
    }

    #[test]
    fn rejects_what_cannot_be_sent() {
        for url in [
            "127.0.0.1:80/x",
            "ftp://h/",
            "http://",
            "not a url",
            "http://u:p@h/",
        ] {
            assert!(Target::parse(url).is_err(), "{url} should be rejected");
        }
    }

    #[test]
    fn a_port_out_of_range_or_not_a_number_is_refused() {
        for url in [
            "http://127.0.0.1:99999/",
            "http://127.0.0.1:abc/",
            "https://h:65536",
        ] {
            let e = Target::parse(url).unwrap_err().to_string();
            assert!(e.contains("from 1 to 65535"), "{url}: {e}");
        }
        assert_eq!(Target::parse("http://h:65535/").unwrap().port, 65535);
    }

    #[test]
    fn errors_never_show_a_password() {
        let e = Target::parse("http://alice:s3cret@h:99999/x").unwrap_err();
        let e = e.to_string();
        assert!(!e.contains("s3cret") && !e.contains("alice"), "{e}");
        assert!(e.contains("http://***@h:99999/x"), "{e}");
        assert_eq!(
            redact_url("https://a:b@c@h/p?q=x@y"),
            "https://***@h/p?q=x@y"
        );
        assert_eq!(redact_url("not a url"), "not a url");
    }
}
