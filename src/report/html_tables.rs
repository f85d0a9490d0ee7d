//! The HTML report's table of each step's status codes and Error Set (its other tables are
//! the shared sections), kept apart from its figures.

use super::html::table;
use crate::summary::Summary;
use std::fmt::Write as _;

/// Each measured step's status codes and Error Set, as one table (the stages' own numbers
/// are in the Stages table).
pub fn steps(b: &mut String, s: &Summary) {
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
