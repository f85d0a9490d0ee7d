//! Opening a connection without an event loop: a non-blocking connect, then rustls's
//! handshake driven by hand, each step taken when the socket is ready. The direct driver
//! steps it from its epoll; the preflight steps it with `poll` ([`blocking`]).

use super::classify;
use super::spec::Endpoint;
use crate::sample::{ErrorKind, Opened};
use rustix::event::{PollFd, PollFlags};
use rustix::io::Errno;
use rustix::net::{sockopt, AddressFamily, SocketFlags, SocketType};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::{AsFd, BorrowedFd};
use std::time::{Duration, Instant};

/// What the socket must become before the next step can be taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// Writable: the TCP connect, or handshake bytes the socket could not take.
    Write,
    /// Readable: the server's next handshake flight.
    Read,
}

/// A connection, connected (and handshaken).
pub struct Connected {
    /// The socket, non-blocking.
    pub tcp: TcpStream,
    /// The TLS session, for https.
    pub tls: Option<Box<rustls::ClientConnection>>,
    /// How long connecting and shaking hands took.
    pub opened: Opened,
}

/// Why a connection could not be opened.
#[derive(Debug)]
pub struct DialError {
    /// The classified cause.
    pub kind: ErrorKind,
    /// The TLS error behind it, for the preflight's explanation.
    pub tls: Option<rustls::Error>,
}

impl From<ErrorKind> for DialError {
    fn from(kind: ErrorKind) -> DialError {
        DialError { kind, tls: None }
    }
}

/// The outcome of one step.
pub enum Step {
    /// Not there yet; step again when the socket is ready as said.
    Pending(Box<Dial>, Wait),
    /// Connected (and handshaken).
    Ready(Box<Connected>),
    /// The connection could not be opened.
    Failed(DialError),
}

/// A connection being opened.
pub struct Dial {
    tcp: TcpStream,
    tls: Option<Box<rustls::ClientConnection>>,
    started: Instant,
    /// When the TCP connect completed, once it has.
    connected: Option<Instant>,
}

impl Dial {
    /// Starts a non-blocking connect; fails at once when no socket or port can be had.
    pub fn start(endpoint: &Endpoint) -> Result<Dial, DialError> {
        let io = |e: Errno| DialError::from(classify::errno(e));
        let family = match endpoint.addr {
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
        let tls = match &endpoint.tls {
            Some((config, name)) => Some(Box::new(
                rustls::ClientConnection::new(config.clone(), name.clone()).map_err(tls_failure)?,
            )),
            None => None,
        };
        let connected = match rustix::net::connect(&fd, &endpoint.addr) {
            Ok(()) => Some(Instant::now()),
            Err(Errno::INPROGRESS) => None,
            Err(e) => return Err(connect_error(e).into()),
        };
        Ok(Dial {
            tcp: TcpStream::from(fd),
            tls,
            started,
            connected,
        })
    }

    /// The socket, for the caller's epoll.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.tcp.as_fd()
    }

    /// When the connect began, for the connect timeout.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// Takes every step the socket allows now.
    pub fn step(mut self: Box<Self>) -> Step {
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
                Ok(Err(e)) | Err(e) => return Step::Failed(connect_error(e).into()),
            },
        };
        // Small requests must not wait for Nagle.
        let _ = self.tcp.set_nodelay(true);
        let tcp = connected - self.started;
        let Some(session) = self.tls.as_mut() else {
            return Step::Ready(Box::new(Connected {
                tcp: self.tcp,
                tls: None,
                opened: Opened { tcp, tls: None },
            }));
        };
        match handshake(session, &mut self.tcp) {
            Err(e) => Step::Failed(e),
            Ok(Some(wait)) => Step::Pending(self, wait),
            Ok(None) => {
                let tls = Some(connected.elapsed());
                let Dial {
                    tcp: socket,
                    tls: session,
                    ..
                } = *self;
                Step::Ready(Box::new(Connected {
                    tcp: socket,
                    tls: session,
                    opened: Opened { tcp, tls },
                }))
            }
        }
    }
}

/// A failed connect: a timeout there is the connect's own.
fn connect_error(e: Errno) -> ErrorKind {
    match classify::errno(e) {
        ErrorKind::Timeout => ErrorKind::ConnectTimeout,
        kind => kind,
    }
}

fn tls_failure(e: rustls::Error) -> DialError {
    DialError {
        kind: classify::tls_error(&e),
        tls: Some(e),
    }
}

/// Moves the handshake on as far as the socket allows: `None` once it is done.
fn handshake(
    tls: &mut rustls::ClientConnection,
    tcp: &mut TcpStream,
) -> Result<Option<Wait>, DialError> {
    let io = |e: std::io::Error| DialError::from(classify::io_error(&e));
    loop {
        while tls.wants_write() {
            match tls.write_tls(tcp) {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    return Ok(Some(Wait::Write))
                }
                Err(e) => return Err(io(e)),
            }
        }
        if !tls.is_handshaking() {
            return Ok(None);
        }
        match tls.read_tls(tcp) {
            Ok(0) => return Err(ErrorKind::Closed.into()),
            Ok(_) => {
                if let Err(e) = tls.process_new_packets() {
                    // Tell the server why, as a well-behaved client does; it may be gone.
                    let _ = tls.write_tls(tcp);
                    return Err(tls_failure(e));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(Some(Wait::Read)),
            Err(e) => return Err(io(e)),
        }
    }
}

/// Opens a connection on this thread, waiting on the socket with `poll` (the preflight):
/// the same steps a direct worker takes, within `timeout`.
pub fn blocking(endpoint: &Endpoint, timeout: Duration) -> Result<Connected, DialError> {
    let deadline = Instant::now() + timeout;
    let mut dial = Box::new(Dial::start(endpoint)?);
    loop {
        match dial.step() {
            Step::Ready(connected) => return Ok(*connected),
            Step::Failed(e) => return Err(e),
            Step::Pending(pending, wait) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(ErrorKind::ConnectTimeout.into());
                }
                let flags = match wait {
                    Wait::Write => PollFlags::OUT,
                    Wait::Read => PollFlags::IN,
                };
                let mut fds = [PollFd::new(&pending.tcp, flags)];
                let timespec = rustix::time::Timespec {
                    tv_sec: left.as_secs() as i64,
                    tv_nsec: i64::from(left.subsec_nanos()),
                };
                match rustix::event::poll(&mut fds, Some(&timespec)) {
                    Ok(_) | Err(Errno::INTR) => {}
                    Err(e) => return Err(classify::errno(e).into()),
                }
                dial = pending;
            }
        }
    }
}
