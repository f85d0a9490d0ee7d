//! Writers: one per format, each reading only a [`Document`](super::document::Document).

pub mod html;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod step_summary;
pub(crate) mod table;
pub mod text;
mod xml;
