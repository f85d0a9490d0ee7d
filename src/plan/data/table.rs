//! A data set read from a file: checked whole when the scenario is loaded, then held in
//! memory when small, or read back from the file a block of rows at a time when not, so a
//! data set of gigabytes costs megabytes.
//!
//! The scan reads the file once in bounded memory (see [`super::rows`]), checks every row,
//! counts them and notes where every block of rows starts. A block is the rows of one
//! stretch between two noted starts: at most [`MAX_BLOCKS`] are noted, so a larger file has
//! more rows per block rather than a larger index. A run's threads each keep the last few
//! blocks they read, so consecutive rows cost one read of the file per block; a random pick
//! from a file on disk reads (and parses) one block per send, a few kilobytes.

use super::rows::{Cells, Format, RowError, RowReader};
use super::DataError;
use std::cell::RefCell;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// The most a table may take in memory (its values and 4 bytes per cell); a larger one is
/// read from its file as rows are needed.
pub const RESIDENT_MAX: usize = 64 * 1024 * 1024;

/// The most block starts noted for a file read from disk (8 bytes each).
const MAX_BLOCKS: usize = 1 << 20;

/// Blocks each thread keeps: a request's rows, and those of the few data sets a mix uses.
const CACHED_BLOCKS: usize = 4;

/// The most bytes a block may span: what a thread reads at once (a file of billions of
/// short rows followed by long ones could make blocks of gigabytes).
const MAX_BLOCK_BYTES: u64 = 64 * 1024 * 1024;

/// Rows read from a file.
#[derive(Debug)]
pub struct Table {
    columns: Vec<String>,
    rows: u64,
    /// Per column, the first row whose value holds a line break.
    line_breaks: Vec<Option<u64>>,
    /// Per column, its longest value (what a template filled from it may grow to), and
    /// whether all its values are plain (letters, digits, `-._~`: nothing to escape).
    widest: Vec<(u64, bool)>,
    store: Store,
}

/// Where a table's values are.
#[derive(Debug)]
enum Store {
    /// All in memory.
    Resident(Cells),
    /// In the file, read back by blocks.
    OnDisk(Blocks),
}

/// A file read back by blocks of rows.
#[derive(Debug)]
struct Blocks {
    /// Tells this table's blocks apart in the threads' caches.
    id: u64,
    file: std::fs::File,
    format: Format,
    rows_per_block: u64,
    /// The offset of each block's first row.
    starts: Vec<u64>,
    /// The end of the last row.
    end: u64,
}

/// A table's file could not be read back during the run (changed, truncated or failing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the data file could not be read back (was it changed or removed during the run?)")]
pub struct Unreadable;

impl Table {
    /// Reads and checks the file at `path`.
    pub(super) fn read(path: &Path, format: Format) -> Result<Table, DataError> {
        let read_error = |reason: String| DataError::Read {
            path: path.to_path_buf(),
            reason,
        };
        let at_line = |e: RowError| match e {
            RowError::Io(e) => read_error(e.to_string()),
            RowError::Malformed { line, reason } => DataError::Malformed {
                path: path.to_path_buf(),
                line,
                reason,
            },
        };
        let Some((file, file_len)) =
            crate::plan::regular_file::open_regular(path).map_err(|e| read_error(e.to_string()))?
        else {
            return Err(read_error(
                "not a regular file (a device, FIFO, socket or directory)".into(),
            ));
        };
        let source = std::io::BufReader::with_capacity(64 * 1024, &file);
        let (mut reader, columns) = RowReader::open(source, format).map_err(at_line)?;
        if columns.is_empty() {
            return Err(at_line(RowError::Malformed {
                line: 1,
                reason: "the first line names no columns".into(),
            }));
        }
        let mut line_breaks = vec![None; columns.len()];
        let mut widest = vec![(0u64, true); columns.len()];
        // A file larger than a table may hold is not gathered at all, only indexed.
        let mut resident = (file_len <= RESIDENT_MAX as u64).then(Cells::default);
        let mut starts = Starts::default();
        let mut row = Cells::default();
        let mut rows = 0u64;
        while let Some(at) = reader.next_row(&mut row).map_err(at_line)? {
            if format == Format::Csv && std::str::from_utf8(&row.text).is_err() {
                return Err(at_line(RowError::Malformed {
                    line: at.line,
                    reason: "not UTF-8".into(),
                }));
            }
            if row.text.iter().any(|&b| b == b'\n' || b == b'\r') {
                for (column, first) in line_breaks.iter_mut().enumerate() {
                    if first.is_none() && row.cell(column).iter().any(|&b| b == b'\n' || b == b'\r')
                    {
                        *first = Some(rows);
                    }
                }
            }
            for (column, (bytes, plain)) in widest.iter_mut().enumerate() {
                let cell = row.cell(column);
                *bytes = (*bytes).max(cell.len() as u64);
                *plain &= cell.iter().copied().all(super::is_plain);
            }
            starts.note(rows, at.offset);
            if let Some(cells) = &mut resident {
                let cells_after = cells.ends.len() + row.ends.len();
                if cells.text.len() + row.text.len() + 4 * cells_after > RESIDENT_MAX {
                    // Too large to hold: from here on only the starts are kept.
                    resident = None;
                } else {
                    cells.extend(&row);
                }
            }
            row.clear();
            rows += 1;
        }
        let end = reader.offset();
        if resident.is_none() {
            let widest = starts
                .offsets
                .iter()
                .zip(starts.offsets.iter().skip(1).chain([&end]))
                .map(|(a, b)| b - a)
                .max()
                .unwrap_or(0);
            if widest > MAX_BLOCK_BYTES {
                return Err(read_error(format!(
                    "a block of {} rows spans {} MiB, above the {} MiB read at once: too few rows for their length (split the file)",
                    starts.rows_per_block,
                    widest >> 20,
                    MAX_BLOCK_BYTES >> 20
                )));
            }
        }
        let store = match resident {
            Some(mut cells) => {
                cells.text.shrink_to_fit();
                cells.ends.shrink_to_fit();
                Store::Resident(cells)
            }
            None => Store::OnDisk(Blocks {
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                end,
                file,
                format,
                rows_per_block: starts.rows_per_block,
                starts: starts.offsets,
            }),
        };
        Ok(Table {
            columns,
            rows,
            line_breaks,
            widest,
            store,
        })
    }

    /// The column names.
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// Number of rows.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// True when the values are held in memory rather than read from the file.
    pub fn is_resident(&self) -> bool {
        matches!(self.store, Store::Resident(_))
    }

    /// The first row whose `column` holds a line break, if any.
    pub fn line_break_in(&self, column: usize) -> Option<u64> {
        self.line_breaks.get(column).copied().flatten()
    }

    /// The longest value of `column`, in bytes, and whether all its values are plain.
    pub fn widest(&self, column: usize) -> (u64, bool) {
        self.widest.get(column).copied().unwrap_or((0, true))
    }

    /// Appends the value of `column` in `row` to `out`.
    #[inline]
    pub fn write_cell(&self, row: u64, column: usize, out: &mut Vec<u8>) -> Result<(), Unreadable> {
        let width = self.columns.len();
        match &self.store {
            Store::Resident(cells) => {
                out.extend_from_slice(cells.cell(row as usize * width + column));
                Ok(())
            }
            Store::OnDisk(blocks) => blocks.with_block_of(self, row, |cells, first| {
                out.extend_from_slice(cells.cell((row - first) as usize * width + column));
            }),
        }
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// Block starts as the scan notes them: every `rows_per_block`-th row's offset, the rows
/// per block doubling whenever [`MAX_BLOCKS`] are noted.
struct Starts {
    offsets: Vec<u64>,
    rows_per_block: u64,
}

impl Default for Starts {
    fn default() -> Self {
        Starts {
            offsets: Vec::new(),
            rows_per_block: 1,
        }
    }
}

impl Starts {
    fn note(&mut self, row: u64, offset: u64) {
        if row % self.rows_per_block != 0 {
            return;
        }
        if self.offsets.len() == MAX_BLOCKS {
            let mut kept = 0;
            self.offsets.retain(|_| {
                kept += 1;
                kept % 2 == 1
            });
            self.rows_per_block *= 2;
            if row % self.rows_per_block != 0 {
                return;
            }
        }
        self.offsets.push(offset);
    }
}

/// A block of rows a thread read.
struct Cached {
    table: u64,
    block: u64,
    first_row: u64,
    /// When it was last used, on this thread's count.
    used: u64,
    bytes: Vec<u8>,
    cells: Cells,
}

thread_local! {
    /// Each thread's last blocks: a thread sends its requests one at a time, so what it reads
    /// needs no lock, and memory is a few blocks per thread whatever the file's size.
    static CACHE: RefCell<(u64, Vec<Cached>)> = const { RefCell::new((0, Vec::new())) };
}

impl Blocks {
    /// Calls `f` with the cells of the block of `table` holding `row`, and the block's
    /// first row.
    fn with_block_of(
        &self,
        table: &Table,
        row: u64,
        f: impl FnOnce(&Cells, u64),
    ) -> Result<(), Unreadable> {
        let block = row / self.rows_per_block;
        CACHE.with_borrow_mut(|(clock, slots)| {
            *clock += 1;
            let found = slots
                .iter()
                .position(|s| s.table == self.id && s.block == block);
            let i = match found {
                Some(i) => i,
                None => {
                    let i = if slots.len() < CACHED_BLOCKS {
                        slots.push(Cached {
                            table: u64::MAX,
                            block: 0,
                            first_row: 0,
                            used: 0,
                            bytes: Vec::new(),
                            cells: Cells::default(),
                        });
                        slots.len() - 1
                    } else {
                        (0..slots.len()).min_by_key(|&i| slots[i].used).unwrap_or(0)
                    };
                    let slot = &mut slots[i];
                    slot.table = u64::MAX;
                    self.load(table, block, slot)?;
                    slot.table = self.id;
                    slot.block = block;
                    i
                }
            };
            let slot = &mut slots[i];
            slot.used = *clock;
            f(&slot.cells, slot.first_row);
            Ok(())
        })
    }

    /// Reads block `block` of `table` into `slot`.
    fn load(&self, table: &Table, block: u64, slot: &mut Cached) -> Result<(), Unreadable> {
        let start = *self.starts.get(block as usize).ok_or(Unreadable)?;
        let stop = self
            .starts
            .get(block as usize + 1)
            .copied()
            .unwrap_or(self.end);
        let len =
            usize::try_from(stop.checked_sub(start).ok_or(Unreadable)?).map_err(|_| Unreadable)?;
        slot.bytes.resize(len, 0);
        self.file
            .read_exact_at(&mut slot.bytes, start)
            .map_err(|_| Unreadable)?;
        slot.cells.clear();
        let first_row = block * self.rows_per_block;
        let count = self.rows_per_block.min(table.rows - first_row);
        let mut reader = RowReader::resume(&slot.bytes[..], self.format, &table.columns);
        for _ in 0..count {
            match reader.next_row(&mut slot.cells) {
                Ok(Some(_)) => {}
                _ => return Err(Unreadable),
            }
        }
        slot.first_row = first_row;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(t: &Table, row: u64, column: usize) -> String {
        let mut out = Vec::new();
        t.write_cell(row, column, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn starts_keep_at_most_their_bound_by_doubling_the_rows_per_block() {
        let mut s = Starts::default();
        let rows = 3 * MAX_BLOCKS as u64 + 5;
        for row in 0..rows {
            s.note(row, row * 10);
        }
        assert_eq!(s.rows_per_block, 4);
        assert!(s.offsets.len() <= MAX_BLOCKS);
        for (i, &offset) in s.offsets.iter().enumerate() {
            assert_eq!(
                offset,
                i as u64 * 4 * 10,
                "block {i} starts at its first row"
            );
        }
        assert_eq!(s.offsets.len() as u64, rows.div_ceil(4));
    }

    #[test]
    fn a_table_too_large_to_hold_reads_the_same_rows_from_disk() {
        let dir = tempfile::tempdir().unwrap();
        let value = "v".repeat(1000);
        // Every seventh value is quoted across lines.
        let expected = |row: u64| match row % 7 {
            0 => format!("{value}\nline two, \"quoted\""),
            _ => value.clone(),
        };
        for format in [Format::Csv, Format::JsonLines] {
            let path = dir.path().join("big");
            // 70 MiB of rows: past what is held in memory.
            let mut text = String::from(if format == Format::Csv {
                "key,value\n"
            } else {
                ""
            });
            let mut n = 0u64;
            while text.len() < RESIDENT_MAX + 6 * 1024 * 1024 {
                let v = expected(n);
                text += &match format {
                    Format::Csv => format!("k{n},\"{}\"\n", v.replace('"', "\"\"")),
                    Format::JsonLines => format!(
                        "{}\n",
                        serde_json::json!({"key": format!("k{n}"), "value": v})
                    ),
                };
                n += 1;
            }
            std::fs::write(&path, &text).unwrap();
            let t = Table::read(&path, format).unwrap();
            assert!(!t.is_resident());
            assert_eq!(
                (t.rows(), t.columns()),
                (n, &["key".into(), "value".into()][..])
            );
            assert_eq!((t.line_break_in(0), t.line_break_in(1)), (None, Some(0)));
            for row in [0, 1, 7, n / 2, n - 1, 3, 0] {
                assert_eq!(cell(&t, row, 0), format!("k{row}"));
                assert_eq!(cell(&t, row, 1), expected(row), "{format:?} row {row}");
            }
            // The file cut short under the run: the rows past the cut cannot be read.
            std::fs::write(&path, &text[..text.len() / 2]).unwrap();
            let mut out = Vec::new();
            assert_eq!(t.write_cell(n - 2, 0, &mut out), Err(Unreadable));
        }
    }

    #[test]
    fn small_files_are_held_and_devices_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ev.jsonl");
        std::fs::write(
            &path,
            "{\"id\": 7, \"name\": \"x\"}\n{\"id\": 8, \"name\": \"y\"}\n",
        )
        .unwrap();
        let t = Table::read(&path, Format::JsonLines).unwrap();
        assert!(t.is_resident());
        assert_eq!((cell(&t, 1, 0), cell(&t, 1, 1)), ("8".into(), "y".into()));
        let e = Table::read(Path::new("/dev/zero"), Format::Csv).unwrap_err();
        assert_eq!(
            e.to_string(),
            "/dev/zero: not a regular file (a device, FIFO, socket or directory)"
        );
        std::fs::write(&path, "{}\n").unwrap();
        let e = Table::read(&path, Format::JsonLines).unwrap_err();
        assert!(
            e.to_string()
                .ends_with(":1: the first line names no columns"),
            "{e}"
        );
    }
}
