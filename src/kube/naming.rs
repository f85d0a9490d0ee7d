//! The names and labels of one test's objects, and the paths its pods write to: every object
//! derives them from the test's name here, so they agree with each other.

use super::objects::ObjectMeta;
use super::{KubeError, MAX_NAME, RUNS_DIR};
use std::collections::BTreeMap;
use std::path::Path;

/// The test's name and namespace, from which every object's name, labels and paths follow.
#[derive(Debug, Clone)]
pub(super) struct Naming {
    /// The test's name (the Job's), a DNS-1123 label of at most [`MAX_NAME`] characters.
    pub name: String,
    /// The objects' namespace; none for kubectl's current one.
    pub namespace: Option<String>,
}

impl Naming {
    /// The labels of one of the test's objects; `component` says which part it is.
    pub fn labels(&self, component: &str) -> BTreeMap<String, String> {
        [
            ("app.kubernetes.io/name", "headroom"),
            ("app.kubernetes.io/instance", self.name.as_str()),
            ("app.kubernetes.io/component", component),
            ("app.kubernetes.io/managed-by", "headroom-kube"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    }

    /// The metadata of the object named `NAME-suffix` (`NAME` for an empty suffix).
    pub fn meta(&self, suffix: &str, component: &str) -> ObjectMeta {
        ObjectMeta {
            name: self.object(suffix),
            namespace: self.namespace.clone(),
            labels: self.labels(component),
            annotations: BTreeMap::new(),
        }
    }

    /// The name of the object `NAME-suffix`.
    pub fn object(&self, suffix: &str) -> String {
        if suffix.is_empty() {
            self.name.clone()
        } else {
            format!("{}-{suffix}", self.name)
        }
    }

    /// Where the test's runs go on the runs volume.
    pub fn run_dir(&self) -> String {
        format!("{RUNS_DIR}/{}", self.name)
    }

    /// Where shard `index` writes its run (`$(JOB_COMPLETION_INDEX)` in the Job's pods).
    pub fn shard_dir(&self, index: &str) -> String {
        format!("{}/shard-{index}", self.run_dir())
    }
}

/// `name` when Kubernetes takes it as a label value and an object name (DNS-1123 label).
pub(super) fn checked_name(
    what: &'static str,
    name: &str,
    max: usize,
) -> Result<String, KubeError> {
    let ok = !name.is_empty()
        && name.len() <= max
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    match ok {
        true => Ok(name.to_string()),
        false => Err(KubeError::Name {
            what,
            value: name.to_string(),
            max,
        }),
    }
}

/// A name from the scenario's file name: lowercase, other characters as '-', trimmed.
pub(super) fn name_from(scenario: &Path) -> String {
    let stem = scenario
        .file_stem()
        .map(|s| s.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let mut name = String::new();
    for c in stem.chars() {
        let c = if c.is_ascii_lowercase() || c.is_ascii_digit() {
            c
        } else {
            '-'
        };
        if !(c == '-' && (name.is_empty() || name.ends_with('-'))) {
            name.push(c);
        }
    }
    let name: String = name.chars().take(MAX_NAME).collect();
    match name.trim_matches('-') {
        "" => "headroom".into(),
        n => n.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_dns_labels() {
        assert_eq!(
            name_from(Path::new("dir/Seed_001 TLS.yaml")),
            "seed-001-tls"
        );
        assert_eq!(name_from(Path::new("__.yaml")), "headroom");
        assert!(checked_name("--name", "ok-1", 40).is_ok());
        for bad in ["", "-a", "a-", "A", "a_b", &"a".repeat(41)] {
            assert!(checked_name("--name", bad, 40).is_err(), "{bad}");
        }
    }
}
