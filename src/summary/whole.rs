//! Which of a run's seconds were sent through whole: the seconds its verdict and its steps'
//! are judged on, as the progress line judges them (both by [`SendingEnd::whole`]).
//!
//! A run that ran to its planned end sends its last request a gap before that end, so its
//! last second is whole though the attack (first send to last) is a gap short of it: the
//! plan, not the attack's length, says where the sending ended. Only a run stopped before
//! its plan's end (a stop condition, an interrupt, a count of requests) ends where its last
//! request left, and the second it stopped in is partial.

use crate::plan::SendingEnd;
use crate::store::IntervalDigest;
use std::collections::BTreeSet;

/// The indices of the `seconds` sent through whole, of a run whose plan's sending ends at
/// `end`. `attack_secs`: from the start to the last send; `stopped`: whether the run
/// stopped before its plan's end.
pub fn seconds(
    end: &SendingEnd,
    seconds: &[IntervalDigest],
    attack_secs: f64,
    stopped: bool,
) -> BTreeSet<u64> {
    let mut sent_through = 0u64;
    seconds
        .iter()
        .filter_map(|d| {
            sent_through = sent_through.saturating_add(d.sent);
            let planned = end.whole(d.index, sent_through);
            let before_stop = !stopped || (d.index as f64) + 1.0 <= attack_secs;
            (planned && before_stop).then_some(d.index)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn sent(per_second: &[u64]) -> Vec<IntervalDigest> {
        per_second
            .iter()
            .enumerate()
            .map(|(i, n)| IntervalDigest {
                index: i as u64,
                sent: *n,
                ..Default::default()
            })
            .collect()
    }

    fn after(ms: u64) -> SendingEnd {
        SendingEnd {
            after: Some(Duration::from_millis(ms)),
            requests: None,
        }
    }

    #[test]
    fn a_run_that_ran_to_its_end_has_its_last_second_whole() {
        // Two steps of 2 s at 200 and 400 req/s: the last request leaves 2.5 ms before
        // the end, and the second it leaves in was sent through whole all the same.
        let s = sent(&[200, 200, 400, 400, 0]);
        let whole = seconds(&after(4_000), &s, 3.9975, false);
        assert_eq!(whole, BTreeSet::from([0, 1, 2, 3]));
    }

    #[test]
    fn a_partial_last_second_is_left_out() {
        // 3.5 s at 200 req/s: the fourth second sends half of its share.
        let s = sent(&[200, 200, 200, 100, 0]);
        assert_eq!(
            seconds(&after(3_500), &s, 3.495, false),
            BTreeSet::from([0, 1, 2])
        );
        // A count of 250 at 100 req/s ends in the third second.
        let count = SendingEnd {
            after: None,
            requests: Some(250),
        };
        let s = sent(&[100, 100, 50, 0]);
        assert_eq!(seconds(&count, &s, 2.49, true), BTreeSet::from([0, 1]));
        // Stopped (Ctrl-C, a stop button) 2.3 s into a 10 s run.
        let s = sent(&[200, 200, 60, 0]);
        assert_eq!(
            seconds(&after(10_000), &s, 2.3, true),
            BTreeSet::from([0, 1])
        );
    }
}
