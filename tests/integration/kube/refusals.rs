//! What `headroom kube` refuses: loads its shards cannot run, starts a shard would refuse,
//! bad input; each in one line, no secret shown.

use super::*;

/// A scenario of one request to a closed port, with `load`, in `dir`.
fn scenario_with_load(dir: &Path, name: &str, load: &str) -> String {
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!("target: {{url: 'http://shop.example.test:9/'}}\nrequests: [{{name: get, path: /}}]\nload: {load}\n"),
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
    let bad_size = spec(SHOP, 2, Collect::Copy { size: "1gb".into() });
    cases.push((
        error_of(&bad_size),
        "--volume-size \"1gb\" is not a size: give a number with Mi, Gi or Ti",
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
        "target: {url: 'http://shop.example.test:9/', headers: {Authorization: 'Bearer big-secret-1'}}\nrequests: [{name: get, path: '/{{ k }}', data: keys}]\ndata: {keys: {csv: keys.csv}}\nload: {rate: 10, duration: 1s}\n",
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

/// A loopback, link-local or unspecified target (or instance) is refused, in one line that
/// says what it is inside a pod and what to give instead; `--allow-local-target` writes it.
#[test]
fn a_target_that_is_the_pod_itself_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = |name: &str, target: &str| {
        let path = tmp.path().join(name);
        std::fs::write(
            &path,
            format!("target: {target}\nrequests: [{{name: get, path: /}}]\nload: {{rate: 10, duration: 10s}}\n"),
        )
        .unwrap();
        path.display().to_string()
    };
    for (i, (target, host, says)) in [
        ("{url: 'http://127.0.0.1:8080/'}", "127.0.0.1", "a loopback address: inside a pod that is the pod itself"),
        ("{url: 'https://localhost/'}", "localhost", "a loopback address"),
        ("{url: 'http://[::1]:80/'}", "::1", "a loopback address"),
        ("{url: 'http://127.1:80/'}", "127.1", "a loopback address"),
        ("{url: 'http://169.254.169.254/'}", "169.254.169.254", "a link-local address: inside a pod that is the pod's own link (or the node's metadata service)"),
        ("{url: 'http://[fe80::1]/'}", "fe80::1", "a link-local address"),
        ("{url: 'http://0.0.0.0:80/'}", "0.0.0.0", "an unspecified address"),
        ("{urls: ['http://shop.example.test/', 'http://127.0.0.2/']}", "127.0.0.2", "a loopback address"),
    ]
    .into_iter()
    .enumerate()
    {
        let path = scenario(&format!("local-{i}.yaml"), target);
        let mut s = spec(&path, 1, volume());
        let e = kube::build(&s, &shop_env).unwrap_err().to_string();
        assert!(
            e.contains(&format!("the target host {host} is {says}")),
            "{target}: {e}"
        );
        assert!(e.contains("--allow-local-target"), "{e}");
        assert!(!e.contains('\n'), "{e}");
        s.allow_local_target = true;
        assert!(kube::build(&s, &shop_env).is_ok(), "{target}");
    }
    // A name that only looks local is another machine's.
    let path = scenario("remote.yaml", "{url: 'http://localhost.example.test/'}");
    assert!(kube::build(&spec(&path, 1, volume()), &shop_env).is_ok());

    // From the command line: one line, nothing written; written with the flag.
    let path = scenario("cli.yaml", "{url: 'http://127.0.0.1:8080/'}");
    let out_dir = tmp.path().join("out");
    let args = [
        "kube",
        &path,
        "--shards",
        "1",
        "--image",
        "x",
        "--out",
        out_dir.to_str().unwrap(),
    ];
    let out = crate::support::headroom(&args);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("inside a pod that is the pod itself"),
        "{stderr}"
    );
    assert!(!out_dir.exists());
    let mut allowed = args.to_vec();
    allowed.push("--allow-local-target");
    let out = crate::support::headroom(&allowed);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out_dir.join("40-job.yaml").exists());
}

/// `--node-selector`, `--toleration`, `--image-pull-secret` and `--service-account` reach
/// every pod (the shards' and the merge's), as the API's schema takes them; a value
/// Kubernetes would refuse is one line before anything is written.
#[test]
#[cfg_attr(
    not(feature = "lab"),
    ignore = "needs kubernetes-validate: run tests/run"
)]
fn placement_flags_reach_every_pod() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("k8s");
    let d = dir.to_str().unwrap();
    let placed = [
        "--node-selector",
        "pool=load",
        "--node-selector",
        "kubernetes.io/arch=amd64",
        "--toleration",
        "dedicated=load:NoSchedule",
        "--toleration",
        "spot",
        "--image-pull-secret",
        "regcred",
        "--service-account",
        "load-runner",
    ];
    let mut args = vec![
        SHOP,
        "--shards",
        "2",
        "--image",
        "x",
        "--out",
        d,
        "--collect",
        "volume",
    ];
    args.extend(placed);
    let out = kube_cli(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for file in ["40-job.yaml", "merge/50-merge.yaml"] {
        let job: Job =
            yaml_serde::from_str(&std::fs::read_to_string(dir.join(file)).unwrap()).unwrap();
        let pod = &job.spec.template.spec;
        assert_eq!(
            pod.node_selector,
            [
                ("kubernetes.io/arch".to_string(), "amd64".to_string()),
                ("pool".to_string(), "load".to_string())
            ]
            .into(),
            "{file}"
        );
        let tolerations: Vec<(String, String, Option<String>, Option<String>)> = pod
            .tolerations
            .iter()
            .map(|t| {
                (
                    t.key.clone(),
                    t.operator.clone(),
                    t.value.clone(),
                    t.effect.clone(),
                )
            })
            .collect();
        assert_eq!(
            tolerations,
            [
                (
                    "dedicated".into(),
                    "Equal".into(),
                    Some("load".into()),
                    Some("NoSchedule".into())
                ),
                ("spot".into(), "Exists".into(), None, None),
            ],
            "{file}"
        );
        assert_eq!(pod.image_pull_secrets.len(), 1);
        assert_eq!(pod.image_pull_secrets[0].name, "regcred");
        assert_eq!(pod.service_account_name.as_deref(), Some("load-runner"));
        assert_eq!(pod.automount_service_account_token, Some(false));
    }
    let files: Vec<String> = walk(&dir).iter().map(|p| p.display().to_string()).collect();
    let out = Command::new("kubernetes-validate")
        .args(["--strict", "--kubernetes-version", "1.30.0"])
        .args(&files)
        .output()
        .expect("kubernetes-validate runs (tests/run installs it)");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    let fresh = tmp.path().join("refused");
    let f = fresh.to_str().unwrap();
    for (flag, value, says) in [
        (
            "--toleration",
            "dedicated=load:Never",
            "is not a taint effect",
        ),
        ("--node-selector", "pool", "is not KEY=VALUE"),
        ("--node-selector", "pool=a b", "is not a label value"),
        ("--image-pull-secret", "RegCred", "is not an object name"),
        ("--service-account", "runner.", "is not an object name"),
    ] {
        let out = kube_cli(&[
            SHOP, "--shards", "2", "--image", "x", "--out", f, flag, value,
        ]);
        assert_eq!(out.status.code(), Some(2), "{flag} {value}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(says), "{flag} {value}: {stderr}");
        assert!(!fresh.exists());
    }
    // A storage class is for the shared volume, which copy (the default) has none of.
    let out = kube_cli(&[
        SHOP,
        "--shards",
        "2",
        "--image",
        "x",
        "--out",
        f,
        "--storage-class",
        "nfs",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("add --collect volume"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(!fresh.exists());
}
