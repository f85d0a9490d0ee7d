//! Status codes by request: one row per request, one column per status code seen, and the
//! requests that got no answer at all.

use crate::summary::Summary;
use crate::units::fmt_count;
use std::collections::BTreeSet;

/// Columns aligned left: method and name.
pub const LEFT: usize = 2;

/// The header and one row per request; `None` when the run kept no codes per request (a
/// run stored before they were kept).
pub fn rows(s: &Summary) -> Option<Vec<Vec<String>>> {
    let codes: BTreeSet<u16> = s
        .by_request
        .iter()
        .flat_map(|r| r.status_codes.keys().copied())
        .collect();
    if codes.is_empty() {
        return None;
    }
    let mut header = vec!["Method".to_string(), "Name".into()];
    header.extend(codes.iter().map(|c| c.to_string()));
    header.push("no answer".into());
    let mut rows = vec![header];
    for r in &s.by_request {
        let mut row = vec![r.method.clone(), super::by_request::name(r)];
        row.extend(
            codes
                .iter()
                .map(|c| r.status_codes.get(c).map_or("-".into(), |&n| fmt_count(n))),
        );
        let answered: u64 = r.status_codes.values().sum();
        row.push(match r.count.saturating_sub(answered) {
            0 => "-".into(),
            n => fmt_count(n),
        });
        rows.push(row);
    }
    Some(rows)
}
