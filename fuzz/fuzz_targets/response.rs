//! A server's bytes, read as HTTP/1.1 answers on one connection.
//!
//! Input: see `headroom_fuzz::Arrival`. Flags (byte 0):
//! - bit 0: the requests are HEAD (answers have no body);
//! - bit 1: answers are kept (`keeping()`: headers and up to KEEP_LIMIT of body);
//! - bit 2: read through the connection's `Codec` (its bounded read buffer) instead of a
//!   `ResponseReader` fed by hand;
//! - bits 3-4: the head limit: 64 KiB, 1 KiB, 64 B or 1 B;
//! - bit 5: the connection closes after the bytes (`eof`);
//! - bits 6 and 7 both: after the bytes, 1 MiB + 64 KiB of `x` arrive (a long body: what
//!   is kept must stay within KEEP_LIMIT).
//!
//! Invariants: no panic; every error is one a reader may give (protocol, header_too_large,
//! closed); an answer's body is never more than the bytes its reader consumed; HEAD, 204 and
//! 304 answers have no body; interim 1xx heads are never an answer; a reader that has not
//! finished its head holds fewer than `max_head` bytes, and one past its head consumes all it
//! is given; a kept body is exactly min(body, KEEP_LIMIT) bytes, `truncated` exactly when
//! the body was longer; a finished reader takes no more bytes.
#![no_main]

use headroom::fuzzing::{Codec, Complete, Kept, ResponseReader, KEEP_LIMIT};
use headroom::sample::ErrorKind;
use headroom_fuzz::Arrival;
use libfuzzer_sys::fuzz_target;
use std::time::Instant;

/// Filler after the input, when asked: past KEEP_LIMIT.
const FLOOD: usize = KEEP_LIMIT + 64 * 1024;
const FLOOD_PIECE: usize = 64 * 1024;

struct Options {
    head_request: bool,
    keep: bool,
    max_head: usize,
    close: bool,
}

fuzz_target!(|data: &[u8]| {
    let Some(input) = Arrival::read(data) else {
        return;
    };
    let f = input.flags;
    let options = Options {
        head_request: f & 1 != 0,
        keep: f & 2 != 0,
        max_head: [64 * 1024, 1024, 64, 1][usize::from((f >> 3) & 3)],
        close: f & 0x20 != 0,
    };
    let flood = f & 0xc0 == 0xc0;
    let filler = vec![b'x'; if flood { FLOOD_PIECE } else { 0 }];
    let mut pieces = input.pieces.clone();
    if flood {
        pieces.extend(std::iter::repeat_n(
            &filler[..],
            FLOOD.div_ceil(FLOOD_PIECE),
        ));
    }
    if f & 4 == 0 {
        by_hand(&pieces, &options);
    } else {
        through_codec(&pieces, &options);
    }
});

fn allowed(e: ErrorKind) -> bool {
    matches!(e, ErrorKind::Protocol | ErrorKind::HeaderTooLarge)
}

/// What must hold of every whole answer.
fn check_answer(c: &Complete, consumed: u64, o: &Options, kept: Option<Box<Kept>>) {
    assert!(
        c.body_bytes <= consumed,
        "a body of {} bytes from {consumed} bytes",
        c.body_bytes
    );
    assert!((100..=999).contains(&c.status), "status {}", c.status);
    assert!(
        !(100..200).contains(&c.status) || c.status == 101,
        "an interim {} taken as the answer",
        c.status
    );
    if o.head_request || c.status == 204 || c.status == 304 {
        assert_eq!(c.body_bytes, 0, "a body for HEAD, 204 or 304");
    }
    match (o.keep, kept) {
        (true, Some(kept)) => {
            let want = c.body_bytes.min(KEEP_LIMIT as u64) as usize;
            assert_eq!(
                kept.body.len(),
                want,
                "kept of a {}-byte body",
                c.body_bytes
            );
            assert_eq!(kept.truncated, c.body_bytes > KEEP_LIMIT as u64);
        }
        (false, None) => {}
        (keep, kept) => panic!("keeping {keep}, kept {}", kept.is_some()),
    }
}

/// Answers one after another on a connection, each read by its own `ResponseReader` fed as
/// the direct driver's buffer does: unconsumed bytes are fed again with more behind them.
fn by_hand(pieces: &[&[u8]], o: &Options) {
    let new_reader = || {
        let r = ResponseReader::new(o.head_request, o.max_head);
        if o.keep {
            r.keeping()
        } else {
            r
        }
    };
    let mut reader = new_reader();
    let mut pending: Vec<u8> = Vec::new();
    let mut consumed: u64 = 0;
    let mut head_seen = false;
    for piece in pieces {
        pending.extend_from_slice(piece);
        // Several answers may sit in one read.
        loop {
            let fed = match reader.feed(&pending) {
                Ok(fed) => fed,
                Err(e) => {
                    assert!(allowed(e), "{e:?}");
                    return;
                }
            };
            assert!(fed.consumed <= pending.len());
            consumed += fed.consumed as u64;
            if fed.head_done {
                assert!(!head_seen, "the head completed twice");
                head_seen = true;
            }
            pending.drain(..fed.consumed);
            let Some(c) = fed.complete else {
                if head_seen {
                    assert!(pending.is_empty(), "a body left {} bytes", pending.len());
                } else {
                    assert!(
                        pending.len() < o.max_head.max(1),
                        "a head held past the limit"
                    );
                }
                break;
            };
            assert!(head_seen, "an answer without a head");
            check_answer(&c, consumed, o, reader.take_kept());
            // A finished reader takes nothing more.
            let after = reader
                .feed(b"HTTP/1.1 200 OK\r\n\r\n")
                .expect("a done reader");
            assert_eq!((after.consumed, after.complete), (0, None));
            reader = new_reader();
            consumed = 0;
            head_seen = false;
            if pending.is_empty() {
                break;
            }
        }
    }
    if o.close {
        match reader.eof() {
            Ok(c) => {
                assert!(head_seen, "an answer at the close without a head");
                check_answer(&c, consumed, o, reader.take_kept());
            }
            Err(e) => assert_eq!(e, ErrorKind::Closed),
        }
    }
}

/// Answers read through a connection's `Codec`, whose buffer is bounded by the head limit.
fn through_codec(pieces: &[&[u8]], o: &Options) {
    let now = Instant::now();
    let mut codec = Codec::new(o.max_head);
    codec.expect(o.head_request, o.keep);
    let mut arrived: u64 = 0;
    let check = |reply: headroom::fuzzing::Reply, arrived: u64| {
        let c = Complete {
            status: reply.status,
            body_bytes: reply.body_bytes,
            keep_alive: true,
        };
        check_answer(&c, arrived, o, reply.kept);
    };
    for piece in pieces {
        let mut left: &[u8] = piece;
        while !left.is_empty() {
            let room = match codec.room() {
                Ok(room) => room,
                Err(e) => {
                    assert_eq!(e, ErrorKind::HeaderTooLarge);
                    return;
                }
            };
            assert!(
                room.len() <= o.max_head.max(1024),
                "a buffer past the head limit"
            );
            let n = room.len().min(left.len());
            room[..n].copy_from_slice(&left[..n]);
            codec.filled(n, now);
            left = &left[n..];
            arrived += n as u64;
            match codec.poll() {
                Ok(None) => {}
                Ok(Some(reply)) => {
                    check(reply, arrived);
                    if !codec.reusable() {
                        return;
                    }
                    // What arrived beyond an answer makes the connection unusable, so the
                    // next answer starts on a fresh read.
                    codec.expect(o.head_request, o.keep);
                    arrived = 0;
                }
                Err(e) => {
                    assert!(allowed(e), "{e:?}");
                    return;
                }
            }
        }
    }
    if o.close {
        match codec.closed(now) {
            Ok(Some(reply)) => check(reply, arrived),
            Ok(None) => {}
            Err(e) => assert!(allowed(e) || e == ErrorKind::Closed, "{e:?}"),
        }
    }
}
