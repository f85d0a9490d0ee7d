//! A worker's record of the second in progress, and the clock that hands it over: at each
//! one-second boundary of the run the record goes to the aggregator and a new one starts.
//! Both drivers record through here; the hot path takes no shared lock.

use super::job::{Failure, Job, Unprocessed};
use super::sends::SendMeter;
use super::spec::Pace;
use crate::record::{IntervalRecord, Part, RawBatch, RawRecord, RawSink};
use crate::sample::Sample;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What a worker tells the engine when it is done.
#[derive(Debug, Clone, Copy, Default)]
pub struct WorkerReport {
    /// When its last request left.
    pub last_send: Option<Instant>,
    /// When its last request ended.
    pub last_done: Option<Instant>,
    /// True when it was stopped early.
    pub interrupted: bool,
}

/// The interval in progress and the run's edges, as one worker saw them.
pub struct Tally {
    record: IntervalRecord,
    retries: super::retries::RetryBudget,
    start: Instant,
    last_send: Option<Instant>,
    last_done: Option<Instant>,
    raw: Option<RawBatch>,
    meter: Option<Arc<SendMeter>>,
}

impl Tally {
    /// An empty tally of a run paced by `pace`, keeping each request's record too when
    /// given a `raw` sink.
    pub fn new(pace: &Pace, raw: Option<&RawSink>) -> Tally {
        Tally {
            record: IntervalRecord::new(0),
            retries: Default::default(),
            start: pace.start,
            last_send: None,
            last_done: None,
            raw: raw.map(RawSink::batch),
            meter: pace.meter.clone(),
        }
    }

    /// A request fell due (sent or not).
    pub fn scheduled(&mut self) {
        self.record.scheduled += 1;
    }

    /// `job` (sent for `stage`, in a staged run) left at `at`.
    pub fn sent(&mut self, job: &Job, at: Instant, stage: Option<u16>) {
        self.record.sent += 1;
        if let Some(stage) = stage {
            self.record.sent_for(stage);
        }
        self.retries.earn();
        self.last_send = Some(at);
        if let Some(meter) = self.meter.as_deref().filter(|_| job.is_arrival()) {
            let left = meter.left(at);
            if left.gap.is_some() || left.span.is_some() {
                let gaps = self.record.send_gaps.get_or_insert_with(|| meter.record());
                if let Some(gap) = left.gap {
                    gaps.gap(gap);
                }
                if let Some(span) = left.span {
                    gaps.span(span);
                }
            }
        }
    }

    /// Whether `job`, failed with `failure`, is sent again: when the retry rule
    /// ([`Job::may_retry`]) allows, and, for a request the server refused, the worker's budget
    /// has a retry left (none once retries are a tenth of what it sent, so a server shedding
    /// load gets no more than it was asked for, or nearly). One that never reached the server
    /// costs nothing.
    pub fn may_retry(&mut self, job: &Job, failure: Failure, method: &http::Method) -> bool {
        job.may_retry(failure, method)
            && (failure.unprocessed == Unprocessed::Unsent || self.retries.spend())
    }

    /// A request ended at `end`, as `sample` says.
    pub fn record(&mut self, sample: &Sample, end: Instant) {
        self.record.record(sample);
        if let Some(stage) = sample.stage {
            let done = end.saturating_duration_since(self.start);
            self.record.record_step(stage, sample, done);
        }
        self.last_done = Some(self.last_done.max(Some(end)).unwrap_or(end));
        if let Some(raw) = &mut self.raw {
            raw.push(RawRecord::of(sample, self.start, end));
        }
    }

    fn take(&mut self, next: u64) -> IntervalRecord {
        // The raw records go at each second too, so the file is never far behind the log.
        if let Some(raw) = &mut self.raw {
            raw.flush();
        }
        std::mem::replace(&mut self.record, IntervalRecord::new(next))
    }
}

/// Hands a worker's record to the aggregator at each one-second boundary of the run.
pub struct Seconds {
    worker: usize,
    tx: Sender<Part>,
    next: Instant,
    index: u64,
}

impl Seconds {
    /// The clock of worker `worker` in a run paced by `pace`, handing over on `tx`.
    pub fn new(worker: usize, pace: &Pace, tx: Sender<Part>) -> Seconds {
        Seconds {
            worker,
            tx,
            next: pace.start + Duration::from_secs(1),
            index: 0,
        }
    }

    /// When the interval in progress ends.
    pub fn next(&self) -> Instant {
        self.next
    }

    /// Hands over every interval of `tally` that has ended by `now`.
    pub fn roll(&mut self, now: Instant, tally: &mut Tally) {
        while now >= self.next {
            self.index += 1;
            let record = tally.take(self.index);
            // A closed channel means the run is being torn down; the loop ends on its own.
            let _ = self.tx.send(Part::Interval {
                worker: self.worker,
                record: Box::new(record),
            });
            self.next += Duration::from_secs(1);
        }
    }

    /// Hands over the last, partial interval and says this worker is done.
    pub fn finish(self, tally: &mut Tally, interrupted: bool) -> WorkerReport {
        let last = self.index;
        let record = tally.take(0);
        let _ = self.tx.send(Part::Interval {
            worker: self.worker,
            record: Box::new(record),
        });
        let _ = self.tx.send(Part::Finished {
            worker: self.worker,
            last,
        });
        WorkerReport {
            last_send: tally.last_send,
            last_done: tally.last_done,
            interrupted,
        }
    }
}
