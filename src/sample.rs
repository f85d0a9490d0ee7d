//! What crosses from the engine to the recorder: what happened to one request (and what the
//! preflight noticed about the server, for the run's description).

use std::fmt;
use std::time::{Duration, Instant};

/// What happened to one request. Small and `Copy`: recorded on the hot path without allocating.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    /// A status code, or why there was none.
    pub outcome: Outcome,
    /// From the intended send time to the end of the response body (open model).
    pub latency: Duration,
    /// From the actual send to the end of the response body.
    pub service: Duration,
    /// How late the request left compared with its intended time.
    pub lag: Duration,
    /// TCP connect time, when this request opened a connection.
    pub connect: Option<Duration>,
    /// TLS handshake time, when this request opened a TLS connection.
    pub tls_handshake: Option<Duration>,
    /// From the actual send to the response head.
    pub first_byte: Option<Duration>,
    /// Response body bytes received.
    pub bytes_in: u64,
    /// Request body bytes sent.
    pub bytes_out: u64,
    /// True when it was sent twice because the server closed the connection unprocessed.
    pub retried: bool,
    /// Which of the run's requests it was (its index in the plan).
    pub request: u16,
    /// The stage (sweep step) it was sent for, in a staged run.
    pub stage: Option<u16>,
    /// True when the answer is one the request expects; never for an error.
    pub expected: bool,
    /// The flow iteration this request ended, when it was a flow's last step or the step
    /// at which its iteration failed.
    pub iteration: Option<Iteration>,
}

/// A flow iteration that ended: which flow, the stage it began in, how long it took from
/// its first step's intended send to its last answer (think times included), and whether
/// every step got what it expects.
#[derive(Debug, Clone, Copy)]
pub struct Iteration {
    /// Which flow, by index in the plan.
    pub flow: u16,
    /// The stage its first step was sent for, in a staged run.
    pub stage: Option<u16>,
    /// From its first step's intended send to the end of its last answer.
    pub took: Duration,
    /// True when every step got what it expects.
    pub ok: bool,
}

/// When one request was due, left and ended: every time a [`Sample`] holds comes from these.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// When the schedule wanted it sent (its arrival, in the open model).
    pub intended: Instant,
    /// When it was handed to the socket: stamped before the write, so no time is short of it.
    pub sent: Instant,
    /// When its answer (or failure) was complete.
    pub end: Instant,
}

impl Timing {
    /// The stamps of one request. An end stamped before the send (a kernel stamp converted
    /// to the process clock) is taken as the send: a time is never negative.
    pub fn new(intended: Instant, sent: Instant, end: Instant) -> Timing {
        Timing {
            intended,
            sent,
            end: end.max(sent),
        }
    }

    /// From the intended send time to the end, or from the actual send when it left early
    /// (coalescing): a stalled server is not hidden, and sending early never flatters.
    pub fn latency(&self) -> Duration {
        self.end - self.intended.min(self.sent)
    }

    /// From the actual send to the end.
    pub fn service(&self) -> Duration {
        self.end - self.sent
    }

    /// How late it left.
    pub fn lag(&self) -> Duration {
        self.sent.saturating_duration_since(self.intended)
    }
}

/// How long opening the connection a request went out on took, for the request that opened it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Opened {
    /// TCP connect.
    pub tcp: Duration,
    /// TLS handshake, for https.
    pub tls: Option<Duration>,
}

/// Which request a sample is of, and how it went out.
#[derive(Debug, Clone, Copy)]
pub struct Origin {
    /// Which of the run's requests (its index in the plan).
    pub request: u16,
    /// The stage (sweep step) it was sent for, in a staged run.
    pub stage: Option<u16>,
    /// True for a second attempt after the server provably did not process the first.
    pub retried: bool,
    /// The connection it opened, if it opened one.
    pub opened: Option<Opened>,
}

/// What came back to a request that got an answer.
#[derive(Debug, Clone, Copy)]
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// True when the request expects this answer (status, body, captures).
    pub expected: bool,
    /// When the head arrived.
    pub head_at: Instant,
    /// Response body bytes.
    pub bytes_in: u64,
    /// Request body bytes.
    pub bytes_out: u64,
}

impl Sample {
    /// A request that got an answer.
    pub fn answered(origin: Origin, at: Timing, answer: Answer) -> Sample {
        Sample {
            outcome: Outcome::Status(answer.status),
            first_byte: Some(answer.head_at.max(at.sent) - at.sent),
            bytes_in: answer.bytes_in,
            bytes_out: answer.bytes_out,
            expected: answer.expected,
            ..Sample::of(origin, at, Outcome::Status(answer.status))
        }
    }

    /// A request that got no usable answer.
    pub fn failed(origin: Origin, at: Timing, kind: ErrorKind) -> Sample {
        Sample::of(origin, at, Outcome::Error(kind))
    }

    fn of(origin: Origin, at: Timing, outcome: Outcome) -> Sample {
        Sample {
            outcome,
            latency: at.latency(),
            service: at.service(),
            lag: at.lag(),
            connect: origin.opened.map(|o| o.tcp),
            tls_handshake: origin.opened.and_then(|o| o.tls),
            first_byte: None,
            bytes_in: 0,
            bytes_out: 0,
            retried: origin.retried,
            request: origin.request,
            stage: origin.stage,
            expected: false,
            iteration: None,
        }
    }

    /// The same sample, ending the flow iteration `it`.
    pub fn ending(self, it: Iteration) -> Sample {
        Sample {
            iteration: Some(it),
            ..self
        }
    }

    /// The same answer, failed as `kind` (a value it must carry was not in it).
    pub fn failing(self, kind: ErrorKind) -> Sample {
        Sample {
            outcome: Outcome::Error(kind),
            expected: false,
            ..self
        }
    }
}

/// Something the preflight noticed that does not stop a run but may explain its numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Notice {
    /// The server asked for a client certificate and none was given.
    ClientCertificateAsked,
    /// The connection cap was lowered to what the open-files limit lets the process hold.
    ConnectionsLowered {
        /// The cap asked for.
        from: u32,
        /// The cap the run has.
        to: u32,
        /// The open-files limit in force.
        open_files: u64,
    },
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Notice::ClientCertificateAsked => f.write_str(
                "the server asked for a client certificate and none was given (--cert and --key): it may refuse every request",
            ),
            Notice::ConnectionsLowered { from, to, open_files } => write!(
                f,
                "at most {to} connections, not {from}: this process may open {open_files} files (ulimit -n)"
            ),
        }
    }
}

/// The result of a request: a status code or a classified error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The server answered with this status code.
    Status(u16),
    /// No usable answer.
    Error(ErrorKind),
}

impl Outcome {
    /// True for 2xx and 3xx answers.
    pub fn is_success(self) -> bool {
        matches!(self, Outcome::Status(code) if (200..400).contains(&code))
    }
}

/// Which side a failure is blamed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// The generator (or its host) failed: the numbers describe the generator, not the server.
    Client,
    /// The server or the network refused, broke or answered wrongly.
    Server,
}

macro_rules! error_kinds {
    ($( $(#[doc = $doc:literal])* $variant:ident => ($key:literal, $side:ident, $text:literal), )*) => {
        /// A classified failure. A closed set, so the hot path records it without a string.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum ErrorKind {
            $( $(#[doc = $doc])* $variant, )*
        }

        impl ErrorKind {
            /// Every kind, in a stable order.
            pub const ALL: &'static [ErrorKind] = &[$(ErrorKind::$variant,)*];

            /// A stable machine-readable key, used in the run log and JSON.
            pub fn key(self) -> &'static str {
                match self { $(ErrorKind::$variant => $key,)* }
            }

            /// Who is to blame.
            pub fn side(self) -> Side {
                match self { $(ErrorKind::$variant => Side::$side,)* }
            }

            /// A sentence a user can act on.
            pub fn description(self) -> &'static str {
                match self { $(ErrorKind::$variant => $text,)* }
            }

            /// The kind for a key written by [`ErrorKind::key`].
            pub fn from_key(key: &str) -> Option<ErrorKind> {
                match key { $($key => Some(ErrorKind::$variant),)* _ => None }
            }
        }
    };
}

error_kinds! {
    /// The whole request did not finish within `--timeout`.
    Timeout => ("timeout", Client, "request timed out (--timeout)"),
    /// The connection was not established within `--connect-timeout`.
    ConnectTimeout => ("connect_timeout", Client, "connect timed out (--connect-timeout)"),
    /// No local port was free (EADDRNOTAVAIL / EADDRINUSE).
    PortExhaustion => ("port_exhaustion", Client, "no free local port (ephemeral ports exhausted: fewer connections, keep-alive, or a wider net.ipv4.ip_local_port_range)"),
    /// The process or system ran out of file descriptors (EMFILE / ENFILE).
    TooManyOpenFiles => ("too_many_open_files", Client, "too many open files (raise ulimit -n or lower --max-connections)"),
    /// The host name did not resolve.
    Dns => ("dns", Client, "host name did not resolve"),
    /// All connections were busy and the generator's backlog was full, so the request was never sent.
    Backlog => ("backlog_full", Client, "not sent: all connections busy and the backlog full (raise --max-connections)"),
    /// A request picking its data rows uniquely had used them all, so it was not sent.
    DataExhausted => ("data_exhausted", Client, "not sent: its data rows (pick: unique) were all used"),
    /// A data set too large to hold in memory could not be read back from its file.
    DataUnreadable => ("data_unreadable", Client, "not sent: its data file could not be read back (changed or removed during the run?)"),
    /// A value a flow step captures was not in the response, so the flow could not go on.
    CaptureFailed => ("capture_failed", Server, "a value the flow captures was not in the response"),
    /// The connection's login failed, so a request that needed it was not sent.
    LoginFailed => ("login_failed", Server, "not sent: the connection's login failed"),
    /// Any other local failure (e.g. the generator's TLS configuration).
    ClientOther => ("client_other", Client, "other client-side error"),
    /// The server refused the connection.
    Refused => ("refused", Server, "connection refused"),
    /// The connection was reset by the peer.
    Reset => ("reset", Server, "connection reset by peer"),
    /// The connection closed before a complete response arrived.
    Closed => ("closed", Server, "connection closed before the response was complete"),
    /// The network could not reach the host.
    Unreachable => ("unreachable", Server, "network or host unreachable"),
    /// The server's certificate is signed by a CA the generator does not trust.
    TlsUnknownIssuer => ("tls_unknown_issuer", Server, "server certificate signed by an unknown CA (give that CA with --cacert, or use --insecure)"),
    /// The server's certificate has expired, or is not valid yet.
    TlsExpired => ("tls_expired", Server, "server certificate expired or not yet valid (renew it, or check both machines' clocks)"),
    /// The server's certificate is not valid for the name the generator asked for.
    TlsNameMismatch => ("tls_name_mismatch", Server, "server certificate not valid for the host name (give the name it was issued for with --server-name)"),
    /// The server's certificate failed verification for another reason.
    TlsCertificate => ("tls_certificate", Server, "server certificate invalid (bad signature, wrong key usage or revoked)"),
    /// The server refused the handshake for want of a client certificate.
    TlsClientCertRequired => ("tls_client_cert_required", Server, "the server requires a client certificate (give one with --cert and --key)"),
    /// The server refused the client certificate it was given.
    TlsClientCertRejected => ("tls_client_cert_rejected", Server, "the server refused the client certificate, or its absence (is it signed by a CA the server trusts, and still valid?)"),
    /// Client and server have no application protocol (HTTP version) in common.
    TlsNoAlpn => ("tls_no_alpn", Server, "no HTTP version in common (ALPN): the server does not speak the one asked (--http1, --http2)"),
    /// The handshake failed: no protocol version or cipher suite in common.
    TlsHandshake => ("tls_handshake", Server, "TLS handshake failure (no protocol version or cipher suite in common)"),
    /// The server sent another TLS alert.
    TlsAlert => ("tls_alert", Server, "TLS alert from the server"),
    /// Any other TLS failure.
    Tls => ("tls", Server, "TLS record error"),
    /// HTTP/2 GOAWAY: the server stopped accepting streams on the connection.
    GoAway => ("h2_goaway", Server, "HTTP/2 GOAWAY from the server"),
    /// HTTP/2 stream reset by the server (RST_STREAM).
    StreamReset => ("h2_stream_reset", Server, "HTTP/2 stream reset by the server"),
    /// The response could not be parsed as HTTP.
    Protocol => ("protocol", Server, "malformed HTTP response"),
    /// The response head was larger than the generator accepts.
    HeaderTooLarge => ("header_too_large", Server, "response headers too large"),
    /// The run was stopped (Ctrl-C, the live page, `--abort-when`) and the request, already
    /// sent, had no answer by the end of the grace given to requests in flight. Counted as
    /// failed rather than left out, so every request sent is accounted for; the server's,
    /// since it had the request for at least the grace and did not answer.
    Unanswered => ("unanswered_at_stop", Server, "no answer when the run was stopped, nor in the grace after it (a hung or very slow server?)"),
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.description())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_and_are_unique() {
        let mut keys: Vec<_> = ErrorKind::ALL.iter().map(|k| k.key()).collect();
        for k in ErrorKind::ALL {
            assert_eq!(ErrorKind::from_key(k.key()), Some(*k));
        }
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), ErrorKind::ALL.len());
    }

    #[test]
    fn generator_failures_are_client_side() {
        for k in [
            ErrorKind::PortExhaustion,
            ErrorKind::TooManyOpenFiles,
            ErrorKind::Dns,
            ErrorKind::Timeout,
        ] {
            assert_eq!(k.side(), Side::Client);
        }
        for k in [
            ErrorKind::Refused,
            ErrorKind::Reset,
            ErrorKind::TlsAlert,
            ErrorKind::GoAway,
            // The server held it past the stop's grace: its silence, not the generator's.
            ErrorKind::Unanswered,
        ] {
            assert_eq!(k.side(), Side::Server);
        }
        assert!(Outcome::Status(302).is_success());
        assert!(!Outcome::Status(503).is_success());
    }
}
