//! Maps what the network stack, rustls, hyper and h2 report to a classified [`ErrorKind`].

use crate::sample::ErrorKind;
use rustix::io::Errno;
use std::error::Error as StdError;
use std::io;

/// Classifies an I/O error (connect, read, write).
pub fn io_error(e: &io::Error) -> ErrorKind {
    if let Some(code) = e.raw_os_error() {
        return errno(Errno::from_raw_os_error(code));
    }
    if let Some(tls) = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
    {
        return tls_error(tls);
    }
    match e.kind() {
        io::ErrorKind::ConnectionRefused => ErrorKind::Refused,
        io::ErrorKind::ConnectionReset
        | io::ErrorKind::BrokenPipe
        | io::ErrorKind::ConnectionAborted => ErrorKind::Reset,
        io::ErrorKind::UnexpectedEof => ErrorKind::Closed,
        io::ErrorKind::TimedOut => ErrorKind::Timeout,
        io::ErrorKind::AddrNotAvailable | io::ErrorKind::AddrInUse => ErrorKind::PortExhaustion,
        io::ErrorKind::InvalidData => tls_by_message(&e.to_string()),
        _ => ErrorKind::ClientOther,
    }
}

fn errno(e: Errno) -> ErrorKind {
    match e {
        Errno::CONNREFUSED => ErrorKind::Refused,
        Errno::CONNRESET | Errno::PIPE | Errno::CONNABORTED => ErrorKind::Reset,
        Errno::ADDRNOTAVAIL | Errno::ADDRINUSE => ErrorKind::PortExhaustion,
        Errno::MFILE | Errno::NFILE => ErrorKind::TooManyOpenFiles,
        Errno::NETUNREACH | Errno::HOSTUNREACH | Errno::NETDOWN | Errno::HOSTDOWN => {
            ErrorKind::Unreachable
        }
        Errno::TIMEDOUT => ErrorKind::ConnectTimeout,
        _ => ErrorKind::ClientOther,
    }
}

/// HTTP/2 rebuilds I/O errors from their kind and message, losing the rustls error inside;
/// rustls's messages are stable enough to recover the class from.
fn tls_by_message(message: &str) -> ErrorKind {
    if message.contains("received fatal alert") {
        ErrorKind::TlsAlert
    } else if message.contains("invalid peer certificate") {
        ErrorKind::TlsCertificate
    } else {
        ErrorKind::Tls
    }
}

/// Classifies a rustls error.
pub fn tls_error(e: &rustls::Error) -> ErrorKind {
    match e {
        rustls::Error::AlertReceived(_) => ErrorKind::TlsAlert,
        rustls::Error::InvalidCertificate(_) => ErrorKind::TlsCertificate,
        _ => ErrorKind::Tls,
    }
}

/// True when the server cannot have processed the request, so sending it again is safe:
/// hyper never sent it, or HTTP/2 refused the stream (REFUSED_STREAM, or a GOAWAY whose
/// last stream id is below it; RFC 9113 §6.8).
pub fn hyper_unprocessed(e: &hyper::Error) -> bool {
    // Canceled: never dispatched. Closed: the connection task was gone, so it never left.
    if e.is_canceled() || e.is_closed() {
        return true;
    }
    let mut source: Option<&(dyn StdError + 'static)> = e.source();
    while let Some(cause) = source {
        if let Some(h2) = cause.downcast_ref::<h2::Error>() {
            return h2.is_remote()
                && (h2.is_go_away() || h2.reason() == Some(h2::Reason::REFUSED_STREAM));
        }
        source = cause.source();
    }
    false
}

/// Classifies a hyper error by its flags and the first cause it wraps.
pub fn hyper_error(e: &hyper::Error) -> ErrorKind {
    let mut source: Option<&(dyn StdError + 'static)> = e.source();
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<io::Error>() {
            return io_error(io);
        }
        if let Some(h2) = cause.downcast_ref::<h2::Error>() {
            if h2.is_go_away() {
                return ErrorKind::GoAway;
            }
            if h2.is_reset() {
                return ErrorKind::StreamReset;
            }
            if let Some(io) = h2.get_io() {
                return io_error(io);
            }
            return ErrorKind::Protocol;
        }
        source = cause.source();
    }
    if e.is_parse_too_large() {
        ErrorKind::HeaderTooLarge
    } else if e.is_parse() || e.is_parse_status() {
        ErrorKind::Protocol
    } else if e.is_timeout() {
        ErrorKind::Timeout
    } else if e.is_incomplete_message() || e.is_canceled() || e.is_closed() {
        ErrorKind::Closed
    } else {
        ErrorKind::Protocol
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_errors_are_blamed_on_the_right_side() {
        let os = |e: Errno| io_error(&io::Error::from_raw_os_error(e.raw_os_error()));
        assert_eq!(os(Errno::CONNREFUSED), ErrorKind::Refused);
        assert_eq!(os(Errno::CONNRESET), ErrorKind::Reset);
        assert_eq!(os(Errno::ADDRNOTAVAIL), ErrorKind::PortExhaustion);
        assert_eq!(os(Errno::ADDRINUSE), ErrorKind::PortExhaustion);
        assert_eq!(os(Errno::MFILE), ErrorKind::TooManyOpenFiles);
        assert_eq!(os(Errno::NFILE), ErrorKind::TooManyOpenFiles);
        assert_eq!(os(Errno::HOSTUNREACH), ErrorKind::Unreachable);
        assert_eq!(
            io_error(&io::Error::from(io::ErrorKind::UnexpectedEof)),
            ErrorKind::Closed
        );
    }

    #[test]
    fn tls_errors_inside_io_errors_are_found() {
        let alert = rustls::Error::AlertReceived(rustls::AlertDescription::CertificateRequired);
        let e = io::Error::new(io::ErrorKind::InvalidData, alert);
        assert_eq!(io_error(&e), ErrorKind::TlsAlert);
        let bad = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
        assert_eq!(
            io_error(&io::Error::new(io::ErrorKind::InvalidData, bad)),
            ErrorKind::TlsCertificate
        );
    }
}
