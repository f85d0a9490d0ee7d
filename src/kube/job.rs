//! The Indexed Job whose pod `I` runs shard `I` of `N` from the common start, and the
//! container that keeps a pod's runs for `kubectl cp`.

use super::files::{self, Materials};
use super::hold::{holder, GiveUp};
use super::naming::Naming;
use super::objects::*;
use super::security;
use super::sizing::Sizing;
use super::volume::{mount, volume};
use super::{config::env_key, KubeError, KubeSpec, RUNS_DIR};

/// What the shards' Job is made from.
pub(super) struct ShardJob<'a> {
    /// What was asked.
    pub spec: &'a KubeSpec,
    /// Names and labels.
    pub naming: &'a Naming,
    /// The common start, RFC 3339, as every shard reads it.
    pub start_at: &'a str,
    /// When a pod's `collect` container stops waiting for the runs to be copied out.
    pub give_up: std::time::SystemTime,
    /// What a shard asks for.
    pub sizing: &'a Sizing,
    /// The files and variables the pods read.
    pub materials: &'a Materials,
    /// Where the runs go.
    pub runs: &'a Volume,
    /// The runs volume's size in MiB: in a pod's own `emptyDir` (`--collect copy`) it is
    /// the pod's ephemeral storage.
    pub runs_mib: u64,
    /// The seed every shard's Poisson arrivals are given, when the scenario has none.
    pub seed: Option<u64>,
}

impl ShardJob<'_> {
    /// The Job, its sizing said in a comment at the top, where a reader looks first (it is
    /// also kept as annotations).
    pub fn yaml(&self) -> Result<String, KubeError> {
        use super::yaml::Yaml;
        // Each line escaped: the scenario's path is the user's and may hold a line break.
        let header = crate::yaml::comment(&[
            format!(
                "The shards of {}: pod I of this Indexed Job runs shard I of {}, all from {}.",
                self.spec.scenario.display(),
                self.spec.shards,
                self.start_at,
            ),
            format!("CPU request per shard: {}.", self.sizing.cpu_note),
            format!("Memory request: {}.", self.sizing.memory_note),
            "No CPU limit: a throttled generator stops for the rest of a 100 ms CFS period and"
                .into(),
            "every request due meanwhile goes out late.".into(),
            "A shard that completes its part exits 0 even when its part missed an objective".into(),
            "(--judged-by-merge): the Job completes, and the merged run carries the verdict."
                .into(),
        ]);
        Ok(header + &self.job().to_yaml()?)
    }

    /// The Indexed Job: pod I runs shard I of N, once.
    pub fn job(&self) -> Job {
        let shards = self.spec.shards;
        let shard_labels = self.naming.labels("shard");
        let mut metadata = self.naming.meta("", "shard");
        metadata.annotations = [
            ("headroom/start-at".to_string(), self.start_at.to_string()),
            (
                "headroom/cpu-request".to_string(),
                self.sizing.cpu_note.clone(),
            ),
            (
                "headroom/memory-request".to_string(),
                self.sizing.memory_note.clone(),
            ),
            (
                "headroom/scenario".to_string(),
                self.spec.scenario.display().to_string(),
            ),
        ]
        .into();
        let mut containers = vec![self.headroom()];
        if self.spec.collect.is_copy() {
            containers.push(holder(
                &self.spec.tools_image,
                "collect",
                GiveUp::At(self.give_up),
            ));
        }
        Job {
            api_version: "batch/v1".into(),
            kind: "Job".into(),
            metadata,
            spec: JobSpec {
                completion_mode: Some("Indexed".into()),
                completions: shards,
                parallelism: shards,
                backoff_limit: None,
                // A shard run again would start late and send its part twice: each runs once.
                backoff_limit_per_index: Some(0),
                template: PodTemplate {
                    metadata: ObjectMeta {
                        labels: shard_labels.clone(),
                        ..ObjectMeta::default()
                    },
                    spec: self.pod(containers, shard_labels),
                },
            },
        }
    }

    /// The pod: its containers, volumes, spread over nodes, security and placement.
    fn pod(
        &self,
        containers: Vec<Container>,
        labels: std::collections::BTreeMap<String, String>,
    ) -> PodSpec {
        let mut pod = PodSpec {
            restart_policy: "Never".into(),
            init_containers: Vec::new(),
            containers,
            volumes: self.volumes(),
            topology_spread_constraints: vec![TopologySpread {
                max_skew: 1,
                topology_key: "kubernetes.io/hostname".into(),
                when_unsatisfiable: "ScheduleAnyway".into(),
                label_selector: LabelSelector {
                    match_labels: labels,
                },
            }],
            security_context: Some(security::pod()),
            ..PodSpec::default()
        };
        self.spec.placement.apply(&mut pod);
        pod
    }

    /// The shard's container: `headroom run` of its part, from the common start.
    fn headroom(&self) -> Container {
        let sizing = self.sizing;
        let mut mounts = vec![
            mount("files", files::FILES_DIR, true),
            mount("runs", RUNS_DIR, false),
            security::tmp_mount(),
        ];
        if !self.materials.secret_files.is_empty() {
            mounts.push(mount("secret", files::SECRET_DIR, true));
        }
        let env = self
            .materials
            .secret_env
            .iter()
            .map(|(var, _)| EnvVar {
                name: var.clone(),
                value: None,
                value_from: Some(EnvSource {
                    secret_key_ref: KeyRef {
                        name: self.naming.object("secret"),
                        key: env_key(var),
                    },
                }),
            })
            .collect();
        let mut args = vec![
            "run".into(),
            format!("{}/{}", files::FILES_DIR, files::SCENARIO_KEY),
            "--shard".into(),
            format!("$(JOB_COMPLETION_INDEX)/{}", self.spec.shards),
            "--start-at".into(),
            self.start_at.to_string(),
            "--out".into(),
            self.naming.shard_dir("$(JOB_COMPLETION_INDEX)"),
            "--quiet".into(),
            // A part's objectives are not the test's: its merge judges them, and the Job
            // completes (so `kubectl wait` ends) whatever the verdict.
            "--judged-by-merge".into(),
            "--set".into(),
            format!("threads={}", sizing.threads),
        ];
        if let Some(seed) = self.seed {
            args.extend(["--set".into(), format!("load.seed={seed}")]);
        }
        // The runs in the pod's own emptyDir count as its ephemeral storage.
        let disk = security::SCRATCH_MIB
            + if self.spec.collect.is_copy() {
                self.runs_mib
            } else {
                0
            };
        Container {
            name: "headroom".into(),
            image: self.spec.image.clone(),
            image_pull_policy: Some(security::PULL_POLICY.into()),
            command: vec!["headroom".into()],
            args,
            env,
            resources: Some(Resources {
                // No CPU limit: a throttled generator stops for the rest of a 100 ms period
                // and every request due meanwhile is late; the request reserves the cores.
                requests: [
                    ("cpu".to_string(), format!("{}m", sizing.cpu_milli)),
                    ("memory".to_string(), format!("{}Mi", sizing.memory_mib)),
                    ("ephemeral-storage".to_string(), format!("{disk}Mi")),
                ]
                .into(),
                limits: [
                    (
                        "memory".to_string(),
                        format!("{}Mi", sizing.memory_limit_mib),
                    ),
                    ("ephemeral-storage".to_string(), format!("{disk}Mi")),
                ]
                .into(),
            }),
            volume_mounts: mounts,
            security_context: Some(security::container()),
        }
    }

    /// The pod's volumes: the files, the runs, and the secret files when there are any.
    fn volumes(&self) -> Vec<Volume> {
        let mut volumes = vec![
            Volume {
                config_map: Some(ConfigMapVolume {
                    name: self.naming.object("files"),
                }),
                ..volume("files")
            },
            self.runs.clone(),
            security::tmp_volume(),
        ];
        if !self.materials.secret_files.is_empty() {
            volumes.push(Volume {
                secret: Some(SecretVolume {
                    secret_name: self.naming.object("secret"),
                    items: self
                        .materials
                        .secret_files
                        .iter()
                        .map(|f| KeyToPath {
                            key: f.key.clone(),
                            path: f.key.clone(),
                        })
                        .collect(),
                    // Readable by the pod's group (fsGroup, which the kubelet gives the
                    // files) and by no one else on the node.
                    default_mode: 0o440,
                }),
                ..volume("secret")
            });
        }
        volumes
    }
}
