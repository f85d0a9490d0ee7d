//! Where a test's pods may run and what they run as, as the cluster asks: node labels
//! (`--node-selector`), taints tolerated (`--toleration`), registry credentials
//! (`--image-pull-secret`) and a service account (`--service-account`). Each is read and
//! checked here, with Kubernetes' own rules, so that a typo is one line before anything is
//! written rather than a pod that never schedules.

use super::objects::{LocalObjectReference, PodSpec, Toleration};
use std::collections::BTreeMap;
use std::str::FromStr;

/// The placement of every pod of a test (the shards' and the merge's alike).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Placement {
    /// Labels a node must have.
    pub node_selector: Vec<NodeLabel>,
    /// Taints tolerated.
    pub tolerations: Vec<Toleration>,
    /// Secrets with the registries' credentials.
    pub image_pull_secrets: Vec<ObjectName>,
    /// The service account; none for the namespace's `default`.
    pub service_account: Option<ObjectName>,
}

impl Placement {
    /// Sets the placement on `pod`.
    pub(super) fn apply(&self, pod: &mut PodSpec) {
        pod.node_selector = self
            .node_selector
            .iter()
            .map(|l| (l.key.clone(), l.value.clone()))
            .collect::<BTreeMap<_, _>>();
        pod.tolerations = self.tolerations.clone();
        pod.image_pull_secrets = self
            .image_pull_secrets
            .iter()
            .map(|s| LocalObjectReference { name: s.0.clone() })
            .collect();
        pod.service_account_name = self.service_account.as_ref().map(|s| s.0.clone());
        // headroom never calls the API server: its pods need no token, whatever account.
        pod.automount_service_account_token = Some(false);
    }
}

/// A placement option that Kubernetes would refuse.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PlacementError {
    /// A node label that is not `KEY=VALUE`.
    #[error("{0:?} is not KEY=VALUE (a node label, e.g. kubernetes.io/arch=amd64)")]
    NotKeyValue(String),
    /// A label key or toleration key Kubernetes refuses.
    #[error("{0:?} is not a label key: an optional DNS prefix and '/', then at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit")]
    Key(String),
    /// A label value Kubernetes refuses.
    #[error("{0:?} is not a label value: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit")]
    Value(String),
    /// A taint effect that is not one of Kubernetes' three.
    #[error("{0:?} is not a taint effect: give NoSchedule, PreferNoSchedule or NoExecute (KEY[=VALUE][:EFFECT], as kubectl taint writes it)")]
    Effect(String),
    /// A Secret's or service account's name Kubernetes refuses.
    #[error("{0:?} is not an object name: at most 253 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit")]
    Name(String),
}

/// A node label the pods' nodes must have (`KEY=VALUE`).
#[derive(Debug, Clone, PartialEq)]
pub struct NodeLabel {
    /// The label's key.
    pub key: String,
    /// Its value.
    pub value: String,
}

impl FromStr for NodeLabel {
    type Err = PlacementError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (key, value) = s
            .split_once('=')
            .ok_or_else(|| PlacementError::NotKeyValue(s.to_string()))?;
        Ok(NodeLabel {
            key: label_key(key)?,
            value: label_value(value)?,
        })
    }
}

/// A toleration as `kubectl taint` writes the taint: `KEY=VALUE:EFFECT` (that taint),
/// `KEY:EFFECT` (the key with any value), `KEY=VALUE` or `KEY` (every effect).
pub fn toleration(s: &str) -> Result<Toleration, PlacementError> {
    let (taint, effect) = match s.rsplit_once(':') {
        Some((taint, effect)) => (taint, Some(effect)),
        None => (s, None),
    };
    let effect = match effect {
        None => None,
        Some(e @ ("NoSchedule" | "PreferNoSchedule" | "NoExecute")) => Some(e.to_string()),
        Some(e) => return Err(PlacementError::Effect(e.to_string())),
    };
    let (key, value) = match taint.split_once('=') {
        Some((k, v)) => (label_key(k)?, Some(label_value(v)?)),
        None => (label_key(taint)?, None),
    };
    Ok(Toleration {
        key,
        operator: if value.is_some() { "Equal" } else { "Exists" }.into(),
        value,
        effect,
    })
}

/// The name of a Secret or a service account (a DNS-1123 subdomain).
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectName(pub String);

impl FromStr for ObjectName {
    type Err = PlacementError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let ok = !s.is_empty()
            && s.len() <= 253
            && s.split('.').all(|part| {
                !part.is_empty()
                    && part
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                    && !part.starts_with('-')
                    && !part.ends_with('-')
            });
        match ok {
            true => Ok(ObjectName(s.to_string())),
            false => Err(PlacementError::Name(s.to_string())),
        }
    }
}

/// A label's name part, or a value when not empty: Kubernetes' "qualified name" characters.
fn label_word(s: &str) -> bool {
    let alnum = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    s.len() <= 63
        && alnum(s.chars().next())
        && alnum(s.chars().last())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

fn label_key(s: &str) -> Result<String, PlacementError> {
    let (prefix, name) = match s.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, s),
    };
    let prefix_ok = prefix.is_none_or(|p| ObjectName::from_str(p).is_ok());
    match prefix_ok && label_word(name) {
        true => Ok(s.to_string()),
        false => Err(PlacementError::Key(s.to_string())),
    }
}

fn label_value(s: &str) -> Result<String, PlacementError> {
    match s.is_empty() || label_word(s) {
        true => Ok(s.to_string()),
        false => Err(PlacementError::Value(s.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerations_read_as_kubectl_taint_writes_them() {
        let t = toleration("dedicated=load:NoSchedule").unwrap();
        assert_eq!(
            (
                t.key.as_str(),
                t.operator.as_str(),
                t.value.as_deref(),
                t.effect.as_deref()
            ),
            ("dedicated", "Equal", Some("load"), Some("NoSchedule"))
        );
        let t = toleration("example.com/gpu:NoExecute").unwrap();
        assert_eq!((t.operator.as_str(), t.value), ("Exists", None));
        let t = toleration("spot").unwrap();
        assert_eq!((t.operator.as_str(), t.effect), ("Exists", None));
        for (bad, says) in [
            ("a=b:Never", "not a taint effect"),
            ("-a:NoSchedule", "not a label key"),
            ("a=b c", "not a label value"),
            ("", "not a label key"),
        ] {
            let e = toleration(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn node_labels_and_names_are_checked() {
        let l: NodeLabel = "kubernetes.io/arch=amd64".parse().unwrap();
        assert_eq!(
            (l.key.as_str(), l.value.as_str()),
            ("kubernetes.io/arch", "amd64")
        );
        assert!(
            "pool=".parse::<NodeLabel>().is_ok(),
            "an empty value is a value"
        );
        for bad in ["pool", "Bad Key=x", "k=-v"] {
            assert!(bad.parse::<NodeLabel>().is_err(), "{bad}");
        }
        assert!("regcred".parse::<ObjectName>().is_ok());
        assert!("ci.load-runner".parse::<ObjectName>().is_ok());
        for bad in ["", "RegCred", "a..b", "-a", &"a".repeat(254)] {
            assert!(bad.parse::<ObjectName>().is_err(), "{bad}");
        }
    }
}
