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

// How far a variant got is the summary's to say (reports read it there, never the store).
pub use crate::summary::matrix::VariantState;

impl MatrixRecord {
    /// Reads the record in `dir`; `None` when `dir` holds no matrix.
    pub fn load(dir: &Path) -> Result<Option<MatrixRecord>, StoreError> {
        let path = dir.join(RECORD);
        if !path.exists() {
            return Ok(None);
        }
        let record: MatrixRecord = read_json(&path)?;
        record
            .check()
            .map_err(|reason| StoreError::Corrupt { path, reason })?;
        Ok(Some(record))
    }

    /// A record as headroom writes it: a cell per column in every variant, and each
    /// variant's run a plain directory name inside the matrix's (never a path out of it).
    fn check(&self) -> Result<(), String> {
        for (i, v) in self.variants.iter().enumerate() {
            if v.cells.len() != self.columns.len() {
                return Err(format!(
                    "variant {}: {} cell(s) for {} column(s)",
                    i + 1,
                    v.cells.len(),
                    self.columns.len()
                ));
            }
            let plain = std::path::Path::new(&v.run)
                .components()
                .eq([std::path::Component::Normal(v.run.as_ref())]);
            if !plain {
                return Err(format!(
                    "variant {}: {:?} is not a directory name in the matrix",
                    i + 1,
                    v.run
                ));
            }
        }
        Ok(())
    }

    /// Writes the record into `dir`.
    pub fn save(&self, dir: &Path) -> Result<(), StoreError> {
        write_json(&dir.join(RECORD), self)
    }
}
