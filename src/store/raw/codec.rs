//! The raw file's bytes: a header naming the format and its error kinds, then fixed-size
//! records, each with its own checksum, so damage is found at the record it hits.
//!
//! ```text
//! header   "HRRAW\0\0\x01"  u32 LE length  JSON {"error_kinds": [key, ...]}
//! record   intended_ns u64 · sent_ns u64 · end_ns u64 · bytes_in u64 · bytes_out u64
//!          · request u16 · stage u16 · code u16 · flags u8 · 0u8 · crc32 u32   (52 bytes, LE)
//! ```
//! `code` is the status, or for an error its index in the header's `error_kinds` (so a
//! later headroom with more kinds still reads older files); `flags` say which, and whether
//! there is a stage, a retry, an expected answer. Times count from the start of the run.

use crate::record::RawRecord;
use crate::sample::{ErrorKind, Outcome};
use std::time::Duration;

/// The first bytes of a raw file, naming format version 1.
pub const MAGIC: &[u8; 8] = b"HRRAW\0\0\x01";
/// Bytes of one record.
pub const RECORD_BYTES: usize = 52;
/// The longest header read back: the error kinds take about 600 bytes.
pub const MAX_HEADER: u32 = 64 * 1024;

const HAS_STAGE: u8 = 1;
const ERROR: u8 = 2;
const RETRIED: u8 = 4;
const EXPECTED: u8 = 8;
const KNOWN_FLAGS: u8 = HAS_STAGE | ERROR | RETRIED | EXPECTED;

/// What the header says.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Header {
    /// Error kinds by the index records give them.
    pub error_kinds: Vec<String>,
}

impl Header {
    /// The header this headroom writes.
    pub fn current() -> Header {
        Header {
            error_kinds: ErrorKind::ALL.iter().map(|k| k.key().to_string()).collect(),
        }
    }

    /// The whole header, as written at the start of the file.
    pub fn to_bytes(&self) -> Vec<u8> {
        let json = serde_json::to_vec(self).expect("the raw header always serializes");
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&(json.len() as u32).to_le_bytes());
        out.extend_from_slice(&json);
        out
    }
}

/// The index records give `kind`: its place in [`ErrorKind::ALL`], as the header lists them.
fn kind_index(kind: ErrorKind) -> u16 {
    ErrorKind::ALL.iter().position(|k| *k == kind).unwrap_or(0) as u16
}

/// Writes `r` as one record.
pub fn encode(r: &RawRecord, out: &mut [u8; RECORD_BYTES]) {
    let ns = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    out[0..8].copy_from_slice(&ns(r.intended).to_le_bytes());
    out[8..16].copy_from_slice(&ns(r.sent).to_le_bytes());
    out[16..24].copy_from_slice(&ns(r.end).to_le_bytes());
    out[24..32].copy_from_slice(&r.bytes_in.to_le_bytes());
    out[32..40].copy_from_slice(&r.bytes_out.to_le_bytes());
    out[40..42].copy_from_slice(&r.request.to_le_bytes());
    out[42..44].copy_from_slice(&r.stage.unwrap_or(0).to_le_bytes());
    let (code, error) = match r.outcome {
        Outcome::Status(s) => (s, 0),
        Outcome::Error(k) => (kind_index(k), ERROR),
    };
    out[44..46].copy_from_slice(&code.to_le_bytes());
    let flags = error
        | if r.stage.is_some() { HAS_STAGE } else { 0 }
        | if r.retried { RETRIED } else { 0 }
        | if r.expected { EXPECTED } else { 0 };
    out[46] = flags;
    out[47] = 0;
    let crc = crc32fast::hash(&out[..48]);
    out[48..52].copy_from_slice(&crc.to_le_bytes());
}

/// Reads one record, or says what is wrong with it. `kinds` are the header's error kinds
/// resolved (`None` for a key this headroom does not know).
pub fn decode(
    bytes: &[u8; RECORD_BYTES],
    kinds: &[Option<ErrorKind>],
) -> Result<RawRecord, String> {
    let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
    let u16_at = |i: usize| u16::from_le_bytes(bytes[i..i + 2].try_into().expect("2 bytes"));
    let crc = u32::from_le_bytes(bytes[48..52].try_into().expect("4 bytes"));
    if crc != crc32fast::hash(&bytes[..48]) {
        return Err("checksum mismatch".into());
    }
    let flags = bytes[46];
    if flags & !KNOWN_FLAGS != 0 || bytes[47] != 0 {
        return Err(format!("unknown flags {flags:#04x}"));
    }
    let code = u16_at(44);
    let outcome = if flags & ERROR != 0 {
        match kinds.get(usize::from(code)) {
            Some(Some(kind)) => Outcome::Error(*kind),
            Some(None) => return Err(format!("error kind {code} is one this headroom does not know (written by a newer version?)")),
            None => return Err(format!("error kind {code}, but the header lists {}", kinds.len())),
        }
    } else {
        // Whatever status the server sent (a broken one may send 000): the checksum, not the
        // value, says whether the record is whole.
        Outcome::Status(code)
    };
    let (intended, sent, end) = (u64_at(0), u64_at(8), u64_at(16));
    if !(intended <= sent && sent <= end) {
        return Err(format!(
            "times out of order (intended {intended} ns, sent {sent} ns, end {end} ns)"
        ));
    }
    Ok(RawRecord {
        request: u16_at(40),
        stage: (flags & HAS_STAGE != 0).then(|| u16_at(42)),
        outcome,
        expected: flags & EXPECTED != 0,
        retried: flags & RETRIED != 0,
        intended: Duration::from_nanos(intended),
        sent: Duration::from_nanos(sent),
        end: Duration::from_nanos(end),
        bytes_in: u64_at(24),
        bytes_out: u64_at(32),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds() -> Vec<Option<ErrorKind>> {
        ErrorKind::ALL.iter().map(|k| Some(*k)).collect()
    }

    fn record(outcome: Outcome, stage: Option<u16>) -> RawRecord {
        RawRecord {
            request: 3,
            stage,
            outcome,
            expected: matches!(outcome, Outcome::Status(200)),
            retried: stage.is_some(),
            intended: Duration::from_nanos(1_000),
            sent: Duration::from_nanos(1_500),
            end: Duration::from_nanos(9_000_123),
            bytes_in: 4_096,
            bytes_out: 17,
        }
    }

    #[test]
    fn records_round_trip() {
        for r in [
            record(Outcome::Status(200), None),
            record(Outcome::Status(503), Some(7)),
            record(Outcome::Error(ErrorKind::HeaderTooLarge), Some(0)),
            record(Outcome::Error(ErrorKind::Timeout), None),
        ] {
            let mut bytes = [0; RECORD_BYTES];
            encode(&r, &mut bytes);
            assert_eq!(decode(&bytes, &kinds()), Ok(r));
        }
    }

    #[test]
    fn any_flipped_bit_is_found() {
        let mut bytes = [0; RECORD_BYTES];
        encode(&record(Outcome::Status(200), Some(1)), &mut bytes);
        for bit in 0..RECORD_BYTES * 8 {
            let mut damaged = bytes;
            damaged[bit / 8] ^= 1 << (bit % 8);
            assert!(decode(&damaged, &kinds()).is_err(), "bit {bit}");
        }
    }

    #[test]
    fn error_kinds_are_read_by_the_header_of_the_file() {
        let mut bytes = [0; RECORD_BYTES];
        encode(&record(Outcome::Error(ErrorKind::Reset), None), &mut bytes);
        let index = kind_index(ErrorKind::Reset) as usize;
        // A file whose header puts another kind at that index reads as that kind.
        let mut other = kinds();
        other[index] = Some(ErrorKind::Refused);
        assert_eq!(
            decode(&bytes, &other).unwrap().outcome,
            Outcome::Error(ErrorKind::Refused)
        );
        other[index] = None;
        assert!(decode(&bytes, &other)
            .unwrap_err()
            .contains("does not know"));
        assert!(decode(&bytes, &other[..index])
            .unwrap_err()
            .contains("header lists"));
    }
}
