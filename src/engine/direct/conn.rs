//! One HTTP/1.1 connection of a direct worker: a plain non-blocking socket (TLS by rustls,
//! driven by hand) read when the worker gets round to it. The kernel stamps each read with
//! its arrival time (SO_TIMESTAMPNS), so reading late loses no precision; what the bytes
//! mean is the codec's business.

use super::clock::Clock;
use crate::engine::classify;
use crate::engine::dial::Connected;
use crate::engine::http1::Codec;
use crate::engine::job::{Failure, Unprocessed};
use crate::engine::reply::Reply;
use crate::sample::ErrorKind;
use nix::sys::socket::{recvmsg, setsockopt, sockopt, ControlMessageOwned, MsgFlags};
use std::io::{IoSliceMut, Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::time::Instant;

/// Most bytes one harvest reads from one connection, so an endless body cannot hold the tick.
const HARVEST_BUDGET: usize = 256 * 1024;

/// What a harvest found.
pub enum Harvest {
    /// Nothing whole yet.
    Pending,
    /// The answer is complete.
    Done(Reply),
    /// The exchange failed.
    Failed(Failure),
}

/// One connection.
pub struct Conn {
    tcp: TcpStream,
    tls: Option<Box<rustls::ClientConnection>>,
    codec: Codec,
    /// Encrypted bytes read from the socket, for rustls.
    raw: Vec<u8>,
    cmsg: Vec<u8>,
    /// Request bytes the socket could not take yet (plain TCP; rustls buffers its own).
    unsent: Vec<u8>,
    /// True once the peer ended the stream (FIN or close_notify).
    ended: bool,
}

impl Conn {
    /// Wraps a connected non-blocking socket (and its TLS session, handshake done); heads
    /// longer than `max_head` are refused.
    pub fn new(connected: Connected, max_head: usize) -> Result<Conn, ErrorKind> {
        let Connected { tcp, mut tls, .. } = connected;
        if let Some(tls) = tls.as_mut() {
            // Large bodies are written over several ticks; rustls must hold what is not sent.
            tls.set_buffer_limit(None);
        }
        setsockopt(&tcp, sockopt::ReceiveTimestampns, &true)
            .map_err(|e| classify::io_error(&e.into()))?;
        Ok(Conn {
            raw: if tls.is_some() {
                vec![0; 16 * 1024]
            } else {
                Vec::new()
            },
            tcp,
            tls,
            codec: Codec::new(max_head),
            cmsg: nix::cmsg_space!(nix::sys::time::TimeSpec),
            unsent: Vec::new(),
            ended: false,
        })
    }

    /// The socket, for the worker's own epoll.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.tcp.as_fd()
    }

    /// False once the server asked to close, ended the stream, or an exchange failed.
    pub fn reusable(&self) -> bool {
        self.codec.reusable() && !self.ended
    }

    /// Starts sending a request (the caller stamped the send before this call); what the
    /// socket cannot take now is sent by [`Conn::flush`]. With `keep`, the answer's headers
    /// and body are kept.
    pub fn send(&mut self, request: &[u8], head_request: bool, keep: bool) -> Result<(), Failure> {
        self.codec.expect(head_request, keep);
        let result = match &mut self.tls {
            None => match write_some(&mut self.tcp, request) {
                Ok(n) => {
                    self.unsent.clear();
                    self.unsent.extend_from_slice(&request[n..]);
                    Ok(())
                }
                Err((kind, 0)) => {
                    // Not a byte left: the server cannot have seen it.
                    let mut failure = self.failure(kind);
                    failure.unprocessed = Unprocessed::Certainly;
                    return Err(failure);
                }
                Err((kind, _)) => Err(kind),
            },
            Some(tls) => tls
                .writer()
                .write_all(request)
                .map_err(|e| classify::io_error(&e))
                .and_then(|()| flush_tls(tls, &mut self.tcp)),
        };
        result.map_err(|kind| self.failure(kind))
    }

    /// True while part of the request is still to be written.
    pub fn wants_write(&self) -> bool {
        !self.unsent.is_empty() || self.tls.as_ref().is_some_and(|t| t.wants_write())
    }

    /// Writes more of a request the socket could not take at once.
    pub fn flush(&mut self) -> Result<(), Failure> {
        let result = match &mut self.tls {
            None => write_some(&mut self.tcp, &self.unsent)
                .map(|n| {
                    self.unsent.drain(..n);
                })
                .map_err(|(kind, _)| kind),
            Some(tls) => flush_tls(tls, &mut self.tcp),
        };
        result.map_err(|kind| self.failure(kind))
    }

    /// Reads what has arrived and completes the answer if it is whole; `clock` was read
    /// after the wake-up that found the data.
    pub fn harvest(&mut self, clock: &Clock) -> Harvest {
        match self.harvest_inner(clock) {
            Ok(Some(reply)) => {
                if self.wants_write() {
                    // Answered before its request was all written (nginx's `return` does):
                    // the rest would be taken as the next request.
                    self.ended = true;
                }
                Harvest::Done(reply)
            }
            Ok(None) => Harvest::Pending,
            Err(kind) => Harvest::Failed(self.failure(kind)),
        }
    }

    fn harvest_inner(&mut self, clock: &Clock) -> Result<Option<Reply>, ErrorKind> {
        let mut budget = HARVEST_BUDGET;
        loop {
            // What arrived is fed before an end of stream or an error is acted on: a whole
            // answer is an answer, whatever came after its last byte.
            let read = self.read_more(clock);
            if let Some(reply) = self.codec.poll()? {
                return Ok(Some(reply));
            }
            match read? {
                Got::Nothing => return Ok(None),
                Got::Ended => return self.codec.closed(Instant::now()),
                Got::Bytes(n) => {
                    budget = budget.saturating_sub(n);
                    if budget == 0 {
                        return Ok(None);
                    }
                }
            }
        }
    }

    /// Reads once from the socket into the codec.
    fn read_more(&mut self, clock: &Clock) -> Result<Got, ErrorKind> {
        let Conn {
            tcp,
            tls,
            codec,
            raw,
            cmsg,
            ended,
            ..
        } = self;
        match tls {
            None => {
                let room = codec.room()?;
                let Some((n, at)) = recv_stamped(tcp, room, cmsg, clock)? else {
                    return Ok(Got::Nothing);
                };
                codec.filled(n, at);
                if n == 0 {
                    *ended = true;
                    return Ok(Got::Ended);
                }
                Ok(Got::Bytes(n))
            }
            Some(tls) => {
                let Some((n, at)) = recv_stamped(tcp, raw, cmsg, clock)? else {
                    return Ok(Got::Nothing);
                };
                if n == 0 {
                    *ended = true;
                    return Ok(Got::Ended);
                }
                let mut input = &raw[..n];
                let mut broken = None;
                while !input.is_empty() && broken.is_none() {
                    if let Err(e) = tls.read_tls(&mut input) {
                        broken = Some(classify::io_error(&e));
                    } else if let Err(e) = tls.process_new_packets() {
                        broken = Some(classify::tls_error(&e));
                    }
                }
                // Plaintext that came before a close_notify, or before a fatal alert, is
                // handed over first.
                loop {
                    let room = codec.room()?;
                    match tls.reader().read(room) {
                        Ok(0) => {
                            *ended = true;
                            break;
                        }
                        Ok(k) => codec.filled(k, at),
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                        Err(e) => {
                            // A TCP close without close_notify: the answer decides whether
                            // that cut it short.
                            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                                *ended = true;
                                break;
                            }
                            broken.get_or_insert(classify::io_error(&e));
                            break;
                        }
                    }
                }
                if let Some(kind) = broken {
                    return Err(kind);
                }
                // Session tickets and alerts may want an answer.
                flush_tls(tls, tcp)?;
                Ok(if *ended { Got::Ended } else { Got::Bytes(n) })
            }
        }
    }

    /// A failure of the exchange in progress, and whether the server can have seen it.
    fn failure(&mut self, kind: ErrorKind) -> Failure {
        let unanswered = self.codec.closed_unanswered(kind);
        self.codec.fail(kind);
        self.ended = true;
        Failure {
            kind,
            unprocessed: if unanswered {
                Unprocessed::IfIdempotent
            } else {
                Unprocessed::No
            },
        }
    }
}

/// What one read found.
enum Got {
    /// Nothing there.
    Nothing,
    /// The peer ended the stream (what came before it was handed over).
    Ended,
    /// This many bytes came off the socket.
    Bytes(usize),
}

/// One non-blocking `recvmsg`: how many bytes, and when the kernel says they arrived (now,
/// when it gives no stamp: later, never earlier, than the truth).
fn recv_stamped(
    tcp: &TcpStream,
    room: &mut [u8],
    cmsg: &mut [u8],
    clock: &Clock,
) -> Result<Option<(usize, Instant)>, ErrorKind> {
    let mut iov = [IoSliceMut::new(room)];
    match recvmsg::<()>(
        tcp.as_raw_fd(),
        &mut iov,
        Some(cmsg),
        MsgFlags::MSG_DONTWAIT,
    ) {
        Ok(msg) => {
            let mut at = None;
            if let Ok(cmsgs) = msg.cmsgs() {
                for c in cmsgs {
                    if let ControlMessageOwned::ScmTimestampns(ts) = c {
                        at = Some(clock.at(&ts));
                    }
                }
            }
            Ok(Some((msg.bytes, at.unwrap_or_else(Instant::now))))
        }
        Err(nix::errno::Errno::EAGAIN) => Ok(None),
        Err(e) => Err(classify::io_error(&e.into())),
    }
}

/// Writes what the socket takes now; returns how much that was (and, on failure, how much
/// had been written before it).
fn write_some(tcp: &mut TcpStream, bytes: &[u8]) -> Result<usize, (ErrorKind, usize)> {
    let mut written = 0;
    while written < bytes.len() {
        match tcp.write(&bytes[written..]) {
            Ok(0) => return Err((ErrorKind::Closed, written)),
            Ok(n) => written += n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) => return Err((classify::io_error(&e), written)),
        }
    }
    Ok(written)
}

/// Writes what rustls has buffered, as far as the socket takes it now.
fn flush_tls(tls: &mut rustls::ClientConnection, tcp: &mut TcpStream) -> Result<(), ErrorKind> {
    while tls.wants_write() {
        match tls.write_tls(tcp) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) => return Err(classify::io_error(&e)),
        }
    }
    Ok(())
}
