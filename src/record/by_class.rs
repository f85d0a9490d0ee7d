//! A request's latency per status class, so outputs can label latency by class (Prometheus's
//! `status_class`) as well as by whether the answer was the one expected.
//!
//! The log carries it only when a request met more than one class in an interval: with one
//! class (nearly every interval of a healthy run) it is the request's own `latency` and
//! `failed_latency`, and storing it would write every histogram twice.

use super::{Histogram, StatusClass};
use std::collections::BTreeMap;

/// Latency of one status class's completions, split as the request's own histograms are.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct ClassLatency {
    /// Completions with an answer the request expects.
    #[serde(default, skip_serializing_if = "Histogram::is_empty")]
    pub expected: Histogram,
    /// Completions without one.
    #[serde(default, skip_serializing_if = "Histogram::is_empty")]
    pub unexpected: Histogram,
}

impl ClassLatency {
    /// Adds everything in `other`.
    pub fn add(&mut self, other: &ClassLatency) {
        self.expected.add(&other.expected);
        self.unexpected.add(&other.unexpected);
    }
}

/// Latency per status class; empty in a stored line means "one class: the request's own".
pub type ByClass = BTreeMap<StatusClass, ClassLatency>;

/// True when the map need not be stored: one class or none, derivable from the rest.
pub fn derivable(by_class: &ByClass) -> bool {
    by_class.len() <= 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn one_class_is_not_stored_and_two_are() {
        let mut m = ByClass::new();
        assert!(derivable(&m));
        m.entry(StatusClass::Success)
            .or_default()
            .expected
            .record(Duration::from_millis(1));
        assert!(derivable(&m));
        m.entry(StatusClass::ServerError)
            .or_default()
            .unexpected
            .record(Duration::from_millis(2));
        assert!(!derivable(&m));
    }
}
