//! Builders: one per subject, each turning its model (a summary, a capacity record, …) into a
//! [`Document`](super::document::Document), and the wording they share. Builders say what;
//! writers say how it looks.

pub mod checks;
pub mod objectives;
pub mod run;
pub mod verdict;
pub mod words;
