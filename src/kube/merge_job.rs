//! The merge Job (with a shared volume): applied once the shards are done, it merges their
//! runs, prints the whole test's report, and keeps a pod to copy the merged run out from.

use super::hold::{holder, GiveUp, MARGIN};
use super::naming::Naming;
use super::objects::*;
use super::volume::mount;
use super::{KubeSpec, RUNS_DIR};

/// The Job `NAME-merge`: `headroom merge` of every shard's run as an init container,
/// `headroom report` of the merged run after it, and a `fetch` container holding the pod.
pub(super) fn merge_job(spec: &KubeSpec, naming: &Naming, runs: &Volume) -> Job {
    let merged = format!("{}/merged", naming.run_dir());
    let mut merge_args = vec!["merge".to_string()];
    merge_args.extend((0..spec.shards).map(|i| naming.shard_dir(&i.to_string())));
    merge_args.extend(["--out".to_string(), merged.clone()]);
    let runs_mount = vec![mount("runs", RUNS_DIR, false)];
    let headroom = |name: &str, args: Vec<String>| Container {
        name: name.into(),
        image: spec.image.clone(),
        command: vec!["headroom".into()],
        args,
        env: Vec::new(),
        resources: None,
        volume_mounts: runs_mount.clone(),
    };
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
                spec: PodSpec {
                    restart_policy: "Never".into(),
                    // The merge runs to its end before the report reads what it wrote.
                    init_containers: vec![headroom("merge", merge_args)],
                    containers: vec![
                        headroom("report", vec!["report".into(), merged]),
                        holder(&spec.tools_image, "fetch", GiveUp::After(MARGIN)),
                    ],
                    volumes: vec![runs.clone()],
                    topology_spread_constraints: Vec::new(),
                },
            },
        },
    }
}
