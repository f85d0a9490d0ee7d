//! Merges the workers' parts of each interval and releases whole intervals in order.

use super::IntervalRecord;
use std::collections::BTreeMap;

/// What a worker hands over at an interval boundary.
#[derive(Debug)]
pub enum Part {
    /// The worker's record of one interval.
    Interval {
        /// Which worker.
        worker: usize,
        /// Its record (carries the interval index).
        record: Box<IntervalRecord>,
    },
    /// The worker has sent its last interval, numbered `last`.
    Finished {
        /// Which worker.
        worker: usize,
        /// Index of its final interval.
        last: u64,
    },
}

/// Collects parts from `workers` workers; an interval is whole once every worker still
/// running has reported it.
#[derive(Debug)]
pub struct Aggregator {
    pending: BTreeMap<u64, (IntervalRecord, usize)>,
    finished: Vec<Option<u64>>,
}

impl Aggregator {
    /// An aggregator expecting parts from `workers` workers, starting at interval 0.
    pub fn new(workers: usize) -> Self {
        Aggregator {
            pending: BTreeMap::new(),
            finished: vec![None; workers],
        }
    }

    /// Takes one part; returns the intervals that it completed, in order.
    pub fn accept(&mut self, part: Part) -> Vec<IntervalRecord> {
        match part {
            Part::Interval { record, .. } => {
                let record = *record;
                let index = record.index;
                match self.pending.get_mut(&index) {
                    Some((merged, seen)) => {
                        merged.merge(&record);
                        *seen += 1;
                    }
                    None => {
                        self.pending.insert(index, (record, 1));
                    }
                }
            }
            Part::Finished { worker, last } => {
                if let Some(slot) = self.finished.get_mut(worker) {
                    *slot = Some(last);
                }
            }
        }
        self.release()
    }

    /// True once every worker has finished and every interval was released.
    pub fn is_done(&self) -> bool {
        self.finished.iter().all(Option::is_some) && self.pending.is_empty()
    }

    /// Releases whatever is pending, whole or not (for an abandoned run).
    pub fn drain(&mut self) -> Vec<IntervalRecord> {
        std::mem::take(&mut self.pending)
            .into_values()
            .map(|(r, _)| r)
            .collect()
    }

    fn expected(&self, index: u64) -> usize {
        self.finished
            .iter()
            .filter(|f| f.is_none_or(|last| last >= index))
            .count()
    }

    fn release(&mut self) -> Vec<IntervalRecord> {
        let mut out = Vec::new();
        while let Some((&index, &(_, seen))) = self.pending.first_key_value() {
            if seen < self.expected(index) {
                break;
            }
            let (record, _) = self.pending.remove(&index).expect("present");
            out.push(record);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(worker: usize, index: u64, sent: u64) -> Part {
        let mut record = IntervalRecord::new(index);
        record.sent = sent;
        Part::Interval {
            worker,
            record: Box::new(record),
        }
    }

    #[test]
    fn releases_an_interval_once_every_worker_reported_it() {
        let mut agg = Aggregator::new(2);
        assert!(agg.accept(part(0, 0, 1)).is_empty());
        assert!(agg.accept(part(0, 1, 1)).is_empty());
        let out = agg.accept(part(1, 0, 2));
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].index, out[0].sent), (0, 3));
        let out = agg.accept(part(1, 1, 5));
        assert_eq!((out[0].index, out[0].sent), (1, 6));
    }

    #[test]
    fn a_finished_worker_is_not_waited_for() {
        let mut agg = Aggregator::new(2);
        agg.accept(part(0, 0, 1));
        agg.accept(part(1, 0, 1));
        agg.accept(Part::Finished { worker: 1, last: 0 });
        let out = agg.accept(part(0, 1, 4));
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].sent, 4);
        assert!(!agg.is_done());
        agg.accept(Part::Finished { worker: 0, last: 1 });
        assert!(agg.is_done());
    }
}
