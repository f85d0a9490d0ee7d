//! What a vegeta or k6 user reaches for on the command line: completions and man pages,
//! `--version` with the commit, `-o FILE` for the report, `--out` that refuses a file name,
//! rates as `100/s`, targets from standard input, a closed model with a rate cap, and the
//! PromQL for a pushed run.

use crate::support::{self, headroom, headroom_stdin, prometheus::Prometheus, stderr, stdout};
use headroom::plan::{Load, Rate};
use headroom::store::RunDir;
use headroom::summary::Summary;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

fn summary_of(dir: &Path) -> (headroom::store::StoredRun, Summary) {
    let stored = RunDir::at(dir).load().unwrap();
    let summary = Summary::of(&stored);
    (stored, summary)
}

#[test]
fn completions_and_man_pages_are_generated_from_the_flags() {
    let bash = headroom(&["completions", "bash"]);
    assert!(bash.status.success(), "{}", stderr(&bash));
    let script = stdout(&bash);
    // Every subcommand and a flag added with this feature: the script follows the flags.
    for word in ["attack", "capacity", "completions", "man", "--max-rate"] {
        assert!(script.contains(word), "bash completion lacks {word}");
    }
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("headroom.bash");
    std::fs::write(&file, &script).unwrap();
    let syntax = Command::new("bash").arg("-n").arg(&file).output().unwrap();
    assert!(syntax.status.success(), "{}", stderr(&syntax));
    for shell in ["zsh", "fish"] {
        let out = headroom(&["completions", shell]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stdout(&out).contains("max-rate"), "{shell}");
    }
    let wrong = headroom(&["completions", "tcsh"]);
    assert_eq!(wrong.status.code(), Some(2));
    assert!(stderr(&wrong).contains("bash"), "{}", stderr(&wrong));

    let man = headroom(&["man"]);
    assert!(man.status.success(), "{}", stderr(&man));
    assert!(stdout(&man).contains(".TH headroom 1"), "{}", stdout(&man));
    let dir = tmp.path().join("man");
    let pages = headroom(&["man", "--dir", dir.to_str().unwrap()]);
    assert!(pages.status.success(), "{}", stderr(&pages));
    let attack = std::fs::read_to_string(dir.join("headroom-attack.1")).unwrap();
    // roff escapes the hyphens of a flag.
    assert!(attack.contains("max\\-rate"), "{attack}");
    for page in [
        "headroom.1",
        "headroom-run.1",
        "headroom-report.1",
        "headroom-man.1",
    ] {
        assert!(dir.join(page).is_file(), "{page}");
    }
}

#[test]
fn version_names_the_commit_in_a_checkout_and_the_crate_version_outside_one() {
    let out = headroom(&["--version"]);
    let version = stdout(&out);
    let root = env!("CARGO_MANIFEST_DIR");
    // No git, or no checkout (an unpacked tarball): no commit to name.
    let commit = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(root)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8(o.stdout).unwrap())
        .unwrap_or_default();
    let want = match commit.trim() {
        "" => format!("headroom {}", env!("CARGO_PKG_VERSION")),
        commit => format!("headroom {} (commit {commit})", env!("CARGO_PKG_VERSION")),
    };
    assert_eq!(version.trim(), want);

    // The build script outside a checkout (a tarball): the crate's version alone, and the
    // build goes on. Compiled as cargo would, with the manifest directory a plain one.
    let tmp = tempfile::tempdir().unwrap();
    let tarball = tmp.path().join("headroom-9.9.9");
    std::fs::create_dir(&tarball).unwrap();
    let script = tmp.path().join("build-script");
    let built = Command::new("rustc")
        .args(["--edition", "2021", "-o"])
        .arg(&script)
        .arg(Path::new(root).join("build.rs"))
        .env("CARGO_PKG_VERSION", "9.9.9")
        .env("CARGO_MANIFEST_DIR", &tarball)
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", stderr(&built));
    let ran = Command::new(&script)
        .env("GIT_CEILING_DIRECTORIES", tmp.path())
        .output()
        .unwrap();
    assert!(ran.status.success(), "{}", stderr(&ran));
    assert!(
        stdout(&ran).contains("cargo:rustc-env=HEADROOM_VERSION=9.9.9\n"),
        "{}",
        stdout(&ran)
    );
    // And without git at all.
    let ran = Command::new(&script).env("PATH", "").output().unwrap();
    assert!(ran.status.success(), "{}", stderr(&ran));
    assert!(stdout(&ran).contains("HEADROOM_VERSION=9.9.9\n"));
}

#[test]
fn the_report_goes_to_o_file_on_attack_run_sweep_and_capacity() {
    let target = support::start_target(Duration::ZERO);
    let url = format!("http://{}/", target.addr());
    let tmp = tempfile::tempdir().unwrap();
    let path = |name: &str| tmp.path().join(name).to_str().unwrap().to_string();
    let scenario = path("s.yaml");
    std::fs::write(
        &scenario,
        format!("target: {{url: '{url}'}}\nrequests:\n  - {{name: root, path: /}}\nload: {{rate: 50, requests: 50}}\n"),
    )
    .unwrap();
    let runs: [(&str, Vec<&str>); 4] = [
        ("attack", vec!["attack", &url, "--rate", "100", "-n", "50"]),
        ("run", vec!["run", &scenario]),
        (
            "sweep",
            vec!["sweep", &url, "--rate", "50,100", "--step-duration", "1s"],
        ),
        (
            "capacity",
            vec![
                "capacity",
                &url,
                "--slo",
                "p99 < 100ms",
                "--start",
                "50",
                "--max",
                "50",
                "--window",
                "5s",
                "--warmup",
                "0s",
                "--confirm",
                "0",
                "--max-probes",
                "2",
            ],
        ),
    ];
    for (name, mut args) in runs {
        let report = path(&format!("{name}.json"));
        let out_dir = path(&format!("{name}-run"));
        args.extend(["-q", "--format", "json", "-o", &report, "--out", &out_dir]);
        let out = headroom(&args);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        assert_eq!(stdout(&out), "", "{name}: the report went to the file");
        let text = std::fs::read_to_string(&report).unwrap();
        let json: serde_json::Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
        assert!(json.is_object(), "{name}");
        assert!(stderr(&out).contains(&format!("wrote {report}")), "{name}");
        assert!(Path::new(&out_dir).is_dir(), "{name}");
    }
}

#[test]
fn out_refuses_a_name_meant_as_a_report_file_and_creates_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let existing = tmp.path().join("results");
    std::fs::write(&existing, "mine").unwrap();
    let bin = tmp.path().join("results.bin");
    let kept = tmp.path().join("kept.json");
    std::fs::create_dir(&kept).unwrap();
    for (out, why) in [(&bin, "a .bin name"), (&existing, "an existing file")] {
        let o = headroom(&[
            "attack",
            "http://127.0.0.1:9/",
            "--rate",
            "10",
            "-n",
            "1",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(1), "{why}");
        let e = stderr(&o);
        assert!(
            e.contains("--out is the run directory; for the report file use -o FILE"),
            "{why}: {e}"
        );
        assert!(!e.contains("panicked"), "{e}");
    }
    assert!(!bin.exists(), "nothing was made of results.bin");
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "mine");
    // A directory the user made is theirs to name, whatever its name.
    let target = support::start_target(Duration::ZERO);
    let url = format!("http://{}/", target.addr());
    let o = headroom(&[
        "attack",
        &url,
        "--rate",
        "50",
        "-n",
        "5",
        "-q",
        "--out",
        kept.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(kept.join("meta.json").is_file());
}

#[test]
fn rates_are_read_as_vegeta_writes_them_on_every_rate_flag() {
    let target = support::start_target(Duration::ZERO);
    let url = format!("http://{}/", target.addr());
    let tmp = tempfile::tempdir().unwrap();
    for (rate, per_second) in [
        ("100/s", 100.0),
        ("100/1s", 100.0),
        ("6000/1m", 100.0),
        ("50", 50.0),
    ] {
        let dir = tmp.path().join(rate.replace('/', "per"));
        let o = headroom(&[
            "attack",
            &url,
            "--rate",
            rate,
            "-n",
            "20",
            "-q",
            "--out",
            dir.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{rate}: {}", stderr(&o));
        let (stored, _) = summary_of(&dir);
        assert_eq!(
            stored.meta.load,
            Load::Open {
                rate: Rate(per_second)
            },
            "{rate}"
        );
    }
    // A sweep's ladder reads them too.
    let dir = tmp.path().join("sweep");
    let o = headroom(&[
        "sweep",
        &url,
        "--rate",
        "60/s,3000/1m",
        "--step-duration",
        "1s",
        "-q",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (stored, _) = summary_of(&dir);
    let levels: Vec<f64> = stored.meta.stages.iter().map(|s| s.to).collect();
    assert_eq!(levels, [60.0, 50.0]);
    // And a wrong one says which forms are read, on any command.
    for args in [
        vec!["attack", &url, "--rate", "100/fortnight", "-n", "1"],
        vec!["capacity", &url, "--slo", "p99 < 1s", "--start", "ten"],
        vec!["attack", &url, "-c", "2", "--max-rate", "5/0s", "-n", "1"],
    ] {
        let o = headroom(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let e = stderr(&o);
        assert!(
            e.contains("100/s") || e.contains("longer than zero"),
            "{args:?}: {e}"
        );
    }
}

#[test]
fn targets_from_standard_input_are_sent_in_turn_and_bad_lines_named_by_number() {
    let target = support::start_target(Duration::ZERO);
    let base = format!("http://{}", target.addr());
    let tmp = tempfile::tempdir().unwrap();
    let body = tmp.path().join("body.json");
    std::fs::write(&body, "{\"key\":\"value\"}").unwrap();
    let targets = format!(
        "# three targets, vegeta's http format\nGET {base}/a\nX-Env: test\nAuthorization: Bearer s3cr3t-token\n\nPOST {base}/b\nContent-Type: application/json\n@{}\n\nGET {base}/c?page=2\n",
        body.display()
    );
    let dir = tmp.path().join("run");
    let o = headroom_stdin(
        &[
            "attack",
            "-",
            "--rate",
            "300/s",
            "-n",
            "300",
            "-q",
            "-H",
            "X-All: 1",
            "--out",
            dir.to_str().unwrap(),
        ],
        &targets,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let (stored, summary) = summary_of(&dir);
    let rows: Vec<(&str, u64)> = summary
        .by_request
        .iter()
        .filter(|r| !r.method.is_empty())
        .map(|r| (r.name.as_str(), r.count))
        .collect();
    assert_eq!(
        rows,
        [("GET /a", 100), ("POST /b", 100), ("GET /c?page=2", 100)]
    );
    assert_eq!(summary.status_codes.get(&200), Some(&300));
    // Each POST carried its body file.
    assert_eq!(summary.bytes.out_total, 100 * 15);
    let first = &stored.meta.requests[0];
    assert!(
        first.headers.contains(&"x-env: test".to_string()),
        "{:?}",
        first.headers
    );
    assert!(
        first.headers.contains(&"x-all: 1".to_string()),
        "{:?}",
        first.headers
    );
    let stored_text = support::all_text_under(&dir);
    assert!(
        !stored_text.contains("s3cr3t"),
        "a secret header's value was stored"
    );

    for (text, line) in [
        (
            format!("GET {base}/a\nAuthorization Bearer s3cr3t-token\n"),
            2,
        ),
        (format!("GET {base}/a\nX-Api-Key: s3cr3t-token\u{1}\n"), 2),
        (format!("\n\n{base}/a\n"), 3),
        (
            format!("GET {base}/a\n\nGET http://other.invalid:1/s3cr3t-token\n"),
            3,
        ),
        ("# nothing\n".to_string(), 0),
    ] {
        let o = headroom_stdin(&["attack", "-", "--rate", "10", "-n", "1"], &text);
        assert_eq!(o.status.code(), Some(1), "{text:?}");
        let e = stderr(&o);
        if line > 0 {
            assert!(e.contains(&format!("line {line}: ")), "{text:?}: {e}");
        } else {
            assert!(e.contains("no targets"), "{e}");
        }
        assert!(!e.contains("s3cr3t"), "{e}");
        assert!(!e.contains("panicked"), "{e}");
    }
}

#[test]
fn max_rate_holds_the_closed_model_to_its_cap_however_fast_the_server() {
    let target = support::start_target(Duration::ZERO);
    let url = format!("http://{}/", target.addr());
    let tmp = tempfile::tempdir().unwrap();
    // 50 users against a server that answers at once would start thousands per second;
    // capped at 150/s, 300 requests take two seconds (the last slot falls due at 299/150 s)
    // on any machine, however fast.
    let dir = tmp.path().join("counted");
    let o = headroom(&[
        "attack",
        &url,
        "-c",
        "50",
        "-n",
        "300",
        "--max-rate",
        "150/s",
        "-q",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("closed model, 50 workers, at most 150 req/s"),
        "{}",
        stdout(&o)
    );
    let (stored, summary) = summary_of(&dir);
    assert_eq!(summary.requests.total, 300);
    assert!(
        summary.duration.attack_secs >= 1.95,
        "{}",
        summary.duration.attack_secs
    );
    assert_eq!(stored.meta.max_rate, Some(Rate(150.0)));

    // Timed: never more starts than the cap's slots in the time (201 in 2 s at 100/s);
    // uncapped, the same users send thousands.
    for http2 in [false, true] {
        let dir = tmp.path().join(format!("timed-{http2}"));
        let mut args = vec![
            "attack",
            &url,
            "-c",
            "20",
            "-d",
            "2s",
            "--max-rate",
            "100",
            "-q",
            "--out",
            dir.to_str().unwrap(),
        ];
        if http2 {
            args.push("--http2");
        }
        let o = headroom(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let (_, summary) = summary_of(&dir);
        assert!(
            summary.requests.sent <= 201,
            "http2 {http2}: {} sent",
            summary.requests.sent
        );
        assert!(
            summary.requests.sent >= 100,
            "http2 {http2}: {} sent",
            summary.requests.sent
        );
    }

    // The open model has its rate already: the cap is refused there, with what to do.
    let o = headroom(&["attack", &url, "--rate", "10", "--max-rate", "5", "-n", "1"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("leave out --max-rate"),
        "{}",
        stderr(&o)
    );
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs Prometheus: run tests/run")]
fn the_printed_promql_counts_exactly_the_run_in_prometheus() {
    let prometheus = Prometheus::start();
    let target = support::start_target(Duration::ZERO);
    let url = format!("http://{}/", target.addr());
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("promql-run");
    let push = format!("prometheus={}", prometheus.write_url());
    // Several seconds, so the count is only right if the last second's sample is read.
    let o = headroom(&[
        "attack",
        &url,
        "--rate",
        "500/s",
        "-n",
        "2000",
        "-q",
        "--push",
        &push,
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (stored, summary) = summary_of(&dir);
    assert_eq!(summary.requests.total, 2000);

    // end.json has the end in Unix seconds beside ISO 8601, the same instant.
    let end = stored.end.as_ref().unwrap();
    let unix = end.ended_unix.expect("ended_unix is written");
    let iso = humantime::parse_rfc3339(&end.ended_at).unwrap();
    let iso_ms = iso
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    assert_eq!((unix * 1e3).round() as u128, iso_ms);

    let e = stderr(&o);
    let queries: Vec<&str> = e
        .lines()
        .skip_while(|l| !l.starts_with("this run in Prometheus"))
        .skip(1)
        .map(str::trim)
        .take(2)
        .collect();
    assert_eq!(queries.len(), 2, "{e}");
    assert!(
        queries[0].contains("run_id=\"promql-run\""),
        "{}",
        queries[0]
    );
    assert_eq!(prometheus.scalar(queries[0]), 2000.0, "{}", queries[0]);
    let p99 = prometheus.scalar(queries[1]);
    let ours = summary.latency.p99_us as f64 / 1e6;
    let factor = (-f64::from(headroom::push::native::SCHEMA)).exp2().exp2();
    assert!(
        p99 <= ours * factor && p99 >= ours / factor,
        "{p99} against {ours}"
    );

    // `report` prints the same queries again, so they are not lost with the terminal.
    let again = headroom(&["report", dir.to_str().unwrap(), "--format", "json"]);
    assert!(again.status.success(), "{}", stderr(&again));
    for q in &queries {
        assert!(stderr(&again).contains(q), "{q} not in {}", stderr(&again));
    }

    // A run stored before ended_unix existed still loads, and its end reads from ended_at.
    let path = dir.join("end.json");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    json.as_object_mut().unwrap().remove("ended_unix");
    std::fs::write(&path, json.to_string()).unwrap();
    let (old, _) = summary_of(&dir);
    assert_eq!(old.end.as_ref().unwrap().ended_unix, None);
    assert_eq!(old.end.as_ref().unwrap().unix_secs(), Some(unix));
    let report = headroom(&["report", dir.to_str().unwrap()]);
    assert!(report.status.success(), "{}", stderr(&report));
}
