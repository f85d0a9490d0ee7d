//! Kubernetes manifests for a sharded test (`headroom kube`): a ConfigMap with the scenario
//! and its files, a Secret with what must not be seen, an Indexed Job whose pod `I` runs shard
//! `I` of `N` from a common start, and a way to bring the shard runs together for
//! `headroom merge` (a shared volume and a merge Job, or `kubectl cp` from each pod).
//!
//! Nothing here talks to a cluster: the objects are typed structs ([`objects`]) written as
//! YAML by serde, one object per file, for `kubectl apply -f DIR`.

pub mod files;
pub mod objects;
pub mod sizing;
mod yaml;

use base64::Engine as _;
use objects::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Most shards a test may have: far more generators than one test needs, well under the
/// Job API's 100,000 completions.
pub const MAX_SHARDS: u32 = 1000;
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
    /// No image.
    #[error("--image is empty: give an image with headroom on its PATH")]
    Image,
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
    /// Each pod keeps its run until it is copied out with `kubectl cp` (no shared storage).
    Copy,
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
    pub start_at: SystemTime,
    /// Now (passed in, so the output is a function of its input).
    pub now: SystemTime,
    /// How runs are collected.
    pub collect: Collect,
    /// CPU per shard in millicores, instead of the bench-sized figure.
    pub cpu_milli: Option<u64>,
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
}

impl Bundle {
    /// Writes every file under `dir` (created when missing).
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        for (path, text) in &self.files {
            let path = dir.join(path);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(path, text)?;
        }
        Ok(())
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
    let start_at = humantime::format_rfc3339_seconds(spec.start_at).to_string();
    if spec.start_at <= spec.now {
        return Err(KubeError::StartInPast(start_at));
    }
    let name = match &spec.name {
        Some(n) => checked_name("--name", n, MAX_NAME)?,
        None => name_from(&spec.scenario),
    };
    if let Some(ns) = &spec.namespace {
        checked_name("--namespace", ns, 63)?;
    }
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
    let plan = doc.lower(&[], 1)?;
    let sizing = sizing::size(&plan, spec.shards, materials.data_bytes, spec.cpu_milli);

    let labels = |component: &str| -> BTreeMap<String, String> {
        [
            ("app.kubernetes.io/name", "headroom"),
            ("app.kubernetes.io/instance", name.as_str()),
            ("app.kubernetes.io/component", component),
            ("app.kubernetes.io/managed-by", "headroom-kube"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    };
    let meta = |suffix: &str, component: &str| ObjectMeta {
        name: if suffix.is_empty() {
            name.clone()
        } else {
            format!("{name}-{suffix}")
        },
        namespace: spec.namespace.clone(),
        labels: labels(component),
        annotations: BTreeMap::new(),
    };

    let mut out: Vec<(PathBuf, String)> = Vec::new();
    let yaml = |v: &dyn yaml::Yaml| v.to_yaml();

    // The ConfigMap: the scenario and every file that is not secret.
    let mut config = ConfigMap {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        metadata: meta("files", "files"),
        data: BTreeMap::new(),
        binary_data: BTreeMap::new(),
    };
    config
        .data
        .insert(files::SCENARIO_KEY.into(), materials.scenario.clone());
    for f in &materials.files {
        match std::str::from_utf8(&f.bytes) {
            Ok(text) => config.data.insert(f.key.clone(), text.to_string()),
            Err(_) => config.binary_data.insert(
                f.key.clone(),
                base64::engine::general_purpose::STANDARD.encode(&f.bytes),
            ),
        };
    }
    let config_bytes = materials.scenario.len() as u64
        + materials
            .files
            .iter()
            .map(|f| f.bytes.len() as u64)
            .sum::<u64>();
    if config_bytes > files::OBJECT_BYTES {
        return Err(KubeError::TooBig {
            object: "ConfigMap",
            what: "the scenario and its files together".into(),
            bytes: config_bytes,
        });
    }
    out.push(("10-files.yaml".into(), yaml(&config)?));

    // The Secret: key files and variables, base64 as the API keeps them.
    let secret_name = format!("{name}-secret");
    let mut secret_keys = Vec::new();
    let has_secret = !materials.secret_files.is_empty() || !materials.secret_env.is_empty();
    if has_secret {
        let mut data = BTreeMap::new();
        let encode = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
        for f in &materials.secret_files {
            data.insert(f.key.clone(), encode(&f.bytes));
        }
        for (var, value) in &materials.secret_env {
            data.insert(env_key(var), encode(value.as_bytes()));
        }
        let bytes = materials
            .secret_files
            .iter()
            .map(|f| f.bytes.len() as u64)
            .chain(materials.secret_env.iter().map(|(_, v)| v.len() as u64))
            .sum::<u64>();
        if bytes > files::OBJECT_BYTES {
            return Err(KubeError::TooBig {
                object: "Secret",
                what: "the secret files and values together".into(),
                bytes,
            });
        }
        secret_keys = data.keys().cloned().collect();
        let secret = Secret {
            api_version: "v1".into(),
            kind: "Secret".into(),
            metadata: meta("secret", "secret"),
            kind_of_secret: "Opaque".into(),
            data,
        };
        out.push(("20-secret.yaml".into(), yaml(&secret)?));
    }

    // Where the runs go.
    let claim_name = format!("{name}-runs");
    let runs_volume = match &spec.collect {
        Collect::Volume {
            storage_class,
            size,
        } => {
            let claim = PersistentVolumeClaim {
                api_version: "v1".into(),
                kind: "PersistentVolumeClaim".into(),
                metadata: meta("runs", "runs"),
                spec: PvcSpec {
                    access_modes: vec!["ReadWriteMany".into()],
                    storage_class_name: storage_class.clone(),
                    resources: VolumeResources {
                        requests: [("storage".to_string(), size.clone())].into(),
                    },
                },
            };
            out.push(("30-runs.yaml".into(), yaml(&claim)?));
            Volume {
                persistent_volume_claim: Some(ClaimVolume {
                    claim_name: claim_name.clone(),
                }),
                ..volume("runs")
            }
        }
        Collect::Copy => Volume {
            empty_dir: Some(EmptyDir {}),
            ..volume("runs")
        },
    };

    // The Job: pod I runs shard I of N.
    let run_dir = format!("{RUNS_DIR}/{name}");
    let shard_dir = |index: &str| format!("{run_dir}/shard-{index}");
    let mut volumes = vec![
        Volume {
            config_map: Some(ConfigMapVolume {
                name: format!("{name}-files"),
            }),
            ..volume("files")
        },
        runs_volume.clone(),
    ];
    let mut mounts = vec![
        mount("files", files::FILES_DIR, true),
        mount("runs", RUNS_DIR, false),
    ];
    if !materials.secret_files.is_empty() {
        volumes.push(Volume {
            secret: Some(SecretVolume {
                secret_name: secret_name.clone(),
                items: materials
                    .secret_files
                    .iter()
                    .map(|f| KeyToPath {
                        key: f.key.clone(),
                        path: f.key.clone(),
                    })
                    .collect(),
                // Readable by whatever user the image runs as (the files belong to root);
                // only this pod's containers see the volume.
                default_mode: 0o444,
            }),
            ..volume("secret")
        });
        mounts.push(mount("secret", files::SECRET_DIR, true));
    }
    let env: Vec<EnvVar> = materials
        .secret_env
        .iter()
        .map(|(var, _)| EnvVar {
            name: var.clone(),
            value: None,
            value_from: Some(EnvSource {
                secret_key_ref: KeyRef {
                    name: secret_name.clone(),
                    key: env_key(var),
                },
            }),
        })
        .collect();
    let shards = spec.shards;
    let headroom = Container {
        name: "headroom".into(),
        image: spec.image.clone(),
        command: vec!["headroom".into()],
        args: vec![
            "run".into(),
            format!("{}/{}", files::FILES_DIR, files::SCENARIO_KEY),
            "--shard".into(),
            format!("$(JOB_COMPLETION_INDEX)/{shards}"),
            "--start-at".into(),
            start_at.clone(),
            "--out".into(),
            shard_dir("$(JOB_COMPLETION_INDEX)"),
            "--quiet".into(),
            "--set".into(),
            format!("threads={}", sizing.threads),
        ],
        env,
        resources: Some(Resources {
            // No CPU limit: a throttled generator stops for the rest of a 100 ms period and
            // every request due meanwhile is late; the request reserves the cores.
            requests: [
                ("cpu".to_string(), format!("{}m", sizing.cpu_milli)),
                ("memory".to_string(), format!("{}Mi", sizing.memory_mib)),
            ]
            .into(),
            limits: [("memory".to_string(), format!("{}Mi", sizing.memory_mib * 2))].into(),
        }),
        volume_mounts: mounts,
    };
    let mut containers = vec![headroom];
    if spec.collect == Collect::Copy {
        containers.push(holder(&spec.tools_image, "collect"));
    }
    let shard_labels = labels("shard");
    let mut job_meta = meta("", "shard");
    job_meta.annotations = [
        ("headroom/start-at".to_string(), start_at.clone()),
        ("headroom/cpu-request".to_string(), sizing.cpu_note.clone()),
        (
            "headroom/memory-request".to_string(),
            sizing.memory_note.clone(),
        ),
        (
            "headroom/scenario".to_string(),
            spec.scenario.display().to_string(),
        ),
    ]
    .into();
    let job = Job {
        api_version: "batch/v1".into(),
        kind: "Job".into(),
        metadata: job_meta,
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
                spec: PodSpec {
                    restart_policy: "Never".into(),
                    init_containers: Vec::new(),
                    containers,
                    volumes,
                    topology_spread_constraints: vec![TopologySpread {
                        max_skew: 1,
                        topology_key: "kubernetes.io/hostname".into(),
                        when_unsatisfiable: "ScheduleAnyway".into(),
                        label_selector: LabelSelector {
                            match_labels: shard_labels,
                        },
                    }],
                },
            },
        },
    };
    // The sizing, said where a reader of the Job looks first (also kept as annotations).
    let header = format!(
        "# The shards of {}: pod I of this Indexed Job runs shard I of {shards}, all from {start_at}.\n# CPU request per shard: {}.\n# Memory request: {}.\n# No CPU limit: a throttled generator stops for the rest of a 100 ms CFS period and\n# every request due meanwhile goes out late.\n",
        spec.scenario.display(),
        sizing.cpu_note,
        sizing.memory_note,
    );
    out.push(("40-job.yaml".into(), header + &yaml(&job)?));

    // With a shared volume: a merge Job, applied once the shards are done, and a pod to copy
    // the merged run out of the volume.
    if let Collect::Volume { .. } = spec.collect {
        let mut merge_args = vec!["merge".to_string()];
        merge_args.extend((0..shards).map(|i| shard_dir(&i.to_string())));
        merge_args.extend(["--out".to_string(), format!("{run_dir}/merged")]);
        let runs_mount = vec![mount("runs", RUNS_DIR, false)];
        let merge = Job {
            api_version: "batch/v1".into(),
            kind: "Job".into(),
            metadata: meta("merge", "merge"),
            spec: JobSpec {
                completion_mode: None,
                completions: 1,
                parallelism: 1,
                backoff_limit: Some(0),
                backoff_limit_per_index: None,
                template: PodTemplate {
                    metadata: ObjectMeta {
                        labels: labels("merge"),
                        ..ObjectMeta::default()
                    },
                    spec: PodSpec {
                        restart_policy: "Never".into(),
                        init_containers: vec![Container {
                            name: "merge".into(),
                            image: spec.image.clone(),
                            command: vec!["headroom".into()],
                            args: merge_args,
                            env: Vec::new(),
                            resources: None,
                            volume_mounts: runs_mount.clone(),
                        }],
                        containers: vec![
                            Container {
                                name: "report".into(),
                                image: spec.image.clone(),
                                command: vec!["headroom".into()],
                                args: vec!["report".into(), format!("{run_dir}/merged")],
                                env: Vec::new(),
                                resources: None,
                                volume_mounts: runs_mount.clone(),
                            },
                            holder(&spec.tools_image, "fetch"),
                        ],
                        volumes: vec![runs_volume],
                        topology_spread_constraints: Vec::new(),
                    },
                },
            },
        };
        out.push(("merge/50-merge.yaml".into(), yaml(&merge)?));
    }

    Ok(Bundle {
        name,
        files: out,
        start_at,
        sizing,
        secret_keys,
    })
}

/// A container that keeps the pod (and its `/runs`) until `/runs/collected` exists or two
/// hours pass, so that `kubectl cp` can read the runs; it needs a shell and tar.
fn holder(image: &str, name: &str) -> Container {
    Container {
        name: name.into(),
        image: image.into(),
        command: vec!["sh".into(), "-c".into()],
        // `$$(` is a literal `$(` for Kubernetes, which would otherwise read a variable.
        args: vec![format!(
            "for i in $$(seq 3600); do [ -e {RUNS_DIR}/collected ] && exit 0; sleep 2; done"
        )],
        env: Vec::new(),
        resources: Some(Resources {
            requests: [
                ("cpu".to_string(), "10m".to_string()),
                ("memory".to_string(), "16Mi".to_string()),
            ]
            .into(),
            limits: [("memory".to_string(), "64Mi".to_string())].into(),
        }),
        volume_mounts: vec![mount("runs", RUNS_DIR, false)],
    }
}

fn volume(name: &str) -> Volume {
    Volume {
        name: name.into(),
        config_map: None,
        secret: None,
        persistent_volume_claim: None,
        empty_dir: None,
    }
}

fn mount(name: &str, path: &str, read_only: bool) -> VolumeMount {
    VolumeMount {
        name: name.into(),
        mount_path: path.into(),
        read_only,
    }
}

/// The Secret's key for a variable.
pub fn env_key(var: &str) -> String {
    format!("env.{var}")
}

/// `name` when Kubernetes takes it as a label value and an object name (DNS-1123 label).
fn checked_name(what: &'static str, name: &str, max: usize) -> Result<String, KubeError> {
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
fn name_from(scenario: &Path) -> String {
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

/// Parses `2m`-style delays and RFC 3339 times into a start.
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

    #[test]
    fn a_start_is_on_a_whole_second() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_millis(1_500);
        assert_eq!(
            start_after(now, Duration::from_secs(120)),
            SystemTime::UNIX_EPOCH + Duration::from_secs(122)
        );
    }
}
