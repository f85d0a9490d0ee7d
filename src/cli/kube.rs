//! `headroom kube`: Kubernetes manifests that run a scenario as N shards of one test.

use headroom::kube::objects::Toleration;
use headroom::kube::placement::{self, NodeLabel, ObjectName, Placement};
use headroom::kube::{self, Collect, KubeSpec, Start};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

/// Arguments of `headroom kube`.
#[derive(Debug, clap::Args)]
pub struct KubeArgs {
    /// The scenario file; it and the files it names go into a ConfigMap (secrets into a Secret).
    pub scenario: PathBuf,
    /// How many generators (pods of an Indexed Job) share the load.
    #[arg(long, value_name = "N")]
    pub shards: u32,
    /// Directory the manifests are written to (for `kubectl apply --server-side -f DIR`).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Image with headroom on its PATH.
    #[arg(long, value_name = "IMAGE")]
    pub image: String,
    /// The test's name: the Job's, and its objects' prefix (default: the scenario's file name).
    #[arg(long)]
    pub name: Option<String>,
    /// Namespace of every object (default: kubectl's current one).
    #[arg(long, value_name = "NS")]
    pub namespace: Option<String>,
    /// Shards start this long after the manifests are written: apply them before then.
    #[arg(long, value_name = "DURATION", value_parser = super::positive_duration, default_value = "2m", conflicts_with = "start_at")]
    pub start_in: Duration,
    /// Shards start at this time instead, as `run --start-at` takes it: RFC 3339 with its
    /// zone (2026-11-25T04:00:00Z, or +01:00) or unix seconds, within the next 24 hours.
    #[arg(long, value_name = "TIME")]
    pub start_at: Option<String>,
    /// How shard runs are collected: each pod holds its run for `kubectl cp` (nothing asked
    /// of the cluster), or a shared ReadWriteMany volume and a merge Job.
    #[arg(long, value_enum, default_value = "copy")]
    pub collect: CollectChoice,
    /// Storage class of the shared volume (default: the cluster's default class).
    #[arg(long, value_name = "CLASS")]
    pub storage_class: Option<String>,
    /// Size of the runs' volume: the shared claim (volume), or each pod's own emptyDir (copy).
    #[arg(long, value_name = "SIZE", default_value = "1Gi")]
    pub volume_size: String,
    /// CPU per shard in cores (e.g. 1.5), instead of the figure sized from the bench.
    #[arg(long, value_name = "CORES", value_parser = cores)]
    pub cpu: Option<u64>,
    /// Image with a shell and tar, for the containers that hold runs for `kubectl cp`.
    #[arg(long, value_name = "IMAGE", default_value = "busybox:1.36")]
    pub tools_image: String,
    /// Run only on nodes with this label, KEY=VALUE (repeatable).
    #[arg(long, value_name = "KEY=VALUE")]
    pub node_selector: Vec<NodeLabel>,
    /// Tolerate a taint, as kubectl taint writes it: KEY=VALUE:EFFECT, KEY:EFFECT, or KEY for
    /// every value and effect (repeatable).
    #[arg(long, value_name = "TAINT", value_parser = toleration)]
    pub toleration: Vec<Toleration>,
    /// A Secret with the credentials of the images' registry (repeatable).
    #[arg(long, value_name = "SECRET")]
    pub image_pull_secret: Vec<ObjectName>,
    /// The service account the pods run as (default: the namespace's); its token is not
    /// mounted either way, headroom never calls the API.
    #[arg(long, value_name = "NAME")]
    pub service_account: Option<ObjectName>,
    /// Write manifests for a loopback or link-local target (localhost, 127.0.0.0/8, ::1,
    /// 169.254.0.0/16, fe80::/10), which inside a pod is the pod itself: only for a server
    /// that runs in the pod (a sidecar added by hand).
    #[arg(long)]
    pub allow_local_target: bool,
}

fn toleration(s: &str) -> Result<Toleration, placement::PlacementError> {
    placement::toleration(s)
}

/// How shard runs are brought together.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum CollectChoice {
    /// Each pod keeps its run until copied out with `kubectl cp`.
    Copy,
    /// A ReadWriteMany volume all shards write to, and a merge Job.
    Volume,
}

fn cores(s: &str) -> Result<u64, String> {
    match s.trim().parse::<f64>() {
        Ok(c) if c.is_finite() && (0.01..=1024.0).contains(&c) => Ok((c * 1000.0).round() as u64),
        _ => Err("give cores between 0.01 and 1024, e.g. 1.5".into()),
    }
}

/// Runs `headroom kube`.
pub fn run(args: KubeArgs) -> anyhow::Result<ExitCode> {
    if matches!(args.collect, CollectChoice::Copy) && args.storage_class.is_some() {
        anyhow::bail!("--storage-class is for a shared volume: add --collect volume (the default, --collect copy, needs no storage class)");
    }
    let now = SystemTime::now();
    let spec = KubeSpec {
        scenario: args.scenario.clone(),
        shards: args.shards,
        image: args.image,
        tools_image: args.tools_image,
        name: args.name,
        namespace: args.namespace.clone(),
        start: match args.start_at {
            Some(text) => Start::At(text),
            None => Start::In(args.start_in),
        },
        now,
        collect: match args.collect {
            CollectChoice::Volume => Collect::Volume {
                storage_class: args.storage_class,
                size: args.volume_size,
            },
            CollectChoice::Copy => Collect::Copy {
                size: args.volume_size,
            },
        },
        cpu_milli: args.cpu,
        seed: headroom::plan::fresh_seed(),
        placement: Placement {
            node_selector: args.node_selector,
            tolerations: args.toleration,
            image_pull_secrets: args.image_pull_secret,
            service_account: args.service_account,
        },
        allow_local_target: args.allow_local_target,
    };
    let bundle = kube::build(&spec, &|name| std::env::var(name).ok())?;
    let removed = bundle.write(&args.out)?;
    let out = args.out.display().to_string();
    println!(
        "{} shards of {}, starting at {} (apply before then)",
        args.shards,
        args.scenario.display(),
        bundle.start_at
    );
    let threads = bundle.sizing.threads;
    println!(
        "each shard asks for {}m CPU and {} MiB ({threads} engine thread{})",
        bundle.sizing.cpu_milli,
        bundle.sizing.memory_mib,
        if threads == 1 { "" } else { "s" }
    );
    if !bundle.secret_keys.is_empty() {
        println!(
            "the Secret {}-secret holds: {}",
            bundle.name,
            bundle.secret_keys.join(", ")
        );
    }
    if !removed.is_empty() {
        let names: Vec<String> = removed.iter().map(|p| p.display().to_string()).collect();
        println!(
            "removed from {out}, which this write does not make: {}",
            names.join(", ")
        );
    }
    if let Some(at) = bundle.give_up {
        println!(
            "each pod keeps its run until it is copied out, or until {} (two hours after the test's scheduled end)",
            humantime::format_rfc3339_seconds(at)
        );
    }
    println!();
    for line in bundle.steps(&out).lines() {
        println!("  {line}");
    }
    Ok(ExitCode::SUCCESS)
}
