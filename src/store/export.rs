//! `headroom export`: a run's raw records (`--raw`) as CSV or JSON lines, one row per
//! request, named from the run's metadata. Streamed: memory is one row's, whatever the run.

use super::{RawEnd, RawReader, RunMeta, StoreError};
use crate::record::RawRecord;
use crate::sample::Outcome;
use std::io::Write;
use std::path::PathBuf;

/// Formats of `headroom export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RawFormat {
    /// Comma-separated values with a header row.
    Csv,
    /// One JSON object per line.
    Jsonl,
}

/// The columns of a row, in CSV order; JSON lines use the same names.
pub const COLUMNS: [&str; 13] = [
    "request",
    "method",
    "stage",
    "intended_ns",
    "sent_ns",
    "latency_ns",
    "service_ns",
    "status",
    "error",
    "bytes_in",
    "bytes_out",
    "retried",
    "expected",
];

/// Why an export stopped.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The raw file is damaged at a record: the ones before it were exported.
    #[error("{cause}; the file is damaged from there, and the {exported} record(s) before it were exported")]
    Damaged {
        /// Where and how (not a `source`: the CLI would print it twice).
        cause: StoreError,
        /// Records exported before it.
        exported: u64,
    },
    /// The raw file holds fewer whole records than `raw.json` says the run wrote: every one
    /// it holds was exported, and the rest are not there.
    #[error("{}: holds {held} record(s), but raw.json says the run wrote {written}: {} missing (the file was cut short or partly copied after the run, or raw.json is damaged); the {held} it holds were exported, the export is not the whole run", path.display(), written - held)]
    Missing {
        /// The raw file.
        path: PathBuf,
        /// Whole records it holds (all exported).
        held: u64,
        /// Records the run wrote, as `raw.json` says.
        written: u64,
    },
    /// The raw file holds more records than `raw.json` says the run wrote: every one was
    /// exported, the surplus included.
    #[error("{}: holds {held} record(s), but raw.json says the run wrote {written}: {} too many{}; all {held} were exported, the surplus included", path.display(), held - written, repeat_words(*first_repeat))]
    Surplus {
        /// The raw file.
        path: PathBuf,
        /// Records it holds (all exported).
        held: u64,
        /// Records the run wrote, as `raw.json` says.
        written: u64,
        /// The first record repeating the one before it byte for byte, if one does.
        first_repeat: Option<u64>,
    },
    /// The output could not be written.
    #[error("writing the export failed: {0}")]
    Write(#[from] std::io::Error),
}

/// How a surplus came, when a record says so.
fn repeat_words(first_repeat: Option<u64>) -> String {
    match first_repeat {
        Some(n) => format!(
            " (record {n} repeats record {} byte for byte: appended twice, as no run writes two alike; it is row {n} of the export)",
            n - 1
        ),
        None => " (appended to after the run, or raw.json is damaged)".into(),
    }
}

/// What an export wrote.
#[derive(Debug, Clone, Copy)]
pub struct Exported {
    /// Rows written.
    pub records: u64,
    /// True when a torn last record (from a kill mid-write) was skipped.
    pub torn_tail: bool,
}

/// One row, borrowing its names from the metadata.
#[derive(serde::Serialize)]
struct Row<'a> {
    request: &'a str,
    method: &'a str,
    stage: Option<&'a str>,
    intended_ns: u64,
    sent_ns: u64,
    latency_ns: u64,
    service_ns: u64,
    status: Option<u16>,
    error: Option<&'static str>,
    bytes_in: u64,
    bytes_out: u64,
    retried: bool,
    expected: bool,
}

impl<'a> Row<'a> {
    /// The reader has checked the indices against `meta`.
    fn of(r: &RawRecord, meta: &'a RunMeta) -> Row<'a> {
        let ns = |d: std::time::Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        let request = &meta.requests[usize::from(r.request)];
        let (status, error) = match r.outcome {
            Outcome::Status(s) => (Some(s), None),
            Outcome::Error(k) => (None, Some(k.key())),
        };
        Row {
            request: &request.name,
            method: &request.method,
            stage: r.stage.map(|s| meta.stages[usize::from(s)].name.as_str()),
            intended_ns: ns(r.intended),
            sent_ns: ns(r.sent),
            latency_ns: ns(r.latency()),
            service_ns: ns(r.service()),
            status,
            error,
            bytes_in: r.bytes_in,
            bytes_out: r.bytes_out,
            retried: r.retried,
            expected: r.expected,
        }
    }

    fn csv(&self, w: &mut CsvLine) {
        let opt = |v: Option<u16>| v.map(|v| v.to_string()).unwrap_or_default();
        w.field(self.request);
        w.field(self.method);
        w.field(self.stage.unwrap_or(""));
        w.field(&self.intended_ns.to_string());
        w.field(&self.sent_ns.to_string());
        w.field(&self.latency_ns.to_string());
        w.field(&self.service_ns.to_string());
        w.field(&opt(self.status));
        w.field(self.error.unwrap_or(""));
        w.field(&self.bytes_in.to_string());
        w.field(&self.bytes_out.to_string());
        w.field(if self.retried { "true" } else { "false" });
        w.field(if self.expected { "true" } else { "false" });
    }
}

/// Writes every record `reader` holds to `out` in `format`; `reader` is the one
/// `RunDir::open_raw(meta)` opened, which checks each record's request and stage against `meta`.
/// With `end` (the run's `raw.json`), the records are counted against it: a file holding
/// fewer or more than the run wrote is an error once all it holds is written, never a
/// silent export of part of the run or of more than it.
pub fn export_raw(
    meta: &RunMeta,
    reader: &mut RawReader,
    end: Option<RawEnd>,
    format: RawFormat,
    out: &mut dyn Write,
) -> Result<Exported, ExportError> {
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, out);
    let mut line = CsvLine::new();
    if format == RawFormat::Csv {
        for c in COLUMNS {
            line.field(c);
        }
        out.write_all(line.end())?;
    }
    let mut records = 0u64;
    loop {
        let record = match reader.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(cause) => {
                out.flush()?;
                return Err(ExportError::Damaged {
                    cause,
                    exported: records,
                });
            }
        };
        let row = Row::of(&record, meta);
        match format {
            RawFormat::Csv => {
                row.csv(&mut line);
                out.write_all(line.end())?;
            }
            RawFormat::Jsonl => {
                serde_json::to_writer(&mut out, &row).map_err(std::io::Error::from)?;
                out.write_all(b"\n")?;
            }
        }
        records += 1;
    }
    out.flush()?;
    if let Some(RawEnd {
        records: written, ..
    }) = end
    {
        let path = reader.path().to_path_buf();
        if records < written {
            return Err(ExportError::Missing {
                path,
                held: records,
                written,
            });
        }
        if records > written {
            return Err(ExportError::Surplus {
                path,
                held: records,
                written,
                first_repeat: reader.first_repeat,
            });
        }
    }
    Ok(Exported {
        records,
        torn_tail: reader.torn_tail,
    })
}

/// One CSV line being written, quoted where a field needs it (RFC 4180).
struct CsvLine {
    writer: csv_core::Writer,
    bytes: Vec<u8>,
    fields: usize,
}

/// Room made at the end of the line for each csv-core call; a longer field takes several.
const ROOM: usize = 1024;

impl CsvLine {
    fn new() -> CsvLine {
        CsvLine {
            writer: csv_core::WriterBuilder::new()
                .terminator(csv_core::Terminator::Any(b'\n'))
                .build(),
            bytes: Vec::with_capacity(256),
            fields: 0,
        }
    }

    fn field(&mut self, text: &str) {
        if self.fields == 0 {
            self.bytes.clear();
        } else {
            let start = self.room();
            let (_, n) = self.writer.delimiter(&mut self.bytes[start..]);
            self.bytes.truncate(start + n);
        }
        let mut input = text.as_bytes();
        loop {
            let start = self.room();
            let (result, read, n) = self.writer.field(input, &mut self.bytes[start..]);
            self.bytes.truncate(start + n);
            input = &input[read..];
            if result == csv_core::WriteResult::InputEmpty {
                break;
            }
        }
        self.fields += 1;
    }

    /// The whole line with its terminator; the next field starts a new line.
    fn end(&mut self) -> &[u8] {
        let start = self.room();
        let (_, n) = self.writer.terminator(&mut self.bytes[start..]);
        self.bytes.truncate(start + n);
        self.fields = 0;
        &self.bytes
    }

    /// Makes [`ROOM`] bytes at the end of the line; returns where they start.
    fn room(&mut self) -> usize {
        let start = self.bytes.len();
        self.bytes.resize(start + ROOM, 0);
        start
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_other_than_the_run_s_says_how_many_and_why() {
        let missing = ExportError::Missing {
            path: "run/raw.bin".into(),
            held: 25,
            written: 100,
        };
        assert_eq!(
            missing.to_string(),
            "run/raw.bin: holds 25 record(s), but raw.json says the run wrote 100: 75 missing (the file was cut short or partly copied after the run, or raw.json is damaged); the 25 it holds were exported, the export is not the whole run"
        );
        let surplus = |first_repeat| {
            ExportError::Surplus {
                path: "run/raw.bin".into(),
                held: 101,
                written: 100,
                first_repeat,
            }
            .to_string()
        };
        assert_eq!(
            surplus(Some(101)),
            "run/raw.bin: holds 101 record(s), but raw.json says the run wrote 100: 1 too many (record 101 repeats record 100 byte for byte: appended twice, as no run writes two alike; it is row 101 of the export); all 101 were exported, the surplus included"
        );
        assert!(surplus(None)
            .contains("1 too many (appended to after the run, or raw.json is damaged)"));
    }

    #[test]
    fn csv_fields_are_quoted_only_when_they_need_it() {
        let mut line = CsvLine::new();
        let long = "x,".repeat(1_500);
        for f in ["plain", "a,b", "say \"hi\"", "", &long] {
            line.field(f);
        }
        let text = String::from_utf8(line.end().to_vec()).unwrap();
        assert_eq!(
            text,
            format!("plain,\"a,b\",\"say \"\"hi\"\"\",,\"{long}\"\n")
        );
        line.field("next");
        assert_eq!(line.end(), b"next\n");
    }
}
