//! The summary as pretty JSON.

use crate::summary::Summary;

/// Renders the summary as JSON (the serde model, so every field is documented on the type).
pub fn render_json(summary: &Summary) -> String {
    serde_json::to_string_pretty(summary).expect("a summary always serializes") + "\n"
}
