//! A test that misses its objective, run as its Job's pods would run it: each shard exits 0
//! (`--judged-by-merge`, so the Job completes and the printed wait ends), says what its part
//! missed, and the merged run carries the verdict: `headroom report --exit-status` exits 3.

use super::pods::{expand, lay_out};
use super::*;

/// The scenario: the built-in target answering after 5 ms, an objective of 1 ms that no
/// machine, however fast, meets.
fn scenario(dir: &Path, url: &str, slo: &str) -> PathBuf {
    let path = dir.join("verdict.yaml");
    std::fs::write(
        &path,
        format!("target: {{url: '{url}'}}\nrequests: [{{name: get, path: /}}]\nload: {{rate: 40, requests: 40}}\nslo: ['{slo}']\n"),
    )
    .unwrap();
    path
}

#[test]
fn a_missed_objective_completes_the_job_and_is_the_merges_verdict() {
    const N: u32 = 2;
    let target = crate::support::start_target(Duration::from_millis(5));
    let url = format!("http://{}/", target.addr());
    let tmp = tempfile::tempdir().unwrap();
    let manifests = tmp.path().join("manifests");
    let mut s = spec(
        scenario(tmp.path(), &url, "p99 < 1ms").to_str().unwrap(),
        N,
        volume(),
    );
    s.now = SystemTime::now();
    s.start = Start::In(Duration::from_secs(2));
    s.allow_local_target = true;
    kube::build(&s, &|_| None)
        .unwrap()
        .write(&manifests)
        .unwrap();

    let shard_args = |i: u32| -> (Vec<String>, Vec<(String, String)>) {
        let pod = lay_out(&manifests, &tmp.path().join(format!("pod-{i}")));
        let args = pod
            .args
            .iter()
            .map(|a| expand(a, i).replace(&format!("/pod-{i}/runs"), "/runs"))
            .collect();
        (args, pod.env)
    };
    let pods: Vec<_> = (0..N).map(shard_args).collect();
    let mut children = Vec::new();
    for (args, env) in pods.iter().cloned() {
        assert!(args.contains(&"--judged-by-merge".to_string()), "{args:?}");
        children.push(
            Command::new(env!("CARGO_BIN_EXE_headroom"))
                .args(&args)
                .envs(env)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap(),
        );
    }
    for c in children {
        let out = c.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        // The pod succeeds: the Job completes whatever the verdict.
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert!(
            stderr.contains("an objective was not met in this shard's part (exit status 0: --judged-by-merge, the merged run is judged)"),
            "{stderr}"
        );
    }

    // The merge Job's commands: the merge, then the report, which prints the verdict and
    // does not fail the Job either.
    let merge: Job = yaml_serde::from_str(
        &std::fs::read_to_string(manifests.join("merge/50-merge.yaml")).unwrap(),
    )
    .unwrap();
    let runs = tmp.path().join("runs").display().to_string();
    let local = |args: &[String]| -> Vec<String> {
        args.iter().map(|a| a.replace("/runs", &runs)).collect()
    };
    let merge_args = local(&merge.spec.template.spec.init_containers[0].args);
    let out = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(&merge_args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = &merge.spec.template.spec.containers[0];
    assert_eq!(report.name, "report");
    assert!(!report.args.contains(&"--exit-status".to_string()));
    let shown = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(local(&report.args))
        .output()
        .unwrap();
    assert_eq!(shown.status.code(), Some(0));
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(text.contains("p99 < 1ms"), "{text}");

    // Where the verdict is read as a status: the merged run's report with --exit-status.
    let merged = tmp.path().join("runs/verdict/merged");
    let judged = crate::support::headroom(&["report", merged.to_str().unwrap(), "--exit-status"]);
    assert_eq!(
        judged.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&judged.stderr)
    );
    assert!(String::from_utf8_lossy(&judged.stderr)
        .contains("an objective was not met (exit status 3)"));

    // The same shard without --judged-by-merge fails its pod, as before.
    let (args, env) = pods[0].clone();
    let alone: Vec<String> = args
        .into_iter()
        .filter(|a| a != "--judged-by-merge")
        .map(|a| a.replace("shard-0", "alone"))
        .collect();
    let out = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(&alone)
        .envs(env)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    target.stop();
}

/// `report --exit-status` of a run that met its objective exits 0.
#[test]
fn report_exit_status_of_a_met_objective_is_zero() {
    let target = crate::support::start_target(Duration::ZERO);
    let url = format!("http://{}/", target.addr());
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("met");
    let out = crate::support::headroom(&[
        "attack",
        &url,
        "--rate",
        "50",
        "-n",
        "20",
        "--slo",
        "p99 < 10s",
        "--quiet",
        "--out",
        run.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let judged = crate::support::headroom(&["report", run.to_str().unwrap(), "--exit-status"]);
    assert_eq!(judged.status.code(), Some(0));
    target.stop();
}
