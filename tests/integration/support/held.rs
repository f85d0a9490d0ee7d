//! A test server that holds each request for a time it measures on its own clock, so a test
//! can check that the times headroom records are never shorter than the exchange they time.
//!
//! `GET /hold/{micros}` is held about that long (busy-waiting up to [`BUSY_WAIT_UP_TO`], so a
//! short hold is not rounded up to a timer tick; sleeping beyond), from the moment the
//! handler is called to just before the response is returned. The measured time goes back in
//! the `x-held-ns` header and into per-path statistics the test reads with [`Held::take`].
//! Cleartext only, HTTP/1.1 and HTTP/2 with prior knowledge on the same port.

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Holds up to this long are busy-waited; longer ones sleep.
pub const BUSY_WAIT_UP_TO: Duration = Duration::from_micros(200);

/// What the server saw of one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathHolds {
    /// Requests answered.
    pub count: u64,
    /// The shortest time one of them was held.
    pub min_held: Duration,
}

type Stats = Arc<Mutex<HashMap<String, PathHolds>>>;

/// A running holding server on a free loopback port; stopped on drop.
pub struct Held {
    addr: std::net::SocketAddr,
    stats: Stats,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Held {
    /// Starts the server on its own runtime (two threads).
    pub fn start() -> Held {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let stats = Stats::default();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let shared = stats.clone();
        let thread = std::thread::Builder::new()
            .name("held-server".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                    .unwrap();
                rt.block_on(serve(listener, shared, stopped));
                // Connection tasks still open are dropped with the runtime.
                rt.shutdown_timeout(Duration::from_secs(1));
            })
            .unwrap();
        Held {
            addr,
            stats,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:port` (no path).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// What each path saw since the last call, by path; resets the statistics.
    pub fn take(&self) -> HashMap<String, PathHolds> {
        std::mem::take(&mut *self.stats.lock().unwrap())
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn serve(
    listener: std::net::TcpListener,
    stats: Stats,
    mut stopped: tokio::sync::oneshot::Receiver<()>,
) {
    let listener = tokio::net::TcpListener::from_std(listener).unwrap();
    loop {
        let stream = tokio::select! {
            _ = &mut stopped => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => continue,
            },
        };
        let _ = stream.set_nodelay(true);
        let stats = stats.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req| hold(req, stats.clone()));
            // The client closing (or resetting) its connection ends this task; nothing to do.
            let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

async fn hold(req: Request<Incoming>, stats: Stats) -> Result<Response<Full<Bytes>>, Infallible> {
    let start = Instant::now();
    let path = req.uri().path();
    let Some(micros) = path
        .strip_prefix("/hold/")
        .and_then(|m| m.parse::<u64>().ok())
    else {
        let mut not_found = Response::new(Full::new(Bytes::from_static(b"no such hold\n")));
        *not_found.status_mut() = StatusCode::NOT_FOUND;
        return Ok(not_found);
    };
    let path = path.to_string();
    let want = Duration::from_micros(micros);
    if want <= BUSY_WAIT_UP_TO {
        while start.elapsed() < want {
            std::hint::spin_loop();
        }
    } else {
        tokio::time::sleep(want).await;
    }
    let held = start.elapsed();
    {
        let mut stats = stats.lock().unwrap();
        let entry = stats.entry(path).or_insert(PathHolds {
            count: 0,
            min_held: held,
        });
        entry.count += 1;
        entry.min_held = entry.min_held.min(held);
    }
    let mut response = Response::new(Full::new(Bytes::from_static(b"held\n")));
    response
        .headers_mut()
        .insert("x-held-ns", held.as_nanos().to_string().parse().unwrap());
    Ok(response)
}
