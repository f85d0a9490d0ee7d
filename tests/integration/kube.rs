//! `headroom kube`: the manifests against golden files, their invariants read back with the
//! same types, the pods' command run here from files laid out as the mounts would be, and
//! bad input. No cluster is started or faked: what a cluster adds (scheduling, mounting, the
//! Job controller's `JOB_COMPLETION_INDEX`) is done by hand, as the manifests ask for it.
//!
//! Set UPDATE_GOLDEN=1 to rewrite the golden files after an intended change.

use headroom::kube::objects::{ConfigMap, Job, Secret};
use headroom::kube::{self, Collect, KubeSpec, Start};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

const SHOP: &str = "tests/kube/shop.yaml";
/// The values secret in tests/kube/shop.yaml and its files: none may be in the ConfigMap.
const SHOP_SECRETS: &[&str] = &[
    "CLIENT-KEY-SECRET-5521",
    "literal-bearer-4411",
    "tok-env-7788",
    "pw-ann-0001",
    "pw-bob-0002",
    "pw-cat-0003",
    "pw-hal-0008",
    "json-secret-9090",
    "7731",
];

fn shop_env(name: &str) -> Option<String> {
    (name == "API_TOKEN").then(|| "tok-env-7788".to_string())
}

fn at(rfc3339: &str) -> SystemTime {
    humantime::parse_rfc3339(rfc3339).unwrap()
}

fn spec(scenario: &str, shards: u32, collect: Collect) -> KubeSpec {
    KubeSpec {
        scenario: scenario.into(),
        shards,
        image: "registry.example/headroom:0.1.0".into(),
        tools_image: "busybox:1.36".into(),
        name: None,
        namespace: Some("load".into()),
        start: Start::At("2099-01-01T00:02:00Z".into()),
        now: at("2099-01-01T00:00:00Z"),
        collect,
        cpu_milli: None,
    }
}

fn volume() -> Collect {
    Collect::Volume {
        storage_class: Some("nfs".into()),
        size: "2Gi".into(),
    }
}

fn files_of(bundle: &kube::Bundle) -> BTreeMap<String, String> {
    bundle
        .files
        .iter()
        .map(|(p, t)| (p.display().to_string(), t.clone()))
        .collect()
}

#[test]
fn manifests_match_their_golden_files() {
    for (mode, collect) in [("volume", volume()), ("copy", Collect::Copy)] {
        let bundle = kube::build(&spec(SHOP, 4, collect), &shop_env).unwrap();
        let dir = Path::new("tests/golden/kube").join(mode);
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            let _ = std::fs::remove_dir_all(&dir);
            bundle.write(&dir).unwrap();
        }
        let mut golden = Vec::new();
        for entry in walk(&dir) {
            golden.push(entry.strip_prefix(&dir).unwrap().display().to_string());
        }
        golden.sort();
        let files = files_of(&bundle);
        assert_eq!(
            files.keys().cloned().collect::<Vec<_>>(),
            golden,
            "{mode}: the files written differ from the golden ones (UPDATE_GOLDEN=1 to accept)"
        );
        for (path, text) in files {
            let want = std::fs::read_to_string(dir.join(&path)).unwrap();
            assert_eq!(
                text, want,
                "{mode}/{path} differs from its golden file (UPDATE_GOLDEN=1 to accept)"
            );
        }
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)
        .unwrap_or_else(|_| panic!("{} missing: run with UPDATE_GOLDEN=1", dir.display()))
    {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

fn parse<T: serde::de::DeserializeOwned>(files: &BTreeMap<String, String>, name: &str) -> T {
    yaml_serde::from_str(&files[name]).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn decode(b64: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap()
}

#[test]
fn manifests_hold_their_invariants() {
    for n in [1, 3, 7] {
        let bundle = kube::build(&spec(SHOP, n, volume()), &shop_env).unwrap();
        let files = files_of(&bundle);
        let config: ConfigMap = parse(&files, "10-files.yaml");
        let secret: Secret = parse(&files, "20-secret.yaml");
        let job: Job = parse(&files, "40-job.yaml");
        let merge: Job = parse(&files, "merge/50-merge.yaml");

        // An Indexed Job of N pods at once, each run once.
        assert_eq!(job.spec.completion_mode.as_deref(), Some("Indexed"));
        assert_eq!(job.spec.completions, n);
        assert_eq!(job.spec.parallelism, n);
        assert_eq!(job.spec.backoff_limit_per_index, Some(0));
        assert_eq!(job.spec.template.spec.restart_policy, "Never");
        let pod = &job.spec.template.spec;
        let shard = &pod.containers[0];
        let args = shard.args.join(" ");
        assert!(
            args.contains(&format!("--shard $(JOB_COMPLETION_INDEX)/{n}")),
            "{args}"
        );
        assert!(args.contains("--start-at 2099-01-01T00:02:00Z"), "{args}");
        assert!(
            args.contains("--out /runs/shop/shard-$(JOB_COMPLETION_INDEX)"),
            "{args}"
        );
        // The merge reads every shard's run and nothing else.
        let merge_args = &merge.spec.template.spec.init_containers[0].args;
        for i in 0..n {
            assert!(merge_args.contains(&format!("/runs/shop/shard-{i}")));
        }
        assert!(!merge_args.contains(&format!("/runs/shop/shard-{n}")));

        // Labels: the same instance everywhere, and the pods' selector matches the pods.
        for labels in [
            &config.metadata.labels,
            &secret.metadata.labels,
            &job.metadata.labels,
            &merge.metadata.labels,
        ] {
            assert_eq!(labels["app.kubernetes.io/instance"], "shop");
            assert_eq!(labels["app.kubernetes.io/name"], "headroom");
        }
        let spread = &pod.topology_spread_constraints[0]
            .label_selector
            .match_labels;
        assert!(spread
            .iter()
            .all(|(k, v)| job.spec.template.metadata.labels.get(k) == Some(v)));

        // The Secret holds the key, the secret data set and the secret values; the ConfigMap
        // holds none of their bytes, plain or base64.
        let key = std::fs::read("tests/kube/certs/client.key").unwrap();
        assert_eq!(decode(&secret.data["client.key"]), key);
        assert_eq!(
            decode(&secret.data["accounts.jsonl"]),
            std::fs::read("tests/kube/data/accounts.jsonl").unwrap()
        );
        let config_text = &files["10-files.yaml"];
        for s in SHOP_SECRETS {
            assert!(!config_text.contains(s), "{s} is in the ConfigMap");
            let b64 = {
                use base64::Engine as _;
                base64::engine::general_purpose::STANDARD.encode(s)
            };
            assert!(!config_text.contains(&b64));
        }
        for (k, v) in &config.binary_data {
            let bytes = decode(v);
            for s in SHOP_SECRETS {
                assert!(!String::from_utf8_lossy(&bytes).contains(s), "{s} in {k}");
            }
        }
        let in_secret: String = secret
            .data
            .values()
            .map(|v| String::from_utf8_lossy(&decode(v)).into_owned())
            .collect();
        for s in SHOP_SECRETS {
            assert!(in_secret.contains(s), "{s} is not in the Secret");
        }
        // Nothing but the test's names is printed about the Secret.
        assert!(bundle
            .secret_keys
            .iter()
            .all(|k| !SHOP_SECRETS.iter().any(|s| k.contains(s))));

        // Every file the scenario names is mounted where the scenario looks for it.
        let scenario: yaml_serde::Value =
            yaml_serde::from_str(&config.data["scenario.yaml"]).unwrap();
        let named = [
            &scenario["target"]["tls"]["ca"],
            &scenario["target"]["tls"]["cert"],
            &scenario["target"]["tls"]["key"],
            &scenario["requests"][1]["body_file"],
            &scenario["data"]["items"]["csv"],
            &scenario["data"]["accounts"]["jsonl"],
        ];
        for path in named {
            let path = path.as_str().expect("a path");
            let (dir, file) = path.rsplit_once('/').unwrap();
            let mount = shard
                .volume_mounts
                .iter()
                .find(|m| m.mount_path == dir)
                .unwrap_or_else(|| panic!("{path}: nothing is mounted at {dir}"));
            let volume = pod.volumes.iter().find(|v| v.name == mount.name).unwrap();
            let present = match (&volume.config_map, &volume.secret) {
                (Some(c), None) => {
                    c.name == config.metadata.name
                        && (config.data.contains_key(file) || config.binary_data.contains_key(file))
                }
                (None, Some(s)) => {
                    s.secret_name == secret.metadata.name
                        && s.items
                            .iter()
                            .any(|i| i.path == file && secret.data.contains_key(&i.key))
                }
                _ => false,
            };
            assert!(present, "{path} is not in the volume mounted at {dir}");
        }
        // Every variable the scenario reads without a default comes from the Secret.
        let text = &config.data["scenario.yaml"];
        let mut rest = text.as_str();
        while let Some(i) = rest.find("${") {
            let inner = &rest[i + 2..rest[i..].find('}').unwrap() + i];
            rest = &rest[i + 2..];
            if inner.contains(":-") {
                continue;
            }
            let var = shard
                .env
                .iter()
                .find(|e| e.name == inner)
                .unwrap_or_else(|| panic!("${{{inner}}} has no variable in the pod"));
            let key = &var.value_from.as_ref().unwrap().secret_key_ref;
            assert_eq!(key.name, secret.metadata.name);
            assert!(secret.data.contains_key(&key.key));
        }
    }
}

/// A pod of the Job, laid out here: the ConfigMap's and the Secret's files written where the
/// volumes would mount them (under `root`), and the variables the Secret gives.
struct LocalPod {
    args: Vec<String>,
    env: Vec<(String, String)>,
}

/// Writes `bytes` as the kubelet does a ConfigMap's or a Secret's key: into `..data/` and
/// linked from the mount by its name.
fn write_key(dir: &Path, key: &str, bytes: &[u8]) {
    std::fs::create_dir_all(dir.join("..data")).unwrap();
    std::fs::write(dir.join("..data").join(key), bytes).unwrap();
    std::os::unix::fs::symlink(Path::new("..data").join(key), dir.join(key)).unwrap();
}

fn lay_out(manifests: &Path, root: &Path) -> LocalPod {
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
fn expand(arg: &str, index: u32) -> String {
    arg.replace("$(JOB_COMPLETION_INDEX)", &index.to_string())
}

fn local_manifests(shards: u32, url: &str, start_in: Duration, dir: &Path) {
    let mut s = spec("tests/kube/local.yaml", shards, volume());
    s.now = SystemTime::now();
    s.start = Start::In(start_in);
    s.namespace = None;
    let url = url.to_string();
    let bundle = kube::build(&s, &|name| (name == "KUBE_TARGET_URL").then(|| url.clone())).unwrap();
    bundle.write(dir).unwrap();
}

fn requests_of(run: &Path) -> serde_json::Value {
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

/// A scenario of one request to a closed port, with `load`, in `dir`.
fn scenario_with_load(dir: &Path, name: &str, load: &str) -> String {
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!("target: {{url: 'http://127.0.0.1:9/'}}\nrequests: [{{name: get, path: /}}]\nload: {load}\n"),
    )
    .unwrap();
    path.display().to_string()
}

/// The test is checked as its N shards will run it: a load more than one generator offers
/// is written for shards that offer it together, and refused, in one line saying what to
/// change, for too few; a test too small to split over N is refused the same way.
#[test]
fn a_load_is_checked_as_its_shards_run_it() {
    let tmp = tempfile::tempdir().unwrap();
    // One generator runs 100,000 users and paces 10,000,000 req/s.
    let users = scenario_with_load(tmp.path(), "users.yaml", "{users: 150000, duration: 10s}");
    let rate = scenario_with_load(tmp.path(), "rate.yaml", "{rate: 15000000, duration: 10s}");
    for scenario in [&users, &rate] {
        let bundle = kube::build(&spec(scenario, 2, volume()), &shop_env)
            .unwrap_or_else(|e| panic!("{scenario} over 2 shards: {e}"));
        let job: Job = parse(&files_of(&bundle), "40-job.yaml");
        assert_eq!(job.spec.completions, 2);
        // However many cores the rate asks for, no more engine threads than a run takes.
        let args = job.spec.template.spec.containers[0].args.join(" ");
        assert!(bundle.sizing.threads <= headroom::plan::MAX_THREADS as u64);
        assert!(
            args.contains(&format!("--set threads={}", bundle.sizing.threads)),
            "{args}"
        );
    }
    // As many shards as a sharded run may have: a Job holds them.
    let most = kube::build(&spec(&rate, kube::MAX_SHARDS, volume()), &shop_env).unwrap();
    let merge: Job = parse(&files_of(&most), "merge/50-merge.yaml");
    let merge_args = &merge.spec.template.spec.init_containers[0].args;
    assert_eq!(
        merge_args.len(),
        kube::MAX_SHARDS as usize + 3,
        "merge, the runs, --out DIR"
    );
    let few = scenario_with_load(tmp.path(), "few.yaml", "{users: 3, duration: 10s}");
    let count = scenario_with_load(tmp.path(), "count.yaml", "{rate: 10, requests: 3}");
    for (scenario, shards, says) in [
        (&users, 1, "users.yaml cannot run as 1 shard: --concurrency 150000 is above the 100000 users one generator runs"),
        (&rate, 1, "rate.yaml cannot run as 1 shard: --rate 15000000 is above"),
        (&few, 4, "few.yaml cannot run as 4 shards: 3 user(s) cannot be split over 4 shards"),
        (&count, 4, "count.yaml cannot run as 4 shards: a count of 3 requests cannot be split over 4 shards"),
    ] {
        let e = error_of(&spec(scenario, shards, volume()));
        assert!(e.contains(says), "{e:?} should say {says:?}");
        assert!(!e.contains('\n'), "{e:?} is more than one line");
    }
    // From the command line: one line on stderr, nothing written.
    let out_dir = tmp.path().join("out");
    let out = crate::support::headroom(&[
        "kube",
        &users,
        "--shards",
        "1",
        "--out",
        out_dir.to_str().unwrap(),
        "--image",
        "x",
    ]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("cannot run as 1 shard"), "{stderr}");
    assert!(!out_dir.exists());
}

/// The common start is read as a shard reads `--start-at`: what a shard would refuse (no
/// zone, more than a day ahead, more than an hour past) is refused here, in one line, and
/// what it takes is written for the shards as the same instant.
#[test]
fn the_start_is_read_as_a_shard_reads_it() {
    let build = |start: Start| {
        let mut s = spec(SHOP, 2, volume());
        s.start = start;
        kube::build(&s, &shop_env)
    };
    // Now is 2099-01-01T00:00:00Z.
    let now = at("2099-01-01T00:00:00Z");
    for (text, says) in [
        ("2099-01-01T00:05:00", "RFC 3339 time with its zone"),
        ("2099-01-01 00:05:00Z", "RFC 3339 time with its zone"),
        ("in 5 minutes", "RFC 3339 time with its zone"),
        ("2099-01-02T00:00:01Z", "more than a day ahead"),
        (
            "2098-12-31T22:00:00Z",
            "2h ago; a shard that late would not overlap its test",
        ),
        ("2098-12-31T23:30:00Z", "is in the past"),
    ] {
        let e = build(Start::At(text.into())).unwrap_err().to_string();
        assert!(e.contains(says), "{text}: {e:?} should say {says:?}");
        assert!(!e.contains('\n'), "{e:?} is more than one line");
    }
    let e = build(Start::In(Duration::from_secs(25 * 3600)))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--start-in 1day 1h is more than a day ahead"),
        "{e}"
    );
    assert!(build(Start::In(Duration::from_secs(24 * 3600))).is_ok());
    for (text, written) in [
        ("2099-01-01T01:02:00+01:00", "2099-01-01T00:02:00Z"),
        ("4070908920", "2099-01-01T00:02:00Z"),
        ("@4070908920.5", "2099-01-01T00:02:00.500000000Z"),
        ("2099-01-01T00:02:00.25Z", "2099-01-01T00:02:00.250000000Z"),
    ] {
        let bundle = build(Start::At(text.into())).unwrap();
        assert_eq!(bundle.start_at, written, "{text}");
        let job: Job = parse(&files_of(&bundle), "40-job.yaml");
        let args = job.spec.template.spec.containers[0].args.join(" ");
        assert!(args.contains(&format!("--start-at {written}")), "{args}");
        // The shards read the instant that was asked.
        assert_eq!(
            headroom::launch::parse_start_at(written, now),
            headroom::launch::parse_start_at(text, now)
        );
    }
    // From the command line: one line on stderr, nothing written.
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("out");
    let out = crate::support::headroom(&[
        "kube",
        SHOP,
        "--shards",
        "2",
        "--start-at",
        "2026-11-25T04:00:00",
        "--out",
        out_dir.to_str().unwrap(),
        "--image",
        "x",
    ]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("with its zone"), "{stderr}");
    assert!(!out_dir.exists());
}

fn error_of(spec: &KubeSpec) -> String {
    kube::build(spec, &shop_env).unwrap_err().to_string()
}

#[test]
fn bad_input_is_one_line_and_shows_no_secret() {
    let mut cases = Vec::new();
    cases.push((
        error_of(&spec(SHOP, 0, volume())),
        "--shards 0 is out of range",
    ));
    cases.push((
        error_of(&spec(SHOP, 10001, volume())),
        "--shards 10001 is out of range: give 1 to 10000",
    ));
    let mut past = spec(SHOP, 2, volume());
    past.start = Start::At("2098-12-31T23:59:00Z".into());
    cases.push((error_of(&past), "in the past"));
    let mut bad_name = spec(SHOP, 2, volume());
    bad_name.name = Some("Shop_Test".into());
    cases.push((error_of(&bad_name), "is not a Kubernetes name"));
    cases.push((
        error_of(&spec("tests/kube/matrix.yaml", 2, volume())),
        "matrix",
    ));
    cases.push((
        error_of(&spec("tests/kube/nope.yaml", 2, volume())),
        "cannot read the scenario tests/kube/nope.yaml",
    ));
    let unset = kube::build(&spec(SHOP, 2, volume()), &|_| None)
        .unwrap_err()
        .to_string();
    cases.push((unset, "API_TOKEN is not set"));

    // A missing file, and one too big for a ConfigMap.
    let tmp = tempfile::tempdir().unwrap();
    let scenario = tmp.path().join("big.yaml");
    std::fs::write(
        &scenario,
        "target: {url: 'http://127.0.0.1:9/', headers: {Authorization: 'Bearer big-secret-1'}}\nrequests: [{name: get, path: '/{{ k }}', data: keys}]\ndata: {keys: {csv: keys.csv}}\nload: {rate: 10, duration: 1s}\n",
    )
    .unwrap();
    let s = spec(scenario.to_str().unwrap(), 2, volume());
    cases.push((error_of(&s), "data.keys.csv names"));
    let mut csv = String::from("k\n");
    while csv.len() <= 1024 * 1024 {
        csv.push_str("some-key-of-a-big-set\n");
    }
    std::fs::write(tmp.path().join("keys.csv"), &csv).unwrap();
    cases.push((
        error_of(&s),
        "more than the 1 MiB a ConfigMap or Secret holds",
    ));

    for (message, want) in cases {
        assert!(message.contains(want), "{message:?} should say {want:?}");
        assert!(!message.contains('\n'), "{message:?} is more than one line");
        for secret in SHOP_SECRETS.iter().chain(&["big-secret-1"]) {
            assert!(!message.contains(secret), "{message:?} shows a secret");
        }
    }

    // From the command line: one line on stderr, nothing written.
    let out_dir = tmp.path().join("out");
    let out = crate::support::headroom(&[
        "kube",
        SHOP,
        "--shards",
        "0",
        "--out",
        out_dir.to_str().unwrap(),
        "--image",
        "x",
    ]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(!out_dir.exists());
}

/// The manifests pass the Kubernetes API's own schemas (kubernetes-validate, from PyPI) for
/// two Kubernetes versions with Indexed Jobs' per-index retries.
#[test]
fn manifests_validate_against_the_kubernetes_schemas() {
    let tmp = tempfile::tempdir().unwrap();
    for (mode, collect) in [("volume", volume()), ("copy", Collect::Copy)] {
        let bundle = kube::build(&spec(SHOP, 4, collect), &shop_env).unwrap();
        bundle.write(&tmp.path().join(mode)).unwrap();
    }
    let files: Vec<String> = walk(tmp.path())
        .into_iter()
        .map(|p| p.display().to_string())
        .collect();
    for version in ["1.30.0", "1.33.0"] {
        let out = match Command::new("kubernetes-validate")
            .args(["--strict", "--kubernetes-version", version])
            .args(&files)
            .output()
        {
            Ok(out) => out,
            Err(e) => {
                panic!("kubernetes-validate cannot run ({e}): pip install kubernetes-validate")
            }
        };
        assert!(
            out.status.success(),
            "Kubernetes {version}:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The commands `headroom kube` prints, run with `KEY=VALUE` set, and its stdout.
fn kube_cli(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_headroom"))
        .arg("kube")
        .args(args)
        .env("API_TOKEN", "tok-env-7788")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("the binary runs")
}

/// In copy mode the printed steps never wait for the Job to complete (its pods hold until
/// their runs are copied out): they await each shard's headroom container, copy, then mark it
/// collected; docs/distributed.md shows the same text for its example; both scripts parse.
#[test]
fn the_printed_steps_are_the_documented_ones() {
    let docs = std::fs::read_to_string("docs/distributed.md").unwrap();
    for copy in [true, false] {
        let steps = kube::steps::Steps {
            name: "checkout",
            namespace: Some("load"),
            out: "k8s/checkout",
            shards: 4,
            copy,
            wait: Duration::from_secs(63 * 60 + 1),
        }
        .commands();
        match copy {
            true => assert!(
                docs.contains(&steps),
                "docs/distributed.md, \"Without shared storage\", should show:\n{steps}"
            ),
            // The volume mode's steps are spread over the page's steps 2 to 4, one each.
            false => {
                for line in steps.lines() {
                    assert!(docs.contains(line), "docs/distributed.md lacks {line}");
                }
            }
        }
        if copy {
            assert!(!steps.contains("kubectl wait"), "{steps}");
            let order = [
                "for i in $(seq 0 3)",
                "state.terminated",
                "kubectl cp -n load -c collect ${pod#pod/}:/runs/checkout/shard-$i runs/checkout/shard-$i",
                "touch /runs/collected",
                "headroom merge runs/checkout/shard-* --out runs/checkout/merged",
            ];
            let at: Vec<usize> = order
                .iter()
                .map(|s| {
                    steps
                        .find(s)
                        .unwrap_or_else(|| panic!("{s} not in {steps}"))
                })
                .collect();
            assert!(at.windows(2).all(|w| w[0] < w[1]), "{steps}");
        } else {
            assert!(steps.contains("--timeout=64m job/checkout"), "{steps}");
        }
        for shell in [["bash", "-n"], ["busybox", "sh"]] {
            let mut cmd = Command::new(shell[0]);
            cmd.args(&shell[1..]);
            if shell[0] == "busybox" {
                cmd.arg("-n");
            }
            let out =
                cmd.arg("-c").arg(&steps).output().unwrap_or_else(|e| {
                    panic!("{} cannot run ({e}): tests/run installs it", shell[0])
                });
            assert!(
                out.status.success(),
                "{}: {}\n{steps}",
                shell[0],
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }

    // The binary prints the library's steps for what it wrote.
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("k8s");
    let dir = out_dir.to_str().unwrap();
    let out = kube_cli(&[
        SHOP,
        "--shards",
        "4",
        "--image",
        "x",
        "--namespace",
        "load",
        "--collect",
        "copy",
        "--out",
        dir,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let steps = kube::steps::Steps {
        name: "shop",
        namespace: Some("load"),
        out: dir,
        shards: 4,
        copy: true,
        wait: Duration::ZERO,
    }
    .commands();
    let indented: String = steps.lines().map(|l| format!("  {l}\n")).collect();
    assert!(
        stdout.contains(&indented),
        "{stdout}\nshould hold\n{indented}"
    );
    assert!(!stdout.contains("kubectl wait"), "{stdout}");
    assert!(
        stdout.contains("each pod keeps its run until it is copied out, or until "),
        "{stdout}"
    );
}

/// Written again into the same directory, the manifests replace the earlier ones: what this
/// write does not make is removed (only files of headroom's names carrying its label), a
/// user's other files stay, and a file of one of its names that is not headroom's stops the
/// write before anything changes.
#[test]
fn writing_again_removes_only_stale_manifests() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("k8s");
    let names = |dir: &Path| -> Vec<String> {
        let mut v: Vec<String> = walk(dir)
            .iter()
            .map(|p| p.strip_prefix(dir).unwrap().display().to_string())
            .collect();
        v.sort();
        v
    };
    let volume_bundle = kube::build(&spec(SHOP, 4, volume()), &shop_env).unwrap();
    assert!(volume_bundle.write(&dir).unwrap().is_empty());
    std::fs::write(dir.join("99-mine.yaml"), "kind: Mine\n").unwrap();
    assert_eq!(
        names(&dir),
        [
            "10-files.yaml",
            "20-secret.yaml",
            "30-runs.yaml",
            "40-job.yaml",
            "99-mine.yaml",
            "merge/50-merge.yaml"
        ]
    );
    let copy_bundle = kube::build(&spec(SHOP, 4, Collect::Copy), &shop_env).unwrap();
    let removed = copy_bundle.write(&dir).unwrap();
    assert_eq!(
        removed,
        [
            PathBuf::from("30-runs.yaml"),
            PathBuf::from("merge/50-merge.yaml")
        ]
    );
    assert_eq!(
        names(&dir),
        [
            "10-files.yaml",
            "20-secret.yaml",
            "40-job.yaml",
            "99-mine.yaml"
        ]
    );
    assert!(!dir.join("merge").exists(), "the empty merge/ stays");
    assert_eq!(
        std::fs::read_to_string(dir.join("99-mine.yaml")).unwrap(),
        "kind: Mine\n"
    );
    for (path, text) in &copy_bundle.files {
        assert_eq!(&std::fs::read_to_string(dir.join(path)).unwrap(), text);
    }

    // A merge/ with a file of the user's in it keeps that file (and the directory).
    volume_bundle.write(&dir).unwrap();
    std::fs::write(dir.join("merge/notes.txt"), "mine").unwrap();
    copy_bundle.write(&dir).unwrap();
    assert!(!dir.join("merge/50-merge.yaml").exists());
    assert_eq!(
        std::fs::read_to_string(dir.join("merge/notes.txt")).unwrap(),
        "mine"
    );

    // A file of one of headroom's names that headroom did not write: one line, nothing changed.
    std::fs::write(
        dir.join("30-runs.yaml"),
        "kind: PersistentVolumeClaim # by hand\n",
    )
    .unwrap();
    let before: Vec<(String, Vec<u8>)> = names(&dir)
        .into_iter()
        .map(|n| (n.clone(), std::fs::read(dir.join(&n)).unwrap()))
        .collect();
    let e = volume_bundle.write(&dir).unwrap_err().to_string();
    assert!(
        e.contains("30-runs.yaml is not a manifest headroom kube wrote"),
        "{e}"
    );
    assert!(e.contains("give another --out"), "{e}");
    assert!(!e.contains('\n'), "{e}");
    let after: Vec<(String, Vec<u8>)> = names(&dir)
        .into_iter()
        .map(|n| (n.clone(), std::fs::read(dir.join(&n)).unwrap()))
        .collect();
    assert_eq!(before, after);

    // From the command line: the files removed are named.
    let dir2 = tmp.path().join("cli");
    let d = dir2.to_str().unwrap();
    let first = kube_cli(&[SHOP, "--shards", "2", "--image", "x", "--out", d]);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let again = kube_cli(&[
        SHOP,
        "--shards",
        "2",
        "--image",
        "x",
        "--out",
        d,
        "--collect",
        "copy",
    ]);
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let stdout = String::from_utf8_lossy(&again.stdout);
    assert!(
        stdout.contains(&format!(
            "removed from {d}, which this write does not make: 30-runs.yaml, merge/50-merge.yaml"
        )),
        "{stdout}"
    );
    assert_eq!(
        names(&dir2),
        ["10-files.yaml", "20-secret.yaml", "40-job.yaml"]
    );
}

/// A child process killed and reaped when the test ends, however it ends.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The exit of `child`, waiting at most `bound` (far more than it needs: the bound only keeps
/// a broken script from hanging the suite).
fn exit_within(child: &mut Child, bound: Duration) -> Option<std::process::ExitStatus> {
    let deadline = std::time::Instant::now() + bound;
    while std::time::Instant::now() < deadline {
        if let Some(status) = child.0.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

/// The `collect` container waits until two hours after the test's scheduled end (start +
/// duration + request timeout), however far ahead the start is, and its script (run here in
/// busybox's sh, as in its image, with /runs in a temporary directory) ends when the runs are
/// marked collected, or at that time.
#[test]
fn the_collect_container_gives_up_after_the_test_ends() {
    let collect_args = |start: &str| -> String {
        let mut s = spec(SHOP, 2, Collect::Copy);
        s.start = Start::At(start.into());
        let bundle = kube::build(&s, &shop_env).unwrap();
        let job: Job = parse(&files_of(&bundle), "40-job.yaml");
        let collect = job
            .spec
            .template
            .spec
            .containers
            .iter()
            .find(|c| c.name == "collect")
            .expect("a collect container")
            .clone();
        let give_up = bundle.give_up.expect("copy mode gives up at a time");
        let end = give_up
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        assert_eq!(collect.args.len(), 1);
        assert!(
            collect.args[0].starts_with(&format!("end={end};")),
            "{}",
            collect.args[0]
        );
        collect.args[0].clone()
    };
    // shop.yaml: 60 s at 20,000 req/s, the default 30 s request timeout; then two hours.
    for (start, give_up) in [
        ("2099-01-01T00:02:00Z", "2099-01-01T02:03:30Z"),
        // 23 hours ahead: a pod started at apply time still holds the runs after the test.
        ("2099-01-01T23:00:00Z", "2099-01-02T01:01:30Z"),
    ] {
        let script = collect_args(start);
        let end = at(give_up)
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        assert!(
            script.starts_with(&format!("end={end};")),
            "{start}: {script}"
        );
    }
    // Kubernetes reads `$$` as `$`; /runs is where the volume is mounted.
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    std::fs::create_dir(&runs).unwrap();
    let local = |script: &str, end: &str| -> String {
        let body = script.split_once(';').unwrap().1;
        format!("end={end};{body}")
            .replace("$$", "$")
            .replace("/runs/", &format!("{}/", runs.display()))
    };
    let script = collect_args("2099-01-01T00:02:00Z");
    let spawn = |text: String| {
        Child(
            Command::new("busybox")
                .args(["sh", "-c", &text])
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("busybox runs (tests/run installs it)"),
        )
    };
    // Before its time and before the runs are collected, it holds the pod.
    let mut holding = spawn(local(&script, "4070908800"));
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        holding.0.try_wait().unwrap().is_none(),
        "collect ended before its time"
    );
    std::fs::write(runs.join("collected"), "").unwrap();
    let status =
        exit_within(&mut holding, Duration::from_secs(60)).expect("collect ends once collected");
    assert!(status.success());
    std::fs::remove_file(runs.join("collected")).unwrap();
    // At its time, it gives up (the pod ends) and says so.
    let mut late = spawn(local(&script, "1"));
    let status = exit_within(&mut late, Duration::from_secs(60)).expect("collect gives up");
    assert!(status.success());
    let mut stderr = String::new();
    std::io::Read::read_to_string(late.0.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert!(stderr.contains("collect: no "), "{stderr}");
    assert!(
        stderr.contains("collected by unix time 1, giving up"),
        "{stderr}"
    );

    // The merge pod's `fetch` counts its two hours from its own start (the merge is applied
    // after the test): it holds, and ends once the merged run is collected.
    std::fs::remove_file(runs.join("collected")).ok();
    let bundle = kube::build(&spec(SHOP, 2, volume()), &shop_env).unwrap();
    let merge: Job = parse(&files_of(&bundle), "merge/50-merge.yaml");
    let fetch = merge
        .spec
        .template
        .spec
        .containers
        .iter()
        .find(|c| c.name == "fetch")
        .expect("a fetch container")
        .args[0]
        .clone();
    assert!(
        fetch.starts_with("end=$$(( $$(date +%s) + 7200 ));"),
        "{fetch}"
    );
    let fetch = fetch
        .replace("$$", "$")
        .replace("/runs/", &format!("{}/", runs.display()));
    let mut holding = spawn(fetch);
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        holding.0.try_wait().unwrap().is_none(),
        "fetch ended before its time"
    );
    std::fs::write(runs.join("collected"), "").unwrap();
    let status =
        exit_within(&mut holding, Duration::from_secs(60)).expect("fetch ends once collected");
    assert!(status.success());
}
