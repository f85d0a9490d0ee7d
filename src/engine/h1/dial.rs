//! Opening a connection without an event loop: a non-blocking connect, then rustls's
//! handshake driven by hand, each step taken when the worker's epoll says the socket is ready.
//! The result is a [`Polled`] connection.

use super::polled::Polled;
use crate::engine::classify;
use crate::engine::connect::ConnectTimings;
use crate::sample::ErrorKind;
use rustix::io::Errno;
use rustix::net::{sockopt, AddressFamily, SocketFlags, SocketType};
use rustls::pki_types::ServerName;
use std::net::{SocketAddr, TcpStream};
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::Arc;
use std::time::Instant;

/// What the socket must become before the next step can be taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// Writable: the TCP connect, or handshake bytes the socket could not take.
    Write,
    /// Readable: the server's next handshake flight.
    Read,
}

/// Where to connect, and how to speak TLS there.
#[derive(Clone)]
pub struct DialTarget {
    /// The server's address.
    pub addr: SocketAddr,
    /// The client configuration and server name, for https.
    pub tls: Option<(Arc<rustls::ClientConfig>, ServerName<'static>)>,
    /// Largest response head accepted on the connection.
    pub max_head: usize,
}

/// The outcome of one step.
pub enum Step {
    /// Not there yet; step again when the socket is ready as said.
    Pending(Box<Dial>, Wait),
    /// Connected (and handshaken).
    Ready(Box<Polled>, ConnectTimings),
    /// The connection could not be opened.
    Failed(ErrorKind),
}

/// A connection being opened.
pub struct Dial {
    tcp: TcpStream,
    tls: Option<Box<rustls::ClientConnection>>,
    started: Instant,
    /// When the TCP connect completed, once it has.
    connected: Option<Instant>,
    max_head: usize,
}

impl Dial {
    /// Starts a non-blocking connect; fails at once when no socket or port can be had.
    pub fn start(target: &DialTarget) -> Result<Dial, ErrorKind> {
        let io = |e: Errno| classify::io_error(&e.into());
        let family = match target.addr {
            SocketAddr::V4(_) => AddressFamily::INET,
            SocketAddr::V6(_) => AddressFamily::INET6,
        };
        let started = Instant::now();
        let fd = rustix::net::socket_with(
            family,
            SocketType::STREAM,
            SocketFlags::NONBLOCK | SocketFlags::CLOEXEC,
            None,
        )
        .map_err(io)?;
        let tls = match &target.tls {
            Some((config, name)) => Some(Box::new(
                rustls::ClientConnection::new(config.clone(), name.clone())
                    .map_err(|e| classify::tls_error(&e))?,
            )),
            None => None,
        };
        let connected = match rustix::net::connect(&fd, &target.addr) {
            Ok(()) => Some(Instant::now()),
            Err(Errno::INPROGRESS) => None,
            Err(e) => return Err(io(e)),
        };
        let tcp = TcpStream::from(fd);
        Ok(Dial {
            tcp,
            tls,
            started,
            connected,
            max_head: target.max_head,
        })
    }

    /// The socket, for the worker's epoll.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.tcp.as_fd()
    }

    /// When the connect began, for the connect timeout.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// Takes every step the socket allows now.
    pub fn step(mut self: Box<Self>) -> Step {
        let io = |e: Errno| classify::io_error(&e.into());
        let connected = match self.connected {
            Some(at) => at,
            None => match sockopt::socket_error(&self.tcp) {
                Ok(Ok(())) => {
                    // Writable with no error: connected, unless it is not writable yet.
                    if self.tcp.peer_addr().is_err() {
                        return Step::Pending(self, Wait::Write);
                    }
                    let at = Instant::now();
                    self.connected = Some(at);
                    at
                }
                Ok(Err(e)) => return Step::Failed(io(e)),
                Err(e) => return Step::Failed(io(e)),
            },
        };
        // Small requests must not wait for Nagle.
        let _ = self.tcp.set_nodelay(true);
        let tcp_time = connected - self.started;
        let Some(tls) = self.tls.as_mut() else {
            let Dial { tcp, max_head, .. } = *self;
            return ready(tcp, None, max_head, tcp_time, None);
        };
        match handshake(tls, &mut self.tcp) {
            Err(kind) => Step::Failed(kind),
            Ok(Some(wait)) => Step::Pending(self, wait),
            Ok(None) => {
                let tls_time = Some(connected.elapsed());
                let Dial {
                    tcp, tls, max_head, ..
                } = *self;
                ready(tcp, tls, max_head, tcp_time, tls_time)
            }
        }
    }
}

fn ready(
    tcp: TcpStream,
    tls: Option<Box<rustls::ClientConnection>>,
    max_head: usize,
    tcp_time: std::time::Duration,
    tls_time: Option<std::time::Duration>,
) -> Step {
    match Polled::new(tcp, tls, max_head) {
        Ok(conn) => Step::Ready(
            Box::new(conn),
            ConnectTimings {
                tcp: tcp_time,
                tls: tls_time,
            },
        ),
        Err(kind) => Step::Failed(kind),
    }
}

/// Moves the handshake on as far as the socket allows: `None` once it is done.
fn handshake(
    tls: &mut rustls::ClientConnection,
    tcp: &mut TcpStream,
) -> Result<Option<Wait>, ErrorKind> {
    loop {
        while tls.wants_write() {
            match tls.write_tls(tcp) {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    return Ok(Some(Wait::Write))
                }
                Err(e) => return Err(classify::io_error(&e)),
            }
        }
        if !tls.is_handshaking() {
            return Ok(None);
        }
        match tls.read_tls(tcp) {
            Ok(0) => return Err(ErrorKind::Closed),
            Ok(_) => {
                if let Err(e) = tls.process_new_packets() {
                    // Tell the server why, as a well-behaved client does; it may be gone.
                    let _ = tls.write_tls(tcp);
                    return Err(classify::tls_error(&e));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(Some(Wait::Read)),
            Err(e) => return Err(classify::io_error(&e)),
        }
    }
}
