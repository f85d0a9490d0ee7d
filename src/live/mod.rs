//! The live page of a run while it goes (`--live`), and of runs other processes write
//! (`watch`): a small HTTP server on its own thread that serves one page, pushes a frame to
//! it every second by server-sent events, and becomes the final report when the run ends.
//!
//! ```text
//! engine ─IntervalLine→ Feed (an Observer: one channel send per second)
//!        ─→ feed thread: store::Loader (the path RunDir::load reads by) → LiveState
//!        ─publish→ render thread: Summary::of → the report's own document and figures → Frame
//!        ─→ server thread (tokio current-thread + hyper): GET / · /events · /report · POST /stop
//! ```
//! The engine's threads do nothing per request for it; a slow browser is dropped, never
//! waited for; the history it draws is thinned for long runs (see [`frame`]).

mod access;
mod feed;
mod frame;
mod page;
mod search;
mod server;

pub use feed::{Feed, Tee};
pub use frame::{cadence, MAX_POINTS};
pub use search::SearchFeed;

use crate::engine::CancellationToken;
use crate::record::IntervalRecord;
use crate::store::StoredRun;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};

/// At most this many pages follow a run at once; one more is answered 503.
pub const MAX_VIEWERS: usize = 16;

/// Where and how the live page is served.
#[derive(Debug, Clone)]
pub struct LiveSettings {
    /// The address to listen on; `127.0.0.1:0` (loopback, a free port) by default.
    pub addr: SocketAddr,
    /// Most pages following at once.
    pub max_viewers: usize,
    /// Cancelled too by the stop button: the run's own shutdown, so the button does what
    /// Ctrl-C does.
    pub stops: Option<CancellationToken>,
}

impl Default for LiveSettings {
    fn default() -> Self {
        LiveSettings {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            max_viewers: MAX_VIEWERS,
            stops: None,
        }
    }
}

/// Why the live page cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// The address could not be bound.
    #[error("cannot serve the live page on {addr}: {reason}; give another address (--live=127.0.0.1:0 picks a free port)")]
    Bind {
        /// The address asked.
        addr: SocketAddr,
        /// Why (not a `source`: the CLI would print it twice).
        reason: std::io::Error,
    },
    /// The server's threads could not start.
    #[error("cannot start the live page's threads: {0}")]
    Thread(std::io::Error),
    /// The operating system gave no randomness for the page's token.
    #[error("cannot draw a token for the live page from the operating system's random source")]
    Random,
}

/// Where a run is, beside what it recorded: the page's first line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Position {
    /// Whole seconds recorded.
    pub elapsed_secs: u64,
    /// Seconds the run is planned to take, when it ends after a time.
    pub planned_secs: Option<u64>,
    /// Requests the run is planned to send, when it ends after a count.
    pub planned_requests: Option<u64>,
    /// The stage (a sweep's step) the last second ran in, when the run has several.
    pub step: Option<crate::plan::StepPlace>,
    /// Sending, draining, stopping or ended.
    pub phase: Phase,
}

/// What a run is doing now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Phase {
    /// Sending load.
    #[default]
    Sending,
    /// Past its planned end, waiting for the last answers.
    Draining,
    /// Stopped before its planned end (Ctrl-C, the stop button, the safety stop, a
    /// sweep's limit), waiting for the answers in flight.
    Stopping,
    /// Not over, yet nothing writes any more: every run followed (`watch`) ended or stopped
    /// writing (killed or crashed?), and not all ended.
    Stalled,
    /// Over; its report is being written.
    Ended,
}

/// One shard of a watched test (`watch`), beside the merged view.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardStatus {
    /// The shard's index; `None` before its run's metadata is there to say.
    pub index: Option<u32>,
    /// Its state: waiting, late, running, lagging, draining, stopping, stopped, ended,
    /// damaged or gone.
    pub state: String,
    /// The last whole second it recorded, numbered from 1 as the report numbers seconds.
    pub last_second: Option<u64>,
    /// Anything more to say of it.
    pub note: String,
}

/// What the page shows at one moment.
#[derive(Debug)]
pub struct LiveState {
    /// The run so far, as `RunDir::load` would read it.
    pub run: StoredRun,
    /// Where it is.
    pub position: Position,
    /// The shards of a watched test (empty unless `watch`).
    pub shards: Vec<ShardStatus>,
    /// What the page should warn of (a damaged line, a shard gone).
    pub warnings: Vec<String>,
    /// The last second's record, for the "now" columns; `None` when unknown.
    pub latest: Option<IntervalRecord>,
}

/// What the page of a capacity search shows at one moment.
#[derive(Debug)]
pub struct SearchState {
    /// The search's record so far (its probes), as `CapacityRecord::load` reads it; `None`
    /// before it is first written.
    pub record: Option<crate::capacity::study::CapacityRecord>,
    /// The probe in progress, its run so far.
    pub probe: Option<LiveState>,
    /// The probe's run directory name (`03-bisect-450rps`).
    pub probe_name: String,
}

/// The live page of one run: bound and serving from [`LiveServer::start`] until dropped.
pub struct LiveServer {
    addr: SocketAddr,
    token: String,
    shared: Arc<Shared>,
    stop: CancellationToken,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for LiveServer {
    // The token is a secret: never in a debug print.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

/// What the caller's thread, the render thread and the server share.
struct Shared {
    /// The latest state not yet rendered, and whether the server is closing.
    pending: Mutex<Pending>,
    wake: Condvar,
    /// The latest frame, as the server-sent event each page is sent.
    frames: tokio::sync::watch::Sender<Arc<str>>,
    /// The final report, once written.
    report: Mutex<Option<PathBuf>>,
    /// Pages following now.
    viewers: std::sync::atomic::AtomicUsize,
    /// Pages that were sent the last frame, for [`LiveServer::finished`].
    served_last: std::sync::atomic::AtomicUsize,
}

/// What the page shows: a run, or a capacity search (boxed: it is moved whole, once a
/// second).
enum Showing {
    Run(Box<LiveState>),
    Search(Box<SearchState>),
}

#[derive(Default)]
struct Pending {
    state: Option<Showing>,
    report: Option<PathBuf>,
    closing: bool,
}

impl LiveServer {
    /// Binds `settings.addr` and starts serving on threads of its own.
    pub fn start(settings: LiveSettings) -> Result<LiveServer, LiveError> {
        let token = access::fresh_token()?;
        let listener =
            std::net::TcpListener::bind(settings.addr).map_err(|reason| LiveError::Bind {
                addr: settings.addr,
                reason,
            })?;
        let addr = listener.local_addr().map_err(|reason| LiveError::Bind {
            addr: settings.addr,
            reason,
        })?;
        listener
            .set_nonblocking(true)
            .map_err(|reason| LiveError::Bind {
                addr: settings.addr,
                reason,
            })?;
        let (frames, _) = tokio::sync::watch::channel(Arc::<str>::from(""));
        let shared = Arc::new(Shared {
            pending: Mutex::new(Pending::default()),
            wake: Condvar::new(),
            frames,
            report: Mutex::new(None),
            viewers: Default::default(),
            served_last: Default::default(),
        });
        let stop = CancellationToken::new();
        let closed = CancellationToken::new();
        let rules = access::Rules {
            token: token.clone(),
            open_to_read: addr.ip().is_loopback(),
        };
        let server = server::Server {
            shared: shared.clone(),
            rules,
            stop: stop.clone(),
            stops: settings.stops.clone(),
            closed: closed.clone(),
            max_viewers: settings.max_viewers,
        };
        let serving = std::thread::Builder::new()
            .name("headroom-live".into())
            .spawn(move || {
                yield_to_the_engine();
                server.run(listener)
            })
            .map_err(LiveError::Thread)?;
        let render_shared = shared.clone();
        let rendering = std::thread::Builder::new()
            .name("headroom-live-render".into())
            .spawn(move || {
                yield_to_the_engine();
                frame::render_loop(&render_shared);
                closed.cancel();
            })
            .map_err(LiveError::Thread)?;
        Ok(LiveServer {
            addr,
            token,
            shared,
            stop,
            threads: vec![serving, rendering],
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The page's address with its token (which shows the stop button): to print for the
    /// person who started the run, never to store.
    pub fn url(&self) -> String {
        format!("http://{}/?token={}", self.addr, self.token)
    }

    /// The page's address without its token: read-only on loopback, refused elsewhere.
    pub fn public_url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// The per-run token the stop button (and, off loopback, every request) must carry.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Replaces the state the page shows; the render thread turns it into a frame, so this
    /// costs the caller a lock and a move.
    pub fn publish(&self, state: LiveState) {
        self.publisher().publish(state);
    }

    /// A handle that publishes to this page from another thread.
    pub fn publisher(&self) -> Publisher {
        Publisher(self.shared.clone())
    }

    /// The run's final report is written at `report`: the page becomes it. Waits (at most
    /// two seconds) for the pages following to be sent it, so a browser left open keeps the
    /// answer after the process ends.
    pub fn finished(&self, report: PathBuf) {
        use std::sync::atomic::Ordering;
        *lock(&self.shared.report) = Some(report.clone());
        let watching = self.shared.viewers.load(Ordering::SeqCst);
        self.shared.served_last.store(0, Ordering::SeqCst);
        {
            let mut p = lock(&self.shared.pending);
            p.report = Some(report);
            self.shared.wake.notify_all();
        }
        // Bounded by the stalled-page rule rather than a short time: a page that takes no
        // frame for STALL is dropped (and leaves `viewers`), so the wait ends either way; a
        // shorter bound lost the report to a page on a busy machine, where the renderer
        // (nice 19) may wait seconds for a core.
        let deadline =
            std::time::Instant::now() + server::STALL + std::time::Duration::from_secs(5);
        while std::time::Instant::now() < deadline
            && self.shared.served_last.load(Ordering::SeqCst) < watching
            && self.shared.viewers.load(Ordering::SeqCst) > 0
        {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Cancelled when the page's stop button is pressed (with the token): the run should
    /// stop as on Ctrl-C.
    pub fn stop_requested(&self) -> CancellationToken {
        self.stop.clone()
    }
}

impl Drop for LiveServer {
    fn drop(&mut self) {
        {
            let mut p = lock(&self.shared.pending);
            p.closing = true;
            self.shared.wake.notify_all();
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Publishes states to a live page from any thread (see [`LiveServer::publish`]).
#[derive(Clone)]
pub struct Publisher(Arc<Shared>);

impl std::fmt::Debug for Publisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Publisher")
    }
}

impl Publisher {
    /// Replaces the state the page shows.
    pub fn publish(&self, state: LiveState) {
        self.show(Showing::Run(Box::new(state)));
    }

    /// Replaces the capacity search the page shows.
    pub fn publish_search(&self, state: SearchState) {
        self.show(Showing::Search(Box::new(state)));
    }

    fn show(&self, showing: Showing) {
        let mut p = lock(&self.0.pending);
        p.state = Some(showing);
        self.0.wake.notify_all();
    }
}

/// Lowers the calling thread's priority to the least (nice 19): the live page's threads give
/// way to the engine's whenever both want a core (on a generator pinned to one core, a frame
/// rendered at the engine's priority would delay its sends). Best effort: a system that
/// refuses leaves the thread as it was.
fn yield_to_the_engine() {
    let _ = rustix::process::setpriority_process(Some(rustix::thread::gettid()), 19);
}

/// A lock that a panic elsewhere does not make unusable: the state is replaced whole.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests;
