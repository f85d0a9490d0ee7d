//! What a run would send, without sending it: for `run --check`, the TLS files read as the
//! run reads them and one request rendered as the engine renders it, secrets left out.

use super::request::{RequestTemplate, Scratch};
use super::tls;
use super::EngineError;
use crate::plan::{AttackPlan, Scheme};

/// One request as it would go on the wire (HTTP/1.1), with secrets left out.
#[derive(Debug, Clone, PartialEq)]
pub struct Preview {
    /// The request line and headers, sensitive header values replaced by `<redacted>`, data
    /// and captured values by `$name`.
    pub head: Vec<String>,
    /// The body's length: its bytes may be a password or a data file's values.
    pub body_bytes: u64,
}

/// Reads the CA bundle, client certificate and key the run would use, as it would: a file
/// missing or unusable is the same error before the run as at its start.
pub fn check_tls(plan: &AttackPlan) -> Result<(), EngineError> {
    if plan.targets().any(|t| t.scheme == Scheme::Https) {
        tls::client_config(&plan.tls, plan.connection.http, None)?;
    }
    Ok(())
}

/// The first send of request `index` to the run's first target, as the engine renders it,
/// with each data value and captured value written as `$name`: a check shows where values
/// go, never a value read from a file.
pub fn request(plan: &AttackPlan, index: usize) -> Result<Preview, EngineError> {
    let request = plan
        .requests
        .get(index)
        .ok_or_else(|| EngineError::Request(format!("the plan has no request {index}")))?;
    let template = RequestTemplate::new(&plan.target, request, plan.connection.keepalive)
        .map_err(EngineError::Request)?;
    let names: Vec<String> = request
        .data
        .iter()
        .flat_map(|d| d.dataset.columns().iter().cloned())
        .chain(plan.variables.iter().cloned())
        .collect();
    let mut scratch = Scratch::default();
    let (bytes, body_bytes) = template.h1_placeholders(&names, &mut scratch);
    let head_len = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or(bytes.len());
    let head = String::from_utf8_lossy(&bytes[..head_len])
        .split("\r\n")
        .map(redact_line)
        .collect();
    Ok(Preview { head, body_bytes })
}

/// A header line with its value replaced when the header carries credentials.
fn redact_line(line: &str) -> String {
    match line.split_once(':') {
        Some((name, _)) if crate::plan::request::is_sensitive(name) => {
            format!("{name}: <redacted>")
        }
        _ => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_never_reach_a_preview() {
        assert_eq!(
            redact_line("Authorization: Bearer s3cret"),
            "Authorization: <redacted>"
        );
        assert_eq!(redact_line("x-api-key: k"), "x-api-key: <redacted>");
        assert_eq!(redact_line("Accept: */*"), "Accept: */*");
        assert_eq!(redact_line("GET /a:b HTTP/1.1"), "GET /a:b HTTP/1.1");
    }
}
