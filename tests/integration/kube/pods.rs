//! The pods' command run here from files laid out as the mounts would be, one process and
//! the Job's N.

use super::*;

/// A pod of the Job, laid out here: the ConfigMap's and the Secret's files written where the
/// volumes would mount them (under `root`), and the variables the Secret gives.
pub(super) struct LocalPod {
    /// The shard container's arguments, paths under `root` (the scenario's is the second).
    pub args: Vec<String>,
    /// Its environment, values read from the Secret.
    pub env: Vec<(String, String)>,
}

/// Writes `bytes` as the kubelet does a ConfigMap's or a Secret's key: into `..data/` and
/// linked from the mount by its name.
fn write_key(dir: &Path, key: &str, bytes: &[u8]) {
    std::fs::create_dir_all(dir.join("..data")).unwrap();
    std::fs::write(dir.join("..data").join(key), bytes).unwrap();
    std::os::unix::fs::symlink(Path::new("..data").join(key), dir.join(key)).unwrap();
}

/// Lays out the pod of the manifests in `manifests` under `root`.
pub(super) fn lay_out(manifests: &Path, root: &Path) -> LocalPod {
    let read = |name: &str| std::fs::read_to_string(manifests.join(name)).unwrap();
    let config: ConfigMap = yaml_serde::from_str(&read("10-files.yaml")).unwrap();
    let job: Job = yaml_serde::from_str(&read("40-job.yaml")).unwrap();
    let secret: Option<Secret> = manifests
        .join("20-secret.yaml")
        .exists()
        .then(|| yaml_serde::from_str(&read("20-secret.yaml")).unwrap());
    let pod = &job.spec.template.spec;
    let container = &pod.containers[0];
    let local = |path: &str| format!("{}{path}", root.display());
    for m in &container.volume_mounts {
        let dir = PathBuf::from(local(&m.mount_path));
        std::fs::create_dir_all(&dir).unwrap();
        let volume = pod.volumes.iter().find(|v| v.name == m.name).unwrap();
        if volume.config_map.is_some() {
            for (k, v) in &config.data {
                // The scenario names its files at the mounts: here they are under `root`.
                let text = v
                    .replace("/headroom/files/", &local("/headroom/files/"))
                    .replace("/headroom/secret/", &local("/headroom/secret/"));
                write_key(&dir, k, text.as_bytes());
            }
            for (k, v) in &config.binary_data {
                write_key(&dir, k, &decode(v));
            }
        }
        if let Some(s) = &volume.secret {
            for item in &s.items {
                let data = &secret.as_ref().unwrap().data[&item.key];
                write_key(&dir, &item.path, &decode(data));
            }
        }
    }
    let env = container
        .env
        .iter()
        .map(|e| {
            let value = match (&e.value, &e.value_from) {
                (Some(v), _) => v.clone(),
                (None, Some(from)) => String::from_utf8(decode(
                    &secret.as_ref().unwrap().data[&from.secret_key_ref.key],
                ))
                .unwrap(),
                _ => String::new(),
            };
            (e.name.clone(), value)
        })
        .collect();
    let args = container
        .args
        .iter()
        .map(|a| match a.strip_prefix('/') {
            Some(_) => local(a),
            None => a.clone(),
        })
        .collect();
    LocalPod { args, env }
}

/// Kubernetes' `$(VAR)` in an argument, for the variables the Job controller sets.
pub(super) fn expand(arg: &str, index: u32) -> String {
    arg.replace("$(JOB_COMPLETION_INDEX)", &index.to_string())
}

fn local_manifests(shards: u32, url: &str, start_in: Duration, dir: &Path) {
    let mut s = spec("tests/kube/local.yaml", shards, volume());
    s.now = SystemTime::now();
    s.start = Start::In(start_in);
    s.namespace = None;
    // The built-in target on loopback: here, the pods' processes run beside it.
    s.allow_local_target = true;
    let url = url.to_string();
    let bundle = kube::build(&s, &|name| (name == "KUBE_TARGET_URL").then(|| url.clone())).unwrap();
    bundle.write(dir).unwrap();
}

pub(super) fn requests_of(run: &Path) -> serde_json::Value {
    let out = crate::support::headroom(&["report", run.to_str().unwrap(), "--format", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The pod's command, from its mounts laid out here, runs the test as the scenario says: the
/// moved secret and the variable come back from the Secret, the files from their mounts.
/// (One process, its shard and start arguments left out: the test below runs them.)
#[test]
fn the_pod_command_runs_from_its_mounts() {
    let target = crate::support::start_target(Duration::ZERO);
    let url = format!("http://{}", target.addr());
    let tmp = tempfile::tempdir().unwrap();
    let manifests = tmp.path().join("manifests");
    local_manifests(1, &url, Duration::from_secs(60), &manifests);
    let pod = lay_out(&manifests, &tmp.path().join("pod"));
    assert!(pod
        .env
        .iter()
        .any(|(k, v)| k == "KUBE_TARGET_URL" && *v == url));
    assert!(pod.env.iter().any(|(_, v)| v == "Bearer local-secret-3141"));
    let mut args = Vec::new();
    let mut it = pod.args.iter();
    while let Some(a) = it.next() {
        if a == "--shard" || a == "--start-at" {
            it.next();
            continue;
        }
        args.push(expand(a, 0));
    }
    // The scenario as the pod reads it lowers to the plan of the scenario as written.
    let check = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(["run", &args[1], "--check"])
        .envs(pod.env.iter().cloned())
        .output()
        .unwrap();
    let original = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(["run", "tests/kube/local.yaml", "--check"])
        .env("KUBE_TARGET_URL", &url)
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
    let strip = |o: &[u8]| {
        String::from_utf8_lossy(o)
            .lines()
            .filter(|l| !l.contains("local.yaml") && !l.contains("scenario.yaml"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&check.stdout), strip(&original.stdout));
    let out = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(&args)
        .envs(pod.env.iter().cloned())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = tmp.path().join("pod/runs/local/shard-0");
    let summary = requests_of(&run);
    assert_eq!(summary["requests"]["total"], 400, "{summary}");
    target.stop();
}

/// What the Job does, on this machine: N processes, each with its `JOB_COMPLETION_INDEX`,
/// from one start, against one target; then the merge Job's command over their runs.
#[test]
fn the_job_runs_here_as_n_processes() {
    const N: u32 = 3;
    let target = crate::support::start_target(Duration::ZERO);
    let url = format!("http://{}", target.addr());
    let tmp = tempfile::tempdir().unwrap();
    let manifests = tmp.path().join("manifests");
    local_manifests(N, &url, Duration::from_secs(3), &manifests);
    let mut children = Vec::new();
    for i in 0..N {
        // Each pod has its own mounts (the runs volume is shared).
        let pod = lay_out(&manifests, &tmp.path().join(format!("pod-{i}")));
        let args: Vec<String> = pod
            .args
            .iter()
            .map(|a| expand(a, i).replace(&format!("/pod-{i}/runs"), "/runs"))
            .collect();
        children.push(
            Command::new(env!("CARGO_BIN_EXE_headroom"))
                .args(&args)
                .envs(pod.env.iter().cloned())
                .env("JOB_COMPLETION_INDEX", i.to_string())
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap(),
        );
    }
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let merge: Job = yaml_serde::from_str(
        &std::fs::read_to_string(manifests.join("merge/50-merge.yaml")).unwrap(),
    )
    .unwrap();
    let runs = tmp.path().join("runs").display().to_string();
    let args: Vec<String> = merge.spec.template.spec.init_containers[0]
        .args
        .iter()
        .map(|a| a.replace("/runs", &runs))
        .collect();
    let out = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(&args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut total = 0;
    for i in 0..N {
        total += requests_of(&tmp.path().join(format!("runs/local/shard-{i}")))["requests"]
            ["total"]
            .as_u64()
            .unwrap();
    }
    assert_eq!(total, 400);
    let merged = requests_of(&tmp.path().join("runs/local/merged"));
    assert_eq!(merged["requests"]["total"], 400);
    target.stop();
}
