//! The breakdown tables of the HTML report (failures, status codes by request, requests by
//! stage, each step's status codes and Error Set), kept apart from its figures.

use super::html::table;
use crate::summary::Summary;
use std::fmt::Write as _;

/// The tables about requests: flows, status codes by request and the Failures table.
pub fn breakdowns(b: &mut String, s: &Summary) {
    if !s.flows.is_empty() {
        let _ = writeln!(b, "<h2>Flows</h2>");
        b.push_str(&table(&super::by_flow::rows(&s.flows)));
    }
    if s.by_request.len() > 1 {
        if let Some(rows) = super::request_status::rows(s) {
            let _ = writeln!(b, "<h2>Status codes by request</h2>");
            b.push_str(&table(&rows));
        }
    }
    if !s.failures.is_empty() {
        let _ = writeln!(b, "<h2>Failures</h2>");
        b.push_str(&table(&super::failures::rows(s)));
    }
}

/// The tables about stages: requests by stage, then each measured step's status codes and
/// Error Set.
pub fn stage_breakdowns(b: &mut String, s: &Summary) {
    if let Some(rows) = super::request_stage::rows(s) {
        let _ = writeln!(b, "<h2>Requests by stage</h2>");
        b.push_str(&table(&rows));
    }
    let steps = super::steps::measured(s);
    let kept = steps
        .iter()
        .any(|(_, st)| !st.status_codes.is_empty() || !st.error_set.is_empty());
    if !kept {
        return;
    }
    let _ = writeln!(b, "<h2>Status codes and errors by step</h2>");
    let mut rows = vec![vec![
        "Step".to_string(),
        "Status codes".into(),
        "Error Set".into(),
    ]];
    for (title, st) in steps {
        let errors: Vec<String> = st
            .error_set
            .iter()
            .map(|e| format!("{} {}", e.key, e.count))
            .collect();
        rows.push(vec![
            title,
            super::text::status_codes(&st.status_codes, &st.error_set),
            if errors.is_empty() {
                "-".into()
            } else {
                errors.join(", ")
            },
        ]);
    }
    b.push_str(&table(&rows));
}
