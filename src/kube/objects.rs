//! The few Kubernetes objects `headroom kube` writes, as typed serde structs: the fields it
//! sets and nothing else, named as the Kubernetes API names them (camelCase), so the YAML is
//! made by serde and read back by the tests with the same types.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Name, namespace and labels of an object.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMeta {
    /// The object's name (DNS-1123); a pod template has none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Its namespace; none means kubectl's current one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Labels (`app.kubernetes.io/*`), the same on every object of one test.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Annotations: what a reader of the object should know (where sizes come from).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// A ConfigMap: the scenario and the files it reads that are not secret.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigMap {
    /// `v1`.
    pub api_version: String,
    /// `ConfigMap`.
    pub kind: String,
    /// Name and labels.
    pub metadata: ObjectMeta,
    /// Text files by key.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub data: BTreeMap<String, String>,
    /// Binary files by key, base64.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub binary_data: BTreeMap<String, String>,
}

/// A Secret: client keys, secret-bearing data files and the values of secret variables.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Secret {
    /// `v1`.
    pub api_version: String,
    /// `Secret`.
    pub kind: String,
    /// Name and labels.
    pub metadata: ObjectMeta,
    /// `Opaque`.
    #[serde(rename = "type")]
    pub kind_of_secret: String,
    /// Values by key, base64.
    pub data: BTreeMap<String, String>,
}

/// A PersistentVolumeClaim: the shared volume the shards write their runs to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PersistentVolumeClaim {
    /// `v1`.
    pub api_version: String,
    /// `PersistentVolumeClaim`.
    pub kind: String,
    /// Name and labels.
    pub metadata: ObjectMeta,
    /// Access mode, size and class.
    pub spec: PvcSpec,
}

/// What a claim asks for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PvcSpec {
    /// `ReadWriteMany`: every shard's pod mounts it at once, on whichever node.
    pub access_modes: Vec<String>,
    /// The storage class; none means the cluster's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_class_name: Option<String>,
    /// Its size.
    pub resources: VolumeResources,
}

/// A claim's size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VolumeResources {
    /// `storage: 1Gi`.
    pub requests: BTreeMap<String, String>,
}

/// A Job (`batch/v1`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Job {
    /// `batch/v1`.
    pub api_version: String,
    /// `Job`.
    pub kind: String,
    /// Name, labels, and the sizing notes as annotations.
    pub metadata: ObjectMeta,
    /// Completions, parallelism, mode and the pod.
    pub spec: JobSpec,
}

/// How a Job runs its pods.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobSpec {
    /// `Indexed`: each pod gets its index in `JOB_COMPLETION_INDEX`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_mode: Option<String>,
    /// How many pods must succeed.
    pub completions: u32,
    /// How many run at once.
    pub parallelism: u32,
    /// Retries over the whole Job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_limit: Option<u32>,
    /// Retries per index (Indexed Jobs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_limit_per_index: Option<u32>,
    /// The pod each index runs.
    pub template: PodTemplate,
}

/// A pod template.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PodTemplate {
    /// Labels of the pods.
    pub metadata: ObjectMeta,
    /// The pod.
    pub spec: PodSpec,
}

/// A pod.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodSpec {
    /// `Never`: a shard that stops is not started again (it would start late).
    pub restart_policy: String,
    /// Containers run to completion before the others (the merge before the report).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub init_containers: Vec<Container>,
    /// The containers.
    pub containers: Vec<Container>,
    /// Volumes the containers mount.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volumes: Vec<Volume>,
    /// Spread shards over nodes: one shard per node where there are enough nodes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub topology_spread_constraints: Vec<TopologySpread>,
    /// Who the pod's processes run as, and the seccomp profile they run under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_context: Option<PodSecurityContext>,
    /// The service account the pod runs as; none for the namespace's `default`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account_name: Option<String>,
    /// Whether the service account's API token is mounted (headroom never calls the API).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub automount_service_account_token: Option<bool>,
    /// Secrets holding the credentials of the registries the images come from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub image_pull_secrets: Vec<LocalObjectReference>,
    /// Labels a node must have to run the pod.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<String, String>,
    /// Taints the pod tolerates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<Toleration>,
}

/// The security settings of a whole pod (Pod Security "restricted" asks for them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodSecurityContext {
    /// Refuse to start a container whose user is root.
    pub run_as_non_root: bool,
    /// The user id of every container's process.
    pub run_as_user: u32,
    /// Its primary group id.
    pub run_as_group: u32,
    /// The group that owns the volumes' files, so that the user may read and write them.
    pub fs_group: u32,
    /// The seccomp profile.
    pub seccomp_profile: SeccompProfile,
}

/// The security settings of one container.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecurityContext {
    /// No process gains more privileges than its parent (no setuid).
    pub allow_privilege_escalation: bool,
    /// Capabilities dropped and added.
    pub capabilities: Capabilities,
    /// The image's file system cannot be written: what is written goes to volumes.
    pub read_only_root_filesystem: bool,
    /// Refuse to start as root.
    pub run_as_non_root: bool,
    /// The user id.
    pub run_as_user: u32,
    /// The group id.
    pub run_as_group: u32,
    /// The seccomp profile.
    pub seccomp_profile: SeccompProfile,
}

/// Linux capabilities of a container.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Capabilities {
    /// Dropped (`ALL`).
    pub drop: Vec<String>,
}

/// A seccomp profile by type (`RuntimeDefault`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeccompProfile {
    /// `RuntimeDefault`: the container runtime's default filter.
    #[serde(rename = "type")]
    pub kind: String,
}

/// An object of the pod's namespace, by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LocalObjectReference {
    /// Its name.
    pub name: String,
}

/// A taint the pod tolerates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Toleration {
    /// The taint's key.
    pub key: String,
    /// `Equal` (key and value) or `Exists` (the key, any value).
    pub operator: String,
    /// The taint's value, with `Equal`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The taint's effect; none tolerates every effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<String>,
}

/// Spread pods with these labels over a topology key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TopologySpread {
    /// Most pods more on one node than on another.
    pub max_skew: u32,
    /// `kubernetes.io/hostname`.
    pub topology_key: String,
    /// `ScheduleAnyway`: fewer nodes than shards still runs.
    pub when_unsatisfiable: String,
    /// Which pods count.
    pub label_selector: LabelSelector,
}

/// Pods by labels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelector {
    /// Labels a pod must have.
    pub match_labels: BTreeMap<String, String>,
}

/// A container.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Container {
    /// Its name in the pod.
    pub name: String,
    /// Its image.
    pub image: String,
    /// When the kubelet pulls the image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pull_policy: Option<String>,
    /// The program.
    pub command: Vec<String>,
    /// Its arguments; `$(VAR)` is the container's environment variable VAR.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Environment variables.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<EnvVar>,
    /// CPU and memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Resources>,
    /// Where volumes are mounted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volume_mounts: Vec<VolumeMount>,
    /// Privileges, user and file system.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_context: Option<SecurityContext>,
}

/// An environment variable: a value, or a key of a Secret.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EnvVar {
    /// Its name.
    pub name: String,
    /// A value written here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// A value read from a Secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_from: Option<EnvSource>,
}

/// Where a variable's value is read from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EnvSource {
    /// A Secret's key.
    pub secret_key_ref: KeyRef,
}

/// A key of a named object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeyRef {
    /// The object.
    pub name: String,
    /// The key.
    pub key: String,
}

/// Requests and limits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resources {
    /// What the scheduler reserves: `cpu`, `memory`.
    pub requests: BTreeMap<String, String>,
    /// Most the container may use.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub limits: BTreeMap<String, String>,
}

/// A volume mounted into a container.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VolumeMount {
    /// The volume.
    pub name: String,
    /// Where.
    pub mount_path: String,
    /// Read-only (the files and the secret).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub read_only: bool,
}

/// A volume of a pod: one of a ConfigMap, a Secret, a claim or an empty directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Volume {
    /// Its name in the pod.
    pub name: String,
    /// A ConfigMap's keys as files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map: Option<ConfigMapVolume>,
    /// A Secret's keys as files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<SecretVolume>,
    /// A claim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistent_volume_claim: Option<ClaimVolume>,
    /// A directory that lives as long as the pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub empty_dir: Option<EmptyDir>,
}

/// A ConfigMap mounted as a directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigMapVolume {
    /// The ConfigMap.
    pub name: String,
}

/// Some keys of a Secret mounted as files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretVolume {
    /// The Secret.
    pub secret_name: String,
    /// Which keys, at which file names (the variables' keys are left out).
    pub items: Vec<KeyToPath>,
    /// File mode of the keys' files.
    pub default_mode: u32,
}

/// A key as a file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeyToPath {
    /// The key.
    pub key: String,
    /// The file name.
    pub path: String,
}

/// A claim mounted in a pod.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimVolume {
    /// The claim.
    pub claim_name: String,
}

/// An empty directory.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmptyDir {
    /// Most it may hold (a quantity, `1Gi`); past it the pod is evicted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_limit: Option<String>,
}

/// A NetworkPolicy: what may reach the test's pods, and where they may go.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkPolicy {
    /// `networking.k8s.io/v1`.
    pub api_version: String,
    /// `NetworkPolicy`.
    pub kind: String,
    /// Name and labels.
    pub metadata: ObjectMeta,
    /// The pods and their rules.
    pub spec: NetworkPolicySpec,
}

/// Which pods a NetworkPolicy holds, and what it lets through.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkPolicySpec {
    /// The pods.
    pub pod_selector: LabelSelector,
    /// `Ingress`, `Egress`: the directions the rules below govern.
    pub policy_types: Vec<String>,
    /// Connections let in; empty lets none in.
    pub ingress: Vec<NetworkPolicyRule>,
    /// Connections let out; a rule with no peers lets every one out.
    pub egress: Vec<NetworkPolicyRule>,
}

/// A NetworkPolicy rule; with no peers and no ports it matches every connection.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NetworkPolicyRule {}
