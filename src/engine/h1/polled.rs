//! An HTTP/1.1 connection read on the pacer's tick rather than on readiness: the socket is a
//! plain non-blocking one, kept out of tokio's epoll so a reply wakes nobody, and the kernel
//! stamps each read with its arrival time (SO_TIMESTAMPNS), so reading late loses no precision.
//! TLS is rustls driven by hand.

use super::buffer::ReadBuffer;
use super::reader::ResponseReader;
use crate::engine::classify;
use crate::sample::ErrorKind;
use nix::sys::socket::{recvmsg, setsockopt, sockopt, ControlMessageOwned, MsgFlags};
use std::io::{IoSliceMut, Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Most bytes one harvest reads from one connection, so an endless body cannot hold the tick.
const HARVEST_BUDGET: usize = 256 * 1024;

/// A whole response.
#[derive(Debug, Clone)]
pub struct Reply {
    /// Status code.
    pub status: u16,
    /// When the response head arrived (kernel time).
    pub head_at: Instant,
    /// When its last byte arrived (kernel time).
    pub end: Instant,
    /// Body bytes.
    pub body_bytes: u64,
    /// Its head and body, when the request asked to keep them (for captures).
    pub kept: Option<Box<super::reader::Kept>>,
}

/// What a harvest found.
pub enum Harvest {
    /// Nothing whole yet.
    Pending,
    /// The response is complete.
    Done(Reply),
    /// The exchange failed; `unprocessed` when the server cannot have seen the request.
    Failed {
        /// The classified error.
        kind: ErrorKind,
        /// True for an idle keep-alive connection the server had closed.
        unprocessed: bool,
    },
}

/// Converts kernel (realtime) timestamps to `Instant`s, from one reading of both clocks:
/// taken once per wake-up and shared by every reply read in it.
pub struct Clock {
    instant: Instant,
    real: SystemTime,
}

impl Clock {
    /// Reads both clocks now.
    pub fn now() -> Clock {
        Clock {
            instant: Instant::now(),
            real: SystemTime::now(),
        }
    }

    fn at(&self, ts: &nix::sys::time::TimeSpec) -> Instant {
        let stamped = UNIX_EPOCH + Duration::new(ts.tv_sec().max(0) as u64, ts.tv_nsec() as u32);
        let ago = self.real.duration_since(stamped).unwrap_or_default();
        self.instant.checked_sub(ago).unwrap_or(self.instant)
    }
}

/// One polled connection.
pub struct Polled {
    tcp: TcpStream,
    tls: Option<Box<rustls::ClientConnection>>,
    buf: ReadBuffer,
    raw: Vec<u8>,
    cmsg: Vec<u8>,
    /// Request bytes the socket could not take yet (plain TCP; rustls buffers its own).
    unsent: Vec<u8>,
    max_head: usize,
    reader: Option<ResponseReader>,
    head_at: Option<Instant>,
    last_rx: Option<Instant>,
    answered: u64,
    received: bool,
    open: bool,
}

impl Polled {
    /// Wraps a connected non-blocking socket (and its TLS session, handshake done).
    pub fn new(
        tcp: TcpStream,
        tls: Option<Box<rustls::ClientConnection>>,
        max_head: usize,
    ) -> Result<Polled, ErrorKind> {
        let io = |e: std::io::Error| classify::io_error(&e);
        let mut tls = tls;
        if let Some(tls) = tls.as_mut() {
            // Large bodies are written over several ticks; rustls must hold what is not sent.
            tls.set_buffer_limit(None);
        }
        setsockopt(&tcp, sockopt::ReceiveTimestampns, &true).map_err(|e| io(e.into()))?;
        Ok(Polled {
            tcp,
            raw: if tls.is_some() {
                vec![0; 16 * 1024]
            } else {
                Vec::new()
            },
            tls,
            buf: ReadBuffer::new(max_head),
            cmsg: nix::cmsg_space!(nix::sys::time::TimeSpec),
            unsent: Vec::new(),
            max_head,
            reader: None,
            head_at: None,
            last_rx: None,
            answered: 0,
            received: false,
            open: true,
        })
    }

    /// The socket, for the worker's own epoll.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.tcp.as_fd()
    }

    /// False once the server asked to close or an exchange failed.
    pub fn is_open(&self) -> bool {
        self.open
    }

    /// Starts sending a request; what the socket cannot take now is sent by [`Polled::flush`].
    /// With `keep`, the response's head and body are kept for captures.
    pub fn send(
        &mut self,
        request: &[u8],
        head_request: bool,
        keep: bool,
    ) -> Result<(), (ErrorKind, bool)> {
        let reader = ResponseReader::new(head_request, self.max_head);
        self.reader = Some(if keep { reader.keeping() } else { reader });
        self.head_at = None;
        self.received = false;
        let result = match &mut self.tls {
            None => write_some(&mut self.tcp, request).map(|n| {
                self.unsent.clear();
                self.unsent.extend_from_slice(&request[n..]);
            }),
            Some(tls) => tls
                .writer()
                .write_all(request)
                .map_err(|e| classify::io_error(&e))
                .and_then(|()| flush_tls(tls, &mut self.tcp)),
        };
        result.map_err(|kind| {
            self.open = false;
            // A write refused on a reused connection: the server had closed it idle.
            (kind, super::closed_unanswered(kind, self.answered, false))
        })
    }

    /// True while part of the request is still to be written.
    pub fn wants_write(&self) -> bool {
        !self.unsent.is_empty() || self.tls.as_ref().is_some_and(|t| t.wants_write())
    }

    /// Writes more of a request the socket could not take at once.
    pub fn flush(&mut self) -> Result<(), ErrorKind> {
        let result = match &mut self.tls {
            None => write_some(&mut self.tcp, &self.unsent).map(|n| {
                self.unsent.drain(..n);
            }),
            Some(tls) => flush_tls(tls, &mut self.tcp),
        };
        if result.is_err() {
            self.open = false;
        }
        result
    }

    /// Reads what has arrived and completes the response if it is whole; `clock` was read
    /// after the wake-up that found the data.
    pub fn harvest(&mut self, clock: &Clock) -> Harvest {
        match self.harvest_inner(clock) {
            Ok(Some(reply)) => {
                self.answered += 1;
                self.reader = None;
                Harvest::Done(reply)
            }
            Ok(None) => Harvest::Pending,
            Err(kind) => {
                self.open = false;
                self.reader = None;
                Harvest::Failed {
                    kind,
                    unprocessed: super::closed_unanswered(kind, self.answered, self.received),
                }
            }
        }
    }

    fn harvest_inner(&mut self, clock: &Clock) -> Result<Option<Reply>, ErrorKind> {
        let mut budget = HARVEST_BUDGET;
        loop {
            // Whatever is buffered may already complete the response.
            if let Some(reply) = self.feed(clock)? {
                return Ok(Some(reply));
            }
            if budget == 0 {
                return Ok(None);
            }
            match self.read_more(clock)? {
                None => return Ok(None),
                Some(0) => return self.eof(clock),
                Some(n) => budget = budget.saturating_sub(n),
            }
        }
    }

    fn feed(&mut self, clock: &Clock) -> Result<Option<Reply>, ErrorKind> {
        let Some(reader) = self.reader.as_mut() else {
            return Ok(None);
        };
        let fed = reader.feed(self.buf.data())?;
        let mut kept = fed.complete.and_then(|_| reader.take_kept());
        self.buf.consume(fed.consumed);
        let stamp = self.last_rx.unwrap_or(clock.instant);
        if fed.head_done {
            self.head_at = Some(stamp);
        }
        let writing = self.wants_write();
        Ok(fed.complete.map(|c| {
            // A server may answer before it has read the whole body (nginx's `return` does);
            // the rest would be taken as the next request, so such a connection is not reused.
            if !c.keep_alive || writing {
                self.open = false;
            }
            Reply {
                status: c.status,
                head_at: self.head_at.unwrap_or(stamp),
                end: stamp,
                body_bytes: c.body_bytes,
                kept: kept.take(),
            }
        }))
    }

    fn eof(&mut self, clock: &Clock) -> Result<Option<Reply>, ErrorKind> {
        self.open = false;
        let reader = self.reader.as_mut().ok_or(ErrorKind::Closed)?;
        let c = reader.eof()?;
        let kept = reader.take_kept();
        let end = self.last_rx.unwrap_or(clock.instant);
        Ok(Some(Reply {
            status: c.status,
            head_at: self.head_at.unwrap_or(end),
            end,
            body_bytes: c.body_bytes,
            kept,
        }))
    }

    /// Reads once; `None` when nothing is there, `Some(0)` at the end of the stream.
    fn read_more(&mut self, clock: &Clock) -> Result<Option<usize>, ErrorKind> {
        let Polled {
            tcp,
            tls,
            buf,
            raw,
            cmsg,
            last_rx,
            received,
            ..
        } = self;
        match tls {
            None => {
                let room = buf.spare()?;
                let n = recv_stamped(tcp, room, cmsg, clock, last_rx)?;
                if let Some(n) = n {
                    buf.filled(n);
                    *received |= n > 0;
                }
                Ok(n)
            }
            Some(tls) => {
                let n = match recv_stamped(tcp, raw, cmsg, clock, last_rx)? {
                    None => return Ok(None),
                    Some(n) => n,
                };
                *received |= n > 0;
                if n == 0 {
                    return Ok(Some(0));
                }
                let mut input = &raw[..n];
                while !input.is_empty() {
                    tls.read_tls(&mut input)
                        .map_err(|e| classify::io_error(&e))?;
                    tls.process_new_packets()
                        .map_err(|e| classify::tls_error(&e))?;
                }
                loop {
                    let room = buf.spare()?;
                    match tls.reader().read(room) {
                        Ok(0) => return Ok(Some(0)), // close_notify
                        Ok(k) => buf.filled(k),
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                        Err(e) => return Err(classify::io_error(&e)),
                    }
                }
                // Session tickets and alerts may want an answer.
                flush_tls(tls, tcp)?;
                Ok(Some(n))
            }
        }
    }
}

/// One non-blocking `recvmsg`, noting the kernel's arrival stamp.
fn recv_stamped(
    tcp: &TcpStream,
    room: &mut [u8],
    cmsg: &mut [u8],
    clock: &Clock,
    last_rx: &mut Option<Instant>,
) -> Result<Option<usize>, ErrorKind> {
    let mut iov = [IoSliceMut::new(room)];
    match recvmsg::<()>(
        tcp.as_raw_fd(),
        &mut iov,
        Some(cmsg),
        MsgFlags::MSG_DONTWAIT,
    ) {
        Ok(msg) => {
            if let Ok(cmsgs) = msg.cmsgs() {
                for c in cmsgs {
                    if let ControlMessageOwned::ScmTimestampns(ts) = c {
                        *last_rx = Some(clock.at(&ts));
                    }
                }
            }
            Ok(Some(msg.bytes))
        }
        Err(nix::errno::Errno::EAGAIN) => Ok(None),
        Err(e) => Err(classify::io_error(&e.into())),
    }
}

/// Writes what the socket takes now; returns how much that was.
fn write_some(tcp: &mut TcpStream, bytes: &[u8]) -> Result<usize, ErrorKind> {
    let mut written = 0;
    while written < bytes.len() {
        match tcp.write(&bytes[written..]) {
            Ok(0) => return Err(ErrorKind::Closed),
            Ok(n) => written += n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) => return Err(classify::io_error(&e)),
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
