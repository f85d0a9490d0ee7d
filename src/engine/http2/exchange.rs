//! One request on an HTTP/2 connection: wait for a stream, send, read the head, then the
//! body (kept for captures and checks, or counted and dropped).
//!
//! Written on the `h2` crate (hyper's own HTTP/2) rather than hyper's client: hyper adds a
//! channel hop and a spawned task to every request, which on a two-core machine was a large
//! share of the generator's CPU per request.

use super::Sender;
use crate::engine::classify;
use crate::engine::job::{Failure, Unprocessed};
use crate::engine::reply::{Kept, Reply};
use crate::engine::request::H2Request;
use std::time::Instant;

/// Waits until the connection can take another stream. A connection that cannot has not
/// seen the request, so a failure here is always safe to retry.
pub async fn ready(sender: &mut Sender) -> Result<(), Failure> {
    std::future::poll_fn(|cx| sender.send.poll_ready(cx))
        .await
        .map_err(|e| Failure {
            kind: classify::h2_error(&e),
            unprocessed: Unprocessed::Unsent,
        })
}

/// Sends `request` and reads its whole answer; with `keep`, its headers and body are kept.
pub async fn send(sender: &mut Sender, request: H2Request, keep: bool) -> Result<Reply, Failure> {
    let failure = |e: h2::Error| Failure {
        kind: classify::h2_error(&e),
        unprocessed: classify::h2_unprocessed(&e),
    };
    let H2Request {
        method,
        uri,
        headers,
        body,
    } = request;
    let mut head = http::Request::new(());
    *head.method_mut() = method;
    *head.uri_mut() = uri;
    *head.headers_mut() = headers;
    // Refused here, the request never left.
    let (response, mut stream) = sender
        .send
        .send_request(head, body.is_empty())
        .map_err(|e| Failure {
            kind: classify::h2_error(&e),
            unprocessed: Unprocessed::Unsent,
        })?;
    if !body.is_empty() {
        // Sent as the peer's window allows; h2 holds what does not fit yet.
        stream.send_data(body, true).map_err(failure)?;
    }
    let response = response.await.map_err(failure)?;
    let head_at = Instant::now();
    let status = response.status().as_u16();
    let (parts, mut body) = response.into_parts();
    let mut kept = keep.then(|| {
        Box::new(Kept {
            headers: parts.headers,
            ..Kept::default()
        })
    });
    let mut body_bytes = 0u64;
    // Frames are counted and dropped (or kept up to the limit), so an endless body costs
    // time (bounded by the request timeout), never memory.
    while let Some(data) = body.data().await {
        let data = data.map_err(|e| Failure::from(classify::h2_error(&e)))?;
        body_bytes += data.len() as u64;
        let _ = body.flow_control().release_capacity(data.len());
        if let Some(kept) = kept.as_mut() {
            kept.keep_body(&data);
        }
    }
    Ok(Reply {
        status,
        head_at,
        end: Instant::now(),
        body_bytes,
        kept,
    })
}
