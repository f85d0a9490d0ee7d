//! Reading one HTTP/1.1 response from bytes as they arrive, without doing any I/O itself
//! (sans-IO). The body is counted and dropped, unless the request captures from it or checks
//! it: then the headers and up to [`crate::engine::reply::KEEP_LIMIT`] bytes of body are kept.

use super::chunked::Chunked;
use crate::engine::reply::Kept;
use crate::sample::ErrorKind;

/// Most headers a response may have before it is called hostile.
const MAX_HEADERS: usize = 128;

/// The parts of a response head that decide how to read the body.
struct Head {
    status: u16,
    head_len: usize,
    framing: Framing,
    keep_alive: bool,
    /// Its headers, when the response is kept.
    headers: Option<http::HeaderMap>,
}

/// How the body's end is found (RFC 9112 §6.3).
#[derive(Clone, Copy)]
enum Framing {
    Length(u64),
    Chunked,
    UntilClose,
}

/// What the head said about the answer, carried while its body is read.
#[derive(Clone, Copy)]
struct Answer {
    status: u16,
    keep_alive: bool,
}

impl Answer {
    fn with_body(self, body_bytes: u64) -> Complete {
        Complete {
            status: self.status,
            body_bytes,
            keep_alive: self.keep_alive,
        }
    }
}

enum State {
    Head,
    Length {
        answer: Answer,
        left: u64,
        total: u64,
    },
    Chunked {
        answer: Answer,
        decoder: Chunked,
        total: u64,
    },
    UntilClose {
        answer: Answer,
        total: u64,
    },
    Done,
}

/// A whole response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Complete {
    /// Status code.
    pub status: u16,
    /// Body bytes.
    pub body_bytes: u64,
    /// False when the connection must not carry another request.
    pub keep_alive: bool,
}

/// What one [`ResponseReader::feed`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fed {
    /// Bytes of the input that belong to this response; the rest is not consumed.
    pub consumed: usize,
    /// True when the final (non-1xx) head was completed by this call.
    pub head_done: bool,
    /// The response, once it is whole.
    pub complete: Option<Complete>,
}

/// Reads one response.
pub struct ResponseReader {
    state: State,
    head_request: bool,
    max_head: usize,
    kept: Option<Box<Kept>>,
}

impl ResponseReader {
    /// A reader for the answer to a request (`head_request` for HEAD, whose answer has no
    /// body); heads longer than `max_head` bytes are refused.
    pub fn new(head_request: bool, max_head: usize) -> Self {
        ResponseReader {
            state: State::Head,
            head_request,
            max_head,
            kept: None,
        }
    }

    /// Keeps the response's head and body (up to [`KEEP_LIMIT`]) for captures and checks.
    pub fn keeping(mut self) -> Self {
        self.kept = Some(Box::default());
        self
    }

    /// The kept head and body, once the response is complete (or as far as it came).
    pub fn take_kept(&mut self) -> Option<Box<Kept>> {
        self.kept.take()
    }

    /// The final answer's status once its head is read, while its body is: a caller that
    /// stops reading part-way (the live outputs, at a bound) still knows what was answered.
    pub fn status(&self) -> Option<u16> {
        match &self.state {
            State::Length { answer, .. }
            | State::Chunked { answer, .. }
            | State::UntilClose { answer, .. } => Some(answer.status),
            State::Head | State::Done => None,
        }
    }

    /// Consumes what it can of `input`. A head is only parsed whole: while it is incomplete
    /// nothing is consumed, and the caller feeds the same bytes again with more behind them.
    pub fn feed(&mut self, input: &[u8]) -> Result<Fed, ErrorKind> {
        let mut consumed = 0;
        let mut head_done = false;
        loop {
            let rest = &input[consumed..];
            match &mut self.state {
                State::Done => break,
                State::Head => {
                    let Some(head) = parse_head(rest, self.kept.is_some())? else {
                        if rest.len() >= self.max_head {
                            return Err(ErrorKind::HeaderTooLarge);
                        }
                        break;
                    };
                    if let (Some(kept), Some(headers)) = (self.kept.as_mut(), head.headers) {
                        kept.headers = headers;
                    }
                    consumed += head.head_len;
                    // Interim 1xx answers (100 Continue, 103 Early Hints) precede the real one.
                    if (100..200).contains(&head.status) && head.status != 101 {
                        continue;
                    }
                    head_done = true;
                    let no_body = self.head_request || head.status == 204 || head.status == 304;
                    let answer = Answer {
                        status: head.status,
                        keep_alive: head.keep_alive,
                    };
                    self.state = match (no_body, head.framing) {
                        (true, _) => {
                            return Ok(self.finish(consumed, head_done, answer.with_body(0)))
                        }
                        (false, Framing::Length(n)) => State::Length {
                            answer,
                            left: n,
                            total: n,
                        },
                        (false, Framing::Chunked) => State::Chunked {
                            answer,
                            decoder: Chunked::default(),
                            total: 0,
                        },
                        (false, Framing::UntilClose) => State::UntilClose {
                            // A body that runs to the close leaves no connection to reuse.
                            answer: Answer {
                                keep_alive: false,
                                ..answer
                            },
                            total: 0,
                        },
                    };
                }
                State::Length {
                    answer,
                    left,
                    total,
                } => {
                    let take = (*left).min(rest.len() as u64);
                    if let Some(kept) = self.kept.as_mut() {
                        kept.keep_body(&rest[..take as usize]);
                    }
                    consumed += take as usize;
                    *left -= take;
                    if *left > 0 {
                        break;
                    }
                    let complete = answer.with_body(*total);
                    return Ok(self.finish(consumed, head_done, complete));
                }
                State::Chunked {
                    answer,
                    decoder,
                    total,
                } => {
                    let p = match self.kept.as_mut() {
                        Some(kept) => {
                            decoder.feed_into(rest, &mut |piece| kept.keep_body(piece))?
                        }
                        None => decoder.feed(rest)?,
                    };
                    consumed += p.consumed;
                    *total += p.payload;
                    if !p.done {
                        break;
                    }
                    let complete = answer.with_body(*total);
                    return Ok(self.finish(consumed, head_done, complete));
                }
                State::UntilClose { total, .. } => {
                    if let Some(kept) = self.kept.as_mut() {
                        kept.keep_body(rest);
                    }
                    *total += rest.len() as u64;
                    consumed = input.len();
                    break;
                }
            }
        }
        Ok(Fed {
            consumed,
            head_done,
            complete: None,
        })
    }

    fn finish(&mut self, consumed: usize, head_done: bool, complete: Complete) -> Fed {
        self.state = State::Done;
        Fed {
            consumed,
            head_done,
            complete: Some(complete),
        }
    }

    /// The peer closed the connection: ends a body that runs to the close; anything else is
    /// a response cut short.
    pub fn eof(&mut self) -> Result<Complete, ErrorKind> {
        match std::mem::replace(&mut self.state, State::Done) {
            State::UntilClose { answer, total } => Ok(answer.with_body(total)),
            _ => Err(ErrorKind::Closed),
        }
    }
}

/// Parses a response head if `data` holds a whole one; with `keep`, its headers are kept.
fn parse_head(data: &[u8], keep: bool) -> Result<Option<Head>, ErrorKind> {
    // Left uninitialised: clearing 4 KiB of header slots for every reply was a measurable
    // part of reading one.
    let mut headers =
        [const { std::mem::MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut []);
    let head_len = match httparse::ParserConfig::default().parse_response_with_uninit_headers(
        &mut response,
        data,
        &mut headers,
    ) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => return Err(ErrorKind::HeaderTooLarge),
        Err(_) => return Err(ErrorKind::Protocol),
    };
    // httparse reads any three digits; "020" is no status (hyper and h2 refuse it too).
    let status = response
        .code
        .filter(|c| (100..=999).contains(c))
        .ok_or(ErrorKind::Protocol)?;
    let http10 = response.version == Some(0);
    let mut keep_alive = !http10;
    let mut length = None;
    let mut chunked = false;
    for h in response.headers.iter() {
        if h.name.eq_ignore_ascii_case("content-length") {
            let text = std::str::from_utf8(h.value).map_err(|_| ErrorKind::Protocol)?;
            let n: u64 = text.trim().parse().map_err(|_| ErrorKind::Protocol)?;
            if length.is_some_and(|l| l != n) {
                return Err(ErrorKind::Protocol);
            }
            length = Some(n);
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = h
                .value
                .rsplit(|&b| b == b',')
                .next()
                .is_some_and(|last| last.trim_ascii().eq_ignore_ascii_case(b"chunked"));
        } else if h.name.eq_ignore_ascii_case("connection") {
            for token in h.value.split(|&b| b == b',') {
                let token = token.trim_ascii();
                if token.eq_ignore_ascii_case(b"close") {
                    keep_alive = false;
                } else if token.eq_ignore_ascii_case(b"keep-alive") {
                    keep_alive = true;
                }
            }
        }
    }
    // Chunked wins over a length; neither means the body runs to the close.
    let framing = match (chunked, length) {
        (true, _) => Framing::Chunked,
        (false, Some(n)) => Framing::Length(n),
        (false, None) => Framing::UntilClose,
    };
    // Only kept answers (captures, body checks) pay for a header map.
    let headers = keep.then(|| {
        let mut map = http::HeaderMap::with_capacity(response.headers.len());
        for h in response.headers.iter() {
            if let (Ok(name), Ok(value)) = (
                http::HeaderName::from_bytes(h.name.as_bytes()),
                http::HeaderValue::from_bytes(h.value),
            ) {
                map.append(name, value);
            }
        }
        map
    });
    Ok(Some(Head {
        status,
        head_len,
        framing,
        keep_alive,
        headers,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `bytes` in pieces of `piece`, keeping unconsumed bytes as a connection would.
    fn read_in_pieces(
        bytes: &[u8],
        piece: usize,
        head_request: bool,
    ) -> Result<(Complete, usize), ErrorKind> {
        let mut r = ResponseReader::new(head_request, 64 * 1024);
        let mut pending: Vec<u8> = Vec::new();
        let mut used = 0;
        for part in bytes.chunks(piece) {
            pending.extend_from_slice(part);
            let fed = r.feed(&pending)?;
            used += fed.consumed;
            pending.drain(..fed.consumed);
            if let Some(c) = fed.complete {
                return Ok((c, used));
            }
        }
        Ok((r.eof()?, used))
    }

    #[test]
    fn reads_every_framing_whatever_the_read_boundaries() {
        let cases: [(&[u8], bool, Complete, usize); 6] = [
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloNEXT",
                false,
                Complete {
                    status: 200,
                    body_bytes: 5,
                    keep_alive: true,
                },
                43,
            ),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\nNEXT",
                false,
                Complete {
                    status: 200,
                    body_bytes: 3,
                    keep_alive: true,
                },
                60,
            ),
            (
                b"HTTP/1.0 200 OK\r\n\r\nuntil the close",
                false,
                Complete {
                    status: 200,
                    body_bytes: 15,
                    keep_alive: false,
                },
                34,
            ),
            (
                b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n",
                false,
                Complete {
                    status: 201,
                    body_bytes: 0,
                    keep_alive: true,
                },
                68,
            ),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n",
                true,
                Complete {
                    status: 200,
                    body_bytes: 0,
                    keep_alive: true,
                },
                40,
            ),
            (
                b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n",
                false,
                Complete {
                    status: 204,
                    body_bytes: 0,
                    keep_alive: false,
                },
                46,
            ),
        ];
        for (bytes, head, expected, used) in cases {
            for piece in 1..=bytes.len() {
                let got = read_in_pieces(bytes, piece, head)
                    .unwrap_or_else(|e| panic!("{e:?} at piece {piece}"));
                assert_eq!(
                    got,
                    (expected, used),
                    "piece {piece} of {:?}",
                    String::from_utf8_lossy(bytes)
                );
            }
        }
    }

    #[test]
    fn cut_short_and_oversized_responses_are_classified() {
        assert_eq!(
            read_in_pieces(
                b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nshort",
                7,
                false
            ),
            Err(ErrorKind::Closed)
        );
        assert_eq!(
            read_in_pieces(b"HTTP/1.1 200 OK\r\nX-A", 4, false),
            Err(ErrorKind::Closed)
        );
        let mut r = ResponseReader::new(false, 1024);
        let endless = [b"HTTP/1.1 200 OK\r\n".as_slice(), &[b'x'; 2000]].concat();
        assert_eq!(r.feed(&endless), Err(ErrorKind::HeaderTooLarge));
    }

    #[test]
    fn heads_decide_framing_and_keep_alive() {
        let h = parse_head(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\nContent-Length: 9\r\n\r\n",
            false,
        )
        .unwrap()
        .unwrap();
        assert!(matches!(h.framing, Framing::Chunked));
        let conflicting = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n";
        assert_eq!(
            parse_head(conflicting, false).err(),
            Some(ErrorKind::Protocol)
        );
        assert_eq!(
            parse_head(b"\x00garbage\r\n\r\n", false).err(),
            Some(ErrorKind::Protocol)
        );
        // Found by fuzzing (fuzz/fuzz_targets/response.rs): "020" was answer status 20.
        for status in ["000", "020", "099"] {
            let head = format!("HTTP/1.1 {status} OK.\nContent-Len`th: 1999999\r\n\r\n");
            assert_eq!(
                parse_head(head.as_bytes(), false).err(),
                Some(ErrorKind::Protocol),
                "{status}"
            );
        }
        let head = b"HTTP/1.1 999 Whatever\r\nContent-Length: 0\r\n\r\n";
        assert_eq!(parse_head(head, false).unwrap().unwrap().status, 999);
        let mut many = b"HTTP/1.1 200 OK\r\n".to_vec();
        for i in 0..200 {
            many.extend_from_slice(format!("X-{i}: v\r\n").as_bytes());
        }
        many.extend_from_slice(b"\r\n");
        assert_eq!(
            parse_head(&many, false).err(),
            Some(ErrorKind::HeaderTooLarge)
        );
    }
}
