//! The Failures table: which request failed, why (a status it does not expect, a body
//! that broke its expectation, a transport error) and how often.

use crate::summary::{Reason, Summary};
use crate::units::fmt_count;

/// Columns aligned left: method, request and reason.
pub const LEFT: usize = 3;

/// A reason in words: "HTTP 404 (not expected)", "reset: connection reset by peer".
pub fn words(reason: Reason) -> String {
    match reason {
        Reason::Status { code } => format!("HTTP {code} (not expected)"),
        Reason::Expectation { code } => {
            format!("HTTP {code}, body without what it expects (expect: body/json)")
        }
        Reason::Error { error } => format!("{}: {}", error.0.key(), error.0.description()),
    }
}

/// The header and one row per request and reason; only the header when nothing failed.
pub fn rows(s: &Summary) -> Vec<Vec<String>> {
    let mut rows = vec![["Method", "Request", "Reason", "Count", "Share"]
        .iter()
        .map(|h| h.to_string())
        .collect::<Vec<_>>()];
    let count_of = |name: &str| {
        s.by_request
            .iter()
            .find(|r| r.name == name)
            .map_or(0, |r| r.count)
    };
    for f in &s.failures {
        let of = count_of(&f.request);
        rows.push(vec![
            f.method.clone(),
            f.request.clone(),
            words(f.reason),
            fmt_count(f.count),
            if of > 0 {
                format!("{:.2}%", 100.0 * f.count as f64 / of as f64)
            } else {
                "-".into()
            },
        ]);
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::ErrorKindKey;
    use crate::sample::ErrorKind;

    #[test]
    fn reasons_read_as_words() {
        assert_eq!(
            words(Reason::Status { code: 404 }),
            "HTTP 404 (not expected)"
        );
        assert!(words(Reason::Expectation { code: 200 }).starts_with("HTTP 200, body"));
        assert_eq!(
            words(Reason::Error {
                error: ErrorKindKey(ErrorKind::Reset)
            }),
            "reset: connection reset by peer"
        );
    }
}
