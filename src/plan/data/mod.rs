//! Data for templates: tables read from CSV or JSON-lines files, and generated key-value sets.
//!
//! A table is checked whole when it is loaded and held in memory when small, or read back
//! from its file by blocks when large (see [`table`]); a generated set is computed on
//! demand, so a million 5 KiB values cost nothing until sent. Values are the same on every
//! run: a written key is read back with the value it was written with.

mod rows;
mod table;

pub use table::{Table, Unreadable};

use std::path::{Path, PathBuf};

/// Columns of a generated key-value set.
const GENERATED_COLUMNS: [&str; 3] = ["key", "value", "index"];

/// Rows a request can draw from.
#[derive(Debug)]
pub enum Dataset {
    /// Rows read from a file.
    Table(Table),
    /// `count` keys with `value_bytes`-byte values, computed on demand.
    Generated {
        /// Number of keys.
        count: u64,
        /// Length of each value.
        value_bytes: usize,
        /// Digits in a key's number, so keys sort in order.
        width: usize,
        /// What each key starts with (`key-` by default), so sets written side by side (256 B
        /// and 5 KB values) do not overwrite each other.
        prefix: String,
        /// The column names.
        columns: Vec<String>,
    },
}

/// How a request picks its row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pick {
    /// Row k for the k-th send, wrapping around at the end.
    #[default]
    Sequential,
    /// A row drawn for each send (the same draws on every run).
    Random,
    /// Row k for the k-th send; sends beyond the last row fail as `data_exhausted`.
    Unique,
}

impl Pick {
    /// The row of the `k`-th send among `rows`, or `None` when a unique pick ran out.
    #[inline]
    pub fn row(self, k: u64, rows: u64) -> Option<u64> {
        if rows == 0 {
            return None;
        }
        match self {
            Pick::Sequential => Some(k % rows),
            Pick::Random => Some(splitmix64(k) % rows),
            Pick::Unique => (k < rows).then_some(k),
        }
    }
}

/// Why data cannot be loaded.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// The file cannot be read.
    #[error("{}: {reason}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The file is not well-formed, at a line.
    #[error("{}:{line}: {reason}", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// The line (from 1).
        line: u64,
        /// What is wrong.
        reason: String,
    },
    /// A generated set cannot be made.
    #[error("{0}")]
    Generate(String),
}

impl Dataset {
    /// Reads a CSV file whose first line names the columns.
    pub fn csv(path: &Path) -> Result<Dataset, DataError> {
        Table::read(path, rows::Format::Csv).map(Dataset::Table)
    }

    /// Reads a JSON-lines file: one object per line, the first line's keys are the columns.
    pub fn jsonl(path: &Path) -> Result<Dataset, DataError> {
        Table::read(path, rows::Format::JsonLines).map(Dataset::Table)
    }

    /// `count` keys (`key-0000042`, or another `prefix`) with `value_bytes`-byte values of
    /// letters and digits.
    pub fn generate(
        count: u64,
        value_bytes: usize,
        prefix: Option<&str>,
    ) -> Result<Dataset, DataError> {
        let prefix = prefix.unwrap_or("key-");
        // Plain characters only: a key then needs no escaping in a path, header or JSON
        // string, which lets templates be sized without looking at each key.
        if prefix.len() > 64 || !prefix.bytes().all(is_plain) {
            return Err(DataError::Generate(format!(
                "the key prefix {prefix:?} must be at most 64 letters, digits or -._~"
            )));
        }
        if count == 0 {
            return Err(DataError::Generate(
                "a generated set needs at least one key".into(),
            ));
        }
        if value_bytes > 64 * 1024 * 1024 {
            return Err(DataError::Generate(format!(
                "values of {value_bytes} bytes are above the 64 MiB a request body may carry here"
            )));
        }
        Ok(Dataset::Generated {
            count,
            value_bytes,
            width: (count - 1).max(1).ilog10() as usize + 1,
            prefix: prefix.to_string(),
            columns: GENERATED_COLUMNS.iter().map(|c| c.to_string()).collect(),
        })
    }

    /// The column names.
    pub fn columns(&self) -> &[String] {
        match self {
            Dataset::Table(t) => t.columns(),
            Dataset::Generated { columns, .. } => columns,
        }
    }

    /// Number of rows.
    pub fn rows(&self) -> u64 {
        match self {
            Dataset::Table(t) => t.rows(),
            Dataset::Generated { count, .. } => *count,
        }
    }

    /// True when its rows are read from a file as the run goes (a descriptor held open).
    pub fn holds_file(&self) -> bool {
        matches!(self, Dataset::Table(t) if !t.is_resident())
    }

    /// The longest value `column` holds, in bytes, and whether all are plain (letters,
    /// digits and `-._~`, which no context escapes): a generated set's are.
    pub fn widest(&self, column: usize) -> (u64, bool) {
        match self {
            Dataset::Table(t) => t.widest(column),
            Dataset::Generated {
                value_bytes,
                width,
                prefix,
                ..
            } => match column {
                0 => (prefix.len() as u64 + *width as u64, true),
                1 => (*value_bytes as u64, true),
                _ => (20, true),
            },
        }
    }

    /// The first row whose `column` holds a line break, if any (it could not go in a header).
    pub fn line_break_in(&self, column: usize) -> Option<u64> {
        match self {
            Dataset::Table(t) => t.line_break_in(column),
            Dataset::Generated { .. } => None,
        }
    }

    /// Appends the value of `column` in `row` to `out`; fails only when a table too large
    /// to hold cannot be read back from its file.
    #[inline]
    pub fn write_cell(&self, row: u64, column: usize, out: &mut Vec<u8>) -> Result<(), Unreadable> {
        match self {
            Dataset::Table(t) => t.write_cell(row, column, out),
            Dataset::Generated {
                value_bytes,
                width,
                prefix,
                ..
            } => {
                use std::io::Write;
                match column {
                    0 => {
                        let _ = write!(out, "{prefix}{row:0width$}");
                    }
                    1 => generated_value(row, *value_bytes, out),
                    _ => {
                        let _ = write!(out, "{row}");
                    }
                }
                Ok(())
            }
        }
    }
}

/// A byte no context escapes: letters, digits and `-._~`.
fn is_plain(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~".contains(&b)
}

/// A well-mixed 64-bit hash: consecutive inputs give unrelated outputs.
#[inline]
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The value of key `row`: `len` letters and digits from a stream seeded by the row.
fn generated_value(row: u64, len: usize, out: &mut Vec<u8>) {
    const ALPHABET: &[u8; 36] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    out.reserve(len);
    let mut state = splitmix64(row ^ 0x5EED);
    let mut left = len;
    while left > 0 {
        state = splitmix64(state);
        let mut bits = state;
        // Ten characters per 64-bit draw (six bits each, reduced into the alphabet).
        for _ in 0..left.min(10) {
            out.push(ALPHABET[(bits & 63) as usize % 36]);
            bits >>= 6;
        }
        left -= left.min(10);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(d: &Dataset, row: u64, column: usize) -> String {
        let mut out = Vec::new();
        d.write_cell(row, column, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_generated_set_is_the_same_every_time_and_costs_nothing_up_front() {
        let d = Dataset::generate(1_000_000, 5 * 1024, None).unwrap();
        assert_eq!(d.rows(), 1_000_000);
        assert_eq!(cell(&d, 42, 0), "key-000042");
        let apart = Dataset::generate(1_000, 8, Some("perf5k-")).unwrap();
        assert_eq!(cell(&apart, 7, 0), "perf5k-007");
        assert_eq!(apart.widest(0), (10, true));
        assert!(Dataset::generate(1_000, 8, Some("a/b")).is_err());
        let v = cell(&d, 42, 1);
        assert_eq!(v.len(), 5 * 1024);
        assert!(v.bytes().all(|b| b.is_ascii_alphanumeric()));
        assert_eq!(v, cell(&d, 42, 1), "same key, same value");
        assert_ne!(v, cell(&d, 43, 1));
        assert_eq!(cell(&d, 42, 2), "42");
    }

    #[test]
    fn tables_load_from_csv_and_jsonl_with_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let csv_path = dir.path().join("users.csv");
        std::fs::write(&csv_path, "name,token\nann,\"a,1\"\nbob,b2\n").unwrap();
        let d = Dataset::csv(&csv_path).unwrap();
        assert_eq!(d.columns(), ["name", "token"]);
        assert_eq!(
            (d.rows(), cell(&d, 0, 1), cell(&d, 1, 0)),
            (2, "a,1".into(), "bob".into())
        );

        let jl = dir.path().join("ev.jsonl");
        std::fs::write(
            &jl,
            "{\"id\": 7, \"name\": \"x\"}\n{\"id\": 8, \"name\": \"y\"}\n",
        )
        .unwrap();
        let d = Dataset::jsonl(&jl).unwrap();
        assert_eq!((cell(&d, 1, 0), cell(&d, 1, 1)), ("8".into(), "y".into()));

        std::fs::write(&csv_path, "name,token\nann\n").unwrap();
        let e = Dataset::csv(&csv_path).unwrap_err().to_string();
        assert!(e.contains("users.csv:2:"), "{e}");
        std::fs::write(&jl, "{\"id\": 7}\n[1]\n").unwrap();
        let e = Dataset::jsonl(&jl).unwrap_err().to_string();
        assert!(e.contains("ev.jsonl:2: expected a JSON object"), "{e}");
        let e = Dataset::csv(&dir.path().join("nope.csv"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("nope.csv"), "{e}");
    }

    #[test]
    fn picks_walk_draw_or_run_out() {
        assert_eq!(Pick::Sequential.row(7, 5), Some(2));
        assert_eq!(Pick::Unique.row(4, 5), Some(4));
        assert_eq!(Pick::Unique.row(5, 5), None);
        let draws: std::collections::HashSet<u64> =
            (0..1000).filter_map(|k| Pick::Random.row(k, 100)).collect();
        assert!(
            draws.len() > 90,
            "random picks cover the rows: {}",
            draws.len()
        );
        assert_eq!(Pick::Random.row(3, 100), Pick::Random.row(3, 100));
    }
}
