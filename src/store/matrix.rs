//! A matrix directory: one stored run per variant and a record naming them with their cells.
//!
//! ```text
//! MATRIX_DIR/matrix.json        the command, the columns, each variant's cells and run
//! MATRIX_DIR/01-rate10/         one ordinary run directory per variant
//! ```
//! The record is rewritten before and after each variant, so an interrupted matrix still
//! names the variants done and the partial one.

use super::{read_json, write_json, StoreError};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The name of the matrix's record in its directory.
pub const RECORD: &str = "matrix.json";

/// A matrix as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MatrixRecord {
    /// The command line, secrets redacted.
    pub command: Vec<String>,
    /// The scenario file.
    pub scenario: String,
    /// The columns that tell variants apart: labels, then values by path.
    pub columns: Vec<MatrixColumn>,
    /// The variants in run order.
    pub variants: Vec<VariantEntry>,
}

/// A column of the variant table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatrixColumn {
    /// A label's name, or a value's path.
    pub key: String,
    /// The heading shown.
    pub heading: String,
}

/// One variant: its cells and where its run is.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VariantEntry {
    /// Its run directory, relative to the matrix's.
    pub run: String,
    /// One cell per column ("-" where the variant leaves the value as the scenario has it).
    pub cells: Vec<String>,
    /// How far it got.
    pub state: VariantState,
}

/// How far a variant got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VariantState {
    /// Not started (the matrix was stopped before it).
    Pending,
    /// Running, or killed while it ran.
    Running,
    /// Ran to its end.
    Completed,
    /// Stopped by a signal: its run is partial.
    Interrupted,
}

impl MatrixRecord {
    /// Reads the record in `dir`; `None` when `dir` holds no matrix.
    pub fn load(dir: &Path) -> Result<Option<MatrixRecord>, StoreError> {
        let path = dir.join(RECORD);
        if !path.exists() {
            return Ok(None);
        }
        read_json(&path).map(Some)
    }

    /// Writes the record into `dir`.
    pub fn save(&self, dir: &Path) -> Result<(), StoreError> {
        write_json(&dir.join(RECORD), self)
    }
}
