//! What is sent: method, headers and body of the one request an attack repeats.

use super::PlanError;
use bytes::Bytes;

/// Header names whose values are secrets: redacted wherever a run is described.
pub const SENSITIVE_HEADERS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
    "x-api-key",
    "x-auth-token",
    "x-vault-token",
];

/// A request, ready to be cloned cheaply for every send.
#[derive(Debug, Clone)]
pub struct RequestSpec {
    /// HTTP method.
    pub method: http::Method,
    /// Extra headers, in order.
    pub headers: Vec<(http::HeaderName, http::HeaderValue)>,
    /// Request body (empty for none); `Bytes` so each send shares it.
    pub body: Bytes,
}

impl RequestSpec {
    /// Builds a request from command-line strings.
    pub fn parse(method: &str, headers: &[String], body: Bytes) -> Result<RequestSpec, PlanError> {
        let method = http::Method::from_bytes(method.to_ascii_uppercase().as_bytes())
            .map_err(|_| PlanError::Method(method.to_string()))?;
        let headers = headers
            .iter()
            .map(|h| parse_header(h))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(RequestSpec {
            method,
            headers,
            body,
        })
    }

    /// Headers with secret values replaced, for metadata and reports.
    pub fn redacted_headers(&self) -> Vec<String> {
        self.headers
            .iter()
            .map(|(name, value)| {
                if is_sensitive(name.as_str()) {
                    format!("{name}: <redacted>")
                } else {
                    format!("{name}: {}", String::from_utf8_lossy(value.as_bytes()))
                }
            })
            .collect()
    }
}

/// True when a header's value must never be stored or printed.
pub fn is_sensitive(name: &str) -> bool {
    SENSITIVE_HEADERS
        .iter()
        .any(|s| s.eq_ignore_ascii_case(name.trim()))
}

fn parse_header(raw: &str) -> Result<(http::HeaderName, http::HeaderValue), PlanError> {
    let (name, value) = raw
        .split_once(':')
        .ok_or_else(|| PlanError::Header(redact_raw(raw)))?;
    let name = http::HeaderName::from_bytes(name.trim().as_bytes())
        .map_err(|_| PlanError::Header(redact_raw(raw)))?;
    let mut value = http::HeaderValue::from_str(value.trim())
        .map_err(|_| PlanError::Header(redact_raw(raw)))?;
    if is_sensitive(name.as_str()) {
        value.set_sensitive(true);
    }
    Ok((name, value))
}

/// Error messages quote the header, so a secret value must not ride along.
fn redact_raw(raw: &str) -> String {
    match raw.split_once(':') {
        Some((name, _)) if is_sensitive(name) => format!("{}: <redacted>", name.trim()),
        _ => raw.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_redacted_in_descriptions_and_errors() {
        let spec = RequestSpec::parse(
            "get",
            &["Authorization: Bearer s3cret".into(), "X-Trace: 1".into()],
            Bytes::new(),
        )
        .unwrap();
        assert_eq!(spec.method, http::Method::GET);
        let shown = spec.redacted_headers().join("\n");
        assert!(!shown.contains("s3cret"));
        assert!(shown.contains("x-trace: 1"));
        let err = RequestSpec::parse(
            "GET",
            &["Authorization: Bearer s3cret\u{1}".into()],
            Bytes::new(),
        );
        let shown = format!("{}", err.unwrap_err());
        assert!(!shown.contains("s3cret"), "{shown}");
    }

    #[test]
    fn rejects_malformed_headers_and_methods() {
        assert!(RequestSpec::parse("GET", &["no-colon".into()], Bytes::new()).is_err());
        assert!(RequestSpec::parse("GE T", &[], Bytes::new()).is_err());
    }
}
