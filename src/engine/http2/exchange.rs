//! One request on an HTTP/2 connection: wait for a stream, send, read the head, then the
//! body (kept for captures and checks, or counted and dropped).

use super::Body;
use crate::engine::classify;
use crate::engine::job::{Failure, Unprocessed};
use crate::engine::reply::{Kept, Reply};
use crate::engine::request::H2Request;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http2::SendRequest;
use std::time::Instant;

/// Waits until the connection can take another stream. A connection that cannot has not
/// seen the request, so a failure here is always safe to retry.
pub async fn ready(sender: &mut SendRequest<Body>) -> Result<(), Failure> {
    sender.ready().await.map_err(|e| Failure {
        kind: classify::hyper_error(&e),
        unprocessed: Unprocessed::Certainly,
    })
}

/// Sends `request` and reads its whole answer; with `keep`, its headers and body are kept.
pub async fn send(
    sender: &mut SendRequest<Body>,
    request: H2Request,
    keep: bool,
) -> Result<Reply, Failure> {
    let H2Request {
        method,
        uri,
        headers,
        body,
    } = request;
    let mut req = http::Request::new(Full::new(body));
    *req.method_mut() = method;
    *req.uri_mut() = uri;
    *req.headers_mut() = headers;
    let response = sender.send_request(req).await.map_err(|e| Failure {
        kind: classify::hyper_error(&e),
        unprocessed: if classify::hyper_unprocessed(&e) {
            Unprocessed::Certainly
        } else {
            Unprocessed::No
        },
    })?;
    let head_at = Instant::now();
    let status = response.status().as_u16();
    let mut kept = keep.then(|| {
        Box::new(Kept {
            headers: response.headers().clone(),
            ..Kept::default()
        })
    });
    let mut body = response.into_body();
    let mut body_bytes = 0u64;
    // Frames are counted and dropped (or kept up to the limit), so an endless body costs
    // time (bounded by the request timeout), never memory.
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| Failure::from(classify::hyper_error(&e)))?;
        if let Some(data) = frame.data_ref() {
            body_bytes += data.len() as u64;
            if let Some(kept) = kept.as_mut() {
                kept.keep_body(data);
            }
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
