//! What is sent: each kind of request of a run, with its method, path, headers, body, share
//! of the load and the answers it expects.

use super::secret_names::is_secret_name;
use super::PlanError;
use bytes::Bytes;

/// One kind of request in a run: the row it gets in the report.
#[derive(Debug, Clone)]
pub struct NamedRequest {
    /// The name it is reported under.
    pub name: String,
    /// Its share of the load, relative to the other requests' weights.
    pub weight: u32,
    /// What is sent.
    pub spec: RequestSpec,
    /// Which answers count as success.
    pub expect: Expect,
    /// Templates filled for each send, when any part of the request varies.
    pub templates: Option<Templates>,
    /// The rows the templates draw from.
    pub data: Option<DataBinding>,
    /// Values taken from its response for the flow steps after it.
    pub captures: Vec<super::Capture>,
}

/// The varying parts of a request, parsed once.
#[derive(Debug, Clone)]
pub struct Templates {
    /// Path and query.
    pub path: super::Template,
    /// Header values, by name (all of the request's headers, in order).
    pub headers: Vec<(http::HeaderName, super::Template)>,
    /// Body; `None` sends the request's body as it is (a body file).
    pub body: Option<super::Template>,
}

impl Templates {
    /// Data rows each send takes: the batch of its slots (1 without one).
    pub fn rows_per_send(&self) -> usize {
        std::iter::once(&self.path)
            .chain(self.headers.iter().map(|(_, t)| t))
            .chain(&self.body)
            .map(super::Template::rows_per_send)
            .max()
            .unwrap_or(1)
    }
}

/// A request's data: which set, shared by every worker, and how rows are picked.
#[derive(Debug, Clone)]
pub struct DataBinding {
    /// The set's name in the scenario.
    pub name: String,
    /// The rows.
    pub dataset: std::sync::Arc<super::Dataset>,
    /// Sequential, random or unique.
    pub pick: super::Pick,
}

impl DataBinding {
    /// The row of the `k`-th draw; `None` when a unique pick ran out. A shard's draws are
    /// numbered by the whole test's turns (`schedule::Mix::shard`), so shards draw disjoint
    /// rows of one pass through the set without a part of their own.
    #[inline]
    pub fn row(&self, k: u64) -> Option<u64> {
        self.pick.row(k, self.dataset.rows())
    }
}

impl NamedRequest {
    /// The only request of a one-line attack, named after its method and path.
    pub fn single(spec: RequestSpec, target: &super::Target) -> NamedRequest {
        let path = spec.path.as_deref().unwrap_or(&target.path_and_query);
        // The name is shown and stored: a token in the query stays out of it.
        let path = super::secret_names::redact_query(path);
        NamedRequest {
            name: format!("{} {path}", spec.method),
            weight: 1,
            spec,
            expect: Expect::default(),
            templates: None,
            data: None,
            captures: Vec::new(),
        }
    }
}

/// The answers a request expects; anything else is a failure of that request.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Expect {
    /// Allowed status codes, as inclusive ranges.
    pub status: Vec<(u16, u16)>,
    /// Text the body must contain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// Values the JSON body must hold, by path (`data.state` → `"active"`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub json: Vec<(String, serde_json::Value)>,
}

impl Default for Expect {
    /// 2xx and 3xx, as every load tool counts success.
    fn default() -> Self {
        Expect {
            status: vec![(200, 399)],
            body: None,
            json: Vec::new(),
        }
    }
}

impl Expect {
    /// True when checking the answer needs its body.
    pub fn reads_body(&self) -> bool {
        self.body.is_some() || !self.json.is_empty()
    }

    /// True when `body` holds what this request expects of it.
    pub fn body_holds(&self, body: &[u8]) -> bool {
        if let Some(text) = &self.body {
            if !body
                .windows(text.len().max(1))
                .any(|w| w == text.as_bytes())
            {
                return false;
            }
        }
        if self.json.is_empty() {
            return true;
        }
        let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) else {
            return false;
        };
        self.json.iter().all(|(path, want)| {
            let Some(steps) = super::json_path(path) else {
                return false;
            };
            let mut at = &value;
            for step in &steps {
                let next = match step {
                    super::JsonStep::Key(k) => at.get(k),
                    super::JsonStep::Index(i) => at.get(i),
                };
                match next {
                    Some(v) => at = v,
                    None => return false,
                }
            }
            at == want
        })
    }

    /// True when `code` is an answer this request expects.
    #[inline]
    pub fn allows(&self, code: u16) -> bool {
        self.status
            .iter()
            .any(|&(lo, hi)| (lo..=hi).contains(&code))
    }
}

/// A request, ready to be cloned cheaply for every send.
#[derive(Debug, Clone)]
pub struct RequestSpec {
    /// HTTP method.
    pub method: http::Method,
    /// Path and query, when not the target URL's own.
    pub path: Option<String>,
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
            path: None,
            headers,
            body,
        })
    }

    /// Headers with secret values replaced, for metadata and reports.
    pub fn redacted_headers(&self) -> Vec<String> {
        self.headers
            .iter()
            .map(|(name, value)| {
                if is_secret_name(name.as_str()) {
                    format!("{name}: <redacted>")
                } else {
                    format!("{name}: {}", String::from_utf8_lossy(value.as_bytes()))
                }
            })
            .collect()
    }
}

pub(crate) fn parse_header(raw: &str) -> Result<(http::HeaderName, http::HeaderValue), PlanError> {
    let (name, value) = raw
        .split_once(':')
        .ok_or_else(|| PlanError::Header(redact_raw(raw)))?;
    let name = http::HeaderName::from_bytes(name.trim().as_bytes())
        .map_err(|_| PlanError::Header(redact_raw(raw)))?;
    let mut value = http::HeaderValue::from_str(value.trim())
        .map_err(|_| PlanError::Header(redact_raw(raw)))?;
    if is_secret_name(name.as_str()) {
        value.set_sensitive(true);
    }
    Ok((name, value))
}

/// What an error says of a header: its name, never its value (a credential whatever the
/// header's name, or a value taken from the environment).
fn redact_raw(raw: &str) -> String {
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    match raw.split_once(':') {
        // A name with a character no header name holds may be a value typed before the colon
        // (`Authorization Bearer …: x`): shown only up to that character.
        Some((name, _)) => match name.trim().find(|c: char| !token(c)) {
            Some(cut) => format!("{}…: <value not shown>", &name.trim()[..cut]),
            None => format!("{}: <value not shown>", name.trim()),
        },
        None => format!("<{} characters without a colon>", raw.chars().count()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_redacted_in_descriptions_and_errors() {
        let spec = RequestSpec::parse(
            "get",
            &[
                "Authorization: Bearer s3cret".into(),
                "X-Goog-Api-Key: s3cret-goog".into(),
                "apikey: s3cret-plain".into(),
                "X-Trace: 1".into(),
            ],
            Bytes::new(),
        )
        .unwrap();
        assert_eq!(spec.method, http::Method::GET);
        let shown = spec.redacted_headers().join("\n");
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(shown.contains("x-trace: 1"));
        let err = RequestSpec::parse(
            "GET",
            &["Authorization: Bearer s3cret\u{1}".into()],
            Bytes::new(),
        );
        let shown = format!("{}", err.unwrap_err());
        assert!(!shown.contains("s3cret"), "{shown}");
        for raw in [
            "X-Token: env\u{1}s3cret",
            "Bearer s3cret",
            "Authorization Bearer s3cret: x",
        ] {
            let shown = format!(
                "{}",
                RequestSpec::parse("GET", &[raw.into()], Bytes::new()).unwrap_err()
            );
            assert!(!shown.contains("s3cret"), "{shown}");
        }
    }

    #[test]
    fn rejects_malformed_headers_and_methods() {
        assert!(RequestSpec::parse("GET", &["no-colon".into()], Bytes::new()).is_err());
        assert!(RequestSpec::parse("GE T", &[], Bytes::new()).is_err());
    }
}
