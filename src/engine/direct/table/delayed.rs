//! Flow steps waiting out their think time, earliest first.

use crate::engine::job::Job;
use std::collections::BinaryHeap;
use std::time::Instant;

/// The steps waiting to be queued.
#[derive(Default)]
pub struct Delayed {
    heap: BinaryHeap<Entry>,
    seq: u64,
}

struct Entry {
    at: Instant,
    seq: u64,
    job: Job,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    /// The earliest first, out of a max-heap; among equals, the first put in.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

impl Delayed {
    /// Holds `job` until its intended time.
    pub fn push(&mut self, job: Job) {
        self.seq += 1;
        self.heap.push(Entry {
            at: job.intended,
            seq: self.seq,
            job,
        });
    }

    /// The next job whose time has come by `now`.
    pub fn pop_due(&mut self, now: Instant) -> Option<Job> {
        if self.heap.peek().is_some_and(|e| e.at <= now) {
            self.heap.pop().map(|e| e.job)
        } else {
            None
        }
    }

    /// When the next one's time comes.
    pub fn next(&self) -> Option<Instant> {
        self.heap.peek().map(|e| e.at)
    }

    /// Steps waiting.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Drops them all (the run was stopped).
    pub fn clear(&mut self) {
        self.heap.clear();
    }
}
