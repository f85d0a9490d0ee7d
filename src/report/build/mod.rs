//! Builders: one per subject, each turning its model (a summary, a capacity record, a
//! comparison's summaries, a matrix's table, a regression gate's verdicts) into a
//! [`Document`](super::document::Document), and the wording they share. Builders say what;
//! writers say how it looks. No builder reads the store: it is handed the records,
//! summaries and figures it needs.

pub mod capacity;
pub mod checks;
pub mod compare;
pub mod matrix;
pub mod objectives;
pub mod regression;
pub mod run;
pub mod verdict;
pub mod words;
