//! Shards of one test (`--shard I/N`, `--start-at`) against the built-in target: together
//! they send the whole test, each records which part it was and of which plan, and bad
//! shard values are refused in one line.

use crate::support::{json_file as json, stderr};
use serde_json::Value as Json;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

fn headroom(args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_headroom"));
    c.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env_remove("HEADROOM_SHARDS")
        .env_remove("JOB_COMPLETION_INDEX");
    for (k, v) in env {
        c.env(k, v);
    }
    c
}

fn spawn_shard(url: &str, shard: &str, start_at: &str, out: &Path) -> Child {
    headroom(
        &[
            "attack",
            url,
            "--rate",
            "40",
            "-n",
            "41",
            "--shard",
            shard,
            "--start-at",
            start_at,
            "-q",
            "--format",
            "json",
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    )
    .spawn()
    .expect("the binary runs")
}

fn rfc3339(text: &Json) -> SystemTime {
    humantime::parse_rfc3339(text.as_str().unwrap()).unwrap()
}

#[test]
fn shards_with_a_common_start_send_the_whole_test_and_name_their_plan() {
    let server = crate::support::start_target(Duration::ZERO);
    let url = format!("http://{}/", server.addr());
    let dir = tempfile::tempdir().unwrap();
    // Two whole seconds ahead: both processes are up and waiting well before then.
    let start = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 3;
    let start_at = start.to_string();
    let outs = [dir.path().join("s0"), dir.path().join("s1")];
    let children: Vec<Child> = ["0/2", "1/2"]
        .iter()
        .zip(&outs)
        .map(|(shard, out)| spawn_shard(&url, shard, &start_at, out))
        .collect();
    let mut totals = vec![];
    let mut plans = vec![];
    for (i, (child, out)) in children.into_iter().zip(&outs).enumerate() {
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "shard {i}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!("shard {i} of 2")),
            "{}",
            stderr(&o)
        );
        // Waiting, unless the machine was so busy the process came up after the start.
        assert!(
            stderr(&o).contains("waiting until") || stderr(&o).contains("starting at once, late"),
            "{}",
            stderr(&o)
        );
        let summary: Json = serde_json::from_slice(&o.stdout).unwrap();
        totals.push(summary["requests"]["total"].as_u64().unwrap());
        assert_eq!(summary["shard"]["index"], i);
        let meta = json(&out.join("meta.json"));
        let shard = &meta["shard"];
        assert_eq!(shard["index"], i, "{meta}");
        assert_eq!(shard["count"], 2);
        assert_eq!(shard["whole_load"]["open"]["rate"], 40.0);
        assert_eq!(meta["load"]["open"]["rate"], 20.0, "its share");
        assert_eq!(
            meta["stop"]["requests"],
            21 - i as u64,
            "indices ≡ {i} mod 2 below 41"
        );
        // The schedule began at the common start, or as late as it says.
        let asked = rfc3339(&shard["start_at"]);
        assert_eq!(asked, UNIX_EPOCH + Duration::from_secs(start));
        let late = Duration::from_secs_f64(shard["late_secs"].as_f64().unwrap());
        let began = rfc3339(&meta["started_at"]);
        let off = began
            .duration_since(asked + late)
            .unwrap_or_else(|e| e.duration());
        assert!(off <= Duration::from_millis(2), "{meta}");
        plans.push(shard["plan"].as_str().unwrap().to_string());

        // The stored run's report says which part it is.
        let report = headroom(&["report", out.to_str().unwrap()], &[])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&report.stdout);
        assert!(text.contains(&format!("shard {i} of 2")), "{text}");
    }
    assert_eq!(totals.iter().sum::<u64>(), 41, "{totals:?}");
    assert_eq!(totals, vec![21, 20]);
    assert_eq!(plans[0], plans[1], "one test, one fingerprint");
    assert_eq!(plans[0].len(), 64);

    // Another plan (another rate) is another test; the same plan on another thread count,
    // from the environment of an Indexed Job, is the same one.
    let other = dir.path().join("other");
    let o = headroom(
        &[
            "attack",
            &url,
            "--rate",
            "50",
            "-n",
            "41",
            "--shard",
            "0/2",
            "-q",
            "--out",
            other.to_str().unwrap(),
        ],
        &[],
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let meta = json(&other.join("meta.json"));
    assert_ne!(meta["shard"]["plan"].as_str().unwrap(), plans[0]);
    assert!(meta["shard"].get("start_at").is_none(), "{meta}");

    let same = dir.path().join("same");
    let o = headroom(
        &[
            "attack",
            &url,
            "--rate",
            "40",
            "-n",
            "41",
            "-q",
            "--threads",
            "2",
            "--out",
            same.to_str().unwrap(),
        ],
        &[("HEADROOM_SHARDS", "2"), ("JOB_COMPLETION_INDEX", "1")],
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let meta = json(&same.join("meta.json"));
    assert_eq!(meta["shard"]["index"], 1);
    assert_eq!(meta["shard"]["plan"].as_str().unwrap(), plans[0]);
}

#[test]
fn bad_shard_values_are_refused_in_one_line() {
    let base = ["attack", "http://127.0.0.1:9/", "--rate", "10", "-n", "10"];
    let yesterday = (SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
        - 86_400)
        .to_string();
    type Env<'a> = &'a [(&'a str, &'a str)];
    let cases: Vec<(Vec<&str>, Env, &str)> = vec![
        (vec!["--shard", "2/2"], &[], "out of range"),
        (vec!["--shard", "0/0"], &[], "between 1 and 10000"),
        (vec!["--shard", "1-4"], &[], "INDEX/COUNT"),
        (vec!["--shards", "4"], &[], "no shard index"),
        (
            vec![],
            &[("HEADROOM_SHARDS", "4"), ("JOB_COMPLETION_INDEX", "7")],
            "out of range",
        ),
        (
            vec!["--shard", "0/11"],
            &[],
            "a count of 10 requests cannot be split over 11 shards",
        ),
        (vec!["--start-at", "tomorrow"], &[], "RFC 3339"),
        (vec!["--start-at", &yesterday], &[], "ago"),
        (
            vec!["--start-at", "2099-01-01T00:00:00Z"],
            &[],
            "more than a day ahead",
        ),
    ];
    for (extra, env, expected) in cases {
        let mut args = base.to_vec();
        args.extend(extra.iter().copied());
        let o = headroom(&args, env).output().unwrap();
        let err = stderr(&o);
        assert!(!o.status.success(), "{args:?} should fail");
        assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
        assert!(
            err.contains(expected),
            "{args:?}: expected {expected:?} in {err:?}"
        );
        assert_eq!(
            err.trim().lines().count(),
            1,
            "{args:?}: not one line: {err}"
        );
    }
}

/// A scenario writing `keys` generated keys once each (`pick: unique`), `requests` in all.
fn unique_keys(dir: &Path, url: &str, load: &str) -> std::path::PathBuf {
    let path = dir.join("fill.yaml");
    std::fs::write(
        &path,
        format!(
            "target: {{url: {url}}}\ndata:\n  keys: {{generate: {{keys: 30, value_bytes: 8, prefix: k-}}}}\nrequests:\n  - name: put\n    method: POST\n    path: /kv/{{{{ key }}}}\n    body: \"{{{{ value }}}}\"\n    data: keys\n    pick: unique\nload: {load}\n"
        ),
    )
    .unwrap();
    path
}

#[test]
fn shards_draw_disjoint_rows_so_unique_keys_last_exactly_the_whole_test() {
    let server = crate::support::start_target(Duration::ZERO);
    let url = format!("http://{}", server.addr());
    let dir = tempfile::tempdir().unwrap();
    for (model, load) in ["{users: 4, requests: 30}", "{rate: 200, requests: 30}"]
        .iter()
        .enumerate()
    {
        let scenario = unique_keys(dir.path(), &url, load);
        let scenario = scenario.to_str().unwrap();
        // 30 keys over 3 shards: 10 each, and the 10 requests of each shard find them.
        for (i, extra) in [(0, "30"), (1, "30"), (2, "30"), (0, "31")] {
            let shard = format!("{i}/3");
            let o = headroom(
                &[
                    "run",
                    scenario,
                    "-q",
                    "--format",
                    "json",
                    "--shard",
                    &shard,
                    "--set",
                    &format!("load.requests={extra}"),
                    "--out",
                    dir.path()
                        .join(format!("r{model}-{i}-{extra}"))
                        .to_str()
                        .unwrap(),
                ],
                &[],
            )
            .output()
            .unwrap();
            assert!(o.status.success(), "{load} {shard}: {}", stderr(&o));
            let summary: Json = serde_json::from_slice(&o.stdout).unwrap();
            let errors: u64 = summary["errors"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|e| e["key"] == "data_exhausted")
                .map(|e| e["count"].as_u64().unwrap())
                .sum();
            if extra == "30" {
                assert_eq!(
                    summary["requests"]["total"], 10,
                    "{load} {shard}: {summary}"
                );
                assert_eq!(errors, 0, "{load} {shard}: {summary}");
            } else {
                // The 31st request (index 30) is shard 0's 11th, past its 10 rows.
                assert_eq!(summary["requests"]["total"], 11, "{load} {shard}");
                assert_eq!(errors, 1, "{load} {shard}: {summary}");
            }
        }
    }
}

/// A 3/1 mix of reads and writes, each of its own set and once per key (`pick: unique`):
/// 30 read keys and 10 write keys, exactly what 40 requests of the whole test use.
fn read_write_once(dir: &Path, url: &str, load: &str) -> std::path::PathBuf {
    let path = dir.join("mix.yaml");
    std::fs::write(
        &path,
        format!(
            "target: {{url: {url}}}
data:
  reads: {{generate: {{keys: 30, value_bytes: 8, prefix: r-}}}}
  writes: {{generate: {{keys: 10, value_bytes: 8, prefix: w-}}}}
requests:
  - {{name: get, method: GET, path: '/kv/{{{{ key }}}}', data: reads, pick: unique, weight: 3}}
  - {{name: put, method: POST, path: '/kv/{{{{ key }}}}', body: '{{{{ value }}}}', data: writes, pick: unique, weight: 1}}
load: {load}
"
        ),
    )
    .unwrap();
    path
}

#[test]
fn a_weighted_mix_over_shards_uses_each_key_once_as_the_whole_test_does() {
    // 3/1 over 4 shards: the mix's wheel of 4 puts every write on one shard. That shard
    // must draw all 10 write keys (the whole test's turns), not a quarter of them.
    let server = crate::support::start_target(Duration::ZERO);
    let url = format!("http://{}", server.addr());
    let dir = tempfile::tempdir().unwrap();
    for load in ["{users: 4, requests: 40}", "{rate: 200, requests: 40}"] {
        let scenario = read_write_once(dir.path(), &url, load);
        let mut by_name = std::collections::BTreeMap::<String, u64>::new();
        for i in 0..4 {
            let shard = format!("{i}/4");
            let out = dir.path().join(format!("{}-{i}", load.len()));
            let o = headroom(
                &[
                    "run",
                    scenario.to_str().unwrap(),
                    "-q",
                    "--format",
                    "json",
                    "--shard",
                    &shard,
                    "--out",
                    out.to_str().unwrap(),
                ],
                &[],
            )
            .output()
            .unwrap();
            assert!(o.status.success(), "{load} {shard}: {}", stderr(&o));
            let summary: Json = serde_json::from_slice(&o.stdout).unwrap();
            assert!(
                summary["errors"].as_array().unwrap().is_empty()
                    && summary["failures"].as_array().unwrap().is_empty(),
                "{load} {shard}: no key ran out: {summary}"
            );
            for r in summary["by_request"].as_array().unwrap() {
                *by_name
                    .entry(r["name"].as_str().unwrap().into())
                    .or_default() += r["count"].as_u64().unwrap();
            }
        }
        let expected: std::collections::BTreeMap<String, u64> =
            [("get".into(), 30), ("put".into(), 10)].into();
        assert_eq!(
            by_name, expected,
            "{load}: the whole mix, summed over shards"
        );
    }
}

#[test]
fn a_stop_signal_while_waiting_for_the_start_stores_nothing() {
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let start = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 600;
    // The target is checked before the wait, so it must be up.
    let server = crate::support::start_target(Duration::ZERO);
    let url = format!("http://{}/", server.addr());
    let mut child = headroom(
        &[
            "attack",
            &url,
            "--rate",
            "10",
            "-n",
            "5",
            "--shard",
            "0/2",
            "--start-at",
            &start.to_string(),
            "-q",
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    )
    .spawn()
    .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let waiting = lines
        .by_ref()
        .map_while(Result::ok)
        .find(|l| l.contains("waiting until"));
    assert!(waiting.is_some(), "it says it waits");
    // The signal thread starts with the process; give it well over the time it takes to
    // listen, so the signal is the graceful stop and not the default action.
    std::thread::sleep(Duration::from_secs(1));
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::TERM,
    )
    .unwrap();
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143), "{rest:?}");
    assert!(
        rest.iter()
            .any(|l| l.contains("stopped while waiting for the common start")),
        "{rest:?}"
    );
    assert!(!out.exists(), "nothing stored");
}

#[test]
fn a_later_shard_holds_its_share_of_the_rate_from_the_common_start() {
    // Shard 2 of 3 of 30 req/s: its first request is the whole schedule's third, 2/30 s
    // after the common start its clock counts from. Its rate is its 10 req/s, not 29 sends
    // over its whole span (9.77 req/s, which read as a rate short with no cause).
    let server = crate::support::start_target(Duration::ZERO);
    let url = format!("http://{}/", server.addr());
    let dir = tempfile::tempdir().unwrap();
    let o = headroom(
        &[
            "attack",
            &url,
            "--rate",
            "30",
            "-d",
            "3s",
            "--shard",
            "2/3",
            "-q",
            "--format",
            "json",
            "--out",
            dir.path().join("s2").to_str().unwrap(),
        ],
        &[],
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let summary: Json = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(summary["requests"]["sent"], 30);
    let held = summary["generator"]["rate_held"].as_f64().unwrap();
    assert!((held - 10.0).abs() < 0.05, "held {held} of 10 req/s");
    // A busy machine may send late (its own finding); the rate itself is not short.
    assert!(
        !summary["verdict"]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["finding"] == "rate_short"),
        "{}",
        summary["verdict"]
    );
}
