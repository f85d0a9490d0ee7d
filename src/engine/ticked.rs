//! The open model over HTTP/1.1 without a wake-up per reply.
//!
//! One task per worker does everything on the pacer's tick: it harvests replies from sockets
//! kept in a private epoll (polled with a zero timeout, so a reply wakes nobody), expires
//! timeouts, adopts newly connected sockets, sends what is due, and opens connections when
//! all are busy. The thread sleeps only on the pacer's timerfd: at 5,000 req/s that is about
//! one wake-up per millisecond instead of one per reply. Arrival times come from the kernel,
//! so reading a reply up to a tick late loses no precision.

use super::connect::{ConnectTimings, Stream};
use super::h1::polled::{Harvest, Polled, Reply};
use super::shutdown::Shutdown;
use super::worker::{Worker, BACKLOG_LIMIT, INTERRUPT_GRACE};
use crate::sample::{ErrorKind, Outcome, Sample};
use crate::schedule::{within, ConstantPacer, Stride};
use crate::timer::Alarm;
use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags, EpollTimeout};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// While replies are outstanding, the longest the loop sleeps before harvesting again.
const TICK: Duration = Duration::from_millis(1);
/// How often timeouts are checked: a scan of every connection, so not on every tick.
const EXPIRE_EVERY: Duration = Duration::from_millis(10);

/// A request waiting to be sent, or in flight.
#[derive(Clone, Copy)]
struct Job {
    intended: Instant,
    retried: bool,
}

struct InFlight {
    job: Job,
    sent_at: Instant,
    opened: Option<ConnectTimings>,
}

struct Slot {
    conn: Polled,
    inflight: Option<InFlight>,
    /// Timings of the connect, given to the first request the connection carries.
    fresh: Option<ConnectTimings>,
}

type Connected = Result<(Stream, ConnectTimings), ErrorKind>;

struct Ticked<'a> {
    worker: &'a Arc<Worker>,
    epoll: Epoll,
    slots: Vec<Option<Slot>>,
    free_slots: Vec<usize>,
    idle: Vec<usize>,
    waiting: VecDeque<Job>,
    connecting: usize,
    open: usize,
    inflight: usize,
    /// Connections whose request did not fit the socket at once.
    writing: Vec<usize>,
    max_connections: usize,
    tx: mpsc::UnboundedSender<Connected>,
    events: Vec<EpollEvent>,
}

/// Runs this worker's share of a constant-rate schedule; `Some(true)` when interrupted, `None`
/// when the loop cannot start (no timerfd or epoll to be had) and the caller must pace on
/// readiness instead.
pub(super) async fn pace(
    worker: &Arc<Worker>,
    pacer: ConstantPacer,
    shutdown: &mut Shutdown,
) -> Option<bool> {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let alarm = Alarm::new().ok()?;
    let epoll = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC).ok()?;
    let run = &worker.run;
    let mut t = Ticked {
        worker,
        epoll,
        slots: Vec::new(),
        free_slots: Vec::new(),
        idle: Vec::new(),
        waiting: VecDeque::new(),
        connecting: 0,
        open: 0,
        inflight: 0,
        writing: Vec::new(),
        max_connections: worker.max_connections(),
        tx,
        events: vec![EpollEvent::empty(); 256],
    };
    let mut stride = Stride::new(worker.index, run.threads);
    let mut sending = true;
    let mut interrupted = false;
    let mut give_up: Option<Instant> = None;
    let mut arrived: Vec<Connected> = Vec::new();
    let mut next_expiry = Instant::now();
    loop {
        t.flush();
        t.harvest();
        if Instant::now() >= next_expiry {
            t.expire(Instant::now());
            next_expiry = Instant::now() + EXPIRE_EVERY;
        }
        for c in arrived.drain(..) {
            t.adopt(c);
        }
        while let Ok(c) = rx.try_recv() {
            t.adopt(c);
        }
        let now = Instant::now();
        let mut next_due = None;
        if sending {
            let horizon = now + run.coalesce;
            loop {
                let n = stride.peek();
                let due = pacer.due(n);
                if !within(&run.stop, n, due) {
                    sending = false;
                    break;
                }
                let at = run.start + due;
                if at > horizon {
                    next_due = Some(at);
                    break;
                }
                t.enqueue(at);
                stride.advance();
            }
        }
        t.assign();
        t.connect_more();
        let busy = t.inflight > 0 || !t.waiting.is_empty() || t.connecting > 0;
        if !sending && !busy {
            return Some(interrupted);
        }
        if give_up.is_some_and(|g| Instant::now() >= g) {
            return Some(true);
        }
        let mut wake = next_due.unwrap_or(now + TICK);
        if t.inflight > 0 {
            wake = wake.min(now + TICK);
        }
        tokio::select! {
            r = alarm.sleep_until(wake) => {
                if r.is_err() {
                    tokio::time::sleep_until(wake.into()).await;
                }
            }
            Some(c) = rx.recv() => arrived.push(c),
            _ = shutdown.wait(), if !interrupted => {
                interrupted = true;
                sending = false;
                t.waiting.clear();
                give_up = Some(Instant::now() + INTERRUPT_GRACE);
            }
        }
    }
}

impl Ticked<'_> {
    fn enqueue(&mut self, intended: Instant) {
        self.worker.note_scheduled();
        if self.waiting.len() >= BACKLOG_LIMIT {
            self.fail(
                Job {
                    intended,
                    retried: false,
                },
                None,
                ErrorKind::Backlog,
                None,
            );
            return;
        }
        self.waiting.push_back(Job {
            intended,
            retried: false,
        });
    }

    /// Sends waiting requests on idle connections.
    fn assign(&mut self) {
        while !self.waiting.is_empty() {
            let Some(index) = self.idle.pop() else { return };
            let job = self.waiting.pop_front().expect("not empty");
            let run = &self.worker.run;
            let slot = self.slots[index].as_mut().expect("idle slots are open");
            let sent_at = Instant::now();
            self.worker.note_sent(sent_at);
            match slot
                .conn
                .send(run.template.h1_request(), run.template.is_head())
            {
                Ok(()) => {
                    let opened = slot.fresh.take();
                    slot.inflight = Some(InFlight {
                        job,
                        sent_at,
                        opened,
                    });
                    self.inflight += 1;
                    if slot.conn.wants_write() {
                        self.writing.push(index);
                    }
                }
                Err((kind, unprocessed)) => {
                    let opened = slot.fresh.take();
                    self.close(index);
                    if unprocessed && !job.retried {
                        self.waiting.push_front(Job {
                            retried: true,
                            ..job
                        });
                    } else {
                        self.fail(job, Some(sent_at), kind, opened);
                    }
                }
            }
        }
    }

    /// Writes more of requests that did not fit their socket at once.
    fn flush(&mut self) {
        let mut still = Vec::new();
        for index in std::mem::take(&mut self.writing) {
            let Some(slot) = self.slots.get_mut(index).and_then(Option::as_mut) else {
                continue;
            };
            if slot.inflight.is_none() {
                continue;
            }
            match slot.conn.flush() {
                Ok(()) if slot.conn.wants_write() => still.push(index),
                Ok(()) => {}
                Err(kind) => {
                    if let Some(inflight) = slot.inflight.take() {
                        self.settle(index, inflight, Err((kind, false)));
                    }
                }
            }
        }
        self.writing.extend(still);
    }

    /// Opens connections for requests no idle connection can take, within the limit.
    fn connect_more(&mut self) {
        let wanted = self.waiting.len().saturating_sub(self.connecting);
        let room = self
            .max_connections
            .saturating_sub(self.open + self.connecting);
        for _ in 0..wanted.min(room) {
            self.connecting += 1;
            let run = self.worker.run.clone();
            let tx = self.tx.clone();
            tokio::spawn(async move {
                let _ = tx.send(run.connector.connect().await);
            });
        }
    }

    /// Takes a newly connected socket into the loop, or fails a waiting request with why not.
    fn adopt(&mut self, connected: Connected) {
        self.connecting -= 1;
        let max_head = self.worker.run.max_header_bytes;
        let result =
            connected.and_then(|(stream, t)| Polled::from_stream(stream, max_head).map(|c| (c, t)));
        match result {
            Ok((conn, timings)) => {
                let index = self.free_slots.pop().unwrap_or_else(|| {
                    self.slots.push(None);
                    self.slots.len() - 1
                });
                let event =
                    EpollEvent::new(EpollFlags::EPOLLIN | EpollFlags::EPOLLRDHUP, index as u64);
                if self.epoll.add(conn.fd(), event).is_err() {
                    self.free_slots.push(index);
                    if let Some(job) = self.waiting.pop_front() {
                        self.fail(job, None, ErrorKind::ClientOther, None);
                    }
                    return;
                }
                self.slots[index] = Some(Slot {
                    conn,
                    inflight: None,
                    fresh: Some(timings),
                });
                self.open += 1;
                self.idle.push(index);
            }
            Err(kind) => {
                if let Some(job) = self.waiting.pop_front() {
                    self.fail(job, None, kind, None);
                }
            }
        }
    }

    /// Reads every connection the kernel says has data, and records what completed.
    fn harvest(&mut self) {
        loop {
            let n = match self.epoll.wait(&mut self.events, EpollTimeout::ZERO) {
                Ok(n) => n,
                Err(_) => return,
            };
            for i in 0..n {
                let index = self.events[i].data() as usize;
                self.harvest_one(index);
            }
            if n < self.events.len() {
                return;
            }
        }
    }

    fn harvest_one(&mut self, index: usize) {
        let Some(slot) = self.slots.get_mut(index).and_then(Option::as_mut) else {
            return;
        };
        let Some(inflight) = slot.inflight.take() else {
            // Data or a close on an idle connection: the server closed it, or sent garbage.
            self.close(index);
            return;
        };
        let outcome = match slot.conn.harvest() {
            Harvest::Pending => {
                slot.inflight = Some(inflight);
                return;
            }
            Harvest::Done(reply) => Ok(reply),
            Harvest::Failed { kind, unprocessed } => Err((kind, unprocessed)),
        };
        self.settle(index, inflight, outcome);
    }

    /// Records how an in-flight request ended and returns its connection to the idle set.
    fn settle(
        &mut self,
        index: usize,
        inflight: InFlight,
        outcome: Result<Reply, (ErrorKind, bool)>,
    ) {
        self.inflight -= 1;
        let keep_open = self.slots[index].as_ref().is_some_and(|s| s.conn.is_open());
        match outcome {
            Ok(reply) => {
                let keep = keep_open && self.worker.run.keepalive;
                self.complete(inflight, reply);
                if keep {
                    self.idle.push(index);
                } else {
                    self.close(index);
                }
            }
            Err((kind, unprocessed)) => {
                self.close(index);
                if unprocessed && !inflight.job.retried {
                    self.waiting.push_front(Job {
                        retried: true,
                        ..inflight.job
                    });
                } else {
                    self.fail(inflight.job, Some(inflight.sent_at), kind, inflight.opened);
                }
            }
        }
    }

    /// Fails requests that outlived the timeout; their connections are closed.
    fn expire(&mut self, now: Instant) {
        let timeout = self.worker.run.timeout;
        for index in 0..self.slots.len() {
            let expired = self.slots[index].as_mut().and_then(|s| {
                s.inflight
                    .take_if(|f| now.saturating_duration_since(f.sent_at) >= timeout)
            });
            if let Some(inflight) = expired {
                self.inflight -= 1;
                self.close(index);
                self.fail(
                    inflight.job,
                    Some(inflight.sent_at),
                    ErrorKind::Timeout,
                    inflight.opened,
                );
            }
        }
    }

    fn close(&mut self, index: usize) {
        if let Some(slot) = self.slots[index].take() {
            self.open -= 1;
            let _ = self.epoll.delete(slot.conn.fd());
            self.idle.retain(|&i| i != index);
            self.free_slots.push(index);
        }
    }

    fn complete(&self, inflight: InFlight, reply: Reply) {
        let InFlight {
            job,
            sent_at,
            opened,
        } = inflight;
        // Kernel stamps precede our own clock readings; never let them precede the send.
        let end = reply.end.max(sent_at);
        self.worker.record(
            &Sample {
                outcome: Outcome::Status(reply.status),
                latency: end - job.intended.min(sent_at),
                service: end - sent_at,
                lag: sent_at.saturating_duration_since(job.intended),
                connect: opened.map(|t| t.tcp),
                tls_handshake: opened.and_then(|t| t.tls),
                first_byte: Some(reply.head_at.max(sent_at) - sent_at),
                bytes_in: reply.body_bytes,
                bytes_out: self.worker.run.template.body_len(),
                retried: job.retried,
            },
            end,
        );
    }

    fn fail(
        &self,
        job: Job,
        sent_at: Option<Instant>,
        kind: ErrorKind,
        opened: Option<ConnectTimings>,
    ) {
        let end = Instant::now();
        let sent = sent_at.unwrap_or(end);
        self.worker.record(
            &Sample {
                outcome: Outcome::Error(kind),
                latency: end - job.intended.min(sent),
                service: end - sent,
                lag: sent.saturating_duration_since(job.intended),
                connect: opened.map(|t| t.tcp),
                tls_handshake: opened.and_then(|t| t.tls),
                first_byte: None,
                bytes_in: 0,
                bytes_out: 0,
                retried: job.retried,
            },
            end,
        );
    }
}
