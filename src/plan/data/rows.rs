//! Reading a data file's rows one at a time, from any byte source, in bounded memory.
//!
//! The same reader scans a whole file when the scenario is loaded and decodes a block of it
//! again when a run needs those rows, so both read every byte the same way. A row longer
//! than [`MAX_ROW`] or with more than [`MAX_COLUMNS`] cells is refused as soon as the reader
//! gets there: a file of one endless line or of millions of columns costs at most those
//! bounds, never its own size. CSV goes through `csv_core`, which copies a record into
//! buffers the caller sizes; the `csv` crate would grow its record to whatever the file holds.

use std::borrow::Cow;
use std::io::BufRead;

/// The longest row of a data file, in bytes: a row's values go into one request.
pub const MAX_ROW: usize = 1024 * 1024;

/// The most columns a data file may have.
pub const MAX_COLUMNS: usize = 1024;

/// The format of a data file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Format {
    /// Comma-separated values; the first record names the columns.
    Csv,
    /// One JSON object per line; the first object's keys are the columns.
    JsonLines,
}

/// One or more rows' cells: their bytes end to end, and where each cell ends.
#[derive(Debug, Default)]
pub(super) struct Cells {
    /// The cells' bytes, one after another.
    pub text: Vec<u8>,
    /// The end of each cell in `text`; a cell starts where the one before it ends.
    pub ends: Vec<u32>,
}

impl Cells {
    /// Empties it, keeping its buffers.
    pub fn clear(&mut self) {
        self.text.clear();
        self.ends.clear();
    }

    /// Cell `i`.
    pub fn cell(&self, i: usize) -> &[u8] {
        let start = i.checked_sub(1).map_or(0, |p| self.ends[p] as usize);
        &self.text[start..self.ends[i] as usize]
    }

    /// Appends `other`'s cells.
    pub fn extend(&mut self, other: &Cells) {
        let base = self.text.len() as u32;
        self.text.extend_from_slice(&other.text);
        self.ends.extend(other.ends.iter().map(|e| base + e));
    }
}

/// Why a row cannot be read. Never holds the file's contents: a data file may be secrets.
#[derive(Debug, thiserror::Error)]
pub(super) enum RowError {
    /// The source failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The row at a line is not what the format or the columns want.
    #[error("line {line}: {reason}")]
    Malformed {
        /// Its first line (from 1).
        line: u64,
        /// What is wrong.
        reason: String,
    },
}

/// A JSON line's object.
type JsonObject = serde_json::Map<String, serde_json::Value>;

/// Where a row was found.
#[derive(Debug, Clone, Copy)]
pub(super) struct RowAt {
    /// Its first line, from 1.
    pub line: u64,
    /// The offset of its first byte (or of blank lines before it) in the source.
    pub offset: u64,
}

/// Reads rows from `source`.
pub(super) struct RowReader<'k, R> {
    source: R,
    format: Format,
    /// The number of columns each row must have, once known.
    columns: usize,
    csv: csv_core::Reader,
    /// Bytes consumed from the source.
    offset: u64,
    /// Lines consumed (JSON lines; CSV counts its own).
    line: u64,
    /// A JSON line's bytes.
    line_buf: Vec<u8>,
    /// A CSV record's field ends, as `csv_core` writes them.
    field_ends: Vec<usize>,
    /// The JSON object keys that are the columns, in order.
    keys: Cow<'k, [String]>,
    /// The first JSON object, read for its keys and still to be handed out as a row.
    pending: Option<(RowAt, Cells)>,
    /// True until a reader resumed mid-file has read: `csv_core` strips a byte-order mark
    /// from its first input, which only the file's start may have.
    mid_file: bool,
}

impl<'k, R: BufRead> RowReader<'k, R> {
    /// A reader at the start of a file, and the file's column names.
    pub fn open(source: R, format: Format) -> Result<(Self, Vec<String>), RowError> {
        let mut reader = RowReader::resume(source, format, &[]);
        reader.mid_file = false;
        let mut first = Cells::default();
        let columns = match format {
            Format::Csv => {
                let Some(at) = reader.csv_row(&mut first)? else {
                    return Err(malformed(1, "no header line naming the columns"));
                };
                let mut names = Vec::with_capacity(first.ends.len());
                for i in 0..first.ends.len() {
                    let name = std::str::from_utf8(first.cell(i))
                        .map_err(|_| malformed(at.line, "the header line is not UTF-8"))?;
                    names.push(name.trim().to_string());
                }
                names
            }
            Format::JsonLines => {
                let Some((at, object)) = reader.json_object()? else {
                    return Err(malformed(1, "no rows"));
                };
                if object.len() > MAX_COLUMNS {
                    return Err(too_many_columns(at.line));
                }
                let keys: Vec<String> = object.keys().cloned().collect();
                reader.keys = Cow::Owned(keys.clone());
                reader.object_cells(at.line, &object, &mut first)?;
                reader.pending = Some((at, first));
                keys
            }
        };
        reader.columns = columns.len();
        Ok((reader, columns))
    }

    /// A reader at a row boundary of a file whose columns are `columns` (offsets and lines
    /// are then counted from there).
    pub fn resume(source: R, format: Format, columns: &'k [String]) -> Self {
        RowReader {
            source,
            format,
            columns: columns.len(),
            csv: csv_core::Reader::new(),
            offset: 0,
            line: 0,
            line_buf: Vec::new(),
            field_ends: Vec::new(),
            keys: Cow::Borrowed(columns),
            pending: None,
            mid_file: true,
        }
    }

    /// Appends the next row's cells to `out`; `None` at the end of the source.
    pub fn next_row(&mut self, out: &mut Cells) -> Result<Option<RowAt>, RowError> {
        if let Some((at, cells)) = self.pending.take() {
            out.extend(&cells);
            return Ok(Some(at));
        }
        match self.format {
            Format::Csv => {
                let start = out.ends.len();
                let at = self.csv_row(out)?;
                if let Some(at) = at {
                    let fields = out.ends.len() - start;
                    if fields != self.columns {
                        return Err(malformed(
                            at.line,
                            &format!("{fields} fields where the header names {}", self.columns),
                        ));
                    }
                }
                Ok(at)
            }
            Format::JsonLines => match self.json_object()? {
                Some((at, object)) => {
                    self.object_cells(at.line, &object, out)?;
                    Ok(Some(at))
                }
                None => Ok(None),
            },
        }
    }

    /// Bytes consumed so far: after the last row, the end of the data.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The next CSV record, appended to `out`.
    fn csv_row(&mut self, out: &mut Cells) -> Result<Option<RowAt>, RowError> {
        use csv_core::ReadRecordResult as R;
        self.skip_blank_lines()?;
        let at = RowAt {
            // csv_core counts lines from 1.
            line: self.csv.line(),
            offset: self.offset,
        };
        let text_start = out.text.len();
        let (mut written, mut ended) = (0, 0);
        // Start small and double: most rows are short, and no row may pass MAX_ROW.
        out.text.resize(text_start + 256, 0);
        if self.field_ends.is_empty() {
            self.field_ends.resize(16, 0);
        }
        loop {
            let mut input = self.source.fill_buf()?;
            if std::mem::take(&mut self.mid_file) {
                // Less than a mark's three bytes: nothing is taken for one.
                input = &input[..input.len().min(1)];
            }
            let (result, read, wrote, ends) = self.csv.read_record(
                input,
                &mut out.text[text_start + written..],
                &mut self.field_ends[ended..],
            );
            self.source.consume(read);
            self.offset += read as u64;
            written += wrote;
            ended += ends;
            match result {
                R::InputEmpty => {}
                R::OutputFull => {
                    let room = out.text.len() - text_start;
                    if room > MAX_ROW {
                        out.text.truncate(text_start);
                        return Err(too_long(at.line));
                    }
                    out.text.resize(text_start + (room * 2).min(MAX_ROW + 1), 0);
                }
                R::OutputEndsFull => {
                    if self.field_ends.len() > MAX_COLUMNS {
                        out.text.truncate(text_start);
                        return Err(too_many_columns(at.line));
                    }
                    let more = self.field_ends.len() * 2;
                    self.field_ends.resize(more.min(MAX_COLUMNS + 1), 0);
                }
                R::Record => {
                    if written > MAX_ROW {
                        out.text.truncate(text_start);
                        return Err(too_long(at.line));
                    }
                    if ended > MAX_COLUMNS {
                        out.text.truncate(text_start);
                        return Err(too_many_columns(at.line));
                    }
                    out.text.truncate(text_start + written);
                    let base = text_start as u32;
                    out.ends
                        .extend(self.field_ends[..ended].iter().map(|&e| base + e as u32));
                    return Ok(Some(at));
                }
                R::End => {
                    out.text.truncate(text_start);
                    return Ok(None);
                }
            }
        }
    }

    /// Skips the line breaks before a record: blank lines, and the LF of a CRLF that
    /// `csv_core` ended the last record before, so a row's line and offset are its own.
    fn skip_blank_lines(&mut self) -> Result<(), RowError> {
        loop {
            let input = self.source.fill_buf()?;
            let blank = input
                .iter()
                .take_while(|&&b| b == b'\n' || b == b'\r')
                .count();
            if blank == 0 {
                return Ok(());
            }
            let lines = input[..blank].iter().filter(|&&b| b == b'\n').count();
            self.source.consume(blank);
            self.offset += blank as u64;
            self.csv.set_line(self.csv.line() + lines as u64);
        }
    }

    /// The next non-blank JSON line, as an object.
    fn json_object(&mut self) -> Result<Option<(RowAt, JsonObject)>, RowError> {
        loop {
            let at = RowAt {
                line: self.line + 1,
                offset: self.offset,
            };
            if !self.json_line(at.line)? {
                return Ok(None);
            }
            let line = self.line_buf.trim_ascii();
            if line.is_empty() {
                continue;
            }
            // serde_json's message could quote the line: say where, never what.
            let value: serde_json::Value = serde_json::from_slice(line).map_err(|e| {
                malformed(
                    at.line,
                    &format!("not valid JSON (at column {})", e.column()),
                )
            })?;
            let serde_json::Value::Object(object) = value else {
                return Err(malformed(at.line, "expected a JSON object"));
            };
            return Ok(Some((at, object)));
        }
    }

    /// Reads one line into `line_buf` (without its line break); false at the end.
    fn json_line(&mut self, line: u64) -> Result<bool, RowError> {
        self.line_buf.clear();
        loop {
            let input = self.source.fill_buf()?;
            if input.is_empty() {
                return Ok(!self.line_buf.is_empty());
            }
            let (take, done) = match input.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (input.len(), false),
            };
            if self.line_buf.len() + take > MAX_ROW + 1 {
                return Err(too_long(line));
            }
            self.line_buf.extend_from_slice(&input[..take]);
            self.source.consume(take);
            self.offset += take as u64;
            if done {
                self.line += 1;
                self.line_buf.pop();
                return Ok(true);
            }
        }
    }

    /// Appends the object's values of the columns, in their order, to `out`.
    fn object_cells(
        &self,
        line: u64,
        object: &JsonObject,
        out: &mut Cells,
    ) -> Result<(), RowError> {
        use std::io::Write;
        for key in self.keys.iter() {
            let Some(cell) = object.get(key) else {
                return Err(malformed(
                    line,
                    &format!("no {key:?}, which the first line has"),
                ));
            };
            match cell {
                serde_json::Value::String(s) => out.text.extend_from_slice(s.as_bytes()),
                other => {
                    let _ = write!(out.text, "{other}");
                }
            }
            out.ends.push(out.text.len() as u32);
        }
        Ok(())
    }
}

fn malformed(line: u64, reason: &str) -> RowError {
    RowError::Malformed {
        line,
        reason: reason.to_string(),
    }
}

fn too_long(line: u64) -> RowError {
    malformed(
        line,
        &format!(
            "a row longer than {} MiB, the most one request takes from a data file (put large bodies in body_file)",
            MAX_ROW / (1024 * 1024)
        ),
    )
}

fn too_many_columns(line: u64) -> RowError {
    malformed(
        line,
        &format!("more than {MAX_COLUMNS} columns, the most a data file may have"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(text: &[u8], format: Format) -> Result<(Vec<String>, Vec<Vec<String>>), RowError> {
        let (mut r, columns) = RowReader::open(text, format)?;
        let mut out = Vec::new();
        let mut cells = Cells::default();
        while r.next_row(&mut cells)?.is_some() {
            out.push(
                (0..cells.ends.len())
                    .map(|i| String::from_utf8_lossy(cells.cell(i)).into_owned())
                    .collect(),
            );
            cells.clear();
        }
        Ok((columns, out))
    }

    #[test]
    fn csv_rows_with_quotes_blank_lines_and_crlf() {
        let (columns, rows) = rows(
            b"\xef\xbb\xbfname , token\r\nann,\"a,1\"\r\n\r\nbob,\"say \"\"hi\"\"\nthere\"\ncy,",
            Format::Csv,
        )
        .unwrap();
        assert_eq!(columns, ["name", "token"]);
        assert_eq!(
            rows,
            [
                vec!["ann", "a,1"],
                vec!["bob", "say \"hi\"\nthere"],
                vec!["cy", ""]
            ]
        );
    }

    #[test]
    fn rows_are_placed_on_their_own_lines_after_crlf_and_blank_lines() {
        let text = b"a,b\r\n1,2\r\n\r\n\n3,4\r\nsecret\r\n";
        let (mut r, _) = RowReader::open(&text[..], Format::Csv).unwrap();
        let mut cells = Cells::default();
        let first = r.next_row(&mut cells).unwrap().unwrap();
        let second = r.next_row(&mut cells).unwrap().unwrap();
        assert_eq!((first.line, first.offset), (2, 5));
        assert_eq!((second.line, second.offset), (5, 13));
        assert_eq!(&text[13..16], b"3,4");
        let e = r.next_row(&mut cells).unwrap_err().to_string();
        assert_eq!(e, "line 6: 1 fields where the header names 2");
    }

    #[test]
    fn a_mark_is_taken_off_the_files_start_only() {
        let text = "k\n\u{feff}v\n".as_bytes();
        let (mut r, columns) = RowReader::open(text, Format::Csv).unwrap();
        let mut cells = Cells::default();
        let at = r.next_row(&mut cells).unwrap().unwrap();
        assert_eq!(cells.cell(0), "\u{feff}v".as_bytes());
        let mut again = RowReader::resume(&text[at.offset as usize..], Format::Csv, &columns);
        let mut resumed = Cells::default();
        again.next_row(&mut resumed).unwrap().unwrap();
        assert_eq!(resumed.cell(0), cells.cell(0));
    }

    #[test]
    fn json_lines_take_the_first_objects_keys() {
        let (columns, rows) = rows(
            b"{\"id\": 7, \"name\": \"x\"}\r\n\n{\"name\": \"y\", \"id\": [1], \"extra\": 0}",
            Format::JsonLines,
        )
        .unwrap();
        assert_eq!(columns, ["id", "name"]);
        assert_eq!(rows, [vec!["7", "x"], vec!["[1]", "y"]]);
    }

    #[test]
    fn bad_rows_say_where_and_never_what() {
        let err = |text: &[u8], format| rows(text, format).unwrap_err().to_string();
        assert_eq!(
            err(b"a,b\n1,2\nsecret\n", Format::Csv),
            "line 3: 1 fields where the header names 2"
        );
        assert_eq!(
            err(b"", Format::Csv),
            "line 1: no header line naming the columns"
        );
        let e = err(b"{\"a\": 1}\n{\"a\": secret}\n", Format::JsonLines);
        assert_eq!(e, "line 2: not valid JSON (at column 7)");
        assert_eq!(
            err(b"{\"a\": 1}\n[\"secret\"]\n", Format::JsonLines),
            "line 2: expected a JSON object"
        );
        assert_eq!(
            err(b"{\"a\": 1}\n{\"b\": \"secret\"}\n", Format::JsonLines),
            "line 2: no \"a\", which the first line has"
        );
        assert_eq!(err(b"\n\n", Format::JsonLines), "line 1: no rows");
    }

    #[test]
    fn endless_rows_and_endless_headers_stop_at_their_bounds() {
        // A source that never ends: only the bounds can stop it.
        struct Endless(u8);
        impl std::io::Read for Endless {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                buf.fill(self.0);
                Ok(buf.len())
            }
        }
        let endless = |b| std::io::BufReader::new(Endless(b));
        let e = RowReader::open(endless(b'x'), Format::Csv).err().unwrap();
        assert!(
            e.to_string().starts_with("line 1: a row longer than 1 MiB"),
            "{e}"
        );
        let e = RowReader::open(endless(b','), Format::Csv).err().unwrap();
        assert_eq!(
            e.to_string(),
            "line 1: more than 1024 columns, the most a data file may have"
        );
        let e = RowReader::open(endless(b' '), Format::JsonLines)
            .err()
            .unwrap();
        assert!(
            e.to_string().starts_with("line 1: a row longer than 1 MiB"),
            "{e}"
        );
        let wide = (0..=MAX_COLUMNS)
            .map(|i| format!("\"k{i}\": 1"))
            .collect::<Vec<_>>();
        let e = rows(
            format!("{{{}}}\n", wide.join(",")).as_bytes(),
            Format::JsonLines,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 1: more than 1024 columns, the most a data file may have"
        );
        // A row of exactly the most is taken.
        let mut text = b"a\n".to_vec();
        text.extend(std::iter::repeat_n(b'y', MAX_ROW));
        let (_, rows) = rows(&text, Format::Csv).unwrap();
        assert_eq!(rows[0][0].len(), MAX_ROW);
    }

    #[test]
    fn a_reader_resumed_at_a_row_reads_what_the_scan_read() {
        let text = b"k,v\n1,one\n2,\"t\nwo\"\n3,three\n";
        let (mut r, columns) = RowReader::open(&text[..], Format::Csv).unwrap();
        let mut cells = Cells::default();
        let first = r.next_row(&mut cells).unwrap().unwrap();
        let second = r.next_row(&mut cells).unwrap().unwrap();
        assert_eq!((first.line, second.line), (2, 3));
        let offset = second.offset as usize;
        let mut again = RowReader::resume(&text[offset..], Format::Csv, &columns);
        let mut cells = Cells::default();
        again.next_row(&mut cells).unwrap().unwrap();
        again.next_row(&mut cells).unwrap().unwrap();
        assert!(again.next_row(&mut cells).unwrap().is_none());
        assert_eq!(
            (cells.cell(1), cells.cell(3)),
            (&b"t\nwo"[..], &b"three"[..])
        );
    }
}
