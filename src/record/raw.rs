//! Per-request records (`--raw`): what one request did, kept whole rather than aggregated,
//! and the bounded hand-over from the workers to the writer that stores them.
//!
//! Each worker gathers records in a [`RawBatch`] of its own and hands a full batch (and
//! whatever it holds at each one-second boundary) to a bounded channel; a background writer
//! (`store::RawWriter`) drains it to disk. When the channel is full, because the disk cannot
//! keep up, the batch is counted as dropped rather than queued: the engine never waits for
//! the disk and memory stays within [`RAW_QUEUE`] batches of [`RAW_BATCH`] records.

use crate::sample::{Outcome, Sample};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Records a worker gathers before handing them over.
pub const RAW_BATCH: usize = 1024;
/// Batches waiting for the writer at most; beyond it records are dropped, and counted.
pub const RAW_QUEUE: usize = 64;

/// What one request did: only names by index, times and sizes, never a header or a body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawRecord {
    /// Which of the run's requests (its index in the plan).
    pub request: u16,
    /// The stage (sweep step) it was sent for, in a staged run.
    pub stage: Option<u16>,
    /// Its status code, or the classified error.
    pub outcome: Outcome,
    /// True when the answer is one the request expects.
    pub expected: bool,
    /// True for a second attempt after the server provably did not process the first.
    pub retried: bool,
    /// When it was due, from the start of the run. A request sent ahead of its due time
    /// (coalescing, at most `--coalesce` early) is given its send time: the sample keeps
    /// only how late a request left, which is what its latency is measured from.
    pub intended: Duration,
    /// When it left, from the start of the run.
    pub sent: Duration,
    /// When its answer (or failure) was complete, from the start of the run.
    pub end: Duration,
    /// Response body bytes.
    pub bytes_in: u64,
    /// Request body bytes.
    pub bytes_out: u64,
}

impl RawRecord {
    /// The record of `sample`, which ended at `end`, in a run that started at `start`.
    pub fn of(sample: &Sample, start: Instant, end: Instant) -> RawRecord {
        let end = end.saturating_duration_since(start);
        let sent = end.saturating_sub(sample.service);
        RawRecord {
            request: sample.request,
            stage: sample.stage,
            outcome: sample.outcome,
            expected: sample.expected,
            retried: sample.retried,
            intended: sent.saturating_sub(sample.lag),
            sent,
            end,
            bytes_in: sample.bytes_in,
            bytes_out: sample.bytes_out,
        }
    }

    /// From the intended send time to the end (the latency every report shows).
    pub fn latency(&self) -> Duration {
        self.end.saturating_sub(self.intended)
    }

    /// From the actual send to the end.
    pub fn service(&self) -> Duration {
        self.end.saturating_sub(self.sent)
    }
}

/// The workers' end of the hand-over; cloned into each worker.
#[derive(Debug, Clone)]
pub struct RawSink {
    tx: SyncSender<Vec<RawRecord>>,
    dropped: Arc<AtomicU64>,
}

/// The writer's end of the hand-over.
#[derive(Debug)]
pub struct RawStream {
    /// Batches in the order workers handed them over.
    pub batches: Receiver<Vec<RawRecord>>,
    /// Records dropped because the queue was full (or the writer had stopped).
    pub dropped: Arc<AtomicU64>,
}

/// A bounded hand-over from the workers to one writer.
pub fn raw_channel() -> (RawSink, RawStream) {
    let (tx, rx) = std::sync::mpsc::sync_channel(RAW_QUEUE);
    let dropped = Arc::new(AtomicU64::new(0));
    (
        RawSink {
            tx,
            dropped: dropped.clone(),
        },
        RawStream {
            batches: rx,
            dropped,
        },
    )
}

impl RawSink {
    /// An empty batch for one worker, handing over through this sink.
    pub fn batch(&self) -> RawBatch {
        RawBatch {
            sink: self.clone(),
            records: Vec::with_capacity(RAW_BATCH),
        }
    }
}

/// One worker's records not yet handed over.
#[derive(Debug)]
pub struct RawBatch {
    sink: RawSink,
    records: Vec<RawRecord>,
}

impl RawBatch {
    /// Adds a record; hands the batch over once it is full.
    pub fn push(&mut self, record: RawRecord) {
        self.records.push(record);
        if self.records.len() >= RAW_BATCH {
            self.flush();
        }
    }

    /// Hands over what the batch holds, never waiting: a full queue drops it, counted.
    pub fn flush(&mut self) {
        if self.records.is_empty() {
            return;
        }
        let batch = std::mem::replace(&mut self.records, Vec::with_capacity(RAW_BATCH));
        match self.sink.tx.try_send(batch) {
            Ok(()) => {}
            Err(TrySendError::Full(mut batch) | TrySendError::Disconnected(mut batch)) => {
                self.sink
                    .dropped
                    .fetch_add(batch.len() as u64, Ordering::Relaxed);
                // Keep the allocation: the next batch reuses it.
                batch.clear();
                self.records = batch;
            }
        }
    }
}

impl Drop for RawBatch {
    fn drop(&mut self) {
        self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::{Answer, ErrorKind, Origin, Timing};

    fn origin() -> Origin {
        Origin {
            request: 1,
            stage: Some(2),
            retried: false,
            opened: None,
        }
    }

    #[test]
    fn times_count_from_the_start_and_latency_matches_the_sample() {
        let start = Instant::now();
        let ms = Duration::from_millis;
        let at = Timing::new(start + ms(10), start + ms(13), start + ms(20));
        let answer = Answer {
            status: 200,
            expected: true,
            head_at: start + ms(15),
            bytes_in: 7,
            bytes_out: 3,
        };
        let sample = Sample::answered(origin(), at, answer);
        let r = RawRecord::of(&sample, start, at.end);
        assert_eq!((r.intended, r.sent, r.end), (ms(10), ms(13), ms(20)));
        assert_eq!(r.latency(), sample.latency);
        assert_eq!(r.service(), sample.service);
        assert_eq!(
            (r.request, r.stage, r.bytes_in, r.bytes_out),
            (1, Some(2), 7, 3)
        );
        // Sent early (coalescing): due at its send, as its latency is measured.
        let early = Timing::new(start + ms(14), start + ms(13), start + ms(20));
        let failed = Sample::failed(origin(), early, ErrorKind::Reset);
        let r = RawRecord::of(&failed, start, early.end);
        assert_eq!((r.intended, r.sent), (ms(13), ms(13)));
        assert_eq!(r.latency(), failed.latency);
        assert_eq!(r.outcome, Outcome::Error(ErrorKind::Reset));
    }

    #[test]
    fn a_full_queue_drops_and_counts_instead_of_waiting() {
        let (sink, stream) = raw_channel();
        let start = Instant::now();
        let at = Timing::new(start, start, start);
        let record = RawRecord::of(
            &Sample::failed(origin(), at, ErrorKind::Reset),
            start,
            start,
        );
        let mut batch = sink.batch();
        for _ in 0..(RAW_QUEUE + 3) * RAW_BATCH {
            batch.push(record);
        }
        batch.push(record);
        drop(batch);
        let queued: usize = stream.batches.try_iter().map(|b| b.len()).sum();
        assert_eq!(queued, RAW_QUEUE * RAW_BATCH);
        assert_eq!(
            stream.dropped.load(Ordering::Relaxed),
            3 * RAW_BATCH as u64 + 1
        );
    }
}
