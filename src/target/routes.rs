//! What the target answers on each path.

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use std::convert::Infallible;
use std::time::Duration;

/// Largest body `/bytes/{n}` will send, so a typo cannot exhaust memory.
const MAX_BYTES: usize = 64 * 1024 * 1024;
/// Longest delay `/delay/{ms}` accepts.
const MAX_DELAY_MS: u64 = 600_000;

pub(super) struct Routes {
    latency: Duration,
}

impl Routes {
    pub(super) fn new(latency: Duration) -> Self {
        Routes { latency }
    }

    pub(super) async fn answer(
        &self,
        req: http::Request<Incoming>,
    ) -> Result<http::Response<Full<Bytes>>, Infallible> {
        let path = req.uri().path();
        let mut parts = path.trim_start_matches('/').splitn(2, '/');
        let (head, arg) = (parts.next().unwrap_or(""), parts.next());
        let (status, body, delay) = match (head, arg.map(str::parse::<u64>)) {
            ("delay", Some(Ok(ms))) if ms <= MAX_DELAY_MS => {
                (200, Bytes::from_static(b"ok\n"), Duration::from_millis(ms))
            }
            ("status", Some(Ok(code))) if (100..600).contains(&code) => {
                (code as u16, Bytes::from_static(b""), self.latency)
            }
            ("bytes", Some(Ok(n))) if n as usize <= MAX_BYTES => {
                (200, Bytes::from(vec![b'x'; n as usize]), self.latency)
            }
            ("delay" | "status" | "bytes", _) => {
                (400, Bytes::from_static(b"bad argument\n"), Duration::ZERO)
            }
            _ => (200, Bytes::from_static(b"ok\n"), self.latency),
        };
        if !delay.is_zero() {
            crate::timer::sleep_precise(delay).await;
        }
        let mut resp = http::Response::new(Full::new(body));
        *resp.status_mut() = http::StatusCode::from_u16(status).unwrap_or(http::StatusCode::OK);
        resp.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("text/plain"),
        );
        Ok(resp)
    }
}
