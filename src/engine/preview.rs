//! What a run would send, without sending it: for `run --check`, the TLS files read as the
//! run reads them and one request rendered as the engine renders it, secrets left out.

use super::request::{RequestTemplate, Scratch};
use super::tls;
use super::EngineError;
use crate::plan::secret_names::{redact_header_line, redact_query};
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
        .enumerate()
        // The request line's query may carry a token; each header line, a credential.
        .map(|(i, line)| match (i, line.rsplit_once(' ')) {
            (0, Some((target, version))) => format!("{} {version}", redact_query(target)),
            _ => redact_header_line(line),
        })
        .collect();
    Ok(Preview { head, body_bytes })
}
