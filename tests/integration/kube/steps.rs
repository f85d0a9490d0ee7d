//! The steps `headroom kube` prints, writing into the same directory again, and when the
//! `collect` container gives up.

use super::*;

/// In copy mode the printed steps never wait for the Job to complete (its pods hold until
/// their runs are copied out): they await each shard's headroom container, copy, then mark it
/// collected, and end with the merged run's verdict; in volume mode they await the Job's end,
/// Complete or Failed; docs/distributed.md shows the same text for its example; both scripts
/// parse.
#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs busybox: run tests/run")]
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
            // The last command's status is the whole test's verdict.
            assert!(
                steps.ends_with("headroom report runs/checkout/merged --exit-status\n"),
                "{steps}"
            );
        } else {
            // Both ends of the Job are awaited, until the test's latest end (63 min 1 s).
            assert!(steps.contains("+ 3781 ))"), "{steps}");
            assert!(steps.contains("grep -qwE 'Complete|Failed'"), "{steps}");
            assert!(!steps.contains("kubectl wait"), "{steps}");
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
            "35-network.yaml",
            "40-job.yaml",
            "99-mine.yaml",
            "merge/50-merge.yaml"
        ]
    );
    let copy_bundle = kube::build(&spec(SHOP, 4, copy()), &shop_env).unwrap();
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
            "35-network.yaml",
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
    let first = kube_cli(&[
        SHOP,
        "--shards",
        "2",
        "--image",
        "x",
        "--out",
        d,
        "--collect",
        "volume",
    ]);
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
        [
            "10-files.yaml",
            "20-secret.yaml",
            "35-network.yaml",
            "40-job.yaml"
        ]
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
#[cfg_attr(not(feature = "lab"), ignore = "needs busybox: run tests/run")]
fn the_collect_container_gives_up_after_the_test_ends() {
    let collect_args = |start: &str| -> String {
        let mut s = spec(SHOP, 2, copy());
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

/// The printed wait for the shards (volume mode) ends when the Job is Complete, and when it
/// is Failed (a shard that crashed or ran out of memory), not at its timeout: run here in
/// busybox's sh against a kubectl that answers with the Job's conditions.
#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs busybox: run tests/run")]
fn the_printed_wait_ends_when_the_job_completes_or_fails() {
    let steps = kube::steps::Steps {
        name: "checkout",
        namespace: Some("load"),
        out: "k8s/checkout",
        shards: 4,
        copy: false,
        wait: Duration::from_secs(63 * 60 + 1),
    }
    .commands();
    // The lines up to the end of the wait loop.
    let wait: String = steps
        .split_inclusive('\n')
        .take_while(|l| !l.starts_with("kubectl get job"))
        .skip(1)
        .collect();
    assert!(wait.starts_with("end="), "{wait}");
    assert!(wait.contains("done"), "{wait}");
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let calls = tmp.path().join("calls");
    let kubectl = |conditions: &str| {
        let path = bin.join("kubectl");
        std::fs::write(
            &path,
            format!(
                "#!/bin/sh\necho \"$@\" >> {}\necho '{conditions}'\n",
                calls.display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let spawn = || {
        Child(
            Command::new("busybox")
                .args(["sh", "-c", &wait])
                .env("PATH", &path)
                .spawn()
                .expect("busybox runs (tests/run installs it)"),
        )
    };
    // Kubernetes 1.31 and later add SuccessCriteriaMet and FailureTarget first.
    for conditions in [
        "Complete",
        "SuccessCriteriaMet Complete",
        "Failed",
        "FailureTarget Failed",
    ] {
        kubectl(conditions);
        let mut waiting = spawn();
        let status = exit_within(&mut waiting, Duration::from_secs(60))
            .unwrap_or_else(|| panic!("the wait did not end on {conditions}"));
        assert!(status.success(), "{conditions}");
    }
    let asked = std::fs::read_to_string(&calls).unwrap();
    assert!(
        asked.contains(
            r#"get job -n load checkout -o jsonpath={.status.conditions[?(@.status=="True")].type}"#
        ),
        "{asked}"
    );
    // A Job still running (no condition true yet, or only Suspended false): it waits.
    kubectl("");
    let mut waiting = spawn();
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        waiting.0.try_wait().unwrap().is_none(),
        "the wait ended while the Job runs"
    );
}
