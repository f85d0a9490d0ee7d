//! Kubernetes manifests for a sharded test (`headroom kube`): a ConfigMap with the scenario
//! and its files, a Secret with what must not be seen, an Indexed Job whose pod `I` runs shard
//! `I` of `N` from a common start, and a way to bring the shard runs together for
//! `headroom merge` (a shared volume and a merge Job, or `kubectl cp` from each pod).
//!
//! Nothing here talks to a cluster: the objects are typed structs ([`objects`]) written as
//! YAML by serde, one object per file, for `kubectl apply -f DIR`.
//!
//! Layout: [`build`] reads the scenario and assembles the objects, each made in a file of its
//! own: `config` (the ConfigMap and the Secret, from what [`files`] gathers, the secret
//! values written in the scenario moved out by `secret_values`), `volume` (where the runs
//! go), `network` (the NetworkPolicy), `job` (the shards' Indexed Job), `merge_job` (the
//! merge Job); `naming` gives them their names and labels, [`sizing`] their CPU and memory,
//! [`security`] the Pod Security "restricted" settings every pod runs under, [`placement`]
//! the nodes, taints, registry credentials and account asked for, [`hold`] how long a pod
//! keeps its runs for `kubectl cp`, `yaml` writes them (with [`crate::yaml`]), [`output`]
//! writes the files over an earlier write, and [`steps`] says what to run next.
//! [`local_target`] refuses a target that inside a pod would be the pod itself.

mod config;
pub mod files;
pub mod hold;
mod job;
pub mod local_target;
mod merge_job;
mod naming;
mod network;
pub mod objects;
pub mod output;
pub mod placement;
mod secret_values;
pub mod security;
pub mod sizing;
pub mod steps;
mod volume;
mod yaml;

pub use config::env_key;
use naming::Naming;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};
use yaml::Yaml as _;

/// Most shards a test may have: the plan's own limit, which a Job holds (an Indexed Job
/// takes up to 100,000 completions, and the merge Job's 10,000 run paths come to some
/// 680 KB, within the API server's 1.5 MiB an object).
pub use crate::plan::shard::MAX_SHARDS;
/// Most characters of a test's name: its objects add `-files`, `-secret`, `-merge`, and the
/// Job's pods `-<index>-xxxxx`, under the 63 of a label value.
pub const MAX_NAME: usize = 40;
/// Where the shards write their runs.
pub const RUNS_DIR: &str = "/runs";

/// A manifest that cannot be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KubeError {
    /// The scenario does not load.
    #[error(transparent)]
    Scenario(#[from] crate::plan::scenario::ScenarioError),
    /// A matrix runs several plans; a Job runs one.
    #[error("the scenario has a matrix: section (several tests); headroom kube shards one test: write a scenario per variant")]
    Matrix,
    /// A file the scenario names cannot be read.
    #[error("{field} names {}, which cannot be read: {reason}", path.display())]
    File {
        /// The scenario's field.
        field: String,
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The scenario itself cannot be read.
    #[error("cannot read the scenario {}: {reason}", path.display())]
    Unreadable {
        /// The scenario.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// More than an object holds.
    #[error("{what} is {bytes} bytes, more than the 1 MiB a {object} holds: use a generated data set (data.NAME.generate), or split the file (see docs/distributed.md, \"Bigger files\")")]
    TooBig {
        /// Which object.
        object: &'static str,
        /// Which file, or which object's files together.
        what: String,
        /// How many bytes.
        bytes: u64,
    },
    /// The scenario text cannot be read or written back as YAML.
    #[error("the scenario cannot be rewritten for the pods: {0}")]
    Yaml(String),
    /// A test the shards cannot run: too large for this many, or too small to split.
    #[error("{} cannot run as {}: {reason}", scenario.display(), crate::units::plural(shards, "shard"))]
    Sharding {
        /// The scenario.
        scenario: PathBuf,
        /// How many shards were asked.
        shards: u32,
        /// What the plan says, with what to change.
        reason: String,
    },
    /// Shard count out of range.
    #[error("--shards {0} is out of range: give 1 to {MAX_SHARDS}")]
    Shards(u32),
    /// A name Kubernetes refuses.
    #[error("{what} {value:?} is not a Kubernetes name: use at most {max} lowercase letters, digits and '-', starting and ending with a letter or digit")]
    Name {
        /// `--name` or `--namespace`.
        what: &'static str,
        /// As given.
        value: String,
        /// Most characters.
        max: usize,
    },
    /// A start before the manifests are even written.
    #[error("the start time {0} is in the past: give a later --start-at, or --start-in")]
    StartInPast(String),
    /// A `--start-at` a shard would refuse (no zone, more than a day ahead, an hour past).
    #[error(transparent)]
    Start(#[from] crate::launch::StartError),
    /// A `--start-in` further ahead than a shard waits.
    #[error(
        "--start-in {0} is more than a day ahead, which every shard would refuse; give at most 24h"
    )]
    StartInTooFar(String),
    /// No image.
    #[error("--image is empty: give an image with headroom on its PATH")]
    Image,
    /// A target that inside a pod is the pod (or its link), not the host meant.
    #[error("the target host {host} is {}: inside a pod that is {}, not this machine; give the address the pods reach the service at (a Service's DNS name, a node's or a load balancer's address), or --allow-local-target when the server runs in the pod itself", kind_words(*.kind).0, kind_words(*.kind).1)]
    LocalTarget {
        /// The host as written (of the target, or of one of its instances).
        host: String,
        /// What it is in a pod.
        kind: local_target::Local,
    },
    /// A volume size Kubernetes would refuse.
    #[error("--volume-size {0:?} is not a size: give a number with Mi, Gi or Ti (e.g. 1Gi), at least 1Mi")]
    Size(String),
    /// A file of headroom's naming in the output directory that headroom did not write.
    #[error("{} is not a manifest headroom kube wrote, and would be applied with the new ones: move it away, or give another --out", path.display())]
    Foreign {
        /// The file.
        path: PathBuf,
    },
    /// The output directory cannot be written.
    #[error("cannot write {}: {reason}", path.display())]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

/// What a local host is, and what it is inside a pod, in the error's words.
fn kind_words(kind: local_target::Local) -> (&'static str, &'static str) {
    match kind {
        local_target::Local::Loopback => ("a loopback address", "the pod itself"),
        local_target::Local::LinkLocal => (
            "a link-local address",
            "the pod's own link (or the node's metadata service)",
        ),
        local_target::Local::Unspecified => ("an unspecified address", "the pod itself"),
    }
}

/// How the shard runs are brought together.
#[derive(Debug, Clone, PartialEq)]
pub enum Collect {
    /// A ReadWriteMany claim every shard writes to, and a merge Job (in `merge/`).
    Volume {
        /// Storage class; none for the cluster's default.
        storage_class: Option<String>,
        /// Size, e.g. `1Gi`.
        size: String,
    },
    /// Each pod keeps its run in an `emptyDir` of its own until it is copied out with
    /// `kubectl cp`: nothing asked of the cluster (the default).
    Copy {
        /// Most the `emptyDir` holds, e.g. `1Gi`.
        size: String,
    },
}

impl Collect {
    /// The runs volume's size, as given.
    pub fn size(&self) -> &str {
        match self {
            Collect::Volume { size, .. } | Collect::Copy { size } => size,
        }
    }

    /// Whether each pod keeps its own run for `kubectl cp`.
    pub fn is_copy(&self) -> bool {
        matches!(self, Collect::Copy { .. })
    }
}

/// When the shards start, as asked.
#[derive(Debug, Clone, PartialEq)]
pub enum Start {
    /// This long after now, rounded up to a whole second (`--start-in`).
    In(Duration),
    /// At this time, as `--start-at` of a shard reads it: RFC 3339 with its zone, or unix
    /// seconds.
    At(String),
}

/// What `headroom kube` is asked to write.
#[derive(Debug, Clone)]
pub struct KubeSpec {
    /// The scenario file.
    pub scenario: PathBuf,
    /// How many shards (pods).
    pub shards: u32,
    /// The image with `headroom` on its PATH.
    pub image: String,
    /// An image with a shell and tar, for the pods that hold runs for `kubectl cp`.
    pub tools_image: String,
    /// The test's name; default: the scenario file's name.
    pub name: Option<String>,
    /// Namespace; none for kubectl's current one.
    pub namespace: Option<String>,
    /// When every shard starts.
    pub start: Start,
    /// Now (passed in, so the output is a function of its input).
    pub now: SystemTime,
    /// How runs are collected.
    pub collect: Collect,
    /// CPU per shard in millicores, instead of the bench-sized figure.
    pub cpu_milli: Option<u64>,
    /// The seed of Poisson arrivals when the scenario gives none (passed in, as `now` is):
    /// every shard must walk one schedule, so each is given it.
    pub seed: u64,
    /// The nodes, taints, registry credentials and service account of every pod.
    pub placement: placement::Placement,
    /// Write manifests for a loopback or link-local target (a server in the pod itself).
    pub allow_local_target: bool,
}

/// The manifests, ready to be written: paths relative to the output directory.
#[derive(Debug)]
pub struct Bundle {
    /// The test's name (the Job's).
    pub name: String,
    /// (path under the output directory, YAML text).
    pub files: Vec<(PathBuf, String)>,
    /// The common start, RFC 3339.
    pub start_at: String,
    /// What a shard asks for.
    pub sizing: sizing::Sizing,
    /// Names of the Secret's keys (never their values).
    pub secret_keys: Vec<String>,
    /// The objects' namespace; none for kubectl's current one.
    pub namespace: Option<String>,
    /// How many shards.
    pub shards: u32,
    /// When each pod's `collect` container gives up waiting for its run to be copied out
    /// (`--collect copy`); none with a shared volume.
    pub give_up: Option<SystemTime>,
    /// From now to the latest the shards may end: the test's scheduled end, a shard starting
    /// up to an hour late.
    pub wait: Duration,
}

impl Bundle {
    /// What to run next, for the manifests written to `out`.
    pub fn steps(&self, out: &str) -> String {
        steps::Steps {
            name: &self.name,
            namespace: self.namespace.as_deref(),
            out,
            shards: self.shards,
            copy: self.give_up.is_some(),
            wait: self.wait,
        }
        .commands()
    }

    /// Writes every file under `dir` (created when missing), removing what an earlier write
    /// left there that this one does not make ([`output::write`]); returns the files removed.
    pub fn write(&self, dir: &Path) -> Result<Vec<PathBuf>, KubeError> {
        output::write(dir, &self.files)
    }
}

/// Builds the manifests for `spec`, reading `${VARIABLES}` with `lookup`.
pub fn build(
    spec: &KubeSpec,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Bundle, KubeError> {
    if spec.shards == 0 || spec.shards > MAX_SHARDS {
        return Err(KubeError::Shards(spec.shards));
    }
    if spec.image.trim().is_empty() {
        return Err(KubeError::Image);
    }
    let (start, start_at) = start_time(&spec.start, spec.now)?;
    let naming = Naming {
        name: match &spec.name {
            Some(n) => naming::checked_name("--name", n, MAX_NAME)?,
            None => naming::name_from(&spec.scenario),
        },
        namespace: match &spec.namespace {
            Some(ns) => Some(naming::checked_name("--namespace", ns, 63)?),
            None => None,
        },
    };
    let runs_mib = volume::size_mib(spec.collect.size())?;
    let (mut plan, materials) = read_scenario(spec, lookup)?;
    if !spec.allow_local_target {
        refuse_local(&plan)?;
    }
    // Poisson arrivals without a seed: the shards are all given this one.
    let seed = (!plan.arrivals.is_even() && plan.arrivals.seed().is_none()).then_some(spec.seed);
    plan.arrivals = plan.arrivals.seeded(|| spec.seed);
    let sizing = sizing::size(&plan, spec.shards, materials.data_bytes, spec.cpu_milli);
    // Checked as the pods will check it (their `--set threads=` included), so that what is
    // written runs, and what would not is refused here rather than in every pod.
    plan.threads = sizing.threads as usize;
    crate::launch::check_shards(&plan, spec.shards).map_err(|e| KubeError::Sharding {
        scenario: spec.scenario.clone(),
        shards: spec.shards,
        reason: e.to_string(),
    })?;

    let mut out: Vec<(PathBuf, String)> = Vec::new();
    out.push((
        output::FILES.into(),
        config::config_map(&naming, &materials)?.to_yaml()?,
    ));
    let secret = config::secret(&naming, &materials)?;
    if let Some(secret) = &secret {
        out.push((output::SECRET.into(), secret.to_yaml()?));
    }
    let runs = volume::runs(&naming, &spec.collect);
    if let Some(claim) = &runs.claim {
        out.push((output::RUNS.into(), claim.to_yaml()?));
    }
    out.push((output::NETWORK.into(), network::policy(&naming).to_yaml()?));
    let end = hold::scheduled_end(&plan, start);
    let give_up = end + hold::MARGIN;
    let shards = job::ShardJob {
        spec,
        naming: &naming,
        start_at: &start_at,
        give_up,
        sizing: &sizing,
        materials: &materials,
        runs: &runs.volume,
        runs_mib,
        seed,
    };
    out.push((output::JOB.into(), shards.yaml()?));
    if let Collect::Volume { .. } = spec.collect {
        let merge = merge_job::merge_job(spec, &naming, &runs.volume);
        out.push((output::MERGE.into(), merge.to_yaml()?));
    }

    Ok(Bundle {
        namespace: naming.namespace.clone(),
        shards: spec.shards,
        give_up: spec.collect.is_copy().then_some(give_up),
        wait: end.duration_since(spec.now).unwrap_or_default() + crate::launch::MOST_LATE,
        name: naming.name,
        files: out,
        start_at,
        sizing,
        secret_keys: secret
            .map(|s| s.data.into_keys().collect())
            .unwrap_or_default(),
    })
}

/// Refuses a target (or an instance) that inside a pod is the pod or its link.
fn refuse_local(plan: &crate::plan::AttackPlan) -> Result<(), KubeError> {
    for target in std::iter::once(&plan.target).chain(&plan.instances) {
        if let Some(kind) = local_target::local(&target.host) {
            return Err(KubeError::LocalTarget {
                host: target.host.clone(),
                kind,
            });
        }
    }
    Ok(())
}

/// The scenario read as the pods will read it: lowered to its plan, and the files and
/// secret values it needs gathered.
fn read_scenario(
    spec: &KubeSpec,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<(crate::plan::AttackPlan, files::Materials), KubeError> {
    // The scenario goes into the ConfigMap whole: past 1 MiB it cannot, so it is not read.
    if let Ok(m) = std::fs::metadata(&spec.scenario) {
        if m.len() > files::OBJECT_BYTES {
            return Err(KubeError::TooBig {
                object: "ConfigMap",
                what: format!("the scenario {}", spec.scenario.display()),
                bytes: m.len(),
            });
        }
    }
    let doc = crate::plan::scenario::Document::parse(
        std::fs::read_to_string(&spec.scenario).map_err(|e| KubeError::Unreadable {
            path: spec.scenario.clone(),
            reason: e.to_string(),
        })?,
        &spec.scenario,
        lookup,
    )?;
    if doc.matrix().is_some() {
        return Err(KubeError::Matrix);
    }
    // Files first: their sizes are checked before a data set is loaded whole.
    let materials = files::gather(&spec.scenario, lookup)?;
    // Lowered for the most shards there may be: whether this many can run it is checked
    // apart, with an error that names the shards.
    let plan = doc.lower_for(&[], 1, crate::plan::shard::MAX_SHARDS)?;
    Ok((plan, materials))
}

/// The common start as every shard is given it (RFC 3339), checked as the shards will
/// check it and refused when it is already past.
fn start_time(start: &Start, now: SystemTime) -> Result<(SystemTime, String), KubeError> {
    let at = match start {
        Start::In(delay) => {
            let at = start_after(now, *delay);
            if at
                .duration_since(now)
                .is_ok_and(|ahead| ahead > crate::launch::MOST_AHEAD)
            {
                return Err(KubeError::StartInTooFar(
                    humantime::format_duration(*delay).to_string(),
                ));
            }
            at
        }
        // The shards' own reading, so that what they would refuse is refused here.
        Start::At(text) => crate::launch::parse_start_at(text, now)?,
    };
    let whole = at
        .duration_since(SystemTime::UNIX_EPOCH)
        .is_ok_and(|d| d.subsec_nanos() == 0);
    // A fraction of a second asked for is kept: every shard must read the same instant.
    let text = match whole {
        true => humantime::format_rfc3339_seconds(at).to_string(),
        false => humantime::format_rfc3339_nanos(at).to_string(),
    };
    if at <= now {
        return Err(KubeError::StartInPast(text));
    }
    Ok((at, text))
}

/// The start `delay` after `now`, rounded up to a whole second.
pub fn start_after(now: SystemTime, delay: Duration) -> SystemTime {
    // Whole seconds: every shard reads the same instant from the same text.
    let at = now + delay;
    let secs = at
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs() + u64::from(d.subsec_nanos() > 0))
        .unwrap_or(0);
    SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_start_is_on_a_whole_second() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_millis(1_500);
        assert_eq!(
            start_after(now, Duration::from_secs(120)),
            SystemTime::UNIX_EPOCH + Duration::from_secs(122)
        );
    }
}
