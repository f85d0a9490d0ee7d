//! Why requests failed: one row per request and reason (a status it does not expect, an
//! answer whose body broke its expectation, a transport error), the Failures table; and the
//! Error Set of any span (the run, a step) with the expectation failures in it.

use super::ErrorEntry;
use crate::plan::Expect;
use crate::record::{ErrorKindKey, RequestStats};
use crate::sample::Side;
use crate::store::RequestMeta;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Why a request failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Reason {
    /// The server answered with a status the request does not expect.
    Status {
        /// The status code.
        code: u16,
    },
    /// The status was one it expects, but the body did not hold what it expects
    /// (`expect: body` or `expect: json`).
    Expectation {
        /// The status code.
        code: u16,
    },
    /// No usable answer: a classified error (transport, TLS, a capture missing …).
    Error {
        /// The error's stable key.
        error: ErrorKindKey,
    },
}

impl Reason {
    /// Who is to blame.
    pub fn side(self) -> Side {
        match self {
            Reason::Status { .. } | Reason::Expectation { .. } => Side::Server,
            Reason::Error { error } => error.0.side(),
        }
    }

    /// The reason of an unexpected answer with status `code` to a request expecting `expect`.
    fn of_unmet(code: u16, expect: &Expect) -> Reason {
        if expect.allows(code) {
            Reason::Expectation { code }
        } else {
            Reason::Status { code }
        }
    }
}

/// One request's failures of one reason.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FailureRow {
    /// The request's name.
    pub request: String,
    /// Its HTTP method.
    pub method: String,
    /// Why it failed.
    pub reason: Reason,
    /// How often.
    pub count: u64,
}

/// The Failures table: every request's failures by reason, most frequent first.
pub fn rows(requests: &[RequestMeta], stats: &[RequestStats]) -> Vec<FailureRow> {
    let mut rows = Vec::new();
    for (meta, st) in requests.iter().zip(stats) {
        for (reason, count) in reasons(&meta.expect, st) {
            rows.push(FailureRow {
                request: meta.name.clone(),
                method: meta.method.clone(),
                reason,
                count,
            });
        }
    }
    // Stable: equal counts keep plan order.
    rows.sort_by_key(|r| std::cmp::Reverse(r.count));
    rows
}

/// One request's failures by reason.
fn reasons(expect: &Expect, st: &RequestStats) -> BTreeMap<Reason, u64> {
    let mut out = BTreeMap::new();
    for (&code, &n) in &st.unmet {
        *out.entry(Reason::of_unmet(code, expect)).or_default() += n;
    }
    for (&error, &n) in &st.errors {
        *out.entry(Reason::Error { error }).or_default() += n;
    }
    out
}

/// The Error Set of a span: each classified error, each 5xx answer, and the answers the
/// requests did not expect (a 4xx a request does not take, a body that broke its
/// expectation), so a run's failed share is always explained.
pub fn error_set(
    errors: &BTreeMap<ErrorKindKey, u64>,
    status: &BTreeMap<u16, u64>,
    requests: &[RequestMeta],
    stats: &[RequestStats],
) -> Vec<ErrorEntry> {
    let mut entries: Vec<ErrorEntry> = errors
        .iter()
        .map(|(k, n)| ErrorEntry {
            key: k.0.key().into(),
            side: k.0.side(),
            description: k.0.description().into(),
            count: *n,
        })
        .collect();
    for (code, n) in status.range(500..) {
        entries.push(ErrorEntry {
            key: format!("status_{code}"),
            side: Side::Server,
            description: format!("HTTP {code} from the server"),
            count: *n,
        });
    }
    // 5xx answers are above whatever the requests expect; every other unexpected answer
    // is added once per code (or once for all broken expectations).
    let mut unmet: BTreeMap<Reason, u64> = BTreeMap::new();
    for (meta, st) in requests.iter().zip(stats) {
        for (&code, &n) in st.unmet.range(..500) {
            *unmet
                .entry(Reason::of_unmet(code, &meta.expect))
                .or_default() += n;
        }
        for (&code, &n) in st.unmet.range(500..) {
            if meta.expect.allows(code) {
                *unmet.entry(Reason::Expectation { code }).or_default() += n;
            }
        }
    }
    let mut broken = 0;
    for (reason, n) in unmet {
        match reason {
            Reason::Status { code } => entries.push(ErrorEntry {
                key: format!("status_{code}"),
                side: Side::Server,
                description: format!("HTTP {code}, an answer the request does not expect"),
                count: n,
            }),
            Reason::Expectation { .. } => broken += n,
            Reason::Error { .. } => {}
        }
    }
    if broken > 0 {
        entries.push(ErrorEntry {
            key: "expectation_failed".into(),
            side: Side::Server,
            description: "a status the request expects, but a body without what it expects (expect: body or json)".into(),
            count: broken,
        });
    }
    entries.sort_by(|a, b| b.count.cmp(&a.count).then(a.key.cmp(&b.key)));
    entries
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::ErrorKind;

    fn meta(name: &str, expect: Expect) -> RequestMeta {
        RequestMeta {
            name: name.into(),
            weight: 1,
            method: "POST".into(),
            path: "/".into(),
            headers: Vec::new(),
            body_bytes: 0,
            expect,
            login: false,
        }
    }

    #[test]
    fn unexpected_answers_are_told_apart_from_broken_bodies_and_errors() {
        let expect = Expect {
            status: vec![(200, 200)],
            body: Some("ok".into()),
            json: Vec::new(),
        };
        let mut st = RequestStats {
            count: 10,
            failures: 6,
            ..Default::default()
        };
        st.unmet.insert(200, 3);
        st.unmet.insert(400, 2);
        st.errors.insert(ErrorKindKey(ErrorKind::Reset), 1);
        let requests = [meta("create", expect)];
        let rows = rows(&requests, std::slice::from_ref(&st));
        let got: Vec<(Reason, u64)> = rows.iter().map(|r| (r.reason, r.count)).collect();
        assert_eq!(
            got,
            [
                (Reason::Expectation { code: 200 }, 3),
                (Reason::Status { code: 400 }, 2),
                (
                    Reason::Error {
                        error: ErrorKindKey(ErrorKind::Reset)
                    },
                    1
                ),
            ]
        );
        let mut errors = BTreeMap::new();
        errors.insert(ErrorKindKey(ErrorKind::Reset), 1);
        let set = error_set(&errors, &BTreeMap::new(), &requests, &[st]);
        let keys: Vec<(&str, u64)> = set.iter().map(|e| (e.key.as_str(), e.count)).collect();
        assert_eq!(
            keys,
            [("expectation_failed", 3), ("status_400", 2), ("reset", 1)]
        );
    }
}
