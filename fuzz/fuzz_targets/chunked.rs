//! A `Transfer-Encoding: chunked` body, decoded as it arrives.
//!
//! Input: see `headroom_fuzz::Arrival`. Flag (byte 0) bit 0 chooses the mode:
//! - 0, decode: the bytes are a body from a server. Decoded whole, in the pieces the input
//!   gives, and one byte at a time, the results must be the same (bytes consumed, payload,
//!   done, the payload itself, or the same error); `feed` and `feed_into` agree; the payload
//!   is never more than the bytes consumed; a body not done consumes all it is given; a done
//!   decoder takes nothing more.
//! - 1, round trip: the bytes are a payload, sent in chunks of the input's piece lengths
//!   (bit 1: upper-case hex; bit 2: leading zeros up to 16 digits; bit 3: extensions; bit 4:
//!   bare LF line ends; bit 5: trailers). Decoding that must give the payload back, whole,
//!   and stop right before what follows the body.
#![no_main]

use headroom::fuzzing::{Chunked, Progress};
use headroom::sample::ErrorKind;
use headroom_fuzz::Arrival;
use libfuzzer_sys::fuzz_target;

/// What decoding a body in some pieces gave.
#[derive(Debug, PartialEq, Eq)]
struct Decoded {
    consumed: usize,
    payload: Vec<u8>,
    done: bool,
}

/// Decodes `pieces` one after the other until the body is done or fails.
fn decode<'a>(pieces: impl IntoIterator<Item = &'a [u8]>) -> Result<Decoded, ErrorKind> {
    let mut d = Chunked::default();
    let mut out = Decoded {
        consumed: 0,
        payload: Vec::new(),
        done: false,
    };
    for piece in pieces {
        let mut payload = Vec::new();
        let p: Progress = d.feed_into(piece, &mut |b| payload.extend_from_slice(b))?;
        assert!(p.consumed <= piece.len());
        assert_eq!(
            p.payload,
            payload.len() as u64,
            "payload counted vs handed over"
        );
        assert!(p.payload <= p.consumed as u64, "more payload than bytes");
        out.consumed += p.consumed;
        out.payload.extend_from_slice(&payload);
        if p.done {
            out.done = true;
            // A finished body takes nothing more.
            let after = d.feed(b"5\r\nhello\r\n").expect("a done decoder");
            assert_eq!((after.consumed, after.payload, after.done), (0, 0, true));
            break;
        }
        assert_eq!(p.consumed, piece.len(), "a body not done left bytes unread");
    }
    Ok(out)
}

/// The counting `feed`, whole: must agree with what `feed_into` handed over.
fn count(bytes: &[u8]) -> Result<Progress, ErrorKind> {
    Chunked::default().feed(bytes)
}

fuzz_target!(|data: &[u8]| {
    let Some(input) = Arrival::read(data) else {
        return;
    };
    if input.flags & 1 == 0 {
        decode_mode(&input);
    } else {
        round_trip(&input);
    }
});

fn decode_mode(input: &Arrival<'_>) {
    let whole = decode([input.bytes]);
    let split = decode(input.pieces.iter().copied());
    assert_eq!(whole, split, "whole vs in the input's pieces");
    let bytewise = decode(input.bytes.chunks(1));
    assert_eq!(whole, bytewise, "whole vs a byte at a time");
    match (whole, count(input.bytes)) {
        (Ok(d), Ok(p)) => {
            assert_eq!(
                (d.consumed, d.payload.len() as u64, d.done),
                (p.consumed, p.payload, p.done)
            );
        }
        (Err(a), Err(b)) => {
            assert_eq!(a, b);
            assert_eq!(
                a,
                ErrorKind::Protocol,
                "a decoder error is a protocol error"
            );
        }
        (a, b) => panic!("feed_into {a:?}, feed {b:?}"),
    }
}

fn round_trip(input: &Arrival<'_>) {
    let f = input.flags;
    let (upper, zeros, ext, bare, trailers) =
        (f & 2 != 0, f & 4 != 0, f & 8 != 0, f & 16 != 0, f & 32 != 0);
    let eol: &[u8] = if bare { b"\n" } else { b"\r\n" };
    let mut body = Vec::new();
    let size_line = |body: &mut Vec<u8>, n: usize| {
        let hex = match (upper, zeros) {
            (false, false) => format!("{n:x}"),
            (true, false) => format!("{n:X}"),
            (false, true) => format!("{n:016x}"),
            (true, true) => format!("{n:016X}"),
        };
        body.extend_from_slice(hex.as_bytes());
        if ext {
            body.extend_from_slice(b";name=\"va;lue\" ; other");
        }
        body.extend_from_slice(eol);
    };
    for piece in &input.pieces {
        size_line(&mut body, piece.len());
        body.extend_from_slice(piece);
        body.extend_from_slice(eol);
    }
    size_line(&mut body, 0);
    if trailers {
        body.extend_from_slice(b"X-Checksum: 1234");
        body.extend_from_slice(eol);
        body.extend_from_slice(b"X-Other:");
        body.extend_from_slice(eol);
    }
    body.extend_from_slice(eol);
    let len = body.len();
    body.extend_from_slice(b"HTTP/1.1 200 OK\r\n");
    let want = Decoded {
        consumed: len,
        payload: input.bytes.to_vec(),
        done: true,
    };
    let step = usize::from(input.more) + 1;
    assert_eq!(decode([&body[..]]), Ok(want), "whole");
    let got = decode(body.chunks(step)).expect("in pieces");
    assert_eq!((got.consumed, got.done), (len, true));
    assert_eq!(got.payload, input.bytes);
}
