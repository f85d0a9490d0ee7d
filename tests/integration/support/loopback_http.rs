//! The few HTTP calls the tests make to a server's API on loopback (InfluxDB's queries,
//! Prometheus's): HTTP/1.0 without a body, the answer ending with the connection. By hand
//! because the tests need nothing more and the library's clients are the thing under test.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// `method path` to 127.0.0.1:`port`: the status and the body, or `None` when nothing answers.
pub fn request(port: u16, method: &str, path: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(
        s,
        "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n"
    )
    .ok()?;
    let mut answer = String::new();
    s.read_to_string(&mut answer).ok()?;
    let code = answer.get(9..12)?.parse().ok()?;
    let body = answer.split_once("\r\n\r\n")?.1.to_string();
    Some((code, body))
}

/// `s` percent-encoded for a query string (unreserved characters kept).
pub fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}
