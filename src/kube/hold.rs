//! The containers that keep a pod (and its `/runs`) after its work is done, so that
//! `kubectl cp` can read the runs, and until when they wait for `/runs/collected`.

use super::objects::{Container, Resources};
use super::security;
use super::volume::mount;
use super::RUNS_DIR;
use crate::plan::{AttackPlan, Load};
use std::time::{Duration, SystemTime};

/// How long a holder waits after the work it holds for is due to be done: time to notice the
/// test ended and copy the runs out.
pub const MARGIN: Duration = Duration::from_secs(2 * 3600);

/// When a holder stops waiting for `/runs/collected` (and the runs go with the pod).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GiveUp {
    /// At this time: the shards' `collect`, whose pods start long before the test may.
    At(SystemTime),
    /// This long after the container starts: the merge pod's `fetch`, applied after the test.
    After(Duration),
}

/// When the test is due to end: its start, its length, and a last request's timeout. A test
/// whose length is unknown (users stopping after a request count) is counted as long as a
/// start may be ahead, a day.
pub fn scheduled_end(plan: &AttackPlan, start: SystemTime) -> SystemTime {
    let length = test_length(plan).unwrap_or(crate::launch::MOST_AHEAD);
    start + length + plan.connection.timeout
}

/// How long the test sends: its duration (stages included), or its request count at its
/// rate; none for users stopping after a request count.
pub fn test_length(plan: &AttackPlan) -> Option<Duration> {
    if let Some(d) = plan.stop.duration {
        return Some(d);
    }
    match (plan.load, plan.stop.requests) {
        (Load::Open { rate }, Some(n)) if rate.0 > 0.0 => {
            Some(Duration::from_secs_f64((n as f64 / rate.0).ceil()))
        }
        _ => None,
    }
}

/// A container that keeps the pod until `/runs/collected` exists or `give_up` comes; it needs
/// a shell, `date` and tar (for `kubectl cp`).
pub(super) fn holder(image: &str, name: &str, give_up: GiveUp) -> Container {
    // `$$(` is a literal `$(` for Kubernetes, which would otherwise read a variable.
    let end = match give_up {
        GiveUp::At(at) => at
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_secs() + u64::from(d.subsec_nanos() > 0))
            .unwrap_or(0)
            .to_string(),
        GiveUp::After(d) => format!("$$(( $$(date +%s) + {} ))", d.as_secs()),
    };
    Container {
        name: name.into(),
        image: image.into(),
        image_pull_policy: Some(security::PULL_POLICY.into()),
        command: vec!["sh".into(), "-c".into()],
        args: vec![format!(
            "end={end}; until [ -e {RUNS_DIR}/collected ]; do if [ $$(date +%s) -ge $end ]; then echo \"{name}: no {RUNS_DIR}/collected by unix time $end, giving up\" >&2; exit 0; fi; sleep 2; done"
        )],
        env: Vec::new(),
        // A shell that sleeps, and tar for `kubectl cp`: a throttled holder only copies
        // more slowly, so it has a CPU limit (the generator has none).
        resources: Some(Resources {
            requests: [
                ("cpu".to_string(), "10m".to_string()),
                ("memory".to_string(), "16Mi".to_string()),
                ("ephemeral-storage".to_string(), "16Mi".to_string()),
            ]
            .into(),
            limits: [
                ("cpu".to_string(), "500m".to_string()),
                ("memory".to_string(), "64Mi".to_string()),
                ("ephemeral-storage".to_string(), "64Mi".to_string()),
            ]
            .into(),
        }),
        volume_mounts: vec![mount("runs", RUNS_DIR, false)],
        security_context: Some(security::container()),
    }
}
