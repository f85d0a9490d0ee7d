//! `run --check`: every file the run reads is read, and what it would send is shown with its
//! secrets left out.

use crate::support::headroom;

fn scenario(dir: &std::path::Path, tls: &str) -> std::path::PathBuf {
    std::fs::write(dir.join("users.csv"), "user,password\nalice,hunter2pass\n").unwrap();
    let path = dir.join("s.yaml");
    std::fs::write(
        &path,
        format!(
            r#"target:
  url: https://127.0.0.1:9/api
  headers: {{Authorization: "Bearer {{{{ token }}}}"}}
  {tls}
data:
  users: {{csv: users.csv}}
login: {{request: login}}
requests:
  - {{name: login, method: POST, path: "/login?as={{{{ user }}}}&access_token=literal-tok-31", headers: {{X-User: "{{{{ user }}}}", X-Goog-Api-Key: literal-goog-32, apikey: literal-key-33}}, json: {{user: "{{{{ user }}}}", password: "{{{{ password }}}}"}}, data: users, capture: {{token: {{json: token}}}}}}
  - {{name: profile, path: "/users/{{{{ user }}}}", data: users, headers: {{X-Trace: check}}}}
load:
  stages:
    - {{name: warm, rate: 10, duration: 30s, warmup: true}}
    - {{name: ramp, rate: [10, 2500], duration: 2m}}
"#
        ),
    )
    .unwrap();
    path
}

#[test]
fn a_check_reads_the_tls_files_the_run_would() {
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(dir.path(), "tls: {ca: missing-ca.pem}");
    let o = headroom(&["run", "--check", s.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("missing-ca.pem: no such file"), "{err}");
}

#[test]
fn a_check_shows_the_load_and_the_first_send_without_its_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(dir.path(), "");
    let o = headroom(&["run", "--check", s.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for line in [
        "load    open model, in stages for 2m 30s",
        "load      \"warm\": 10 req/s for 30s (warm-up, not reported)",
        "load      \"ramp\": 10 → 2,500 req/s for 2m",
        "first send of \"login\":",
        "    POST /api/login?as=$user&access_token=<redacted> HTTP/1.1",
        "    x-user: $user",
        "    authorization: <redacted>",
        "    x-goog-api-key: <redacted>",
        "    apikey: <redacted>",
        "of body, not shown)",
        "POST /api/login?as={{ user }}&access_token=<redacted>",
    ] {
        assert!(out.contains(line), "{line:?} missing from:\n{out}");
    }
    // Nothing read from the data file: where its values go, not what they are.
    assert!(
        !out.contains("hunter2pass") && !out.contains("alice"),
        "{out}"
    );
    assert!(!out.contains("Bearer"), "{out}");
    assert!(!out.contains("literal-"), "{out}");
}

#[test]
fn a_check_never_prints_the_value_of_an_environment_variable() {
    // A credential in a query string or a target URL, filled from the environment (as
    // `headroom import` writes them): the check shows the reference, never the value.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.yaml");
    std::fs::write(
        &path,
        "target: {url: 'http://127.0.0.1:9/${BASE}'}\nrequests:\n  - {name: search, path: '/search?q=x&api_key=${HEADROOM_API_KEY}'}\nload: {rate: 1, duration: 1s}\n",
    )
    .unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(["run", "--check", path.to_str().unwrap()])
        .env("HEADROOM_API_KEY", "k3y-v4lue-never-shown")
        .env("BASE", "tenant-9f8e7d")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        !out.contains("k3y-v4lue-never-shown") && !out.contains("tenant-9f8e7d"),
        "{out}"
    );
    assert!(out.contains("api_key=${HEADROOM_API_KEY}"), "{out}");
    assert!(out.contains("${BASE}"), "{out}");
}

#[test]
fn a_shard_checks_and_shows_its_own_part() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.yaml");
    std::fs::write(
        &path,
        "target: {url: 'http://127.0.0.1:9/'}\nrequests: [{name: a, path: /}]\nload: {users: 10, duration: 10s}\n",
    )
    .unwrap();
    let s = path.to_str().unwrap();
    let o = headroom(&["run", "--check", s, "--shard", "1/4"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("shard 1/4 of the test"), "{out}");
    assert!(out.contains("closed model, 3 users"), "{out}");
    // A part no shard could run is refused by the check as by the run.
    let o = headroom(&["run", "--check", s, "--shard", "0/11"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("10 user(s) cannot be split over 11 shards"),
        "{err}"
    );
}
