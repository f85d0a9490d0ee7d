//! Internals the fuzz targets in `fuzz/` drive, behind the `fuzzing` feature. Not part of the
//! API: nothing here is stable, and the default build does not have it.
//!
//! Everything else the targets drive (the scenario loader, templates, URLs, stored runs) is
//! public already; only what the engine keeps to itself is re-exported here, unchanged.

pub use crate::engine::http1::chunked::{Chunked, Progress};
pub use crate::engine::http1::response::{Complete, Fed, ResponseReader};
pub use crate::engine::http1::Codec;
pub use crate::engine::reply::{Kept, Reply, KEEP_LIMIT};

/// Parses a `Name: value` header as `-H` and scenario headers are (the private
/// `plan::request::parse_header`).
pub fn parse_header(
    raw: &str,
) -> Result<(http::HeaderName, http::HeaderValue), crate::plan::PlanError> {
    crate::plan::request::parse_header(raw)
}

/// Whether a scenario's text (an import's, rendered) reads back as the scenario file model,
/// and why not.
pub fn scenario_file_reads(text: &str) -> Result<(), String> {
    yaml_serde::from_str::<crate::plan::scenario::file::ScenarioFile>(text)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// The `scheme://authority` an import reads `url` as going to (the port left out when it is
/// the scheme's default), or `None` when it cannot be imported.
pub fn import_origin(url: &str) -> Option<String> {
    let (scheme, authority, _, _) = crate::plan::import::draft::split_url(url, "fuzz").ok()?;
    Some(format!("{scheme}://{authority}"))
}
