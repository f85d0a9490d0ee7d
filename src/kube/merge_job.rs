//! The merge Job (with a shared volume): applied once the shards are done, it merges their
//! runs, prints the whole test's report, and keeps a pod to copy the merged run out from.

use super::hold::{holder, GiveUp, MARGIN};
use super::naming::Naming;
use super::objects::*;
use super::security;
use super::volume::mount;
use super::{KubeSpec, RUNS_DIR};

/// The Job `NAME-merge`: `headroom merge` of every shard's run as an init container,
/// `headroom report` of the merged run after it, and a `fetch` container holding the pod.
pub(super) fn merge_job(spec: &KubeSpec, naming: &Naming, runs: &Volume) -> Job {
    let merged = format!("{}/merged", naming.run_dir());
    let mut merge_args = vec!["merge".to_string()];
    merge_args.extend((0..spec.shards).map(|i| naming.shard_dir(&i.to_string())));
    merge_args.extend(["--out".to_string(), merged.clone()]);
    let mounts = vec![mount("runs", RUNS_DIR, false), security::tmp_mount()];
    let headroom = |name: &str, args: Vec<String>| Container {
        name: name.into(),
        image: spec.image.clone(),
        image_pull_policy: Some(security::PULL_POLICY.into()),
        command: vec!["headroom".into()],
        args,
        resources: Some(merge_resources()),
        volume_mounts: mounts.clone(),
        security_context: Some(security::container()),
        ..Container::default()
    };
    let mut pod = PodSpec {
        restart_policy: "Never".into(),
        // The merge runs to its end before the report reads what it wrote.
        init_containers: vec![headroom("merge", merge_args)],
        containers: vec![
            headroom("report", vec!["report".into(), merged]),
            holder(&spec.tools_image, "fetch", GiveUp::After(MARGIN)),
        ],
        volumes: vec![runs.clone(), security::tmp_volume()],
        security_context: Some(security::pod()),
        ..PodSpec::default()
    };
    spec.placement.apply(&mut pod);
    Job {
        api_version: "batch/v1".into(),
        kind: "Job".into(),
        metadata: naming.meta("merge", "merge"),
        spec: JobSpec {
            completion_mode: None,
            completions: 1,
            parallelism: 1,
            backoff_limit: Some(0),
            backoff_limit_per_index: None,
            template: PodTemplate {
                metadata: ObjectMeta {
                    labels: naming.labels("merge"),
                    ..ObjectMeta::default()
                },
                spec: pod,
            },
        },
    }
}

/// What the merge and the report ask for: measured, merging 4 shards of 20 s (release build)
/// took 10.4 MiB and reporting the merged run 9.1 MiB, in well under a second; the request
/// leaves room for long tests and many shards, and a CPU limit only slows them.
fn merge_resources() -> Resources {
    Resources {
        requests: [
            ("cpu".to_string(), "100m".to_string()),
            ("memory".to_string(), format!("{}Mi", MERGE_MEMORY_MIB)),
            (
                "ephemeral-storage".to_string(),
                format!("{}Mi", security::SCRATCH_MIB),
            ),
        ]
        .into(),
        limits: [
            ("cpu".to_string(), "1".to_string()),
            ("memory".to_string(), format!("{}Mi", MERGE_MEMORY_MIB * 4)),
            (
                "ephemeral-storage".to_string(),
                format!("{}Mi", security::SCRATCH_MIB),
            ),
        ]
        .into(),
    }
}

/// Memory request of the merge and the report, in MiB (limit four times it).
const MERGE_MEMORY_MIB: u64 = 128;
