//! Maps what the network stack, rustls and h2 report to a classified [`ErrorKind`]:
//! one mapping for both drivers, so an outcome is named the same on HTTP/1.1 and HTTP/2.

use crate::sample::ErrorKind;
use rustix::io::Errno;
use rustls::{AlertDescription, CertificateError};
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

/// Classifies an errno.
pub fn errno(e: Errno) -> ErrorKind {
    match e {
        Errno::CONNREFUSED => ErrorKind::Refused,
        Errno::CONNRESET | Errno::PIPE | Errno::CONNABORTED => ErrorKind::Reset,
        Errno::ADDRNOTAVAIL | Errno::ADDRINUSE => ErrorKind::PortExhaustion,
        Errno::MFILE | Errno::NFILE => ErrorKind::TooManyOpenFiles,
        Errno::NETUNREACH | Errno::HOSTUNREACH | Errno::NETDOWN | Errno::HOSTDOWN => {
            ErrorKind::Unreachable
        }
        // On an open connection: the peer stopped acknowledging. Opening one maps it to
        // `connect_timeout` itself.
        Errno::TIMEDOUT => ErrorKind::Timeout,
        _ => ErrorKind::ClientOther,
    }
}

/// Classifies a rustls error by its cause.
pub fn tls_error(e: &rustls::Error) -> ErrorKind {
    match e {
        rustls::Error::AlertReceived(alert) => alert_kind(*alert),
        rustls::Error::InvalidCertificate(c) => certificate_kind(c),
        rustls::Error::NoApplicationProtocol => ErrorKind::TlsNoAlpn,
        rustls::Error::PeerIncompatible(_) => ErrorKind::TlsHandshake,
        _ => ErrorKind::Tls,
    }
}

/// What a TLS alert from the server says went wrong.
fn alert_kind(alert: AlertDescription) -> ErrorKind {
    match alert {
        AlertDescription::CertificateRequired => ErrorKind::TlsClientCertRequired,
        AlertDescription::BadCertificate
        | AlertDescription::UnsupportedCertificate
        | AlertDescription::CertificateRevoked
        | AlertDescription::CertificateExpired
        | AlertDescription::CertificateUnknown
        | AlertDescription::UnknownCA
        | AlertDescription::AccessDenied => ErrorKind::TlsClientCertRejected,
        AlertDescription::NoApplicationProtocol => ErrorKind::TlsNoAlpn,
        AlertDescription::HandshakeFailure
        | AlertDescription::ProtocolVersion
        | AlertDescription::InsufficientSecurity => ErrorKind::TlsHandshake,
        _ => ErrorKind::TlsAlert,
    }
}

fn certificate_kind(e: &CertificateError) -> ErrorKind {
    match e {
        CertificateError::UnknownIssuer => ErrorKind::TlsUnknownIssuer,
        CertificateError::Expired
        | CertificateError::ExpiredContext { .. }
        | CertificateError::NotValidYet
        | CertificateError::NotValidYetContext { .. } => ErrorKind::TlsExpired,
        CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
            ErrorKind::TlsNameMismatch
        }
        _ => ErrorKind::TlsCertificate,
    }
}

/// Alerts whose names [`tls_by_message`] recognises; the rest are plain alerts.
const NAMED_ALERTS: [AlertDescription; 12] = [
    AlertDescription::CertificateRequired,
    AlertDescription::BadCertificate,
    AlertDescription::UnsupportedCertificate,
    AlertDescription::CertificateRevoked,
    AlertDescription::CertificateExpired,
    AlertDescription::CertificateUnknown,
    AlertDescription::UnknownCA,
    AlertDescription::AccessDenied,
    AlertDescription::NoApplicationProtocol,
    AlertDescription::HandshakeFailure,
    AlertDescription::ProtocolVersion,
    AlertDescription::InsufficientSecurity,
];

/// HTTP/2 rebuilds I/O errors from their kind and message, losing the rustls error inside;
/// rustls's messages (`received fatal alert: {alert:?}`, `invalid peer certificate: …`) are
/// stable enough to recover the same class from.
fn tls_by_message(message: &str) -> ErrorKind {
    if let Some(name) = message.split("received fatal alert: ").nth(1) {
        let name = name.trim();
        return NAMED_ALERTS
            .iter()
            .find(|a| format!("{a:?}") == name)
            .map_or(ErrorKind::TlsAlert, |a| alert_kind(*a));
    }
    if let Some(cause) = message.split("invalid peer certificate: ").nth(1) {
        return if cause.contains("UnknownIssuer") {
            ErrorKind::TlsUnknownIssuer
        } else if cause.contains("RevocationList") {
            ErrorKind::TlsCertificate
        } else if cause.contains("xpired")
            || cause.contains("NotValidYet")
            || cause.contains("not valid yet")
        {
            ErrorKind::TlsExpired
        } else if cause.contains("NotValidForName") || cause.contains("not valid for name") {
            ErrorKind::TlsNameMismatch
        } else {
            ErrorKind::TlsCertificate
        };
    }
    ErrorKind::Tls
}

/// Details of a TLS failure worth one more clause in an error line (what the certificate is
/// valid for, when it expired, which alert came); nothing secret is in them.
pub fn tls_detail(e: &rustls::Error) -> Option<String> {
    match e {
        rustls::Error::AlertReceived(alert) => Some(format!("the server sent alert {alert:?}")),
        rustls::Error::InvalidCertificate(CertificateError::NotValidForNameContext {
            expected,
            presented,
        }) => Some(format!(
            "it is valid for {}, not {:?}",
            if presented.is_empty() {
                "no name at all".to_string()
            } else {
                presented
                    .iter()
                    .map(|p| bare_name(p))
                    .collect::<Vec<_>>()
                    .join(", ")
            },
            expected.to_str()
        )),
        rustls::Error::InvalidCertificate(CertificateError::ExpiredContext {
            not_after, ..
        }) => Some(format!("it expired at {}", utc(not_after.as_secs()))),
        rustls::Error::InvalidCertificate(CertificateError::NotValidYetContext {
            not_before,
            ..
        }) => Some(format!("it is valid from {}", utc(not_before.as_secs()))),
        rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer) => None,
        other => Some(other.to_string()),
    }
}

/// A name as rustls presents it (`DnsName("a.example")`, `IpAddress(10.0.0.1)`), bare.
fn bare_name(presented: &str) -> &str {
    let inner = presented
        .split_once('(')
        .and_then(|(_, rest)| rest.strip_suffix(')'))
        .unwrap_or(presented);
    inner.trim_matches('"')
}

fn utc(secs: u64) -> String {
    humantime::format_rfc3339_seconds(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs))
        .to_string()
}

/// Whether the server can have processed the request: not when it refused the stream
/// (REFUSED_STREAM) or its GOAWAY named a last stream below this one (RFC 9113 §6.8), and a
/// graceful GOAWAY (NO_ERROR: the server rotating its connections) is told apart from such
/// a refusal, which is a sign of load. A GOAWAY or reset of the client's own (a protocol
/// error it found) says nothing of what the server did. A request that never left is told
/// apart by the caller.
pub fn h2_unprocessed(e: &h2::Error) -> super::job::Unprocessed {
    use super::job::Unprocessed;
    if !e.is_remote() {
        Unprocessed::No
    } else if e.is_go_away() && e.reason() == Some(h2::Reason::NO_ERROR) {
        Unprocessed::Unsent
    } else if e.is_go_away() || e.reason() == Some(h2::Reason::REFUSED_STREAM) {
        Unprocessed::Certainly
    } else {
        Unprocessed::No
    }
}

/// Classifies an HTTP/2 error: the I/O error under it, or what the peer did.
pub fn h2_error(e: &h2::Error) -> ErrorKind {
    if let Some(io) = e.get_io() {
        // h2 ends a stream whose connection reached its end of file with a BrokenPipe of its
        // own (no OS error behind it): the answer was cut short, as on HTTP/1.1.
        if io.kind() == io::ErrorKind::BrokenPipe && io.raw_os_error().is_none() {
            return ErrorKind::Closed;
        }
        return io_error(io);
    }
    if e.is_go_away() {
        ErrorKind::GoAway
    } else if e.is_reset() && e.is_remote() {
        ErrorKind::StreamReset
    } else if e.is_reset() && e.reason() == Some(h2::Reason::REFUSED_STREAM) {
        // h2 refuses a stream itself when its answer's headers outgrow the limit.
        ErrorKind::HeaderTooLarge
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
    fn tls_failures_are_named_by_their_cause() {
        let cert = |c: CertificateError| tls_error(&rustls::Error::InvalidCertificate(c));
        assert_eq!(
            cert(CertificateError::UnknownIssuer),
            ErrorKind::TlsUnknownIssuer
        );
        assert_eq!(cert(CertificateError::Expired), ErrorKind::TlsExpired);
        assert_eq!(cert(CertificateError::NotValidYet), ErrorKind::TlsExpired);
        assert_eq!(
            cert(CertificateError::NotValidForName),
            ErrorKind::TlsNameMismatch
        );
        assert_eq!(
            cert(CertificateError::BadSignature),
            ErrorKind::TlsCertificate
        );
        let alert = |a: AlertDescription| tls_error(&rustls::Error::AlertReceived(a));
        assert_eq!(
            alert(AlertDescription::CertificateRequired),
            ErrorKind::TlsClientCertRequired
        );
        assert_eq!(
            alert(AlertDescription::UnknownCA),
            ErrorKind::TlsClientCertRejected
        );
        assert_eq!(
            alert(AlertDescription::NoApplicationProtocol),
            ErrorKind::TlsNoAlpn
        );
        assert_eq!(
            alert(AlertDescription::HandshakeFailure),
            ErrorKind::TlsHandshake
        );
        assert_eq!(alert(AlertDescription::DecodeError), ErrorKind::TlsAlert);
    }

    #[test]
    fn certificate_details_name_what_it_is_valid_for() {
        let e = rustls::Error::InvalidCertificate(CertificateError::NotValidForNameContext {
            expected: rustls::pki_types::ServerName::try_from("example.com").unwrap(),
            presented: vec!["IpAddress(127.0.0.1)".into(), "DnsName(\"a.test\")".into()],
        });
        assert_eq!(
            tls_detail(&e).unwrap(),
            "it is valid for 127.0.0.1, a.test, not \"example.com\""
        );
    }

    #[test]
    fn tls_errors_classify_the_same_inside_io_errors_and_rebuilt_from_messages() {
        let cases = [
            rustls::Error::AlertReceived(AlertDescription::CertificateRequired),
            rustls::Error::AlertReceived(AlertDescription::NoApplicationProtocol),
            rustls::Error::AlertReceived(AlertDescription::BadCertificate),
            rustls::Error::AlertReceived(AlertDescription::DecodeError),
            rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer),
            rustls::Error::InvalidCertificate(CertificateError::Expired),
            rustls::Error::InvalidCertificate(CertificateError::NotValidForName),
            rustls::Error::InvalidCertificate(CertificateError::BadSignature),
        ];
        for e in cases {
            let direct = tls_error(&e);
            let wrapped = io_error(&io::Error::new(io::ErrorKind::InvalidData, e.clone()));
            // What h2 hands back: the same kind and message, the cause gone.
            let rebuilt = io_error(&io::Error::new(io::ErrorKind::InvalidData, e.to_string()));
            assert_eq!((wrapped, rebuilt), (direct, direct), "{e}");
        }
    }
}
