//! The Failures table: which request failed, why (a status it does not expect, a body
//! that broke its expectation, a transport error) and how often.

use crate::report::document::{Cell, Table};
use crate::summary::{Reason, Summary};

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

/// One row per request and reason; no rows when nothing failed.
pub fn table(s: &Summary) -> Table {
    let mut t = Table::new(&["Method", "Request", "Reason", "Count", "Share"], LEFT);
    let count_of = |name: &str| {
        s.by_request
            .iter()
            .find(|r| r.name == name)
            .map_or(0, |r| r.count)
    };
    for f in &s.failures {
        let of = count_of(&f.request);
        t.rows.push(vec![
            Cell::Text(f.method.clone()),
            Cell::Text(f.request.clone()),
            Cell::Text(words(f.reason)),
            Cell::Count(f.count),
            if of > 0 {
                Cell::Percent(100.0 * f.count as f64 / of as f64)
            } else {
                Cell::Empty
            },
        ]);
    }
    t
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
