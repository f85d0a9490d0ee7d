//! `headroom kube`: the manifests against golden files, their invariants read back with the
//! same types, the pods' command run here from files laid out as the mounts would be, and
//! bad input. No cluster is started or faked: what a cluster adds (scheduling, mounting, the
//! Job controller's `JOB_COMPLETION_INDEX`) is done by hand, as the manifests ask for it.
//!
//! Set UPDATE_GOLDEN=1 to rewrite the golden files after an intended change.
//!
//! Here: the manifests and their schemas; `pods`: the pods' commands run here; `refusals`:
//! what is refused; `steps`: the printed steps, writing again, and the `collect` container.

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
        seed: 77,
        placement: Default::default(),
        allow_local_target: false,
    }
}

fn copy() -> Collect {
    Collect::Copy { size: "1Gi".into() }
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
    for (mode, collect) in [("volume", volume()), ("copy", copy())] {
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

/// The manifests pass the Kubernetes API's own schemas (kubernetes-validate, from PyPI) for
/// two Kubernetes versions with Indexed Jobs' per-index retries.
#[test]
#[cfg_attr(
    not(feature = "lab"),
    ignore = "needs kubernetes-validate: run tests/run"
)]
fn manifests_validate_against_the_kubernetes_schemas() {
    let tmp = tempfile::tempdir().unwrap();
    for (mode, collect) in [("volume", volume()), ("copy", copy())] {
        let bundle = kube::build(&spec(SHOP, 4, collect), &shop_env).unwrap();
        bundle.write(&tmp.path().join(mode)).unwrap();
    }
    kubernetes_validate(tmp.path());
}

/// Checks every manifest under `dir` against the Kubernetes API's schemas (kubernetes-validate,
/// which reads YAML as 1.1 does) for two versions with Indexed Jobs' per-index retries.
fn kubernetes_validate(dir: &Path) {
    let files: Vec<String> = walk(dir)
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

mod image;
mod lint;
mod pods;
mod refusals;
mod secrets;
mod steps;
mod verdict;

/// Poisson arrivals without a seed: every shard is given the one passed in, so that all walk
/// one schedule; a seed the scenario has is left to it.
#[test]
fn shards_of_poisson_arrivals_are_given_one_seed() {
    let dir = tempfile::tempdir().unwrap();
    let args_of = |load: &str| {
        let path = dir.path().join("poisson.yaml");
        std::fs::write(
            &path,
            format!("target: {{url: 'http://shop.example.test:9'}}\nrequests: [{{name: a, path: /}}]\nload: {load}\n"),
        )
        .unwrap();
        let bundle = kube::build(&spec(path.to_str().unwrap(), 3, copy()), &|_| None).unwrap();
        let job: Job = parse(&files_of(&bundle), "40-job.yaml");
        job.spec.template.spec.containers[0].args.join(" ")
    };
    let args = args_of("{rate: 300, duration: 10s, arrivals: poisson}");
    assert!(args.ends_with("--set load.seed=77"), "{args}");
    let args = args_of("{rate: 300, duration: 10s, arrivals: poisson, seed: 5}");
    assert!(!args.contains("load.seed"), "{args}");
    let args = args_of("{rate: 300, duration: 10s}");
    assert!(!args.contains("load.seed"), "{args}");
}
