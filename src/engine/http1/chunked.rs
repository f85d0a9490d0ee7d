//! A counting decoder for `Transfer-Encoding: chunked`: it measures a body as it streams
//! past and keeps nothing itself, so an endless or huge body costs no memory; a caller that
//! needs the payload (to capture from it) is handed each piece.

use crate::sample::ErrorKind;

/// Longest chunk-size line (with extensions) accepted before the body is called malformed.
const MAX_LINE: usize = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reading hex digits of a chunk size.
    Size { value: u64, digits: usize },
    /// Skipping a chunk extension up to the end of the line.
    Extension { value: u64, len: usize },
    /// Expecting the LF that ends the size line (value is the chunk size).
    SizeLf { value: u64 },
    /// Inside chunk data.
    Data { remaining: u64 },
    /// Expecting the CR LF after chunk data (`seen_cr` once CR was read).
    DataEnd { seen_cr: bool },
    /// At the start of a trailer line (after the last chunk).
    TrailerStart,
    /// Inside a trailer line.
    Trailer { len: usize },
    /// Expecting the LF of the final empty line.
    FinalLf,
    /// The body is complete.
    Done,
}

/// Decoder state across reads.
#[derive(Debug, Clone)]
pub struct Chunked {
    state: State,
}

impl Default for Chunked {
    fn default() -> Self {
        Chunked {
            state: State::Size {
                value: 0,
                digits: 0,
            },
        }
    }
}

/// What one call to [`Chunked::feed`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Bytes of `input` that belong to this body.
    pub consumed: usize,
    /// Payload bytes among them.
    pub payload: u64,
    /// True once the terminating chunk and trailers were read.
    pub done: bool,
}

impl Chunked {
    /// Consumes as much of `input` as belongs to the body.
    pub fn feed(&mut self, input: &[u8]) -> Result<Progress, ErrorKind> {
        self.feed_into(input, &mut |_| {})
    }

    /// Like [`Chunked::feed`], handing each piece of payload to `sink`.
    pub fn feed_into(
        &mut self,
        input: &[u8],
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<Progress, ErrorKind> {
        let mut i = 0;
        let mut payload = 0u64;
        while i < input.len() {
            let b = input[i];
            self.state = match self.state {
                State::Done => break,
                State::Data { remaining } => {
                    let take = remaining.min((input.len() - i) as u64);
                    sink(&input[i..i + take as usize]);
                    i += take as usize;
                    payload += take;
                    next_after_data(remaining - take)
                }
                State::Size { value, digits } => {
                    i += 1;
                    match b {
                        b'0'..=b'9' | b'a'..=b'f' | b'A'..=b'F' => {
                            let d = (b as char).to_digit(16).expect("hex digit") as u64;
                            if digits >= 16 {
                                return Err(ErrorKind::Protocol);
                            }
                            State::Size {
                                value: value * 16 + d,
                                digits: digits + 1,
                            }
                        }
                        b';' | b' ' | b'\t' if digits > 0 => State::Extension {
                            value,
                            len: digits + 1,
                        },
                        b'\r' if digits > 0 => State::SizeLf { value },
                        b'\n' if digits > 0 => after_size(value),
                        _ => return Err(ErrorKind::Protocol),
                    }
                }
                State::Extension { value, len } => {
                    i += 1;
                    match b {
                        b'\r' => State::SizeLf { value },
                        b'\n' => after_size(value),
                        _ if len >= MAX_LINE => return Err(ErrorKind::Protocol),
                        _ => State::Extension {
                            value,
                            len: len + 1,
                        },
                    }
                }
                State::SizeLf { value } => {
                    i += 1;
                    if b != b'\n' {
                        return Err(ErrorKind::Protocol);
                    }
                    after_size(value)
                }
                State::DataEnd { seen_cr } => {
                    i += 1;
                    match (seen_cr, b) {
                        (false, b'\r') => State::DataEnd { seen_cr: true },
                        (_, b'\n') => State::Size {
                            value: 0,
                            digits: 0,
                        },
                        _ => return Err(ErrorKind::Protocol),
                    }
                }
                State::TrailerStart => {
                    i += 1;
                    match b {
                        b'\r' => State::FinalLf,
                        b'\n' => State::Done,
                        _ => State::Trailer { len: 1 },
                    }
                }
                State::Trailer { len } => {
                    i += 1;
                    match b {
                        b'\n' => State::TrailerStart,
                        _ if len >= MAX_LINE => return Err(ErrorKind::Protocol),
                        _ => State::Trailer { len: len + 1 },
                    }
                }
                State::FinalLf => {
                    i += 1;
                    if b != b'\n' {
                        return Err(ErrorKind::Protocol);
                    }
                    State::Done
                }
            };
        }
        Ok(Progress {
            consumed: i,
            payload,
            done: self.state == State::Done,
        })
    }
}

fn after_size(value: u64) -> State {
    if value == 0 {
        State::TrailerStart
    } else {
        State::Data { remaining: value }
    }
}

fn next_after_data(left: u64) -> State {
    if left == 0 {
        State::DataEnd { seen_cr: false }
    } else {
        State::Data { remaining: left }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in_pieces(body: &[u8], piece: usize) -> Result<(usize, u64, bool), ErrorKind> {
        let mut d = Chunked::default();
        let (mut consumed, mut payload) = (0, 0);
        for part in body.chunks(piece) {
            let p = d.feed(part)?;
            consumed += p.consumed;
            payload += p.payload;
            if p.done {
                return Ok((consumed, payload, true));
            }
        }
        Ok((consumed, payload, false))
    }

    #[test]
    fn decodes_whatever_the_read_boundaries() {
        let body = b"5\r\nhello\r\n1a;name=value\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nX-Trailer: 1\r\n\r\nNEXT";
        for piece in 1..body.len() {
            let (consumed, payload, done) = decode_in_pieces(body, piece).unwrap();
            assert!(done, "piece {piece}");
            assert_eq!(payload, 5 + 26, "piece {piece}");
            assert_eq!(
                consumed,
                body.len() - 4,
                "piece {piece}: stops before the next message"
            );
        }
    }

    #[test]
    fn accepts_bare_newlines_and_reports_incomplete_bodies() {
        assert_eq!(decode_in_pieces(b"3\nabc\n0\n\n", 4).unwrap(), (9, 3, true));
        assert!(!decode_in_pieces(b"10\r\nonly-part", 64).unwrap().2);
    }

    #[test]
    fn rejects_malformed_framing() {
        for bad in [
            &b"zz\r\n"[..],
            b"\r\n",
            b"5\r\nhelloXY",
            b"11111111111111111\r\n",
        ] {
            assert_eq!(
                decode_in_pieces(bad, 64),
                Err(ErrorKind::Protocol),
                "{bad:?}"
            );
        }
        let long_ext = [b"1;".as_slice(), &[b'x'; 5000]].concat();
        assert_eq!(decode_in_pieces(&long_ext, 64), Err(ErrorKind::Protocol));
    }
}
