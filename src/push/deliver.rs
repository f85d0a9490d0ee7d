//! The hand-over between the run and an output's network thread: a bounded queue that the
//! run's interval callback never waits on (full, the oldest batch goes and is counted), and
//! the thread that sends each batch with bounded retries and, at the end, flushes what is
//! left within a deadline.

use super::http::{post, Endpoint, SendFailure};
use crate::store::{DropReason, OutputKind, OutputRecord};
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Batches (seconds) the queue holds while the backend is slow or down.
pub const QUEUE: usize = 30;
/// Sends of one batch at most (the first and two retries).
pub const ATTEMPTS: u32 = 3;
/// Wait before the first retry; doubled before each next.
pub const BACKOFF: Duration = Duration::from_millis(250);

/// One interval's write, ready to send.
#[derive(Debug)]
pub struct Batch {
    /// The encoded request body.
    pub body: Vec<u8>,
    /// Samples or points it carries.
    pub samples: u64,
}

struct State {
    batches: VecDeque<Batch>,
    /// Samples of the batch being sent.
    in_flight: u64,
    /// Set when the run ended: send what is queued until then.
    flush_by: Option<Instant>,
    done: bool,
    record: OutputRecord,
    /// How the batch in flight last failed, when it did: a batch still in flight at the
    /// deadline is counted under that failure (a timeout, an HTTP 500), which says more than
    /// "not sent by the deadline".
    failing: Option<SendFailure>,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic on the network thread leaves the counts as they were: still worth reporting.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// One output's queue and network thread.
pub struct Delivery {
    shared: Arc<Shared>,
}

impl Delivery {
    /// Starts the thread sending to `endpoint` with `headers`.
    pub fn start(
        kind: OutputKind,
        endpoint: Endpoint,
        shown_url: String,
        headers: Vec<(&'static str, String)>,
    ) -> std::io::Result<Delivery> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                batches: VecDeque::with_capacity(QUEUE),
                in_flight: 0,
                flush_by: None,
                done: false,
                record: OutputRecord {
                    kind,
                    url: shown_url,
                    sent: 0,
                    dropped: Default::default(),
                    last_status: None,
                    last_answer: None,
                },
                failing: None,
            }),
            wake: Condvar::new(),
        });
        let theirs = shared.clone();
        std::thread::Builder::new()
            .name("headroom-push".into())
            .spawn(move || send_loop(&theirs, &endpoint, &headers))?;
        Ok(Delivery { shared })
    }

    /// Queues `batch` without waiting: when the queue is full, the oldest batch is dropped.
    pub fn offer(&self, batch: Batch) {
        let mut state = self.shared.lock();
        if state.batches.len() >= QUEUE {
            if let Some(old) = state.batches.pop_front() {
                count(&mut state.record, DropReason::QueueFull, old.samples);
            }
        }
        state.batches.push_back(batch);
        drop(state);
        self.shared.wake.notify_all();
    }

    /// Counts samples that were never queued (past the series limit).
    pub fn count_dropped(&self, reason: DropReason, samples: u64) {
        if samples > 0 {
            count(&mut self.shared.lock().record, reason, samples);
        }
    }

    /// Sends what is queued until `flush` has passed, then returns what was sent and dropped;
    /// whatever is still queued or on its way then is counted as dropped at the deadline.
    pub fn finish(self, flush: Duration) -> OutputRecord {
        let deadline = Instant::now() + flush;
        let mut state = self.shared.lock();
        state.flush_by = Some(deadline);
        self.shared.wake.notify_all();
        while !state.done {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            state = self
                .shared
                .wake
                .wait_timeout(state, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        let mut record = state.record.clone();
        if !state.done {
            // The thread is past its deadline mid-send (its socket timeouts end it soon);
            // what it holds is not waited for.
            let queued = state
                .batches
                .iter()
                .fold(0u64, |sum, b| sum.saturating_add(b.samples));
            let in_flight_reason = match &state.failing {
                Some(f) if state.in_flight > 0 => {
                    if f.status.is_some() {
                        record.last_status = f.status;
                        record.last_answer.clone_from(&f.answer);
                    }
                    f.reason
                }
                _ => DropReason::FlushDeadline,
            };
            for (reason, n) in [
                (in_flight_reason, state.in_flight),
                (DropReason::FlushDeadline, queued),
            ] {
                if n > 0 {
                    count(&mut record, reason, n);
                }
            }
            state.batches.clear();
            state.done = true;
        }
        record
    }
}

impl Drop for Delivery {
    /// Ends the thread when the run ends without a flush (a failed run): it must not wait
    /// on the queue forever.
    fn drop(&mut self) {
        self.shared.lock().done = true;
        self.shared.wake.notify_all();
    }
}

/// Counts `samples` dropped for `reason`.
fn count(record: &mut OutputRecord, reason: DropReason, samples: u64) {
    let n = record.dropped.entry(reason).or_default();
    *n = n.saturating_add(samples);
}

fn send_loop(shared: &Shared, endpoint: &Endpoint, headers: &[(&str, String)]) {
    loop {
        let mut state = shared.lock();
        let batch = loop {
            if state.done {
                return;
            }
            if let Some(b) = state.batches.pop_front() {
                break b;
            }
            if state.flush_by.is_some() {
                state.done = true;
                drop(state);
                shared.wake.notify_all();
                return;
            }
            state = shared.wake.wait(state).unwrap_or_else(|p| p.into_inner());
        };
        if state.flush_by.is_some_and(|f| Instant::now() >= f) {
            // Past the deadline a batch is not tried: it was not sent by the deadline, which
            // is not the backend's failure.
            count(&mut state.record, DropReason::FlushDeadline, batch.samples);
            continue;
        }
        state.in_flight = batch.samples;
        state.failing = None;
        let flush_by = state.flush_by;
        drop(state);
        let outcome = send_with_retries(shared, endpoint, headers, &batch.body, flush_by);
        let mut state = shared.lock();
        state.in_flight = 0;
        if state.done {
            // The run stopped waiting and counted this batch at its deadline.
            return;
        }
        match outcome {
            Ok(()) => state.record.sent += batch.samples,
            Err(f) => {
                count(&mut state.record, f.reason, batch.samples);
                if f.status.is_some() {
                    state.record.last_status = f.status;
                    state.record.last_answer = f.answer;
                }
            }
        }
    }
}

/// Sends `body` up to [`ATTEMPTS`] times with a doubling backoff, never past the flush
/// deadline once the run has ended (read afresh between attempts).
fn send_with_retries(
    shared: &Shared,
    endpoint: &Endpoint,
    headers: &[(&str, String)],
    body: &[u8],
    mut flush_by: Option<Instant>,
) -> Result<(), SendFailure> {
    let mut backoff = BACKOFF;
    let mut attempt = 1;
    loop {
        let deadline = flush_by.unwrap_or_else(|| Instant::now() + Duration::from_secs(3600));
        let failure = match post(endpoint, headers, body, deadline) {
            Ok(()) => return Ok(()),
            Err(f) => f,
        };
        shared.lock().failing = Some(failure.clone());
        if !failure.retryable() || attempt >= ATTEMPTS {
            return Err(failure);
        }
        attempt += 1;
        // Wait out the backoff, but wake (and keep to the deadline) when the run ends.
        let until = Instant::now() + backoff;
        let mut state = shared.lock();
        loop {
            flush_by = state.flush_by;
            let end = flush_by.map_or(until, |f| f.min(until));
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            state = shared
                .wake
                .wait_timeout(state, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        drop(state);
        // Past the deadline the batch is dropped for the failure it met, which says more.
        if flush_by.is_some_and(|f| Instant::now() >= f) {
            return Err(failure);
        }
        backoff *= 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A remote-write delivery to `url`, started.
    fn delivery_to(url: String) -> Delivery {
        let endpoint = Endpoint::parse(&url).unwrap();
        Delivery::start(OutputKind::Prometheus, endpoint, url, Vec::new()).unwrap()
    }

    fn batch(samples: u64) -> Batch {
        Batch {
            body: vec![0; 8],
            samples,
        }
    }

    #[test]
    fn a_full_queue_drops_the_oldest_and_the_flush_keeps_its_deadline() {
        // A backend that accepts connections and never answers: the first batch is stuck
        // in flight, the queue fills behind it.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/write", listener.local_addr().unwrap());
        let d = delivery_to(url);
        d.offer(batch(1));
        // Wait until the thread took it, so the count below is exact.
        let until = Instant::now() + Duration::from_secs(10);
        while d.shared.lock().in_flight == 0 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        for _ in 0..QUEUE + 2 {
            d.offer(batch(10));
        }
        let started = Instant::now();
        let record = d.finish(Duration::from_millis(200));
        // The flush gives up at its deadline, not after the send's 5 s timeout.
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(record.sent, 0);
        assert_eq!(record.dropped[&DropReason::QueueFull], 20);
        assert_eq!(
            record.dropped[&DropReason::FlushDeadline],
            1 + QUEUE as u64 * 10
        );
        drop(listener);
    }

    #[test]
    fn a_hung_backend_is_reported_as_timed_out_not_only_late() {
        // Accepts and never answers: the first send times out (after the send timeout),
        // the retry hangs in its turn when the run ends.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/write", listener.local_addr().unwrap());
        let d = delivery_to(url);
        d.offer(batch(4));
        let until = Instant::now() + Duration::from_secs(30);
        let timing_out = |d: &Delivery| {
            d.shared
                .lock()
                .failing
                .as_ref()
                .is_some_and(|f| f.reason == DropReason::Timeout)
        };
        while !timing_out(&d) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(timing_out(&d), "no send timed out in 30 s");
        d.offer(batch(10));
        let record = d.finish(Duration::from_millis(100));
        assert_eq!(record.sent, 0);
        assert_eq!(record.dropped.get(&DropReason::Timeout), Some(&4));
        assert_eq!(record.dropped.get(&DropReason::FlushDeadline), Some(&10));
        drop(listener);
    }

    #[test]
    fn a_batch_failing_when_the_run_ends_is_counted_under_its_failure_not_the_deadline() {
        // A backend answering every write with a 500: the run ends while the batch waits
        // out its backoff; it was refused by the backend, not "not sent by the deadline".
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/write", listener.local_addr().unwrap());
        // Every attempt gets the same answer, however many the batch makes before the end.
        std::thread::spawn(move || {
            use std::io::{Read, Write};
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { return };
                // The whole request is read first: closing on unread bytes would reset the
                // connection before the client read the answer.
                let mut request = Vec::new();
                let mut buf = [0u8; 4096];
                while request
                    .windows(4)
                    .position(|w| w == b"\r\n\r\n")
                    .is_none_or(|at| request.len() < at + 4 + batch(0).body.len())
                {
                    match conn.read(&mut buf) {
                        Ok(n) if n > 0 => request.extend_from_slice(&buf[..n]),
                        _ => break,
                    }
                }
                let _ = conn.write_all(
                    b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\nbusy",
                );
            }
        });
        let d = delivery_to(url);
        d.offer(batch(6));
        let until = Instant::now() + Duration::from_secs(30);
        while d.shared.lock().failing.is_none() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        let record = d.finish(Duration::ZERO);
        assert_eq!(record.sent, 0);
        assert_eq!(
            record.dropped.into_iter().collect::<Vec<_>>(),
            [(DropReason::ServerError, 6)]
        );
        assert_eq!(record.last_status, Some(500));
        assert_eq!(record.last_answer.as_deref(), Some("busy"));
    }

    #[test]
    fn nothing_listening_is_retried_then_dropped_as_refused() {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let url = format!("http://127.0.0.1:{port}/write");
        let d = delivery_to(url);
        d.offer(batch(7));
        let record = d.finish(Duration::from_secs(10));
        assert_eq!(record.sent, 0);
        assert_eq!(record.dropped[&DropReason::Refused], 7);
    }
}
