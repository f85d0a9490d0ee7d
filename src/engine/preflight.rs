//! One connection before anything is recorded, so that a wrong port, name, CA, certificate
//! or HTTP version is one line naming the cause rather than a report full of failures; and
//! the HTTP version the server speaks, which picks the driver.

use super::classify;
use super::dial::{self, Connected, DialError};
use super::spec::Endpoint;
use crate::plan::HttpVersion;
use crate::sample::ErrorKind;
use rustix::event::{PollFd, PollFlags};
use std::io::{Read, Write};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// How long the preflight listens after a TLS handshake for the server to reject it, and
/// for an HTTP/2 server's first frame.
const LISTEN: Duration = Duration::from_millis(200);

/// What the preflight found out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    /// True when the server speaks HTTP/2 (ALPN `h2`, or prior knowledge asked).
    pub h2: bool,
    /// The server asked for a client certificate and none was given.
    pub client_cert_asked: bool,
    /// The TLS version the server chose, for https.
    pub tls_version: Option<rustls::ProtocolVersion>,
}

/// Why the preflight failed: the classified cause and what makes it specific.
#[derive(Debug)]
pub struct Refusal {
    /// The cause.
    pub kind: ErrorKind,
    /// The particulars (what the certificate is valid for, which alert came), if any.
    pub detail: Option<String>,
}

impl From<ErrorKind> for Refusal {
    fn from(kind: ErrorKind) -> Refusal {
        Refusal { kind, detail: None }
    }
}

impl From<DialError> for Refusal {
    fn from(e: DialError) -> Refusal {
        Refusal {
            kind: e.kind,
            detail: e.tls.as_ref().and_then(classify::tls_detail),
        }
    }
}

/// Opens one connection to `endpoint` as the run will, with the HTTP version `http` asks.
pub fn check(endpoint: &Endpoint, http: HttpVersion, timeout: Duration) -> Result<Found, Refusal> {
    let mut endpoint = endpoint.clone();
    let asked = endpoint.tls.as_mut().map(|(config, _)| {
        let (noticing, asked) = super::tls::noticing_requests(config);
        *config = noticing;
        asked
    });
    let Connected { mut tcp, tls, .. } = dial::blocking(&endpoint, timeout)?;
    let Some(mut tls) = tls else {
        if http == HttpVersion::Http2 {
            speaks_h2_in_clear(&mut tcp)?;
        }
        return Ok(Found {
            h2: http == HttpVersion::Http2,
            client_cert_asked: false,
            tls_version: None,
        });
    };
    let chose_h2 = tls.alpn_protocol() == Some(b"h2");
    if http == HttpVersion::Http2 && !chose_h2 {
        return Err(Refusal {
            kind: ErrorKind::TlsNoAlpn,
            detail: Some(match tls.alpn_protocol() {
                Some(p) => format!(
                    "asked for h2, the server chose {}",
                    String::from_utf8_lossy(p)
                ),
                None => "asked for h2, the server chose no protocol".into(),
            }),
        });
    }
    listen_for_rejection(&mut tcp, &mut tls, !chose_h2)?;
    let client_cert_asked = asked.is_some_and(|a| a.load(Ordering::Relaxed))
        && !endpoint
            .tls
            .as_ref()
            .is_some_and(|(config, _)| config.client_auth_cert_resolver.has_certs());
    Ok(Found {
        h2: chose_h2,
        client_cert_asked,
        tls_version: tls.protocol_version(),
    })
}

/// With TLS 1.3 a server refuses a client certificate (or its absence) only after the
/// client's side of the handshake is done: listen briefly for that alert. A server that
/// closes an HTTP/1.1 connection right after the handshake will not take requests either.
fn listen_for_rejection(
    tcp: &mut std::net::TcpStream,
    tls: &mut rustls::ClientConnection,
    closing_fails: bool,
) -> Result<(), Refusal> {
    if !readable_within(tcp, LISTEN) {
        return Ok(());
    }
    match tls.read_tls(tcp) {
        Ok(0) if closing_fails => return Err(ErrorKind::Closed.into()),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(()),
        Err(e) => return Err(classify::io_error(&e).into()),
    }
    if let Err(e) = tls.process_new_packets() {
        return Err(Refusal {
            kind: classify::tls_error(&e),
            detail: classify::tls_detail(&e),
        });
    }
    let mut plain = [0u8; 1];
    match tls.reader().read(&mut plain) {
        Ok(0) if closing_fails => Err(ErrorKind::Closed.into()),
        _ => Ok(()),
    }
}

/// An HTTP/2 client without TLS starts with the connection preface (RFC 9113 §3.4); a
/// server that speaks HTTP/2 answers with a SETTINGS frame, one that does not with an
/// HTTP/1.1 error or a close.
fn speaks_h2_in_clear(tcp: &mut std::net::TcpStream) -> Result<(), Refusal> {
    const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00";
    let written = (|| {
        tcp.set_nonblocking(false)?;
        tcp.write_all(PREFACE)
    })();
    written.map_err(|e| Refusal::from(classify::io_error(&e)))?;
    let refused = |detail: &str| {
        Refusal {
        kind: ErrorKind::Protocol,
        detail: Some(format!(
            "{detail}: it does not speak HTTP/2 without TLS (prior knowledge); drop --http2, or use https"
        )),
    }
    };
    if !readable_within(tcp, LISTEN * 5) {
        return Err(refused(
            "the server sent nothing back to the HTTP/2 preface",
        ));
    }
    let mut head = [0u8; 9];
    match tcp.read(&mut head) {
        Ok(n) if n >= 4 && head[3] == 0x4 => Ok(()),
        Ok(n) if head[..n].starts_with(b"HTTP/") => Err(refused("the server answered in HTTP/1")),
        Ok(0) => Err(refused(
            "the server closed the connection at the HTTP/2 preface",
        )),
        Ok(_) => Err(refused("the server's first frame was not SETTINGS")),
        Err(e) => Err(classify::io_error(&e).into()),
    }
}

fn readable_within(tcp: &std::net::TcpStream, wait: Duration) -> bool {
    let deadline = Instant::now() + wait;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let mut fds = [PollFd::new(tcp, PollFlags::IN)];
        let timeout = rustix::time::Timespec {
            tv_sec: left.as_secs() as i64,
            tv_nsec: i64::from(left.subsec_nanos()),
        };
        match rustix::event::poll(&mut fds, Some(&timeout)) {
            Ok(n) => return n > 0,
            Err(rustix::io::Errno::INTR) if !left.is_zero() => {}
            Err(_) => return false,
        }
    }
}
