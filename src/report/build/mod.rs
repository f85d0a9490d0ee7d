//! Builders: one per subject, each turning what was measured into a
//! [`Document`](super::document::Document) (the answer, the figures, then the tables that
//! back it). Builders choose the words and the order; writers lay them out. No builder
//! reads the store: it is handed the records, summaries and figures it needs.

pub mod capacity;
pub mod checks;
pub mod compare;
pub mod matrix;
pub mod regression;

use super::document::{Document, Figures};

/// The document cut to its answer (what ran, the verdict, the objectives, the headline
/// numbers): what a CI job's step summary shows, several steps' one after another.
pub fn answer_only(doc: Document) -> Document {
    Document {
        figures: Figures::default(),
        sections: Vec::new(),
        ..doc
    }
}
