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

/// What the target answers and how fast.
pub struct Routes {
    latency: Duration,
    queue: Option<Queue>,
}

/// One worker serving requests in arrival order, each taking `1 / capacity` seconds.
struct Queue {
    cost: Duration,
    free_at: std::sync::Mutex<std::time::Instant>,
}

impl Queue {
    /// When a request arriving now is done: after every request ahead of it.
    fn done_at(&self) -> std::time::Instant {
        let now = std::time::Instant::now();
        let mut free_at = self.free_at.lock().unwrap_or_else(|p| p.into_inner());
        *free_at = (*free_at).max(now) + self.cost;
        *free_at
    }
}

impl Routes {
    /// Answers after `latency`, at most `capacity` requests per second when given.
    pub fn new(latency: Duration, capacity: Option<f64>) -> Self {
        Routes {
            latency,
            queue: capacity.filter(|c| *c > 0.0).map(|c| Queue {
                cost: Duration::from_secs_f64(1.0 / c),
                free_at: std::sync::Mutex::new(std::time::Instant::now()),
            }),
        }
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
        if let Some(queue) = &self.queue {
            let wait = queue
                .done_at()
                .saturating_duration_since(std::time::Instant::now());
            if !wait.is_zero() {
                crate::timer::sleep_precise(wait).await;
            }
        }
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
