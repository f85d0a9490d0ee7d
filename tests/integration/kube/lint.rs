//! The manifests as a cluster's gatekeepers read them: the manifests of every example that
//! `headroom kube` accepts, scored by kube-score (built by tests/run) with no critical
//! finding, and every pod they make checked against Pod Security's "restricted" profile by
//! [`restricted`], a checker of its rules written here (a cluster's admission would refuse
//! what it finds).

use super::*;
use yaml_serde::Value;

/// The examples `headroom kube` refuses, and why; every other one must be accepted.
const REFUSED: &[(&str, &str)] = &[
    ("000-secrets-service-matrix.yaml", "matrix"),
    ("002-kv-matrix.yaml", "matrix"),
    ("kv-openapi.yaml", "unknown field `openapi`"),
];

/// The manifests of every example, one shard, in both collection modes, written under `out`; returns
/// the files. The examples target loopback (their servers run beside them), which `kube`
/// refuses unless asked: the manifests' shape does not depend on the host.
fn example_manifests(out: &Path) -> Vec<PathBuf> {
    // The TLS examples name certificates that examples/servers.sh makes under .run/:
    // the tests' own stand in for them.
    let examples = out.join("examples");
    let certs = examples.join(".run/certs");
    std::fs::create_dir_all(&certs).unwrap();
    for f in ["ca.pem", "client.pem", "client.key"] {
        std::fs::copy(Path::new("tests/kube/certs").join(f), certs.join(f)).unwrap();
    }
    let mut accepted = 0;
    let mut names: Vec<PathBuf> = std::fs::read_dir("examples")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    names.sort();
    for path in &names {
        let file = path.file_name().unwrap().to_str().unwrap();
        let copy = examples.join(file);
        std::fs::copy(path, &copy).unwrap();
        for (mode, collect) in [("copy", copy_mode()), ("volume", volume())] {
            // One shard: some examples have a single user, which two cannot share.
            let mut s = spec(copy.to_str().unwrap(), 1, collect);
            s.allow_local_target = true;
            let built = kube::build(&s, &|_| None);
            match REFUSED.iter().find(|(name, _)| *name == file) {
                Some((_, why)) => {
                    let e = built.expect_err(file).to_string();
                    assert!(e.contains(why), "{file}: {e}");
                }
                None => {
                    let bundle = built.unwrap_or_else(|e| panic!("{file}: {e}"));
                    let dir = out.join(mode).join(file.trim_end_matches(".yaml"));
                    bundle.write(&dir).unwrap();
                    accepted += 1;
                }
            }
        }
    }
    assert_eq!(
        accepted,
        2 * (names.len() - REFUSED.len()),
        "every example but the refused ones"
    );
    assert!(accepted >= 2 * 13, "the examples are there: {accepted}");
    let mut files = walk(&out.join("copy"));
    files.extend(walk(&out.join("volume")));
    files.retain(|p| p.extension().is_some_and(|e| e == "yaml"));
    files
}

fn copy_mode() -> Collect {
    Collect::Copy { size: "1Gi".into() }
}

/// kube-score (the version tests/run builds): no critical finding and no warning in any
/// example's manifests. One check is relaxed, `--ignore-container-cpu-limit`: the shards
/// have no CPU limit by design (a throttled generator stops for the rest of a 100 ms CFS
/// period, and every request due meanwhile goes out late); every other container has one.
#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs kube-score: run tests/run")]
fn every_examples_manifests_pass_kube_score() {
    let tmp = tempfile::tempdir().unwrap();
    let files = example_manifests(tmp.path());
    // `HEADROOM_KUBE_SCORE`, or where tests/run keeps it by default.
    let bin = std::env::var("HEADROOM_KUBE_SCORE").unwrap_or_else(|_| {
        format!(
            "{}/.cache/headroom/kube-score-1.20.0/kube-score",
            std::env::var("HOME").unwrap_or_default()
        )
    });
    let out = Command::new(&bin)
        .args([
            "score",
            "--output-format",
            "ci",
            "--ignore-container-cpu-limit",
        ])
        .args(&files)
        .output()
        .unwrap_or_else(|e| panic!("{bin} cannot run ({e}): tests/run builds it"));
    let text = String::from_utf8_lossy(&out.stdout);
    let findings: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("[CRITICAL]") || l.starts_with("[WARNING]"))
        .collect();
    assert!(
        findings.is_empty() && out.status.success(),
        "kube-score:\n{}\n{}",
        findings.join("\n"),
        String::from_utf8_lossy(&out.stderr)
    );
    // It read them all: each Job was scored.
    let jobs = text.lines().filter(|l| l.contains("batch/v1/Job")).count();
    assert!(jobs > 0, "{text}");
    // Without the one relaxation, the shards' missing CPU limit is its only finding.
    let strict = Command::new(&bin)
        .args(["score", "--output-format", "ci"])
        .args(&files)
        .output()
        .unwrap();
    let strict = String::from_utf8_lossy(&strict.stdout);
    let critical: Vec<&str> = strict
        .lines()
        .filter(|l| l.starts_with("[CRITICAL]"))
        .collect();
    assert!(!critical.is_empty());
    assert!(
        critical
            .iter()
            .all(|l| l.contains("(headroom) CPU limit is not set")),
        "{}",
        critical.join("\n")
    );
}

/// Every pod of every example's manifests meets Pod Security "restricted".
#[test]
fn every_pod_meets_pod_security_restricted() {
    let tmp = tempfile::tempdir().unwrap();
    let mut pods = 0;
    for file in example_manifests(tmp.path()) {
        let text = std::fs::read_to_string(&file).unwrap();
        let doc: Value = yaml_serde::from_str(&text).unwrap();
        if let Some(pod) = pod_of(&doc) {
            pods += 1;
            let found = restricted::violations(pod);
            assert!(found.is_empty(), "{}: {found:#?}", file.display());
        }
    }
    assert!(pods >= 2 * 13, "{pods} pods checked");
}

/// The pod spec of a Job or a Pod.
fn pod_of(doc: &Value) -> Option<&Value> {
    match doc["kind"].as_str()? {
        "Job" => Some(&doc["spec"]["template"]["spec"]),
        "Pod" => Some(&doc["spec"]),
        _ => None,
    }
}

/// The checker finds each of the profile's rules broken, one at a time, in a pod of ours.
#[test]
fn the_restricted_checker_finds_what_the_profile_refuses() {
    let bundle = kube::build(&spec(SHOP, 2, copy_mode()), &shop_env).unwrap();
    let job: Value = yaml_serde::from_str(&files_of(&bundle)["40-job.yaml"]).unwrap();
    let pod = job["spec"]["template"]["spec"].clone();
    assert_eq!(restricted::violations(&pod), Vec::<String>::new());
    let set = |path: &str, value: &str| {
        let mut p = pod.clone();
        let mut at = &mut p;
        for key in path.split('.') {
            at = match key.parse::<usize>() {
                Ok(i) => &mut at[i],
                Err(_) => {
                    if at.get(key).is_none() {
                        at.as_mapping_mut()
                            .unwrap()
                            .insert(Value::from(key), Value::Null);
                    }
                    at.get_mut(key).unwrap()
                }
            };
        }
        *at = yaml_serde::from_str(value).unwrap();
        p
    };
    for (path, value, says) in [
        ("hostNetwork", "true", "hostNetwork"),
        ("hostPID", "true", "hostPID"),
        ("volumes.0", "{name: h, hostPath: {path: /}}", "volume h"),
        (
            "containers.0.securityContext.allowPrivilegeEscalation",
            "true",
            "allowPrivilegeEscalation",
        ),
        (
            "containers.1.securityContext",
            "{runAsNonRoot: true}",
            "allowPrivilegeEscalation",
        ),
        (
            "containers.0.securityContext.capabilities",
            "{drop: [NET_RAW]}",
            "drop ALL",
        ),
        (
            "containers.0.securityContext.capabilities.add",
            "[SYS_ADMIN]",
            "adds SYS_ADMIN",
        ),
        (
            "containers.0.securityContext.privileged",
            "true",
            "privileged",
        ),
        ("containers.0.securityContext.runAsUser", "0", "runAsUser 0"),
        ("securityContext.runAsUser", "0", "runAsUser 0"),
        (
            "containers.0.securityContext.runAsNonRoot",
            "false",
            "runAsNonRoot",
        ),
        (
            "containers.0.securityContext.seccompProfile",
            "{type: Unconfined}",
            "seccomp",
        ),
        (
            "containers.0.ports",
            "[{containerPort: 80, hostPort: 80}]",
            "hostPort",
        ),
    ] {
        let found = restricted::violations(&set(path, value));
        assert!(
            found.iter().any(|f| f.contains(says)),
            "{path}: {value} should be refused for {says:?}, found {found:?}"
        );
    }
    // Neither the pod nor every container says runAsNonRoot or a seccomp profile.
    let mut bare = pod.clone();
    bare.as_mapping_mut().unwrap().remove("securityContext");
    for c in bare["containers"].as_sequence_mut().unwrap() {
        let sc = c["securityContext"].as_mapping_mut().unwrap();
        sc.remove("runAsNonRoot");
        sc.remove("seccompProfile");
    }
    let found = restricted::violations(&bare);
    for says in ["runAsNonRoot", "seccomp"] {
        assert!(found.iter().any(|f| f.contains(says)), "{says}: {found:?}");
    }
}

/// Pod Security Standards, "restricted" (which includes "baseline"), as the Kubernetes
/// documentation lists its controls (kubernetes.io/docs/concepts/security/pod-security-
/// standards), over a pod spec as YAML: whatever fields it has, not only those headroom's
/// types know.
pub mod restricted {
    use yaml_serde::Value;

    /// The volume types the profile allows.
    const VOLUMES: &[&str] = &[
        "configMap",
        "csi",
        "downwardAPI",
        "emptyDir",
        "ephemeral",
        "persistentVolumeClaim",
        "projected",
        "secret",
    ];
    /// The sysctls "baseline" allows.
    const SYSCTLS: &[&str] = &[
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.ip_unprivileged_port_start",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range",
        "net.ipv4.ip_local_reserved_ports",
        "net.ipv4.tcp_keepalive_time",
        "net.ipv4.tcp_fin_timeout",
        "net.ipv4.tcp_keepalive_intvl",
        "net.ipv4.tcp_keepalive_probes",
    ];

    fn truthy(v: &Value) -> bool {
        v.as_bool() == Some(true)
    }

    fn seccomp_ok(v: &Value) -> Option<bool> {
        v.get("type")
            .and_then(Value::as_str)
            .map(|t| t == "RuntimeDefault" || t == "Localhost")
    }

    /// What in `pod` the profile refuses, one line each; empty when it meets it.
    pub fn violations(pod: &Value) -> Vec<String> {
        let mut out = Vec::new();
        for field in ["hostNetwork", "hostPID", "hostIPC"] {
            if truthy(&pod[field]) {
                out.push(format!("{field} is true"));
            }
        }
        let psc = &pod["securityContext"];
        if truthy(&psc["windowsOptions"]["hostProcess"]) {
            out.push("pod: windowsOptions.hostProcess".into());
        }
        for s in psc["sysctls"].as_sequence().into_iter().flatten() {
            let name = s["name"].as_str().unwrap_or("");
            if !SYSCTLS.contains(&name) {
                out.push(format!("pod: sysctl {name} is not a safe one"));
            }
        }
        if psc["runAsUser"].as_u64() == Some(0) {
            out.push("pod: runAsUser 0".into());
        }
        if psc["runAsNonRoot"].as_bool() == Some(false) {
            out.push("pod: runAsNonRoot is false".into());
        }
        let pod_seccomp = seccomp_ok(&psc["seccompProfile"]);
        if pod_seccomp == Some(false) {
            out.push("pod: seccompProfile is neither RuntimeDefault nor Localhost".into());
        }
        selinux(psc, "pod", &mut out);
        apparmor(psc, "pod", &mut out);
        for v in pod["volumes"].as_sequence().into_iter().flatten() {
            let name = v["name"].as_str().unwrap_or("?");
            let kinds: Vec<&str> = v
                .as_mapping()
                .into_iter()
                .flatten()
                .filter_map(|(k, _)| k.as_str())
                .filter(|k| *k != "name")
                .collect();
            if kinds.iter().any(|k| !VOLUMES.contains(k)) {
                out.push(format!(
                    "volume {name} is of a type the profile refuses: {kinds:?}"
                ));
            }
        }
        let containers = ["initContainers", "containers", "ephemeralContainers"]
            .iter()
            .flat_map(|list| pod[*list].as_sequence().into_iter().flatten());
        for c in containers {
            let name = c["name"].as_str().unwrap_or("?");
            let sc = &c["securityContext"];
            if truthy(&sc["privileged"]) {
                out.push(format!("{name}: privileged"));
            }
            if sc["allowPrivilegeEscalation"].as_bool() != Some(false) {
                out.push(format!("{name}: allowPrivilegeEscalation is not false"));
            }
            let caps = &sc["capabilities"];
            let drops_all = caps["drop"]
                .as_sequence()
                .into_iter()
                .flatten()
                .any(|d| d.as_str() == Some("ALL"));
            if !drops_all {
                out.push(format!("{name}: does not drop ALL capabilities"));
            }
            for add in caps["add"].as_sequence().into_iter().flatten() {
                let add = add.as_str().unwrap_or("?");
                if add != "NET_BIND_SERVICE" {
                    out.push(format!("{name}: adds {add}"));
                }
            }
            match (sc["runAsNonRoot"].as_bool(), psc["runAsNonRoot"].as_bool()) {
                (Some(false), _) => out.push(format!("{name}: runAsNonRoot is false")),
                (None, Some(true)) | (Some(true), _) => {}
                _ => out.push(format!(
                    "{name}: runAsNonRoot is set neither here nor on the pod"
                )),
            }
            if sc["runAsUser"].as_u64() == Some(0) {
                out.push(format!("{name}: runAsUser 0"));
            }
            match (seccomp_ok(&sc["seccompProfile"]), pod_seccomp) {
                (Some(false), _) => out.push(format!(
                    "{name}: seccompProfile is neither RuntimeDefault nor Localhost"
                )),
                (Some(true), _) | (None, Some(true)) => {}
                _ => out.push(format!("{name}: no seccomp profile, here or on the pod")),
            }
            if sc["procMount"].as_str().is_some_and(|m| m != "Default") {
                out.push(format!("{name}: procMount is not Default"));
            }
            if truthy(&sc["windowsOptions"]["hostProcess"]) {
                out.push(format!("{name}: windowsOptions.hostProcess"));
            }
            selinux(sc, name, &mut out);
            apparmor(sc, name, &mut out);
            for p in c["ports"].as_sequence().into_iter().flatten() {
                if p["hostPort"].as_u64().is_some_and(|h| h != 0) {
                    out.push(format!("{name}: hostPort"));
                }
            }
        }
        out
    }

    fn selinux(sc: &Value, who: &str, out: &mut Vec<String>) {
        let se = &sc["seLinuxOptions"];
        let allowed = [
            "",
            "container_t",
            "container_init_t",
            "container_kvm_t",
            "container_engine_t",
        ];
        if se["type"].as_str().is_some_and(|t| !allowed.contains(&t)) {
            out.push(format!("{who}: seLinuxOptions.type"));
        }
        if se.get("user").is_some() || se.get("role").is_some() {
            out.push(format!("{who}: seLinuxOptions user or role"));
        }
    }

    fn apparmor(sc: &Value, who: &str, out: &mut Vec<String>) {
        let t = sc["appArmorProfile"]["type"].as_str();
        if t.is_some_and(|t| t != "RuntimeDefault" && t != "Localhost") {
            out.push(format!("{who}: appArmorProfile"));
        }
    }
}
