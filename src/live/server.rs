//! The live page's HTTP server: hyper on a tokio current-thread runtime of its own thread,
//! so nothing it does (a slow browser, a flood of requests) takes time from the engine.
//!
//! `GET /` the page · `GET /events` its frames (server-sent events) · `GET /report` the final
//! report once written · `POST /stop` stops the run (with the token). Anything else is a
//! 4xx with a line saying why; a page that does not take its frames within [`STALL`] is
//! dropped, and at most [`MAX_CONNECTIONS`] connections are open at once.

use super::access::Rules;
use super::Shared;
use crate::engine::CancellationToken;
use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use hyper::body::{Frame, Incoming};
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

/// A page that has not taken a frame for this long is dropped: it would only hold memory.
pub(super) const STALL: Duration = Duration::from_secs(10);
/// Most connections open at once (pages, their events, stray clients); more are closed at once.
pub(super) const MAX_CONNECTIONS: usize = 64;
/// The largest report served back (reports are far smaller; a bound on a replaced file).
const MAX_REPORT: u64 = 64 << 20;

/// The server's part of a live page.
pub(super) struct Server {
    pub shared: Arc<Shared>,
    pub rules: Rules,
    pub stop: CancellationToken,
    pub stops: Option<CancellationToken>,
    pub closed: CancellationToken,
    pub max_viewers: usize,
}

impl Server {
    /// Serves until the live page is closed.
    pub fn run(self, listener: std::net::TcpListener) {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            eprintln!(
                "headroom: the live page could not start its runtime; the run goes on without it"
            );
            return;
        };
        let me = Arc::new(self);
        rt.block_on(async move {
            let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                eprintln!("headroom: the live page could not listen; the run goes on without it");
                return;
            };
            let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
            loop {
                let accepted = tokio::select! {
                    a = listener.accept() => a,
                    _ = me.closed.cancelled() => return,
                };
                let Ok((tcp, _)) = accepted else {
                    // Out of descriptors, say: the next accept may do better; never spin.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                };
                let Ok(slot) = slots.clone().try_acquire_owned() else {
                    drop(tcp);
                    continue;
                };
                let me = me.clone();
                tokio::spawn(async move {
                    let _slot = slot;
                    // Cancelled when the page on this connection stalls: the connection is
                    // then closed, not left holding a viewer's place while a write waits.
                    let kill = CancellationToken::new();
                    let killed = kill.clone();
                    let service = hyper::service::service_fn(move |req| {
                        let (me, kill) = (me.clone(), kill.clone());
                        async move { Ok::<_, Infallible>(me.answer(req, kill).await) }
                    });
                    let connection = hyper::server::conn::http1::Builder::new()
                        .timer(hyper_util::rt::TokioTimer::new())
                        .header_read_timeout(STALL)
                        .serve_connection(hyper_util::rt::TokioIo::new(tcp), service);
                    tokio::select! {
                        _ = connection => {}
                        _ = killed.cancelled() => {}
                    }
                });
            }
        });
    }

    async fn answer(
        self: Arc<Self>,
        req: Request<Incoming>,
        kill: CancellationToken,
    ) -> Response<Body> {
        let access = self.rules.access(
            req.uri().query(),
            req.headers().get("x-headroom-token").map(|v| v.as_bytes()),
        );
        if req.uri().path() == "/favicon.ico" {
            // Browsers ask for it; the page has none, and a 404 would log an error there.
            let mut r = Response::new(Body::Whole(None));
            *r.status_mut() = StatusCode::NO_CONTENT;
            return r;
        }
        let known = matches!(req.uri().path(), "/" | "/events" | "/report" | "/stop");
        if !known {
            return words(StatusCode::NOT_FOUND, "no such page: the live page is at /");
        }
        if !access.read {
            return words(
                StatusCode::FORBIDDEN,
                "this live page is not on loopback: open the address printed with its token (?token=…)",
            );
        }
        match (req.method(), req.uri().path()) {
            // A page with no run of this process to stop (`watch`) shows no stop button.
            (&Method::GET, "/") => page(super::page::html(access.control && self.stops.is_some())),
            (&Method::GET, "/events") => self.events(kill),
            (&Method::GET, "/report") => self.report().await,
            (&Method::POST, "/stop") if self.stops.is_none() => words(
                StatusCode::FORBIDDEN,
                "this page watches runs of other processes (headroom watch): it cannot stop them",
            ),
            (&Method::POST, "/stop") if access.control => {
                if !self.stop.is_cancelled() {
                    eprintln!("\nheadroom: stopping: the live page's stop button was pressed");
                }
                self.stop.cancel();
                if let Some(run) = &self.stops {
                    run.cancel();
                }
                words(
                    StatusCode::ACCEPTED,
                    "stopping: the run drains, then stores and reports what it sent",
                )
            }
            (&Method::POST, "/stop") => words(
                StatusCode::FORBIDDEN,
                "stopping the run needs its token: open the address printed with ?token=…",
            ),
            _ => words(
                StatusCode::METHOD_NOT_ALLOWED,
                "the page is read with GET; only /stop takes a POST",
            ),
        }
    }

    /// The frames, as server-sent events, to one more page (refused past the most viewers).
    fn events(&self, kill: CancellationToken) -> Response<Body> {
        let before = self.shared.viewers.fetch_add(1, Ordering::SeqCst);
        let viewer = Viewer(self.shared.clone());
        if before >= self.max_viewers {
            return words(
                StatusCode::SERVICE_UNAVAILABLE,
                "too many pages follow this run; close one and reload",
            );
        }
        let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(1);
        let mut frames = self.shared.frames.subscribe();
        let closed = self.closed.clone();
        tokio::spawn(async move {
            loop {
                let frame = frames.borrow_and_update().clone();
                if !frame.is_empty() {
                    let last = super::frame::holds_end(frame.as_bytes());
                    // One frame waits for the page at most: a page that takes none for
                    // STALL is dropped, and one behind skips to the newest.
                    match tokio::time::timeout(STALL, tx.send(Bytes::from(frame.to_string()))).await
                    {
                        Ok(Ok(())) => {}
                        Ok(Err(_)) => break,
                        Err(_) => {
                            // Stalled: its connection is closed, which frees its place.
                            kill.cancel();
                            break;
                        }
                    }
                    if last {
                        break;
                    }
                }
                tokio::select! {
                    changed = frames.changed() => if changed.is_err() { break },
                    _ = closed.cancelled() => break,
                }
            }
        });
        let mut response = Response::new(Body::Stream {
            rx,
            viewer: Some(viewer),
            ended: false,
        });
        let h = response.headers_mut();
        h.insert(
            http::header::CONTENT_TYPE,
            "text/event-stream".parse().unwrap(),
        );
        h.insert(http::header::CACHE_CONTROL, "no-store".parse().unwrap());
        response
    }

    /// The final report, once written.
    async fn report(&self) -> Response<Body> {
        let path = super::lock(&self.shared.report).clone();
        let Some(path) = path else {
            return words(
                StatusCode::NOT_FOUND,
                "the report is written when the run ends; this page becomes it then",
            );
        };
        match read_bounded(&path).await {
            Some(text) => page(text),
            None => words(
                StatusCode::NOT_FOUND,
                "the report could not be read back; it is in the run directory",
            ),
        }
    }
}

/// A file of at most [`MAX_REPORT`] bytes, read whole.
pub(super) async fn read_bounded(path: &std::path::Path) -> Option<String> {
    use tokio::io::AsyncReadExt;
    let file = tokio::fs::File::open(path).await.ok()?;
    let mut text = String::new();
    file.take(MAX_REPORT + 1)
        .read_to_string(&mut text)
        .await
        .ok()?;
    (text.len() as u64 <= MAX_REPORT).then_some(text)
}

/// Counts a page following the run while it lives.
pub(super) struct Viewer(Arc<Shared>);

impl Drop for Viewer {
    fn drop(&mut self) {
        self.0.viewers.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A whole answer, or the frames of one page.
pub(super) enum Body {
    Whole(Option<Bytes>),
    Stream {
        rx: tokio::sync::mpsc::Receiver<Bytes>,
        viewer: Option<Viewer>,
        ended: bool,
    },
}

impl hyper::body::Body for Body {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            Body::Whole(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            Body::Stream { rx, viewer, ended } => match rx.poll_recv(cx) {
                Poll::Ready(Some(b)) => {
                    *ended |= super::frame::holds_end(&b);
                    Poll::Ready(Some(Ok(Frame::data(b))))
                }
                Poll::Ready(None) => {
                    // Everything was handed to the connection: a page sent the end counts
                    // as served, for `LiveServer::finished`.
                    if let (true, Some(v)) = (*ended, viewer.take()) {
                        v.0.served_last.fetch_add(1, Ordering::SeqCst);
                    }
                    Poll::Ready(None)
                }
                Poll::Pending => Poll::Pending,
            },
        }
    }
}

fn page(html: String) -> Response<Body> {
    let mut r = Response::new(Body::Whole(Some(Bytes::from(html))));
    let h = r.headers_mut();
    h.insert(
        http::header::CONTENT_TYPE,
        "text/html; charset=utf-8".parse().unwrap(),
    );
    h.insert(http::header::CACHE_CONTROL, "no-store".parse().unwrap());
    r
}

fn words(status: StatusCode, text: &str) -> Response<Body> {
    let mut r = Response::new(Body::Whole(Some(Bytes::from(format!("{text}\n")))));
    *r.status_mut() = status;
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        "text/plain; charset=utf-8".parse().unwrap(),
    );
    r
}
