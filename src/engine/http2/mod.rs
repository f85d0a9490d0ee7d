//! Driver 2: HTTP/2 on a tokio event loop per worker thread, with the `h2` crate (hyper's
//! HTTP/2).
//!
//! Each worker runs lanes: tasks that take a job, send it as a stream on one of the
//! worker's shared connections and wait for its answer, run the flow steps after it, and
//! take the next. The open model adds lanes as arrivals need them (a queue between the pacer
//! and idle lanes); the closed model runs one lane per user.

mod connect;
mod exchange;
mod lane;
mod pool;

use super::job::Job;
use super::spec::RunSpec;
use super::tally::{Seconds, Tally, WorkerReport};
use super::turns::{DueWalk, Turn, Users};
use crate::record::Part;
use crate::sample::{ErrorKind, Sample};
use crate::schedule::Schedule;
use crate::timer::Alarm;
use pool::Pool;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// One HTTP/2 connection's sending side: cheap to clone, one per stream in flight.
#[derive(Clone)]
struct Sender {
    send: h2::client::SendRequest<bytes::Bytes>,
    /// Set when the connection's task ends: nothing more can be sent on it.
    closed: Arc<AtomicBool>,
}

impl Sender {
    /// True once the connection is gone.
    fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Relaxed)
    }
}

/// How often the users a closed model's stages ask for are looked at.
const STAGE_POLL: Duration = Duration::from_millis(10);

/// A worker's state, shared by its lanes.
///
/// Everything here is touched by one thread only; the locks and atomics are never contended.
/// They exist because lanes are spawned straight onto the current-thread runtime, which needs
/// `Send` tasks: a `LocalSet` would route every I/O wake-up through its own queue and unpark
/// the driver (an eventfd write) to run it.
struct Worker {
    spec: Arc<RunSpec>,
    index: usize,
    cancel: CancellationToken,
    /// Cancelled when the grace after a stop is over: streams still awaiting their answer
    /// are then failed as unanswered, and lanes doing anything else end at once.
    give_up: CancellationToken,
    tally: Mutex<Tally>,
    /// Shared connections, one pool per instance; `None` without keep-alive.
    pools: Option<Vec<Pool>>,
    /// Due requests waiting for a lane (open model): intended time and number.
    queue: Mutex<VecDeque<(Instant, u64)>>,
    wake: Notify,
    idle: AtomicUsize,
    lanes: AtomicUsize,
    max_lanes: usize,
    closed: AtomicBool,
    all_done: Notify,
    /// Logins run so far, numbering their data rows.
    logins: AtomicU64,
    /// Woken when a stage changes the closed model's users, for lanes waiting for one.
    users_changed: Notify,
}

impl Worker {
    fn new(spec: Arc<RunSpec>, index: usize, cancel: CancellationToken) -> Worker {
        let pace = &spec.pace;
        let conn = &spec.conn;
        let streams = conn.max_streams as usize;
        let connections = conn.shape.per_instance(conn.max_connections, index);
        let max_lanes = match pace.pacer {
            // The open model's lanes fill the pool's streams; without keep-alive each lane
            // opens a connection of its own, so lanes are connections.
            Some(_) if conn.keepalive => connections * streams,
            Some(_) => connections,
            // A closed-model user sends to each instance in turn, a stream on each.
            None => conn.shape.users_of(index),
        };
        let pools = conn.keepalive.then(|| {
            conn.endpoints
                .iter()
                .map(|e| Pool::new(e.clone(), connections, streams))
                .collect()
        });
        Worker {
            index,
            cancel,
            give_up: CancellationToken::new(),
            tally: Mutex::new(Tally::new(pace, spec.raw.as_ref())),
            pools,
            queue: Mutex::new(VecDeque::new()),
            wake: Notify::new(),
            idle: AtomicUsize::new(0),
            lanes: AtomicUsize::new(0),
            max_lanes,
            closed: AtomicBool::new(false),
            all_done: Notify::new(),
            logins: AtomicU64::new(0),
            users_changed: Notify::new(),
            spec,
        }
    }

    /// Records a request that ended at `end`.
    fn record(&self, sample: &Sample, end: Instant) {
        lock(&self.tally).record(sample, end);
    }

    /// The next job for lane `id` (its intended send time and its number in the run), or
    /// `None` when the lane should end.
    async fn next_job(&self, id: usize) -> Option<(Instant, u64)> {
        match self.spec.pace.pacer {
            Some(_) => loop {
                if let Some(job) = lock(&self.queue).pop_front() {
                    return Some(job);
                }
                if self.closed.load(Ordering::Relaxed) {
                    return None;
                }
                self.idle.fetch_add(1, Ordering::Relaxed);
                self.wake.notified().await;
            },
            None => loop {
                // Listening before looking, so a change between the two is not missed.
                let changed = self.users_changed.notified();
                tokio::pin!(changed);
                changed.as_mut().enable();
                if self.closed.load(Ordering::Relaxed) {
                    return None;
                }
                let users = Users::new(&self.spec.pace, self.index);
                let now = Instant::now();
                // A lane beyond the current stage's users waits for a stage that needs it.
                if id < users.target(now) {
                    match users.next(now) {
                        Turn::Go(at, n) => {
                            lock(&self.tally).scheduled();
                            return Some((at, n));
                        }
                        // The start-rate cap: this lane waits for its slot, then asks again;
                        // at most a poll's length, so a stop is seen while it waits.
                        Turn::Wait(at) => {
                            tokio::time::sleep_until(at.min(now + STAGE_POLL).into()).await;
                            continue;
                        }
                        Turn::Over => return None,
                    }
                }
                if users.over(now) {
                    return None;
                }
                changed.await;
            },
        }
    }

    /// Hands a due request to an idle lane, a new lane, or the backlog.
    fn dispatch(self: &Arc<Self>, intended: Instant, n: u64) {
        lock(&self.tally).scheduled();
        {
            let mut queue = lock(&self.queue);
            if queue.len() < super::BACKLOG_LIMIT {
                queue.push_back((intended, n));
            } else {
                drop(queue);
                let job = Job::arrival(&self.spec.requests, intended, n);
                let now = Instant::now();
                let sample = super::settle::failed(&self.spec, &job, None, ErrorKind::Backlog, now);
                self.record(&sample, now);
                return;
            }
        }
        if self.idle.load(Ordering::Relaxed) > 0 {
            // Count the wake-up here, not in the woken lane, so one burst never wakes
            // the same idle lane twice while others could have been started.
            self.idle.fetch_sub(1, Ordering::Relaxed);
            self.wake.notify_one();
        } else if self.lanes.load(Ordering::Relaxed) < self.max_lanes {
            self.spawn_lane();
        }
    }

    fn spawn_lane(self: &Arc<Self>) {
        let id = self.lanes.fetch_add(1, Ordering::Relaxed);
        tokio::spawn(lane::run(self.clone(), id));
    }

    /// Called by a lane as it ends.
    fn lane_finished(&self) {
        if self.lanes.fetch_sub(1, Ordering::Relaxed) == 1 {
            self.all_done.notify_one();
        }
    }

    /// Stops handing out jobs and wakes idle lanes so they end.
    fn close(&self, drop_backlog: bool) {
        self.closed.store(true, Ordering::Relaxed);
        if drop_backlog {
            lock(&self.queue).clear();
        }
        self.wake.notify_waiters();
        self.users_changed.notify_waiters();
    }

    async fn wait_for_lanes(&self) {
        while self.lanes.load(Ordering::Relaxed) > 0 {
            self.all_done.notified().await;
        }
    }
}

/// Sends this worker's share of the open-model schedule; true when interrupted.
async fn pace(worker: &Arc<Worker>, schedule: &Schedule) -> bool {
    let spec = worker.spec.clone();
    // Without a timerfd, fall back to tokio's millisecond timer (the lag shows it).
    let alarm = Alarm::new().ok();
    let mut walk = DueWalk::new(&spec.pace, schedule, worker.index);
    loop {
        let Some(at) = walk.next_due() else {
            return false;
        };
        if Instant::now() < at {
            let sleep = async {
                match &alarm {
                    Some(alarm) if alarm.sleep_until(at).await.is_ok() => {}
                    _ => tokio::time::sleep_until(at.into()).await,
                }
            };
            tokio::select! {
                _ = sleep => {}
                _ = worker.cancel.cancelled() => return true,
            }
        }
        // Send everything due by now, and what falls due within the coalescing window: early,
        // never late, so one wake-up serves several requests and no latency is inflated.
        let next = walk.take(Instant::now() + spec.pace.coalesce, |at, n| {
            worker.dispatch(at, n)
        });
        if next.is_some_and(|at| at <= Instant::now()) {
            // Behind schedule: let the lanes send what was handed out before taking more.
            tokio::task::yield_now().await;
        }
    }
}

/// In the closed model with stages, tells waiting lanes when the users asked for change.
async fn watch_users(worker: Arc<Worker>) {
    let users = Users::new(&worker.spec.pace, worker.index);
    let mut last = None;
    while !worker.closed.load(Ordering::Relaxed) {
        let now = Instant::now();
        let target = users.target(now);
        if last != Some(target) || users.over(now) {
            last = Some(target);
            worker.users_changed.notify_waiters();
        }
        tokio::time::sleep(STAGE_POLL).await;
    }
}

/// Hands the finished interval to the aggregator at every one-second boundary.
async fn tick(worker: Arc<Worker>, mut seconds: Seconds, stop: Arc<Notify>) -> Seconds {
    loop {
        tokio::select! {
            _ = tokio::time::sleep_until(seconds.next().into()) => {}
            _ = stop.notified() => return seconds,
        }
        seconds.roll(Instant::now(), &mut lock(&worker.tally));
    }
}

/// Runs worker `index` to completion on this thread.
pub fn run(
    spec: Arc<RunSpec>,
    index: usize,
    cancel: CancellationToken,
    tx: std::sync::mpsc::Sender<Part>,
) -> std::io::Result<WorkerReport> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let seconds = Seconds::new(index, &spec.pace, tx);
    let worker = Arc::new(Worker::new(spec, index, cancel));
    // The worker body runs as a spawned task, not as the `block_on` future: that future's
    // waker unparks the driver with an eventfd write on every timer wake-up.
    rt.block_on(async move { tokio::spawn(work(worker, seconds)).await })
        .map_err(std::io::Error::other)
}

async fn work(worker: Arc<Worker>, seconds: Seconds) -> WorkerReport {
    let spec = worker.spec.clone();
    tokio::time::sleep_until(spec.pace.start.into()).await;
    let stop_ticking = Arc::new(Notify::new());
    let ticker = tokio::spawn(tick(worker.clone(), seconds, stop_ticking.clone()));
    let interrupted = match &spec.pace.pacer {
        Some(schedule) => pace(&worker, schedule).await,
        None => {
            if !spec.pace.stages.is_empty() {
                tokio::spawn(watch_users(worker.clone()));
            }
            for _ in 0..worker.max_lanes {
                worker.spawn_lane();
            }
            tokio::select! {
                _ = worker.wait_for_lanes() => false,
                _ = worker.cancel.cancelled() => true,
            }
        }
    };
    worker.close(interrupted);
    if interrupted {
        let grace = tokio::time::timeout(super::INTERRUPT_GRACE, worker.wait_for_lanes()).await;
        if grace.is_err() {
            // Every lane ends on its next poll, after recording a request it had on the
            // wire (`lane::run`), so this wait is short and every request sent is counted.
            worker.give_up.cancel();
            worker.wait_for_lanes().await;
        }
    } else {
        worker.wait_for_lanes().await;
    }
    stop_ticking.notify_one();
    let seconds = ticker.await.expect("the ticker ends when told");
    let mut tally = lock(&worker.tally);
    seconds.finish(&mut tally, interrupted)
}

/// Locks a worker-local mutex; a poisoned one still holds valid counts, so use it.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
