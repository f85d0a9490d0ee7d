//! Writers: one per format, each reading only a [`Document`](super::document::Document).

pub mod html;
pub mod json;
pub mod markdown;
pub mod text;
