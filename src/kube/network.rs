//! The test's NetworkPolicy: nothing may connect to its pods (a generator serves nothing;
//! `kubectl cp`, `exec` and `logs` go through the kubelet, not the pod's network), and the
//! pods may connect anywhere (the target, its instances and DNS are the scenario's, not
//! known here). Applied with the Job, it holds every pod of the test by its instance label.

use super::naming::Naming;
use super::objects::{LabelSelector, NetworkPolicy, NetworkPolicyRule, NetworkPolicySpec};

/// The NetworkPolicy `NAME-network`.
pub(super) fn policy(naming: &Naming) -> NetworkPolicy {
    NetworkPolicy {
        api_version: "networking.k8s.io/v1".into(),
        kind: "NetworkPolicy".into(),
        metadata: naming.meta("network", "network"),
        spec: NetworkPolicySpec {
            pod_selector: LabelSelector {
                match_labels: naming
                    .labels("")
                    .into_iter()
                    .filter(|(k, _)| {
                        k == "app.kubernetes.io/name" || k == "app.kubernetes.io/instance"
                    })
                    .collect(),
            },
            policy_types: vec!["Ingress".into(), "Egress".into()],
            ingress: Vec::new(),
            egress: vec![NetworkPolicyRule::default()],
        },
    }
}
