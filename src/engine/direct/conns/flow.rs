//! Flow iterations and logins on a direct worker's connections: where an iteration stands,
//! the steps waiting out a think time, and what a connection's login captured.

use super::{Conns, Job};
use std::time::Instant;

/// Where a flow iteration stands: its flow, its step, its data turn and what it captured.
pub(in crate::engine::direct) struct Session {
    pub(super) flow: u16,
    pub(super) step: u16,
    /// The iteration's count among its flow's iterations: every step draws this data row.
    pub(super) k: u64,
    pub(super) vars: Vec<Option<Vec<u8>>>,
}

/// A request whose step comes after a think time.
pub(super) struct Delayed {
    pub(super) at: Instant,
    pub(super) seq: u64,
    pub(super) job: Job,
}

impl PartialEq for Delayed {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}

impl Eq for Delayed {}

impl PartialOrd for Delayed {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Delayed {
    /// The earliest first, out of a max-heap.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

/// What a connection's login captured, and when.
pub(super) struct LoggedIn {
    pub(super) vars: Vec<Option<Vec<u8>>>,
    pub(super) at: Instant,
}

impl Conns<'_> {
    /// Queues the step after `job`'s in its flow iteration, after the flow's think time.
    pub(super) fn next_step(&mut self, job: Job, now: Instant) {
        let Some(mut session) = job.session else {
            return;
        };
        let run = &self.worker.run;
        let flow = &run.flows[usize::from(session.flow)];
        session.step += 1;
        let Some(&request) = flow.steps.get(usize::from(session.step)) else {
            return;
        };
        let next = Job {
            intended: now + flow.think,
            retried: false,
            request,
            n: job.n,
            instance: job.instance,
            session: Some(session),
            login: false,
        };
        if flow.think.is_zero() {
            self.pools[usize::from(next.instance)]
                .waiting
                .push_back(next);
        } else {
            self.delayed_seq += 1;
            self.delayed.push(Delayed {
                at: next.intended,
                seq: self.delayed_seq,
                job: next,
            });
        }
    }
}
