//! The reading side of one HTTP/1.1 connection: bytes go in with the time they arrived,
//! whole replies come out. Bytes are always fed to the answer before an end of stream is
//! acted on, so a complete response is a response whatever follows it (a close, a TLS
//! close_notify, a reset after the last byte).

use super::buffer::ReadBuffer;
use super::response::ResponseReader;
use crate::engine::reply::Reply;
use crate::sample::ErrorKind;
use std::time::Instant;

/// One connection's answers, read from the bytes a driver hands over.
pub struct Codec {
    buf: ReadBuffer,
    reader: Option<ResponseReader>,
    max_head: usize,
    /// When the bytes handed over last arrived.
    stamp: Option<Instant>,
    /// When the awaited answer's head arrived.
    head_at: Option<Instant>,
    /// Answers completed on this connection.
    answered: u64,
    /// True once a byte of the awaited answer arrived.
    received: bool,
    /// False once the connection must not carry another request.
    reusable: bool,
}

impl Codec {
    /// A connection whose response heads may be at most `max_head` bytes.
    pub fn new(max_head: usize) -> Codec {
        Codec {
            buf: ReadBuffer::new(max_head),
            reader: None,
            max_head,
            stamp: None,
            head_at: None,
            answered: 0,
            received: false,
            reusable: true,
        }
    }

    /// Awaits the answer to a request just sent: HEAD's has no body; with `keep`, its
    /// headers and body are kept.
    pub fn expect(&mut self, head_request: bool, keep: bool) {
        let reader = ResponseReader::new(head_request, self.max_head);
        self.reader = Some(if keep { reader.keeping() } else { reader });
        self.stamp = None;
        self.head_at = None;
        self.received = false;
    }

    /// Room for arriving bytes; a head that fills the limit is refused.
    pub fn room(&mut self) -> Result<&mut [u8], ErrorKind> {
        self.buf.spare()
    }

    /// `n` bytes were put into [`Codec::room`]; they arrived at `at`.
    pub fn filled(&mut self, n: usize, at: Instant) {
        self.buf.filled(n);
        if n > 0 {
            self.stamp = Some(at);
            self.received = true;
        }
    }

    /// Feeds what arrived to the awaited answer; the reply once it is whole.
    pub fn poll(&mut self) -> Result<Option<Reply>, ErrorKind> {
        let Some(reader) = self.reader.as_mut() else {
            // Bytes nobody asked for: the connection cannot be trusted with another request.
            if !self.buf.data().is_empty() {
                self.reusable = false;
            }
            return Ok(None);
        };
        let fed = match reader.feed(self.buf.data()) {
            Ok(fed) => fed,
            Err(kind) => return Err(self.fail(kind)),
        };
        self.buf.consume(fed.consumed);
        let stamp = self.stamp.unwrap_or_else(Instant::now);
        if fed.head_done {
            self.head_at = Some(stamp);
        }
        let Some(complete) = fed.complete else {
            return Ok(None);
        };
        let kept = reader.take_kept();
        // Bytes beyond the answer were not asked for (a server answering before it read a
        // whole request body leaves the rest to be taken as the next request, too).
        if !complete.keep_alive || !self.buf.data().is_empty() {
            self.reusable = false;
        }
        self.reader = None;
        self.answered += 1;
        Ok(Some(Reply {
            status: complete.status,
            head_at: self.head_at.unwrap_or(stamp),
            end: stamp,
            body_bytes: complete.body_bytes,
            kept,
        }))
    }

    /// The peer closed the connection (`at`, when that was seen): what arrived is fed first;
    /// then a body that runs to the close ends, and anything else is an answer cut short.
    pub fn closed(&mut self, at: Instant) -> Result<Option<Reply>, ErrorKind> {
        self.reusable = false;
        if let Some(reply) = self.poll()? {
            return Ok(Some(reply));
        }
        let Some(reader) = self.reader.as_mut() else {
            return Ok(None);
        };
        let complete = match reader.eof() {
            Ok(c) => c,
            Err(kind) => return Err(self.fail(kind)),
        };
        let kept = reader.take_kept();
        let end = self.stamp.unwrap_or(at);
        self.reader = None;
        self.answered += 1;
        Ok(Some(Reply {
            status: complete.status,
            head_at: self.head_at.unwrap_or(end),
            end,
            body_bytes: complete.body_bytes,
            kept,
        }))
    }

    /// The connection failed with `kind` while an answer was awaited.
    pub fn fail(&mut self, kind: ErrorKind) -> ErrorKind {
        self.reusable = false;
        self.reader = None;
        kind
    }

    /// True when a failure of the awaited answer means the server closed a reused
    /// connection before answering a byte: it closed it idle, as the request left.
    pub fn closed_unanswered(&self, kind: ErrorKind) -> bool {
        matches!(kind, ErrorKind::Closed | ErrorKind::Reset) && self.answered > 0 && !self.received
    }

    /// False once the server asked to close, or sent what nobody asked for.
    pub fn reusable(&self) -> bool {
        self.reusable
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(codec: &mut Codec, bytes: &[u8], at: Instant) {
        let room = codec.room().unwrap();
        room[..bytes.len()].copy_from_slice(bytes);
        codec.filled(bytes.len(), at);
    }

    #[test]
    fn a_whole_answer_followed_by_a_close_is_an_answer() {
        let t0 = Instant::now();
        let at = t0 + std::time::Duration::from_millis(3);
        let mut c = Codec::new(64 * 1024);
        c.expect(false, false);
        // The answer and the end of the stream are seen in one read: the close comes last.
        put(
            &mut c,
            b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 3\r\n\r\nno\n",
            at,
        );
        let reply = c
            .closed(t0 + std::time::Duration::from_millis(9))
            .unwrap()
            .unwrap();
        assert_eq!((reply.status, reply.body_bytes), (400, 3));
        assert_eq!(
            (reply.head_at, reply.end),
            (at, at),
            "stamped when the bytes came"
        );
        assert!(!c.reusable());
    }

    #[test]
    fn an_answer_cut_short_is_closed_and_an_idle_close_is_unanswered() {
        let now = Instant::now();
        let mut c = Codec::new(1024);
        c.expect(false, false);
        put(
            &mut c,
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
            now,
        );
        assert!(c.poll().unwrap().is_some());
        assert!(c.reusable());
        c.expect(false, false);
        // The reused connection closes before a byte of the second answer.
        assert_eq!(c.closed(now).err(), Some(ErrorKind::Closed));
        assert!(c.closed_unanswered(ErrorKind::Closed));
        let mut c = Codec::new(1024);
        c.expect(false, false);
        put(
            &mut c,
            b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nshort",
            now,
        );
        assert_eq!(c.poll().unwrap().map(|r| r.status), None);
        assert_eq!(c.closed(now).err(), Some(ErrorKind::Closed));
        assert!(!c.closed_unanswered(ErrorKind::Closed), "its first answer");
    }

    #[test]
    fn bytes_beyond_the_answer_make_the_connection_unusable() {
        let now = Instant::now();
        let mut c = Codec::new(1024);
        c.expect(false, false);
        put(
            &mut c,
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n",
            now,
        );
        assert!(c.poll().unwrap().is_some());
        assert!(!c.reusable());
    }
}
