//! `headroom run` with its values replaced from the command line and the environment,
//! against the built-in target: each override lands in the stored run, and a wrong one is
//! refused in one line naming it.

use crate::support::{headroom_env, json_file as json, stderr};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A scenario with two requests (`read`, `write`) against `url`: 20 req/s for 8 requests.
pub fn scenario(dir: &Path, url: &str) -> PathBuf {
    let path = dir.join("scenario.yaml");
    std::fs::write(
        &path,
        format!(
            "target:\n  url: {url}\nrequests:\n  - name: read\n    path: /\n  - name: write\n    method: POST\n    path: /\n    body: x\nload:\n  rate: 20\n  requests: 8\n"
        ),
    )
    .unwrap();
    path
}

/// Runs the scenario with `extra` arguments into a new directory; its meta.json and the
/// report's JSON.
fn run_with(scenario: &Path, extra: &[&str], env: &[(&str, &str)]) -> (Json, Json) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let mut args = vec!["run", scenario.to_str().unwrap(), "-q", "--format", "json"];
    args.extend_from_slice(extra);
    args.extend(["--out", out.to_str().unwrap()]);
    let o = headroom_env(&args, env);
    assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
    let summary: Json = serde_json::from_slice(&o.stdout).unwrap();
    (json(&out.join("meta.json")), summary)
}

#[test]
fn load_flags_replace_the_scenarios_load() {
    let server = crate::support::start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(dir.path(), &format!("http://{}", server.addr()));

    let (meta, summary) = run_with(&s, &["--rate", "40"], &[]);
    assert_eq!(meta["load"]["open"]["rate"], 40.0);
    assert_eq!(summary["requests"]["total"], 8);

    let (meta, summary) = run_with(&s, &["--users", "3"], &[]);
    assert_eq!(meta["load"]["closed"]["concurrency"], 3, "{meta}");
    assert_eq!(summary["requests"]["total"], 8);

    let (meta, _) = run_with(&s, &["--duration", "1s", "--rate", "5"], &[]);
    assert_eq!(meta["stop"]["duration"], "1s", "{meta}");
    // The scenario's request count still stops the run too.
    assert_eq!(meta["stop"]["requests"], 8);

    let (meta, _) = run_with(
        &s,
        &[
            "--stages",
            "[{name: up, rate: [1, 10], duration: 1s}, {name: hold, rate: 10, duration: 1s}]",
        ],
        &[],
    );
    let stages: Vec<&str> = meta["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    assert_eq!(stages, ["up", "hold"], "{meta}");
}

#[test]
fn set_replaces_any_value_by_path() {
    let server = crate::support::start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(dir.path(), &format!("http://{}", server.addr()));
    let (meta, summary) = run_with(
        &s,
        &[
            "--set",
            "load.requests=6",
            "--set",
            "requests.read.weight=2",
            "--set",
            "requests[1].path=/status/404",
            "--set",
            "target.headers.X-Env=007",
        ],
        &[],
    );
    assert_eq!(summary["requests"]["total"], 6);
    assert_eq!(meta["requests"][0]["weight"], 2);
    assert_eq!(meta["requests"][1]["path"], "/status/404");
    // A 404 is not what the write expects: every write failed, no read did.
    let rows = summary["by_request"].as_array().unwrap();
    assert_eq!(rows[0]["failures"], 0);
    assert_eq!(rows[1]["failures"], rows[1]["count"]);
    assert_eq!(rows[0]["count"], 4, "weights 2:1 over 6 requests");
}

#[test]
fn environment_variables_fill_the_scenario() {
    let server = crate::support::start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("env.yaml");
    std::fs::write(
        &path,
        "target:\n  url: http://${HR_HOST}:${HR_PORT}\n  headers:\n    authorization: Bearer ${HR_TOKEN:-none}\nrequests:\n  - name: read\n    path: /\nload:\n  rate: ${HR_RATE:-30}\n  requests: ${HR_COUNT}\n",
    )
    .unwrap();
    let port = server.addr().port().to_string();
    let env = [
        ("HR_HOST", "127.0.0.1"),
        ("HR_PORT", port.as_str()),
        ("HR_COUNT", "5"),
    ];
    let (meta, summary) = run_with(&path, &[], &env);
    assert_eq!(summary["requests"]["total"], 5);
    assert_eq!(meta["load"]["open"]["rate"], 30.0);
    assert_eq!(
        meta["target"]["url"],
        format!("http://127.0.0.1:{port}"),
        "{meta}"
    );

    // Unset and without a default: refused before anything runs, the variable named at
    // its line.
    let out = dir.path().join("never");
    let o = headroom_env(
        &[
            "run",
            path.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &[("HR_HOST", "127.0.0.1"), ("HR_PORT", port.as_str())],
    );
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains("env.yaml:10:") && e.contains("HR_COUNT is not set"),
        "{e}"
    );
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(!out.exists());

    // A value that does not fit is refused without being shown.
    let secret = "hunter2-do-not-print";
    let o = headroom_env(
        &["run", path.to_str().unwrap(), "--check"],
        &[
            ("HR_HOST", "127.0.0.1"),
            ("HR_PORT", port.as_str()),
            ("HR_COUNT", "5"),
            ("HR_RATE", secret),
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("${HR_RATE}") && !e.contains(secret), "{e}");
    let o = headroom_env(
        &["run", path.to_str().unwrap(), "--check"],
        &[
            ("HR_HOST", "bad host hunter2-do-not-print"),
            ("HR_PORT", port.as_str()),
            ("HR_COUNT", "5"),
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("HR_HOST") && !e.contains(secret), "{e}");
}

#[test]
fn a_path_the_scenario_cannot_have_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(dir.path(), "http://127.0.0.1:9");
    let s = s.to_str().unwrap();
    let cases: [(&[&str], &str); 5] = [
        (
            &["--set", "load.rat=5"],
            "load.rat: load has no field \"rat\"",
        ),
        (
            &["--set", "requests.delete.weight=5"],
            "requests has no item named \"delete\" (it has read, write)",
        ),
        (
            &["--set", "requests[4].weight=5"],
            "requests has 2 item(s), so no [4]",
        ),
        (&["--set", "load.rate"], "write path=value"),
        (
            &["--matrix", "load.speed=1,2"],
            "load has no field \"speed\"",
        ),
    ];
    for (args, expected) in cases {
        let mut all = vec!["run", s, "--check"];
        all.extend_from_slice(args);
        let o = crate::support::headroom(&all);
        assert!(!o.status.success(), "{args:?}");
        let e = stderr(&o);
        assert!(e.contains(expected), "{args:?}: {e}");
        assert!(!e.contains("panicked"), "{e}");
    }
    // A value the field cannot take is the loader's usual error.
    let o = crate::support::headroom(&["run", s, "--check", "--set", "load.rate=-4"]);
    assert!(
        stderr(&o).contains("load.rate must be a positive number"),
        "{}",
        stderr(&o)
    );
}

/// A `--set` or `--matrix` that is refused (a typo in its path, no `=`, a header's value where
/// its name goes, a value that is not YAML, or not of the field's type) says which path and
/// what is wrong, and never shows the value: it may be a token. clap's own errors for these
/// arguments, which quote the argument whole, are not used.
#[test]
fn a_refused_override_never_shows_its_value() {
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(dir.path(), "http://127.0.0.1:9");
    let s = s.to_str().unwrap();
    let cases: [(&[&str], &str); 8] = [
        (
            &["--set", "target.header.Authorization=Bearer tok-LEAK1"],
            "target.header.Authorization: target has no field \"header\"",
        ),
        (
            &["--set", "target.headers.Authorization:Bearer tok-LEAK2"],
            "write path=value",
        ),
        (
            &["--set", "target.headers.Authorization: Bearer tok-LEAK3=x"],
            "target.headers: a header's name is letters, digits",
        ),
        (
            &["--set", r#"requests.write.json={"password": "LEAK4""#],
            "requests.write.json: the value given (20 characters, not shown) is not a YAML value",
        ),
        (
            &["--matrix", "requests.write.jsn.password=LEAK5,b"],
            "requests.write.jsn.password: requests.write has no field \"jsn\"",
        ),
        (
            &["--matrix", "target.headers.X-Api-Key:LEAK6,b"],
            "write path=v1,v2,…",
        ),
        (
            &["--set", "load.rate=tok-LEAK7"],
            "load.rate: <the value given for load.rate> is not a rate",
        ),
        (
            &["--set=target.headers.X-Goog-Api-Key tok-LEAK8"],
            "write path=value",
        ),
    ];
    for (args, expected) in cases {
        let mut all = vec!["run", s, "--check"];
        all.extend_from_slice(args);
        let o = crate::support::headroom(&all);
        assert!(!o.status.success(), "{args:?}");
        let e = stderr(&o) + &String::from_utf8_lossy(&o.stdout);
        assert!(e.contains(expected), "{args:?}: {e}");
        assert!(!e.contains("LEAK"), "{args:?} shows its value: {e}");
    }
}

/// `sweep --scenario` and `capacity --scenario` take `--set` as `run` does: the swept plan
/// is the scenario with the value replaced.
#[test]
fn sweep_takes_set_on_its_scenario() {
    let server = crate::support::start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(dir.path(), &format!("http://{}", server.addr()));
    let out = dir.path().join("sweep");
    let o = headroom_env(
        &[
            "sweep",
            "--scenario",
            s.to_str().unwrap(),
            "--set",
            "requests[1].path=/status/404",
            "--concurrency",
            "1",
            "--step-requests",
            "6",
            "-q",
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert!(
        o.status.code() == Some(0) || o.status.code() == Some(3),
        "{}",
        stderr(&o)
    );
    let meta = json(&out.join("meta.json"));
    assert_eq!(meta["requests"][1]["path"], "/status/404");
    // A path the scenario cannot have is refused by name, before anything is sent.
    let bad = headroom_env(
        &[
            "capacity",
            "--scenario",
            s.to_str().unwrap(),
            "--set",
            "requests.nope.weight=2",
        ],
        &[],
    );
    assert!(!bad.status.success(), "{}", stderr(&bad));
    assert!(
        stderr(&bad).contains("no item named \"nope\""),
        "{}",
        stderr(&bad)
    );
    // Without a scenario there is nothing to set.
    let url = format!("http://{}", server.addr());
    let no = headroom_env(&["sweep", &url, "--rate", "5", "--set", "load.rate=5"], &[]);
    assert!(!no.status.success(), "{}", stderr(&no));
    assert!(
        stderr(&no).contains("give --scenario FILE"),
        "{}",
        stderr(&no)
    );
}
