//! `headroom export` on a run directory whose `raw.bin` and `raw.json` are the input, through
//! the calls the command makes: `RunDir::open_raw` (the header), `RunDir::raw_end`, and
//! `export_raw` reading every record and writing CSV or JSON lines, counted against
//! `raw.json`. The run's metadata is a real run's (three requests, two stages), so records
//! naming other requests or stages are damage.
//!
//! Input:
//! ```text
//! byte 0      flags: bit 0 a raw.json follows (the run finished); bit 1 each whole record
//!             gets its checksum recomputed before it is read (so mutations reach the decoding
//!             past the checksum); bit 2 JSON lines (else CSV)
//! 16 bytes    with bit 0: raw.json's records and dropped, u64 LE each
//! the rest    raw.bin
//! ```
//!
//! Invariants: no panic, no allocation past the RSS limit; a bad header is a `StoreError`
//! naming the file; every row written is a record read (never more than the file's whole
//! records); an export that succeeds holds exactly what raw.json says the run wrote, and one
//! that fails says how many it exported, and why (damage at a record, records missing, records
//! too many), with the rows it wrote matching.
#![no_main]

use headroom::report::export::{export_raw, ExportError, RawFormat, COLUMNS};
use headroom::store::{RunDir, StoreError};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

const META: &str = include_str!("raw_export_meta.json");
/// The raw file's magic and its bytes per record (src/store/raw/codec.rs).
const MAGIC: &[u8] = b"HRRAW\0\0\x01";
const RECORD: usize = 52;

fn dir() -> &'static tempfile::TempDir {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().expect("a temporary directory");
        std::fs::write(dir.path().join("meta.json"), META).expect("write meta");
        dir
    })
}

/// Where the records start, when `raw` has a whole header.
fn records_start(raw: &[u8]) -> Option<usize> {
    if raw.len() < 12 || &raw[..8] != MAGIC {
        return None;
    }
    let len = u32::from_le_bytes(raw[8..12].try_into().expect("4 bytes")) as usize;
    Some(12 + len).filter(|&start| start <= raw.len())
}

/// Recomputes the checksum of every whole record after the header.
fn fix_checksums(raw: &mut [u8]) {
    let Some(start) = records_start(raw) else {
        return;
    };
    for record in raw[start..].chunks_exact_mut(RECORD) {
        let crc = crc32fast::hash(&record[..48]);
        record[48..].copy_from_slice(&crc.to_le_bytes());
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let (given, raw) = if flags & 1 != 0 {
        if rest.len() < 16 {
            return;
        }
        let (counts, raw) = rest.split_at(16);
        let at = |i: usize| u64::from_le_bytes(counts[i..i + 8].try_into().expect("8 bytes"));
        (Some((at(0), at(8))), raw)
    } else {
        (None, rest)
    };
    let mut raw = raw.to_vec();
    if flags & 2 != 0 {
        fix_checksums(&mut raw);
    }
    let root = dir().path();
    std::fs::write(root.join("raw.bin"), &raw).expect("write raw.bin");
    match given {
        Some((records, dropped)) => std::fs::write(
            root.join("raw.json"),
            format!("{{\"records\": {records}, \"dropped\": {dropped}}}"),
        )
        .expect("write raw.json"),
        None => {
            let _ = std::fs::remove_file(root.join("raw.json"));
        }
    }
    let run = RunDir::at(root);
    let meta = run.meta().expect("the fixed metadata reads");
    let mut reader = match run.open_raw(&meta) {
        Ok(Some(reader)) => reader,
        Ok(None) => panic!("raw.bin was written, yet not found"),
        Err(e) => {
            assert!(
                matches!(e, StoreError::Corrupt { .. } | StoreError::Io { .. }),
                "{e}"
            );
            assert!(records_start(&raw).is_none() || e.to_string().contains("header"), "{e}");
            return;
        }
    };
    let end = run.raw_end().expect("raw.json as written reads");
    assert_eq!(end.map(|e| (e.records, e.dropped)), given);
    let jsonl = flags & 4 != 0;
    let format = if jsonl { RawFormat::Jsonl } else { RawFormat::Csv };
    let mut out = Vec::new();
    let result = export_raw(&meta, &mut reader, end, format, &mut out);
    let text = String::from_utf8(out).expect("the export is UTF-8");
    let mut lines = text.lines();
    if !jsonl {
        assert_eq!(lines.next(), Some(COLUMNS.join(",").as_str()), "{text}");
    }
    let mut rows = 0u64;
    for line in lines {
        if jsonl {
            let row: serde_json::Value = serde_json::from_str(line).expect("a row is JSON");
            assert_eq!(row.as_object().map(|o| o.len()), Some(COLUMNS.len()), "{line}");
        }
        rows += 1;
    }
    let whole = records_start(&raw).map_or(0, |start| (raw.len() - start) / RECORD) as u64;
    assert!(rows <= whole, "{rows} rows from {whole} whole records");
    let e = match result {
        Ok(exported) => {
            assert_eq!(rows, exported.records);
            if let Some(end) = end {
                assert_eq!(exported.records, end.records);
            }
            return;
        }
        Err(e) => e,
    };
    match &e {
        ExportError::Damaged { cause, exported } => {
            assert_eq!(rows, *exported);
            assert!(
                matches!(cause, StoreError::Corrupt { .. } | StoreError::Io { .. }),
                "{cause}"
            );
        }
        ExportError::Missing { held, written, .. } => {
            assert!(end.is_some() && held < written, "{e}");
            assert_eq!(rows, *held);
        }
        ExportError::Surplus {
            held,
            written,
            first_repeat,
            ..
        } => {
            assert!(end.is_some() && held > written, "{e}");
            assert_eq!(rows, *held);
            assert!(first_repeat.is_none_or(|n| n >= 2 && n <= *held), "{e}");
        }
        ExportError::Write(w) => panic!("writing to memory failed: {w}"),
    }
    let _ = e.to_string();
});
