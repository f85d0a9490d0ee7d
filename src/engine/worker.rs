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
use crate::schedule::{within, ConstantPacer, Stride};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// Requests waiting for a free connection beyond this are failed as `backlog_full`, so a
/// frozen server cannot make the generator's memory grow without bound.
const BACKLOG_LIMIT: usize = 1_000_000;
/// After Ctrl-C, how long requests already sent may take to finish.
const INTERRUPT_GRACE: Duration = Duration::from_secs(1);

/// What a worker tells the engine when it is done.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct WorkerReport {
    pub last_send: Option<Instant>,
    pub last_done: Option<Instant>,
    pub interrupted: bool,
}

/// A worker's state, shared by its lanes on one thread.
pub(super) struct Worker {
    pub index: usize,
    pub run: Arc<RunShared>,
    pub h2_pool: Option<H2Pool>,
    recorder: RefCell<IntervalRecord>,
    queue: RefCell<VecDeque<Instant>>,
    wake: Notify,
    idle: Cell<usize>,
    lanes: Cell<usize>,
    max_lanes: usize,
    closed: Cell<bool>,
    all_done: Notify,
    last_send: Cell<Option<Instant>>,
    last_done: Cell<Option<Instant>>,
}

impl Worker {
    fn new(index: usize, run: Arc<RunShared>) -> Self {
        let threads = run.threads;
        let share = |total: u32| (total as usize).div_ceil(threads).max(1);
        let h2_pool = (run.h2 && run.keepalive).then(|| H2Pool::new(share(run.h2_connections)));
        let max_lanes = match (&h2_pool, run.load) {
            (_, Load::Closed { concurrency }) => {
                concurrency as usize / threads + usize::from(index < concurrency as usize % threads)
            }
            (Some(pool), Load::Open { .. }) => pool.len() * run.max_streams as usize,
            (None, Load::Open { .. }) => share(run.max_connections),
        };
        Worker {
            index,
            run,
            h2_pool,
            recorder: RefCell::new(IntervalRecord::new(0)),
            queue: RefCell::new(VecDeque::new()),
            wake: Notify::new(),
            idle: Cell::new(0),
            lanes: Cell::new(0),
            max_lanes,
            closed: Cell::new(false),
            all_done: Notify::new(),
            last_send: Cell::new(None),
            last_done: Cell::new(None),
        }
    }

    /// Records a finished request into the current interval.
    pub fn record(&self, sample: &Sample) {
        self.recorder.borrow_mut().record(sample);
    }

    /// Notes that a request left now.
    pub fn note_sent(&self, at: Instant) {
        self.recorder.borrow_mut().sent += 1;
        self.last_send.set(Some(at));
    }

    /// Notes that a request finished now.
    pub fn note_done(&self, at: Instant) {
        self.last_done.set(Some(at));
    }

    /// The next request for a lane (its intended send time), or `None` when the lane should end.
    pub async fn next_job(&self) -> Option<Instant> {
        match self.run.load {
            Load::Open { .. } => loop {
                if let Some(job) = self.queue.borrow_mut().pop_front() {
                    return Some(job);
                }
                if self.closed.get() {
                    return None;
                }
                self.idle.set(self.idle.get() + 1);
                self.wake.notified().await;
            },
            Load::Closed { .. } => {
                if self.closed.get() {
                    return None;
                }
                let now = Instant::now();
                if self
                    .run
                    .stop
                    .duration
                    .is_some_and(|d| now >= self.run.start + d)
                {
                    return None;
                }
                if let Some(max) = self.run.stop.requests {
                    let taken = self.run.issued.fetch_add(1, Ordering::Relaxed);
                    if taken >= max {
                        return None;
                    }
                }
                self.recorder.borrow_mut().scheduled += 1;
                Some(now)
            }
        }
    }

    /// Called by a lane as it ends.
    pub fn lane_finished(&self) {
        self.lanes.set(self.lanes.get() - 1);
        if self.lanes.get() == 0 {
            self.all_done.notify_one();
        }
    }

    fn spawn_lane(self: &Rc<Self>) {
        let id = self.lanes.get();
        self.lanes.set(id + 1);
        tokio::task::spawn_local(super::lane::run(self.clone(), id));
    }

    /// Hands a due request to an idle lane, a new lane, or the backlog.
    fn dispatch(self: &Rc<Self>, intended: Instant) {
        self.recorder.borrow_mut().scheduled += 1;
        if self.queue.borrow().len() >= BACKLOG_LIMIT {
            self.record(&Sample {
                outcome: Outcome::Error(ErrorKind::Backlog),
                latency: Duration::ZERO,
                service: Duration::ZERO,
                lag: Instant::now().saturating_duration_since(intended),
                connect: None,
                tls_handshake: None,
                first_byte: None,
                bytes_in: 0,
                bytes_out: 0,
            });
            return;
        }
        self.queue.borrow_mut().push_back(intended);
        if self.idle.get() > 0 {
            // Count the wake-up here, not in the woken lane, so one burst never wakes
            // the same idle lane twice while others could have been started.
            self.idle.set(self.idle.get() - 1);
            self.wake.notify_one();
        } else if self.lanes.get() < self.max_lanes {
            self.spawn_lane();
        }
    }

    /// Stops handing out jobs and wakes idle lanes so they end.
    fn close(&self, drop_backlog: bool) {
        self.closed.set(true);
        if drop_backlog {
            self.queue.borrow_mut().clear();
        }
        self.wake.notify_waiters();
    }

    async fn wait_for_lanes(&self) {
        while self.lanes.get() > 0 {
            self.all_done.notified().await;
        }
    }
}

/// Sends this worker's share of a constant-rate schedule; true when interrupted.
async fn pace(worker: &Rc<Worker>, pacer: ConstantPacer, shutdown: &mut Shutdown) -> bool {
    let run = &worker.run;
    let mut stride = Stride::new(worker.index, run.threads);
    loop {
        let due = pacer.due(stride.peek());
        if !within(&run.stop, stride.peek(), due) {
            return false;
        }
        let at = run.start + due;
        if Instant::now() < at {
            tokio::select! {
                _ = tokio::time::sleep_until(at.into()) => {}
                _ = shutdown.wait() => return true,
            }
        }
        // Timers fire on millisecond ticks: send everything that has come due since.
        let now = Instant::now();
        loop {
            let n = stride.peek();
            let due = pacer.due(n);
            if !within(&run.stop, n, due) || run.start + due > now {
                break;
            }
            worker.dispatch(run.start + due);
            stride.advance();
        }
    }
}

/// Hands the finished interval to the aggregator at every one-second boundary.
async fn tick(worker: Rc<Worker>, tx: std::sync::mpsc::Sender<Part>) {
    let mut index = 0u64;
    loop {
        tokio::time::sleep_until((worker.run.start + Duration::from_secs(index + 1)).into()).await;
        let record = worker.recorder.replace(IntervalRecord::new(index + 1));
        if tx
            .send(Part::Interval {
                worker: worker.index,
                record: Box::new(record),
            })
            .is_err()
        {
            return;
        }
        index += 1;
    }
}

/// Runs worker `index` to completion on the current thread.
pub(super) fn run(
    index: usize,
    run: Arc<RunShared>,
    mut shutdown: Shutdown,
    tx: std::sync::mpsc::Sender<Part>,
) -> std::io::Result<WorkerReport> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let local = tokio::task::LocalSet::new();
    let report = local.block_on(&rt, async move {
        let worker = Rc::new(Worker::new(index, run.clone()));
        tokio::time::sleep_until(run.start.into()).await;
        let ticker = tokio::task::spawn_local(tick(worker.clone(), tx.clone()));
        let interrupted = match run.load {
            Load::Open { rate } => pace(&worker, ConstantPacer::new(rate), &mut shutdown).await,
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
        let record = worker.recorder.replace(IntervalRecord::new(0));
        let last = record.index;
        let _ = tx.send(Part::Interval {
            worker: index,
            record: Box::new(record),
        });
        let _ = tx.send(Part::Finished {
            worker: index,
            last,
        });
        WorkerReport {
            last_send: worker.last_send.get(),
            last_done: worker.last_done.get(),
            interrupted,
        }
    });
    Ok(report)
}
