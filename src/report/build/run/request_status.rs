//! Status codes by request: one row per request, one column per status code seen, and the
//! requests that got no answer at all.

use crate::report::document::{Cell, Table};
use crate::summary::Summary;
use std::collections::BTreeSet;

/// Columns aligned left: method and name.
pub const LEFT: usize = 2;

/// One row per request; `None` when the run kept no codes per request (a run stored before
/// they were kept).
pub fn table(s: &Summary) -> Option<Table> {
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
    let mut rows = Vec::new();
    for r in &s.by_request {
        let mut row = vec![
            Cell::Text(r.method.clone()),
            Cell::Text(super::by_request::name(r)),
        ];
        row.extend(codes.iter().map(|c| {
            r.status_codes
                .get(c)
                .map_or(Cell::Empty, |&n| Cell::Count(n))
        }));
        let answered: u64 = r.status_codes.values().sum();
        row.push(match r.count.saturating_sub(answered) {
            0 => Cell::Empty,
            n => Cell::Count(n),
        });
        rows.push(row);
    }
    Some(Table {
        header,
        rows,
        left: LEFT,
    })
}
