//! What came back to one request, the same on both protocols: the status, when the head
//! and the last byte arrived, the body's size, and (for captures and checks) what it said.

use std::time::Instant;

/// Most body bytes kept for captures and checks; the rest is counted and dropped.
pub const KEEP_LIMIT: usize = crate::plan::MAX_CAPTURED as usize;

/// A whole response.
#[derive(Debug)]
pub struct Reply {
    /// Status code.
    pub status: u16,
    /// When the head arrived.
    pub head_at: Instant,
    /// When its last byte arrived.
    pub end: Instant,
    /// Body bytes.
    pub body_bytes: u64,
    /// Its headers and body, when the request keeps them (captures, body checks).
    pub kept: Option<Box<Kept>>,
}

/// The headers and body of a response, kept for captures and checks.
#[derive(Debug, Default, Clone)]
pub struct Kept {
    /// The response headers.
    pub headers: http::HeaderMap,
    /// The body, up to [`KEEP_LIMIT`] bytes.
    pub body: Vec<u8>,
    /// True when the body was longer than what was kept.
    pub truncated: bool,
}

impl Kept {
    /// Keeps the next piece of the body, as far as [`KEEP_LIMIT`] allows.
    pub fn keep_body(&mut self, piece: &[u8]) {
        let room = KEEP_LIMIT.saturating_sub(self.body.len());
        self.truncated |= piece.len() > room;
        self.body.extend_from_slice(&piece[..piece.len().min(room)]);
    }
}
