//! `headroom import`: scenarios from curl lines, an OpenAPI 3 document and a HAR file that
//! headless Chromium recorded, each checked with `run --check` and run against the real
//! server it describes (nginx, etcd); credentials never reach the file or the output.

use crate::support::etcd::Etcd;
use crate::support::nginx::{Nginx, Tls};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The `headroom` binary run with `args` and the environment `env` added.
fn headroom_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Asserts none of `secrets` is in the output or in any file under `dir`.
fn assert_no_secrets(o: &Output, dir: &Path, secrets: &[&str]) {
    let stored = crate::support::all_text_under(dir);
    let shown = text(o);
    for s in secrets {
        assert!(
            !stored.contains(s),
            "{s} written under {}:\n{stored}",
            dir.display()
        );
        assert!(!shown.contains(s), "{s} in the output:\n{shown}");
    }
}

/// A short bounded run of `scenario`: `requests` requests at 50 req/s; returns its summary.
fn short_run(scenario: &Path, requests: u64, env: &[(&str, &str)]) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = headroom_env(
        &[
            "run",
            scenario.to_str().unwrap(),
            "--rate",
            "50",
            "--duration",
            "20s",
            "--set",
            &format!("load.requests={requests}"),
            "--out",
            out.to_str().unwrap(),
            "--format",
            "json",
            "-q",
        ],
        env,
    );
    assert!(o.status.success(), "the run failed:\n{}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}:\n{}", text(&o)))
}

/// `run --check` of `scenario` passes.
fn check(scenario: &Path, env: &[(&str, &str)]) -> String {
    let o = headroom_env(&["run", "--check", scenario.to_str().unwrap()], env);
    assert!(o.status.success(), "run --check failed:\n{}", text(&o));
    text(&o)
}

const LOG: &str =
    "$request_method $request_uri \"$http_authorization\" \"$http_x_trace\" $content_length";

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn curl_lines_import_check_and_run_against_nginx() {
    let mut nginx =
        Nginx::with_locations_and_log(Tls::None, r#"location / { return 200 "ok\n"; }"#, LOG);
    let base = nginx.url("http", "");
    let dir = tempfile::tempdir().unwrap();
    // One file of commands as a user pastes them: continuations, comments, short and long
    // options, a body from a file.
    std::fs::write(dir.path().join("item.json"), "{\"name\": \"eight\"}\n").unwrap();
    let lines = format!(
        "# the shop's API\n\
         curl -sS -X PUT '{base}/api/items/7?token=T0KEN-VALUE-1&v=1' \\\n  \
           -H 'Authorization: Bearer B3ARER-VALUE-2' -H 'X-Trace: imp' \\\n  \
           -H 'Content-Type: application/json' --data-raw '{{\"name\":\"seven\"}}'\n\
         curl --url {base}/api/items -u alice:PASSW0RD-VALUE-3 -k --json @{item}\n\
         \n\
         curl -d 'a=1&b=2' --data 'c=3' {base}/form\n",
        item = dir.path().join("item.json").display()
    );
    let file = dir.path().join("commands.txt");
    std::fs::write(&file, lines).unwrap();
    let out = dir.path().join("scenario");
    let o = crate::support::headroom(&[
        "import",
        "curl",
        "--file",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let secrets = [
        "T0KEN-VALUE-1",
        "B3ARER-VALUE-2",
        "PASSW0RD-VALUE-3",
        "YWxpY2U6UEFTU1cwUkQtVkFMVUUtMw",
    ];
    assert_no_secrets(&o, &out, &secrets);
    let yaml = std::fs::read_to_string(out.join("scenario.yaml")).unwrap();
    for want in [
        "Authorization: Bearer ${HEADROOM_BEARER_TOKEN}",
        "Authorization: Basic ${HEADROOM_BASIC_AUTH}",
        "path: /api/items/7?token=${HEADROOM_TOKEN}&v=1",
        "#   HEADROOM_BEARER_TOKEN",
        "name: PUT /api/items/7",
        "name: POST /api/items",
        "name: POST /form",
        "insecure: true",
    ] {
        assert!(yaml.contains(want), "{want:?} missing from:\n{yaml}");
    }
    assert_eq!(
        std::fs::read_to_string(out.join("bodies/put-api-items-7.json")).unwrap(),
        "{\"name\":\"seven\"}"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("bodies/post-form.form")).unwrap(),
        "a=1&b=2&c=3"
    );
    // Importing again over it is refused, and --force replaces it.
    let again = crate::support::headroom(&[
        "import",
        "curl",
        "--file",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(again.status.code(), Some(1));
    assert!(
        text(&again).contains("already exists; give --force"),
        "{}",
        text(&again)
    );
    let forced = crate::support::headroom(&[
        "import",
        "curl",
        "--file",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--force",
    ]);
    assert!(forced.status.success(), "{}", text(&forced));

    let scenario = out.join("scenario.yaml");
    // Unset, the variable is named; set, the check passes.
    let unset = crate::support::headroom(&["run", "--check", scenario.to_str().unwrap()]);
    assert_eq!(unset.status.code(), Some(1));
    assert!(text(&unset).contains("HEADROOM_"), "{}", text(&unset));
    let env = [
        ("HEADROOM_BEARER_TOKEN", "env-bearer"),
        ("HEADROOM_TOKEN", "env-token"),
        ("HEADROOM_BASIC_AUTH", "ZW52OmJhc2lj"),
    ];
    check(&scenario, &env);
    let summary = short_run(&scenario, 9, &env);
    assert_eq!(summary["requests"]["total"], 9, "{summary}");
    assert_eq!(summary["success_ratio"], 1.0, "{summary}");
    let log = nginx.stop();
    let count = |line: &str| log.iter().filter(|l| l.as_str() == line).count();
    // The exact mix: three of each, with the variables' values on the wire.
    assert_eq!(
        count("PUT /api/items/7?token=env-token&v=1 \"Bearer env-bearer\" \"imp\" 16"),
        3,
        "{log:#?}"
    );
    assert_eq!(
        count("POST /api/items \"Basic ZW52OmJhc2lj\" \"-\" 18"),
        3,
        "{log:#?}"
    );
    assert_eq!(count("POST /form \"-\" \"-\" 11"), 3, "{log:#?}");
    assert_eq!(log.len(), 9, "{log:#?}");
}

/// The example OpenAPI document for the key-value service, its server moved to `url`.
fn kv_openapi() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/kv-openapi.yaml")
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs etcd: run tests/run")]
fn the_kv_openapi_example_imports_checks_and_runs_against_etcd() {
    let etcd = Etcd::start();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("kv");
    let server = format!("{}/v3", etcd.url());
    let o = crate::support::headroom(&[
        "import",
        "openapi",
        kv_openapi().to_str().unwrap(),
        "--server",
        &server,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let yaml = std::fs::read_to_string(out.join("scenario.yaml")).unwrap();
    for want in [
        &format!("url: {server}") as &str,
        "name: put",
        "name: range",
        "path: /kv/put",
        "body_file: bodies/put.json",
        "- 200",
    ] {
        assert!(yaml.contains(want), "{want:?} missing from:\n{yaml}");
    }
    // The put's body is the document's example; the range's is built from its $ref'd schema.
    let put: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("bodies/put.json")).unwrap()).unwrap();
    assert_eq!(put["key"], "aW1wb3J0ZWQta2V5");
    let range: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("bodies/range.json")).unwrap()).unwrap();
    assert_eq!(range["key"], "aW1wb3J0ZWQta2V5", "{range}");
    let scenario = out.join("scenario.yaml");
    check(&scenario, &[]);
    let summary = short_run(&scenario, 8, &[]);
    assert_eq!(summary["requests"]["total"], 8, "{summary}");
    assert_eq!(
        summary["success_ratio"], 1.0,
        "every answer expected: {summary}"
    );
    assert_eq!(summary["status_codes"]["200"], 8, "{summary}");
    // The put reached etcd: the key holds the example's value.
    let v = post_json(etcd.port, "/v3/kv/range", r#"{"key":"aW1wb3J0ZWQta2V5"}"#);
    assert_eq!(v["kvs"][0]["value"], "aW1wb3J0ZWQtdmFsdWU=", "{v}");
}

/// POSTs `body` to 127.0.0.1:`port` and reads the JSON answer (HTTP/1.1, closed after).
fn post_json(port: u16, path: &str, body: &str) -> serde_json::Value {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    write!(
        s,
        "POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    let (_, json) = answer.split_once("\r\n\r\n").expect("an HTTP answer");
    serde_json::from_str(json.trim()).unwrap_or_else(|e| panic!("{e}: {answer}"))
}

/// Where tests/run installs the HAR recorder's npm packages.
fn recorder_modules() -> PathBuf {
    let dir = std::env::var_os("HEADROOM_HAR_RECORDER").map_or_else(
        || {
            PathBuf::from(std::env::var("HOME").unwrap_or_default())
                .join(".cache/headroom/har-recorder")
        },
        PathBuf::from,
    );
    let modules = dir.join("node_modules");
    assert!(
        modules.join("puppeteer-core").is_dir() && modules.join("chrome-har").is_dir(),
        "the HAR recorder's packages are not in {}: run tests/run, which installs them",
        modules.display()
    );
    modules
}

const PAGE: &str = r#"<!doctype html><html><head><title>shop</title>
<link rel="stylesheet" href="/style.css"></head>
<body><img src="/logo.png" alt="logo"><script>
fetch('/api/items', {method: 'POST', headers: {'Content-Type': 'application/json'},
                     body: JSON.stringify({name: 'widget', qty: 2})})
  .then(() => fetch('/api/search?q=widgets&page=2',
                    {headers: {'Authorization': 'Bearer HAR-S3CRET-TOKEN'}}))
  .then(() => { document.title = 'done'; });
</script></body></html>"#;

#[test]
#[cfg_attr(
    not(feature = "lab"),
    ignore = "needs nginx, Chromium and the HAR recorder (node): run tests/run"
)]
fn a_har_recorded_by_chromium_imports_checks_and_runs_against_nginx() {
    let modules = recorder_modules();
    let site = tempfile::tempdir().unwrap();
    std::fs::write(site.path().join("index.html"), PAGE).unwrap();
    std::fs::write(site.path().join("style.css"), "body { color: #333 }\n").unwrap();
    std::fs::write(site.path().join("logo.png"), b"\x89PNG\r\n\x1a\n").unwrap();
    let mut nginx = Nginx::with_locations_and_log(
        Tls::None,
        &format!(
            "root {}; location /api/ {{ default_type application/json; return 200 '{{\"ok\":true}}'; }}",
            site.path().display()
        ),
        LOG,
    );
    let dir = tempfile::tempdir().unwrap();
    let har = dir.path().join("page.har");
    let recorder = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/integration/support/har-recorder/record.js");
    let recorded = Command::new("node")
        .arg(&recorder)
        .arg(nginx.url("http", "/"))
        .arg(&har)
        .env("NODE_PATH", &modules)
        .stdin(Stdio::null())
        .output()
        .expect("node runs");
    assert!(
        recorded.status.success(),
        "recording failed:\n{}",
        text(&recorded)
    );

    let out = dir.path().join("imported");
    let o = crate::support::headroom(&[
        "import",
        "har",
        har.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert_no_secrets(&o, &out, &["HAR-S3CRET-TOKEN"]);
    assert!(text(&o).contains("static asset"), "{}", text(&o));
    let yaml = std::fs::read_to_string(out.join("scenario.yaml")).unwrap();
    for want in [
        "name: GET /\n",
        "name: POST /api/items",
        "name: GET /api/search",
        "path: /api/search?q=widgets&page=2",
        "Authorization: Bearer ${HEADROOM_BEARER_TOKEN}",
        "body_file: bodies/post-api-items.json",
    ] {
        assert!(yaml.contains(want), "{want:?} missing from:\n{yaml}");
    }
    for gone in [
        "style.css",
        "logo.png",
        "Host:",
        "Connection:",
        "Content-Length",
    ] {
        assert!(!yaml.contains(gone), "{gone:?} kept in:\n{yaml}");
    }
    let body: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("bodies/post-api-items.json")).unwrap())
            .unwrap();
    assert_eq!(body, serde_json::json!({"name": "widget", "qty": 2}));
    // Static assets kept when asked.
    let all = dir.path().join("all");
    let o = crate::support::headroom(&[
        "import",
        "har",
        har.to_str().unwrap(),
        "--keep-static",
        "--out",
        all.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let yaml_all = std::fs::read_to_string(all.join("scenario.yaml")).unwrap();
    assert!(
        yaml_all.contains("path: /style.css") && yaml_all.contains("path: /logo.png"),
        "{yaml_all}"
    );

    let env = [("HEADROOM_BEARER_TOKEN", "replayed-token")];
    let scenario = out.join("scenario.yaml");
    check(&scenario, &env);
    let summary = short_run(&scenario, 6, &env);
    assert_eq!(summary["requests"]["total"], 6, "{summary}");
    assert_eq!(summary["success_ratio"], 1.0, "{summary}");
    // The whole log once nginx has stopped: the browser's one of each, then the run's two.
    let log = nginx.stop();
    let count = |line: &str| log.iter().filter(|l| l.as_str() == line).count();
    assert_eq!(count("GET / \"-\" \"-\" -"), 1 + 2, "{log:#?}");
    assert_eq!(count("POST /api/items \"-\" \"-\" 25"), 1 + 2, "{log:#?}");
    assert_eq!(
        count("GET /api/search?q=widgets&page=2 \"Bearer HAR-S3CRET-TOKEN\" \"-\" -"),
        1,
        "{log:#?}"
    );
    assert_eq!(
        count("GET /api/search?q=widgets&page=2 \"Bearer replayed-token\" \"-\" -"),
        2,
        "{log:#?}"
    );
    // Nothing else was sent by the run: the static files only by the browser.
    let statics = log
        .iter()
        .filter(|l| l.contains(".css") || l.contains(".png"))
        .count();
    assert_eq!(statics, 2, "{log:#?}");
}

#[test]
fn bad_input_is_one_line_without_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, content: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, content).unwrap();
        p.to_str().unwrap().to_string()
    };
    let truncated = write(
        "truncated.har",
        "{\"log\": {\"entries\": [{\"request\": {\"method\": \"GET\",",
    );
    let wrong = write(
        "wrong.har",
        "{\"log\": {\"entries\": [{\"request\": {\"method\": \"GET\", \"url\": \"http://h/\",\n \"headers\": [{\"name\": \"Authorization\", \"value\": 123456789}]}}]}}",
    );
    let mistyped = write(
        "mistyped.har",
        "{\"log\": {\"entries\": [{\"request\": {\"method\": 7, \"url\": \"http://h/?token=SECRET-IN-URL\"}}]}}",
    );
    let yaml = write("broken.yaml", "openapi: 3.0.3\npaths:\n  /a: [unclosed\n");
    let swagger = write(
        "swagger.yaml",
        "swagger: '2.0'\ninfo: {title: t, version: '1'}\npaths: {}\n",
    );
    let big = dir.path().join("big.har");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(65 << 20)
        .unwrap();
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["import", "har", &truncated, "--out", out],
            "truncated.har:1:",
        ),
        (vec!["import", "har", &wrong, "--out", out], "wrong.har:2:"),
        (
            vec!["import", "har", &mistyped, "--out", out],
            "mistyped.har:1:",
        ),
        (
            vec!["import", "har", big.to_str().unwrap(), "--out", out],
            "above the 67108864 bytes",
        ),
        (
            vec!["import", "openapi", &yaml, "--out", out],
            "broken.yaml:",
        ),
        (
            vec!["import", "openapi", &swagger, "--out", out],
            "Swagger (OpenAPI 2)",
        ),
        (
            vec![
                "import",
                "curl",
                "wget --header 'Authorization: Bearer SECRET-IN-WGET' http://h/",
                "--out",
                out,
            ],
            "must start with `curl`",
        ),
        (
            vec![
                "import",
                "curl",
                "curl -F 'pw=SECRET-IN-FORM' http://h/",
                "--out",
                out,
            ],
            "option -F",
        ),
    ];
    for (args, want) in cases {
        let o = crate::support::headroom(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "{args:?}: not one line:\n{err}"
        );
        assert!(err.contains(want), "{args:?}: {want:?} missing from {err}");
        for secret in [
            "123456789",
            "SECRET-IN-URL",
            "SECRET-IN-WGET",
            "SECRET-IN-FORM",
        ] {
            assert!(!err.contains(secret), "{args:?} shows a secret: {err}");
        }
        assert!(!Path::new(out).exists(), "{args:?} wrote something");
    }
}
