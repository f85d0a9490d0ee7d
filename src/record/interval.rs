//! One interval's worth of results: histograms per status class, counts, bytes and errors.

use super::by_class::{self, ByClass};
use super::step::StepStats;
use super::Histogram;
use crate::sample::{ErrorKind, Iteration, Outcome, Sample};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// A coarse grouping of outcomes, each with its own latency histograms.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum StatusClass {
    /// 1xx.
    #[serde(rename = "1xx")]
    Informational,
    /// 2xx.
    #[serde(rename = "2xx")]
    Success,
    /// 3xx.
    #[serde(rename = "3xx")]
    Redirect,
    /// 4xx.
    #[serde(rename = "4xx")]
    ClientError,
    /// 5xx.
    #[serde(rename = "5xx")]
    ServerError,
    /// No status: a classified error.
    #[serde(rename = "error")]
    Failed,
}

impl StatusClass {
    /// The class of an outcome.
    pub fn of(outcome: Outcome) -> StatusClass {
        match outcome {
            Outcome::Status(c) if c < 200 => StatusClass::Informational,
            Outcome::Status(c) if c < 300 => StatusClass::Success,
            Outcome::Status(c) if c < 400 => StatusClass::Redirect,
            Outcome::Status(c) if c < 500 => StatusClass::ClientError,
            Outcome::Status(_) => StatusClass::ServerError,
            Outcome::Error(_) => StatusClass::Failed,
        }
    }
}

/// Latency and service time of one status class.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct ClassStats {
    /// From the intended send time to the end of the response.
    pub latency: Histogram,
    /// From the actual send to the end of the response.
    pub service: Histogram,
}

/// What one of the run's requests met in an interval: a row of the per-request table.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct RequestStats {
    /// Requests completed.
    pub count: u64,
    /// Completions without an expected answer: an error, or a status the request does not expect.
    pub failures: u64,
    /// Latency of the completions with an expected answer: a failure that took a microsecond
    /// (a refused connection, no free descriptor) says nothing of how fast the server answers.
    pub latency: Histogram,
    /// Service time (from the actual send) of the completions with an expected answer.
    #[serde(default)]
    pub service: Histogram,
    /// Latency of the completions without one.
    #[serde(default)]
    pub failed_latency: Histogram,
    /// Response body bytes.
    pub bytes_in: u64,
    /// Answers per status code (absent from runs stored before it was kept).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub status: BTreeMap<u16, u64>,
    /// Failures per classified error (absent from runs stored before it was kept).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub errors: BTreeMap<ErrorKindKey, u64>,
    /// Answers the request did not expect, per status code: a status it does not take, or
    /// one it takes with a body that did not hold what it expects (the plan's `expect` tells
    /// which).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unmet: BTreeMap<u16, u64>,
    /// Latency per status class. Kept whole in memory; stored only when the interval met
    /// more than one class (else it is `latency` and `failed_latency`): read it through
    /// [`RequestStats::by_class`].
    #[serde(default, skip_serializing_if = "by_class::derivable")]
    pub classes: ByClass,
}

impl RequestStats {
    /// Adds one completed request.
    #[inline]
    pub fn record(&mut self, s: &Sample) {
        // Stats read back from the log keep one class implicit: made explicit before a
        // sample joins them (never on the live path, whose stats start empty), and left
        // implicit when they cannot be split, so a partial map is never taken for whole.
        let known = !self.classes.is_empty() || self.count == 0 || self.explicit_classes();
        self.count += 1;
        if s.expected {
            self.latency.record(s.latency);
            self.service.record(s.service);
        } else {
            self.failures += 1;
            self.failed_latency.record(s.latency);
        }
        if known {
            let class = self.classes.entry(StatusClass::of(s.outcome)).or_default();
            let h = if s.expected {
                &mut class.expected
            } else {
                &mut class.unexpected
            };
            h.record(s.latency);
        }
        match s.outcome {
            Outcome::Status(code) => {
                *self.status.entry(code).or_default() += 1;
                if !s.expected {
                    *self.unmet.entry(code).or_default() += 1;
                }
            }
            Outcome::Error(kind) => *self.errors.entry(ErrorKindKey(kind)).or_default() += 1,
        }
        self.bytes_in += s.bytes_in;
    }

    /// Adds everything in `other`.
    pub fn add(&mut self, other: &RequestStats) {
        // Before the counts: a stored one-class map is read from them.
        self.add_classes(other);
        self.count += other.count;
        self.failures += other.failures;
        self.latency.add(&other.latency);
        self.service.add(&other.service);
        self.failed_latency.add(&other.failed_latency);
        self.bytes_in += other.bytes_in;
        add_counts(&mut self.status, &other.status);
        add_counts(&mut self.errors, &other.errors);
        add_counts(&mut self.unmet, &other.unmet);
    }

    /// Completions per status class (only classes met), from the status and error counts.
    pub fn count_by_class(&self) -> BTreeMap<StatusClass, u64> {
        let mut by: BTreeMap<StatusClass, u64> = BTreeMap::new();
        for (code, n) in &self.status {
            *by.entry(StatusClass::of(Outcome::Status(*code)))
                .or_default() += n;
        }
        let errors: u64 = self.errors.values().sum();
        if errors > 0 {
            by.insert(StatusClass::Failed, errors);
        }
        by
    }

    /// Latency per status class, or `None` for an interval stored before it was kept that
    /// met more than one class (then it cannot be split).
    pub fn by_class(&self) -> Option<Cow<'_, ByClass>> {
        if !self.classes.is_empty() {
            return Some(Cow::Borrowed(&self.classes));
        }
        let mut derived = ByClass::new();
        self.add_classes_to(&mut derived)
            .then_some(Cow::Owned(derived))
    }

    /// Adds this request's latency per class to `into`; false (and nothing added) when it
    /// cannot be told.
    fn add_classes_to(&self, into: &mut ByClass) -> bool {
        if !self.classes.is_empty() {
            for (class, latency) in &self.classes {
                into.entry(*class).or_default().add(latency);
            }
            return true;
        }
        // Stats stored before the counts were kept have completions without them: their
        // class cannot be told from the counts.
        let counted = self.status.values().sum::<u64>() + self.errors.values().sum::<u64>();
        if counted != self.count {
            return false;
        }
        let mut met = self.count_by_class().into_keys();
        match (met.next(), met.next()) {
            (None, _) => true,
            (Some(class), None) => {
                let mine = into.entry(class).or_default();
                mine.expected.add(&self.latency);
                mine.unexpected.add(&self.failed_latency);
                true
            }
            (Some(_), Some(_)) => false,
        }
    }

    /// Adds `other`'s latency per class; when either side's cannot be told, neither is kept
    /// (the counts then say more than one class, so [`RequestStats::by_class`] answers None).
    fn add_classes(&mut self, other: &RequestStats) {
        if self.classes.is_empty() && self.count > 0 && !self.explicit_classes() {
            return;
        }
        if !other.add_classes_to(&mut self.classes) {
            self.classes.clear();
        }
    }

    /// Makes an implicit one-class map explicit; false when the stats cannot be split.
    #[cold]
    fn explicit_classes(&mut self) -> bool {
        let mut mine = ByClass::new();
        if !self.add_classes_to(&mut mine) {
            return false;
        }
        self.classes = mine;
        true
    }
}

/// The iterations of one flow: how many ended, how many failed, how long the others took.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct FlowStats {
    /// Iterations ended.
    pub count: u64,
    /// Of those, iterations a step of which did not get what it expects.
    pub failures: u64,
    /// Time of the iterations whose every step got what it expects, from the first step's
    /// intended send to the last answer (think times included).
    pub took: Histogram,
}

impl FlowStats {
    fn record(&mut self, it: &Iteration) {
        self.count += 1;
        if it.ok {
            self.took.record(it.took);
        } else {
            self.failures += 1;
        }
    }

    /// Adds everything in `other`.
    pub fn add(&mut self, other: &FlowStats) {
        self.count += other.count;
        self.failures += other.failures;
        self.took.add(&other.took);
    }
}

pub(super) fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn add_counts<K: Ord + Copy>(mine: &mut BTreeMap<K, u64>, theirs: &BTreeMap<K, u64>) {
    for (k, n) in theirs {
        *mine.entry(*k).or_default() += n;
    }
}

/// Adds `other` to `mine` item by item (requests, flows: by index in the plan), growing
/// `mine` to take them all.
pub(crate) fn add_each<T: Default>(mine: &mut Vec<T>, other: &[T], add: impl Fn(&mut T, &T)) {
    if other.len() > mine.len() {
        mine.resize_with(other.len(), T::default);
    }
    for (m, t) in mine.iter_mut().zip(other) {
        add(m, t);
    }
}

/// Item `i` of `items` (a request's or a flow's stats), grown to hold it.
fn nth<T: Default>(items: &mut Vec<T>, i: u16) -> &mut T {
    let i = usize::from(i);
    if i >= items.len() {
        items.resize_with(i + 1, T::default);
    }
    &mut items[i]
}

/// Everything recorded in one interval (or, merged, in any span of intervals).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct IntervalRecord {
    /// Interval number: seconds since the start of the run.
    pub index: u64,
    /// Requests sent (left the generator) during the interval.
    pub sent: u64,
    /// Requests whose intended time fell in the interval (sent or not).
    pub scheduled: u64,
    /// Histograms per status class; only classes that occurred are present.
    pub classes: BTreeMap<StatusClass, ClassStats>,
    /// TCP connect times of connections opened in the interval.
    pub connect: Histogram,
    /// TLS handshake times.
    pub tls_handshake: Histogram,
    /// Time from send to the response head.
    pub first_byte: Histogram,
    /// How late requests left compared with their intended time.
    pub lag: Histogram,
    /// Responses per status code.
    pub status: BTreeMap<u16, u64>,
    /// Failures per classified error.
    pub errors: BTreeMap<ErrorKindKey, u64>,
    /// Response body bytes.
    pub bytes_in: u64,
    /// Request body bytes.
    pub bytes_out: u64,
    /// Requests sent a second time because the server closed the connection unprocessed.
    #[serde(default)]
    pub retried: u64,
    /// Per request of the run, by its index in the plan.
    #[serde(default)]
    pub requests: Vec<RequestStats>,
    /// Per stage (sweep step), by the stage each request was sent for, so a slow answer
    /// to one step's request is never counted in the next step.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub steps: BTreeMap<u16, StepStats>,
    /// Per flow of the run, by its index in the plan: the iterations that ended.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<FlowStats>,
    /// The gaps between a Poisson run's arrivals as they left, and how long spans of them
    /// took (`None` for even arrivals and the closed model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_gaps: Option<super::SendGaps>,
}

/// [`ErrorKind`] as a map key that serializes to its stable key string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ErrorKindKey(pub ErrorKind);

impl serde::Serialize for ErrorKindKey {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0.key())
    }
}

impl<'de> serde::Deserialize<'de> for ErrorKindKey {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let key = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        ErrorKind::from_key(&key)
            .map(ErrorKindKey)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown error kind {key:?}")))
    }
}

impl IntervalRecord {
    /// An empty record for interval `index`.
    pub fn new(index: u64) -> Self {
        IntervalRecord {
            index,
            ..Default::default()
        }
    }

    /// Adds one completed request.
    #[inline]
    pub fn record(&mut self, s: &Sample) {
        let class = self.classes.entry(StatusClass::of(s.outcome)).or_default();
        class.latency.record(s.latency);
        class.service.record(s.service);
        self.lag.record(s.lag);
        if let Some(d) = s.connect {
            self.connect.record(d);
        }
        if let Some(d) = s.tls_handshake {
            self.tls_handshake.record(d);
        }
        if let Some(d) = s.first_byte {
            self.first_byte.record(d);
        }
        match s.outcome {
            Outcome::Status(code) => *self.status.entry(code).or_default() += 1,
            Outcome::Error(kind) => *self.errors.entry(ErrorKindKey(kind)).or_default() += 1,
        }
        self.bytes_in += s.bytes_in;
        self.bytes_out += s.bytes_out;
        self.retried += u64::from(s.retried);
        nth(&mut self.requests, s.request).record(s);
        if let Some(it) = &s.iteration {
            nth(&mut self.flows, it.flow).record(it);
            if let Some(stage) = it.stage {
                nth(&mut self.steps.entry(stage).or_default().flows, it.flow).record(it);
            }
        }
    }

    /// Adds a request to its stage's tally; `done` is when it completed, from the start.
    pub fn record_step(&mut self, stage: u16, s: &Sample, done: std::time::Duration) {
        let done_us = u64::try_from(done.as_micros()).unwrap_or(u64::MAX);
        let start_us = done_us.saturating_sub(u64::try_from(s.latency.as_micros()).unwrap_or(0));
        let step = self.steps.entry(stage).or_default();
        step.widen(start_us, done_us, done_us);
        step.count += 1;
        step.failures += u64::from(!s.expected);
        step.errors += u64::from(matches!(s.outcome, Outcome::Error(_)));
        if s.expected {
            step.latency.record(s.latency);
        }
        step.retried += u64::from(s.retried);
        step.bytes_out += s.bytes_out;
        if let Some(d) = s.first_byte {
            step.first_byte.record(d);
        }
        if let Some(d) = s.connect {
            step.connect.record(d);
        }
        if let Some(d) = s.tls_handshake {
            step.tls_handshake.record(d);
        }
        nth(&mut step.requests, s.request).record(s);
    }

    /// A request sent for `stage` left (the generator counts [`IntervalRecord::sent`]
    /// itself).
    #[inline]
    pub fn sent_for(&mut self, stage: u16) {
        self.steps.entry(stage).or_default().sent += 1;
    }

    /// Adds everything in `other` (the interval index is kept).
    pub fn merge(&mut self, other: &IntervalRecord) {
        self.sent += other.sent;
        self.scheduled += other.scheduled;
        for (class, stats) in &other.classes {
            let mine = self.classes.entry(*class).or_default();
            mine.latency.add(&stats.latency);
            mine.service.add(&stats.service);
        }
        self.connect.add(&other.connect);
        self.tls_handshake.add(&other.tls_handshake);
        self.first_byte.add(&other.first_byte);
        self.lag.add(&other.lag);
        add_counts(&mut self.status, &other.status);
        add_counts(&mut self.errors, &other.errors);
        self.bytes_in += other.bytes_in;
        self.bytes_out += other.bytes_out;
        self.retried += other.retried;
        add_each(&mut self.requests, &other.requests, RequestStats::add);
        add_each(&mut self.flows, &other.flows, FlowStats::add);
        for (stage, step) in &other.steps {
            self.steps.entry(*stage).or_default().add(step);
        }
        if let Some(gaps) = &other.send_gaps {
            self.send_gaps.get_or_insert_default().add(gaps);
        }
    }

    /// Requests sent, retries left out: what the load asked for that left.
    pub fn sent_first(&self) -> u64 {
        self.sent.saturating_sub(self.retried)
    }

    /// Requests completed (answered or failed).
    pub fn completed(&self) -> u64 {
        self.status.values().sum::<u64>() + self.errors.values().sum::<u64>()
    }

    /// Latency of every request that got an expected answer: the headline.
    pub fn latency_ok(&self) -> Histogram {
        self.over_requests(|r| &r.latency)
    }

    /// Service time of every request that got an expected answer.
    pub fn service_ok(&self) -> Histogram {
        self.over_requests(|r| &r.service)
    }

    /// Latency of every request that did not.
    pub fn latency_failed(&self) -> Histogram {
        self.over_requests(|r| &r.failed_latency)
    }

    fn over_requests(&self, pick: impl Fn(&RequestStats) -> &Histogram) -> Histogram {
        let mut h = Histogram::new();
        for r in &self.requests {
            h.add(pick(r));
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn sample(outcome: Outcome, ms: u64) -> Sample {
        Sample {
            outcome,
            latency: Duration::from_millis(ms),
            service: Duration::from_millis(ms),
            lag: Duration::ZERO,
            connect: None,
            tls_handshake: None,
            first_byte: Some(Duration::from_millis(ms)),
            bytes_in: 10,
            bytes_out: 1,
            retried: false,
            request: 0,
            stage: None,
            expected: outcome.is_success(),
            iteration: None,
        }
    }

    #[test]
    fn records_and_merges_counts_classes_and_errors() {
        let mut a = IntervalRecord::new(0);
        let mut b = IntervalRecord::new(0);
        a.record(&sample(Outcome::Status(200), 5));
        a.record(&sample(Outcome::Status(503), 50));
        b.record(&sample(Outcome::Status(200), 7));
        b.record(&sample(Outcome::Error(ErrorKind::Reset), 1));
        a.merge(&b);
        assert_eq!(a.completed(), 4);
        assert_eq!(a.status[&200], 2);
        assert_eq!(a.errors[&ErrorKindKey(ErrorKind::Reset)], 1);
        assert_eq!(a.classes[&StatusClass::Success].latency.len(), 2);
        assert_eq!(a.bytes_in, 40);
        // The headline latency is the answered requests'; failures keep their own.
        assert_eq!(a.latency_ok().len(), 2);
        assert_eq!(a.latency_ok().quantile(1.0).as_millis(), 7);
        assert_eq!(a.latency_failed().len(), 2);
        assert_eq!(a.latency_failed().quantile(0.0).as_millis(), 1);
        assert_eq!(a.requests[0].failures, 2);
    }

    #[test]
    fn a_record_survives_its_log_line() {
        let mut a = IntervalRecord::new(3);
        a.sent = 2;
        a.record(&sample(Outcome::Status(200), 5));
        a.record(&sample(Outcome::Error(ErrorKind::Timeout), 30_000));
        let line = serde_json::to_string(&a).unwrap();
        let back: IntervalRecord = serde_json::from_str(&line).unwrap();
        assert_eq!(back.index, 3);
        assert_eq!(back.completed(), 2);
        assert_eq!(
            back.latency_failed().quantile(1.0),
            a.latency_failed().quantile(1.0)
        );
        assert_eq!(back.latency_ok().len(), 1);
    }

    #[test]
    fn latency_per_class_survives_the_log_whether_stored_or_derived() {
        let mut one = RequestStats::default();
        one.record(&sample(Outcome::Status(200), 5));
        one.record(&sample(Outcome::Status(204), 6));
        let mut mixed = RequestStats::default();
        mixed.record(&sample(Outcome::Status(200), 7));
        mixed.record(&sample(Outcome::Status(503), 50));
        mixed.record(&sample(Outcome::Error(ErrorKind::Reset), 1));
        let one_line = serde_json::to_string(&one).unwrap();
        // One class is the request's own histograms: not written twice.
        assert!(!one_line.contains("classes"), "{one_line}");
        let one_back: RequestStats = serde_json::from_str(&one_line).unwrap();
        let mixed_back: RequestStats =
            serde_json::from_str(&serde_json::to_string(&mixed).unwrap()).unwrap();
        let by = one_back.by_class().unwrap();
        assert_eq!(by.len(), 1);
        assert_eq!(by[&StatusClass::Success].expected.len(), 2);
        let by = mixed_back.by_class().unwrap();
        assert_eq!(by[&StatusClass::Success].expected.len(), 1);
        assert_eq!(by[&StatusClass::ServerError].unexpected.len(), 1);
        assert_eq!(
            by[&StatusClass::ServerError].unexpected.quantile(1.0),
            mixed.failed_latency.quantile(1.0)
        );
        assert_eq!(by[&StatusClass::Failed].unexpected.len(), 1);

        // Adding stored lines of different single classes keeps both apart.
        let mut errors_only = RequestStats::default();
        errors_only.record(&sample(Outcome::Error(ErrorKind::Timeout), 30));
        let errors_back: RequestStats =
            serde_json::from_str(&serde_json::to_string(&errors_only).unwrap()).unwrap();
        let mut total = RequestStats::default();
        for part in [&one_back, &errors_back, &mixed_back] {
            total.add(part);
        }
        let by = total.by_class().unwrap();
        assert_eq!(by[&StatusClass::Success].expected.len(), 3);
        assert_eq!(by[&StatusClass::Failed].unexpected.len(), 2);
        assert_eq!(by[&StatusClass::ServerError].unexpected.len(), 1);
        // What is in memory adds up to the same.
        let mut live = RequestStats::default();
        for part in [&one, &errors_only, &mixed] {
            live.add(part);
        }
        for (class, latency) in live.by_class().unwrap().iter() {
            assert_eq!(
                latency.expected.len(),
                by[class].expected.len(),
                "{class:?}"
            );
            assert_eq!(
                latency.unexpected.len(),
                by[class].unexpected.len(),
                "{class:?}"
            );
        }
    }

    #[test]
    fn a_mixed_interval_stored_before_classes_were_kept_cannot_be_split() {
        let mut mixed = RequestStats::default();
        mixed.record(&sample(Outcome::Status(200), 7));
        mixed.record(&sample(Outcome::Status(503), 50));
        mixed.classes.clear();
        assert!(mixed.by_class().is_none());
        let mut total = RequestStats::default();
        total.record(&sample(Outcome::Status(200), 3));
        total.add(&mixed);
        assert!(total.by_class().is_none());
        assert_eq!(total.count, 3);
    }

    #[test]
    fn completions_per_class_come_from_codes_and_errors() {
        let mut r = RequestStats::default();
        for outcome in [
            Outcome::Status(200),
            Outcome::Status(204),
            Outcome::Status(503),
            Outcome::Error(ErrorKind::Reset),
        ] {
            r.record(&sample(outcome, 1));
        }
        assert_eq!(
            r.count_by_class().into_iter().collect::<Vec<_>>(),
            [
                (StatusClass::Success, 2),
                (StatusClass::ServerError, 1),
                (StatusClass::Failed, 1)
            ]
        );
    }

    #[test]
    fn a_sample_added_to_stats_read_back_keeps_their_classes() {
        let mut one = RequestStats::default();
        one.record(&sample(Outcome::Status(200), 5));
        one.record(&sample(Outcome::Status(200), 6));
        let mut back: RequestStats =
            serde_json::from_str(&serde_json::to_string(&one).unwrap()).unwrap();
        back.record(&sample(Outcome::Status(503), 40));
        let by = back.by_class().unwrap();
        assert_eq!(by[&StatusClass::Success].expected.len(), 2);
        assert_eq!(by[&StatusClass::ServerError].unexpected.len(), 1);

        // Completions without any status or error counts (a run stored before those were
        // kept) cannot be split, and adding a sample does not pretend they can.
        let mut old = RequestStats::default();
        old.record(&sample(Outcome::Status(200), 5));
        old.classes.clear();
        old.status.clear();
        assert!(old.by_class().is_none());
        old.record(&sample(Outcome::Status(503), 40));
        assert!(old.by_class().is_none());
    }
}
