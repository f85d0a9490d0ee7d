//! One engine thread: its own event loop, lanes, pacer and interval recorder.
//!
//! Workers share nothing mutable on the hot path: each records into its own
//! [`IntervalRecord`] and hands it to the aggregator at every one-second boundary.

use super::shutdown::Shutdown;
use super::transport::H2Pool;
use super::RunShared;
use crate::plan::Load;
use crate::record::{IntervalRecord, Part};
use crate::sample::{ErrorKind, Outcome, Sample};
use crate::schedule::{within, Pacer, Stride};
use crate::timer::Alarm;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// Requests waiting for a free connection beyond this are failed as `backlog_full`, so a
/// frozen server cannot make the generator's memory grow without bound.
pub(super) const BACKLOG_LIMIT: usize = 1_000_000;
/// How often a closed-model lane idle between stages looks at the users asked for.
const STAGE_POLL: Duration = Duration::from_millis(10);
/// After Ctrl-C, how long requests already sent may take to finish.
pub(super) const INTERRUPT_GRACE: Duration = Duration::from_secs(1);

/// What the hot path writes, under one lock: the interval's record and the run's edges.
struct Tally {
    record: IntervalRecord,
    last_send: Option<Instant>,
    last_done: Option<Instant>,
}

/// What a worker tells the engine when it is done.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct WorkerReport {
    pub last_send: Option<Instant>,
    pub last_done: Option<Instant>,
    pub interrupted: bool,
}

/// A worker's state, shared by its lanes.
///
/// Everything here is touched by one thread only; the locks and atomics are never contended.
/// They exist because lanes are spawned straight onto the current-thread runtime, which needs
/// `Send` tasks: a `LocalSet` would route every I/O wake-up through its own queue and unpark
/// the driver (an eventfd write) to run it.
pub(super) struct Worker {
    pub index: usize,
    pub run: Arc<RunShared>,
    /// Shared HTTP/2 connections, one pool per instance of the service.
    pub h2_pools: Option<Vec<H2Pool>>,
    tally: Mutex<Tally>,
    /// Due requests waiting for a lane: intended time and which request.
    queue: Mutex<VecDeque<(Instant, u64)>>,
    wake: Notify,
    idle: AtomicUsize,
    lanes: AtomicUsize,
    max_lanes: usize,
    closed: AtomicBool,
    all_done: Notify,
}

impl Worker {
    fn new(index: usize, run: Arc<RunShared>) -> Self {
        let threads = run.threads;
        let share = |total: u32| (total as usize).div_ceil(threads).max(1);
        let h2_pools = (run.h2 && run.keepalive).then(|| {
            (0..run.instances())
                .map(|_| H2Pool::new(share(run.h2_connections)))
                .collect::<Vec<_>>()
        });
        let max_lanes = match (h2_pools.as_ref().and_then(|p| p.first()), run.load) {
            (_, Load::Closed { concurrency }) => users_share(concurrency as usize, index, threads),
            (Some(pool), Load::Open { .. }) => pool.len() * run.max_streams as usize,
            (None, Load::Open { .. }) => share(run.max_connections),
        };
        Worker {
            index,
            run,
            h2_pools,
            tally: Mutex::new(Tally {
                record: IntervalRecord::new(0),
                last_send: None,
                last_done: None,
            }),
            queue: Mutex::new(VecDeque::new()),
            wake: Notify::new(),
            idle: AtomicUsize::new(0),
            lanes: AtomicUsize::new(0),
            max_lanes,
            closed: AtomicBool::new(false),
            all_done: Notify::new(),
        }
    }

    /// Records a request that finished at `end` into the current interval.
    pub fn record(&self, sample: &Sample, end: Instant) {
        let mut tally = lock(&self.tally);
        tally.record.record(sample);
        if let Some(stage) = sample.stage {
            let done = end.saturating_duration_since(self.run.start);
            tally.record.record_step(stage, sample, done);
        }
        tally.last_done = Some(end);
    }

    /// Notes that a request left at `at`.
    pub fn note_sent(&self, at: Instant) {
        let mut tally = lock(&self.tally);
        tally.record.sent += 1;
        tally.last_send = Some(at);
    }

    /// Notes that a request fell due.
    pub fn note_scheduled(&self) {
        lock(&self.tally).record.scheduled += 1;
    }

    /// This worker's share of the connection limit.
    pub fn max_connections(&self) -> usize {
        self.max_lanes
    }

    /// This worker's share of the closed model's users at `now`: all its lanes, or what the
    /// stage running then asks for.
    pub fn closed_target(&self, now: Instant) -> usize {
        let run = &self.run;
        if run.stages.is_empty() {
            return self.max_lanes;
        }
        if let crate::plan::StageBounds::Counted(_) = run.stage_bounds {
            let issued = run.issued.load(Ordering::Relaxed);
            let users = run.stage_bounds.counted_level(&run.stages, issued);
            return users_share(
                users.unwrap_or(0.0).round() as usize,
                self.index,
                run.threads,
            );
        }
        let users = crate::plan::stage_at(&run.stages, now.saturating_duration_since(run.start))
            .map_or(0.0, |(i, into)| run.stages[i].level_at(into));
        users_share(users.round() as usize, self.index, run.threads)
    }

    /// The next request for lane `id` (its intended send time and its number in the run),
    /// or `None` when the lane should end.
    pub async fn next_job(&self, id: usize) -> Option<(Instant, u64)> {
        match self.run.load {
            Load::Open { .. } => loop {
                if let Some(job) = lock(&self.queue).pop_front() {
                    return Some(job);
                }
                if self.closed.load(Ordering::Relaxed) {
                    return None;
                }
                self.idle.fetch_add(1, Ordering::Relaxed);
                self.wake.notified().await;
            },
            Load::Closed { .. } => loop {
                if self.closed.load(Ordering::Relaxed) {
                    return None;
                }
                // A lane beyond the current stage's users waits for a stage that needs it.
                if id < self.closed_target(Instant::now()) {
                    return self.next_closed();
                }
                if self.past_duration(Instant::now()) {
                    return None;
                }
                tokio::time::sleep(STAGE_POLL).await;
            },
        }
    }

    /// The closed model's next request (now, and its number in the run), or `None` once the
    /// stop condition is reached. The number is run-wide, so the mix holds across workers.
    pub fn next_closed(&self) -> Option<(Instant, u64)> {
        let now = Instant::now();
        if self.past_duration(now) {
            return None;
        }
        let n = self.run.issued.fetch_add(1, Ordering::Relaxed);
        if self.run.stop.requests.is_some_and(|max| n >= max) {
            return None;
        }
        lock(&self.tally).record.scheduled += 1;
        Some((now, n))
    }

    /// True once the run's duration (the stages' total, for a staged run) is over, or every
    /// request of the closed model was handed out (steps counted in requests ask for no
    /// users after the last, so nobody would ask for one more).
    pub fn past_duration(&self, now: Instant) -> bool {
        let stop = &self.run.stop;
        stop.duration.is_some_and(|d| now >= self.run.start + d)
            || stop
                .requests
                .is_some_and(|max| self.run.issued.load(Ordering::Relaxed) >= max)
    }

    /// Sends the interval in progress to the aggregator and starts interval `next`; false
    /// when nobody listens any more.
    pub fn hand_over(&self, tx: &std::sync::mpsc::Sender<Part>, next: u64) -> bool {
        let record = std::mem::replace(&mut lock(&self.tally).record, IntervalRecord::new(next));
        tx.send(Part::Interval {
            worker: self.index,
            record: Box::new(record),
        })
        .is_ok()
    }

    /// Sends the last, partial interval and says this worker is done.
    pub fn finish(&self, tx: &std::sync::mpsc::Sender<Part>, interrupted: bool) -> WorkerReport {
        let last = lock(&self.tally).record.index;
        self.hand_over(tx, 0);
        let _ = tx.send(Part::Finished {
            worker: self.index,
            last,
        });
        let tally = lock(&self.tally);
        WorkerReport {
            last_send: tally.last_send,
            last_done: tally.last_done,
            interrupted,
        }
    }

    /// Called by a lane as it ends.
    pub fn lane_finished(&self) {
        if self.lanes.fetch_sub(1, Ordering::Relaxed) == 1 {
            self.all_done.notify_one();
        }
    }

    fn spawn_lane(self: &Arc<Self>) {
        let id = self.lanes.fetch_add(1, Ordering::Relaxed);
        tokio::spawn(super::lane::run(self.clone(), id));
    }

    /// Hands a due request to an idle lane, a new lane, or the backlog.
    fn dispatch(self: &Arc<Self>, intended: Instant, n: u64) {
        lock(&self.tally).record.scheduled += 1;
        if lock(&self.queue).len() >= BACKLOG_LIMIT {
            let now = Instant::now();
            self.record(
                &Sample {
                    outcome: Outcome::Error(ErrorKind::Backlog),
                    latency: Duration::ZERO,
                    service: Duration::ZERO,
                    lag: now.saturating_duration_since(intended),
                    connect: None,
                    tls_handshake: None,
                    first_byte: None,
                    bytes_in: 0,
                    bytes_out: 0,
                    retried: false,
                    request: self.run.mix.pick(n),
                    stage: self.run.stage_of(intended, n),
                    expected: false,
                },
                now,
            );
            return;
        }
        lock(&self.queue).push_back((intended, n));
        if self.idle.load(Ordering::Relaxed) > 0 {
            // Count the wake-up here, not in the woken lane, so one burst never wakes
            // the same idle lane twice while others could have been started.
            self.idle.fetch_sub(1, Ordering::Relaxed);
            self.wake.notify_one();
        } else if self.lanes.load(Ordering::Relaxed) < self.max_lanes {
            self.spawn_lane();
        }
    }

    /// Stops handing out jobs and wakes idle lanes so they end.
    fn close(&self, drop_backlog: bool) {
        self.closed.store(true, Ordering::Relaxed);
        if drop_backlog {
            lock(&self.queue).clear();
        }
        self.wake.notify_waiters();
    }

    async fn wait_for_lanes(&self) {
        while self.lanes.load(Ordering::Relaxed) > 0 {
            self.all_done.notified().await;
        }
    }
}

/// Sends this worker's share of the open-model schedule; true when interrupted.
async fn pace(worker: &Arc<Worker>, pacer: &Pacer, shutdown: &mut Shutdown) -> bool {
    let run = &worker.run;
    // Without a timerfd, fall back to tokio's millisecond timer (the lag shows it).
    let alarm = Alarm::new().ok();
    let mut stride = Stride::new(worker.index, run.threads);
    loop {
        let n = stride.peek();
        let Some(due) = pacer.due(n).filter(|&d| within(&run.stop, n, d)) else {
            return false;
        };
        let at = run.start + due;
        if Instant::now() < at {
            let sleep = async {
                match &alarm {
                    Some(alarm) if alarm.sleep_until(at).await.is_ok() => {}
                    _ => tokio::time::sleep_until(at.into()).await,
                }
            };
            tokio::select! {
                _ = sleep => {}
                _ = shutdown.wait() => return true,
            }
        }
        // Send everything due by now, and what falls due within the coalescing window: early,
        // never late, so one wake-up serves several requests and no latency is inflated.
        let now = Instant::now() + run.coalesce;
        loop {
            let n = stride.peek();
            let Some(due) = pacer.due(n).filter(|&d| within(&run.stop, n, d)) else {
                break;
            };
            if run.start + due > now {
                break;
            }
            worker.dispatch(run.start + due, n);
            stride.advance();
        }
    }
}

/// Hands the finished interval to the aggregator at every one-second boundary.
async fn tick(worker: Arc<Worker>, tx: std::sync::mpsc::Sender<Part>) {
    let mut index = 0u64;
    loop {
        tokio::time::sleep_until((worker.run.start + Duration::from_secs(index + 1)).into()).await;
        if !worker.hand_over(&tx, index + 1) {
            return;
        }
        index += 1;
    }
}

/// Runs worker `index` to completion on the current thread.
pub(super) fn run(
    index: usize,
    run: Arc<RunShared>,
    shutdown: Shutdown,
    tx: std::sync::mpsc::Sender<Part>,
) -> Result<WorkerReport, super::EngineError> {
    let worker = Arc::new(Worker::new(index, run.clone()));
    if run.direct {
        if let Some(report) = super::direct::run(&worker, &shutdown, &tx) {
            return Ok(report);
        }
    }
    if run.direct_only {
        return Err(super::EngineError::Worker(
            "flows, logins and body checks need direct workers, which need Linux 5.11 (epoll_pwait2)".into(),
        ));
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    // The worker body runs as a spawned task, not as the `block_on` future: that future's
    // waker unparks the driver with an eventfd write on every timer wake-up.
    let report = rt.block_on(async move { tokio::spawn(work(worker, shutdown, tx)).await });
    report.map_err(|e| super::EngineError::Worker(format!("worker {index}: {e}")))
}

async fn work(
    worker: Arc<Worker>,
    mut shutdown: Shutdown,
    tx: std::sync::mpsc::Sender<Part>,
) -> WorkerReport {
    let run = worker.run.clone();
    tokio::time::sleep_until(run.start.into()).await;
    let ticker = tokio::spawn(tick(worker.clone(), tx.clone()));
    let interrupted = match run.load {
        Load::Open { .. } => match &run.pacer {
            Some(pacer) => pace(&worker, pacer, &mut shutdown).await,
            None => false,
        },
        Load::Closed { .. } => {
            for _ in 0..worker.max_lanes {
                worker.spawn_lane();
            }
            tokio::select! {
                _ = worker.wait_for_lanes() => false,
                _ = shutdown.wait() => true,
            }
        }
    };
    worker.close(interrupted);
    if interrupted {
        let _ = tokio::time::timeout(INTERRUPT_GRACE, worker.wait_for_lanes()).await;
    } else {
        worker.wait_for_lanes().await;
    }
    ticker.abort();
    worker.finish(&tx, interrupted)
}

/// Worker `index`'s share of `users` spread over `threads` workers.
fn users_share(users: usize, index: usize, threads: usize) -> usize {
    users / threads + usize::from(index < users % threads)
}

/// Locks a worker-local mutex; a poisoned one still holds valid counts, so use it.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
