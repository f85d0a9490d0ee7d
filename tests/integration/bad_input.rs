//! Bad input and faults: each is refused with one line that says what to change, in bounded
//! time and memory, never a panic, and never echoing a secret it was given.

use crate::support::headroom;
use std::process::Output;
use std::time::{Duration, Instant};

/// Runs headroom, bounded in time, and returns its error and how long it took; the error is
/// one line, and the exit status 1.
fn refused(args: &[&str]) -> (String, Duration) {
    let started = Instant::now();
    let o: Output = headroom(args);
    let took = started.elapsed();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_refusal(args, &o.status, &err);
    (err, took)
}

/// A refusal: one line on standard error that says what is wrong, with exit status 1; or,
/// for a flag's value the argument parser refuses, its `error:` line and exit status 2.
fn assert_refusal(args: &[&str], status: &std::process::ExitStatus, err: &str) {
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    match status.code() {
        Some(1) => assert!(
            lines.len() == 1 && lines[0].starts_with("headroom: "),
            "{args:?}: not one line: {err}"
        ),
        Some(2) => assert!(
            lines[0].starts_with("error: invalid value"),
            "{args:?}: {err}"
        ),
        other => panic!("{args:?}: exit status {other:?}: {err}"),
    }
}

/// Writes `yaml` as a scenario in `dir` and returns how `run --check` refused it.
fn check_refused(dir: &std::path::Path, yaml: &str) -> (String, Duration) {
    let scenario = dir.join("s.yaml");
    std::fs::write(&scenario, yaml).unwrap();
    refused(&["run", "--check", scenario.to_str().unwrap()])
}

/// Like [`refused`], under GNU time: also the peak resident memory, in MiB.
fn refused_in_memory(args: &[&str]) -> (String, Duration, u64) {
    let dir = tempfile::tempdir().unwrap();
    let measured = dir.path().join("rss");
    let started = Instant::now();
    let o = std::process::Command::new("/usr/bin/time")
        .args(["-f", "%M", "-o", measured.to_str().unwrap()])
        .arg(env!("CARGO_BIN_EXE_headroom"))
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("GNU time runs (tests/run installs it)");
    let took = started.elapsed();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_refusal(args, &o.status, &err);
    let kib: u64 = std::fs::read_to_string(&measured)
        .unwrap()
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .expect("GNU time's peak RSS in KiB");
    (err, took, kib / 1024)
}

#[test]
fn urls_ports_and_user_info() {
    for (url, says) in [
        (
            "http://127.0.0.1:99999/",
            "port \"99999\" is not a number from 1 to 65535",
        ),
        (
            "http://127.0.0.1:abc/",
            "port \"abc\" is not a number from 1 to 65535",
        ),
        (
            "http://alice:s3cretpw@127.0.0.1:9/",
            "invalid URL \"http://***@127.0.0.1:9/\": user info in URLs is not supported",
        ),
    ] {
        let (err, _) = refused(&["attack", url, "--rate", "10", "-d", "1s"]);
        assert!(err.contains(says), "{url}: {err}");
        assert!(!err.contains("s3cretpw") && !err.contains("alice"), "{err}");
    }
}

#[test]
fn numbers_past_what_one_generator_takes() {
    let url = "http://127.0.0.1:9/";
    for (args, says) in [
        (
            vec!["attack", url, "-c", "1", "-d", "500000000000y"],
            "longer than a year",
        ),
        (
            vec![
                "attack",
                url,
                "--rate",
                "10",
                "-d",
                "1s",
                "--timeout",
                "400d",
            ],
            "longer than a year",
        ),
        (
            vec![
                "attack",
                url,
                "--rate",
                "10",
                "-d",
                "1s",
                "--threads",
                "100000",
            ],
            "--threads 100000 is above 256",
        ),
        (
            vec!["attack", url, "-c", "10000000", "-d", "1s"],
            "--concurrency 10000000 is above the 100000 users one generator runs",
        ),
        (
            vec!["attack", url, "--rate", "1e12", "-d", "1s"],
            "above the 10,000,000 req/s",
        ),
    ] {
        let (err, took) = refused(&args);
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(took < Duration::from_secs(30), "{args:?} took {took:?}");
    }
}

#[test]
fn body_files_that_are_not_files_are_refused_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let fifo = fifo.to_str().unwrap();
    for path in ["/dev/zero", "/dev/urandom", fifo] {
        let (err, took) = refused(&[
            "attack",
            "http://127.0.0.1:9/",
            "--rate",
            "10",
            "-d",
            "1s",
            "--body-file",
            path,
        ]);
        assert!(
            err.contains(&format!("--body-file: {path} is not a regular file")),
            "{err}"
        );
        // Before the change /dev/zero read until memory ran out and a FIFO blocked forever.
        assert!(took < Duration::from_secs(30), "{path} took {took:?}");
    }
}

#[test]
fn a_data_file_of_secrets_is_never_echoed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("secrets.csv"),
        "AKIAEXAMPLEKEY,hunter2pass\nrow,two\n",
    )
    .unwrap();
    let (err, _) = check_refused(
        dir.path(),
        "target: {url: 'http://127.0.0.1:9/'}\ndata:\n  users: {csv: secrets.csv}\nrequests:\n  - {name: get, path: '/x/{{ user }}', data: users}\nload: {rate: 10, duration: 1s}\n",
    );
    assert!(err.contains("undefined variable \"user\""), "{err}");
    assert!(
        !err.contains("AKIAEXAMPLEKEY") && !err.contains("hunter2pass"),
        "{err}"
    );
}

#[test]
fn a_stored_run_naming_a_stage_it_does_not_have_is_refused_not_allocated() {
    let target = crate::support::start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("sweep");
    let o = headroom(&[
        "sweep",
        &format!("http://{}/", target.addr()),
        "--rate",
        "10,20",
        "--step-duration",
        "1s",
        "-q",
        "--out",
        run.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let log = run.join("intervals.jsonl");
    let text = std::fs::read_to_string(&log).unwrap();
    let mut lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(lines.len() >= 2);
    lines[0]["stage"] = 65535.into();
    let damaged: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    std::fs::write(&log, damaged.join("\n") + "\n").unwrap();
    let (err, _) = refused(&["report", run.to_str().unwrap()]);
    assert!(
        err.contains("intervals.jsonl: line 1: stage 65535, but the run has 2 stage(s)"),
        "{err}"
    );
}

#[test]
fn a_scenario_that_aliases_expand_past_its_limit_is_refused_before_it_is_built() {
    let dir = tempfile::tempdir().unwrap();
    // 1 MiB aliased a thousand times: a gigabyte once expanded (2 GB of memory before).
    let mut yaml = format!(
        "target: {{url: 'http://127.0.0.1:9/'}}\nrequests:\n  - name: a\n    path: /\n    body: &big '{}'\n",
        "x".repeat(1024 * 1024)
    );
    for i in 0..1000 {
        yaml += &format!("  - {{name: a{i}, path: /, body: *big}}\n");
    }
    yaml += "load: {rate: 1, duration: 1s}\n";
    let (err, took) = check_refused(dir.path(), &yaml);
    assert!(
        err.contains("the scenario expands to more than 16 MiB (YAML aliases"),
        "{err}"
    );
    assert!(took < Duration::from_secs(30), "took {took:?}");
}

/// A run directory that fills up (its log written to /dev/full, which fails every write with
/// ENOSPC) stops the attack at the first failed second instead of sending on unrecorded, and
/// says what happened.
#[test]
fn a_full_disk_stops_the_attack_and_says_so() {
    let target = crate::support::start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    std::fs::create_dir(&out).unwrap();
    std::os::unix::fs::symlink("/dev/full", out.join("intervals.jsonl")).unwrap();
    let (err, took) = refused(&[
        "attack",
        &format!("http://{}/", target.addr()),
        "--rate",
        "100",
        "-d",
        "60s",
        "-q",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        err.contains("No space left on device")
            && err.contains("the attack was stopped within a second"),
        "{err}"
    );
    // Not the minute asked for: stopped at the first second it could not write.
    assert!(took < Duration::from_secs(45), "took {took:?}");
}

/// Checking a scenario grows with its size, not its square: 60,000 requests that each
/// capture a value, in 30,000 flows, took minutes when every name was looked up by a walk
/// over all the others (65,535 of them: 153 s in a release build; now about 1 s).
#[test]
fn a_scenario_of_sixty_thousand_requests_checks_in_bounded_time() {
    let dir = tempfile::tempdir().unwrap();
    let n = 60_000;
    let mut yaml = String::from("target: {url: 'http://127.0.0.1:9/'}\nrequests:\n");
    for i in 0..n {
        yaml +=
            &format!("  - {{name: r{i}, path: '/p/{i}', capture: {{v{i}: {{header: X-Id}}}}}}\n");
    }
    yaml += "flows:\n";
    for i in (0..n).step_by(2) {
        yaml += &format!("  - {{name: f{i}, steps: [r{i}, r{}]}}\n", i + 1);
    }
    yaml += "load: {rate: 1, duration: 1s}\n";
    let scenario = dir.path().join("big.yaml");
    std::fs::write(&scenario, yaml).unwrap();
    let started = Instant::now();
    let o = headroom(&["run", "--check", scenario.to_str().unwrap()]);
    let took = started.elapsed();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Linear: a few seconds in a debug build on a busy machine; quadratic: many minutes.
    assert!(took < Duration::from_secs(90), "took {took:?}");

    // One past what a mix can hold is refused before a request is built.
    let mut yaml = String::from("target: {url: 'http://127.0.0.1:9/'}\nrequests:\n");
    for i in 0..=65_535 {
        yaml += &format!("  - {{name: r{i}, path: /}}\n");
    }
    yaml += "load: {rate: 1, duration: 1s}\n";
    let (err, took) = check_refused(dir.path(), &yaml);
    assert!(
        err.contains("requests: 65536 requests, but a mix can hold at most 65535"),
        "{err}"
    );
    assert!(took < Duration::from_secs(90), "took {took:?}");
}

/// A data file of one endless line, or of millions of columns, is refused at the first row
/// past its bounds (1 MiB, 1,024 columns), having read no more than that: it took about three
/// times the file in memory when it was read whole first.
#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs GNU time: run tests/run")]
fn data_files_of_endless_rows_or_columns_are_refused_at_their_bounds() {
    let dir = tempfile::tempdir().unwrap();
    // A gigabyte of one line (sparse: no disk is used), and 10 million columns.
    let line = dir.path().join("line.csv");
    std::fs::File::create(&line)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    let columns = dir.path().join("columns.csv");
    std::fs::write(&columns, "a,".repeat(10_000_000)).unwrap();
    let jsonl = dir.path().join("line.jsonl");
    std::fs::File::create(&jsonl)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    for (file, kind, says) in [
        (
            &line,
            "csv",
            "line.csv:1: a row longer than 1 MiB, the most one request takes from a data file (put large bodies in body_file)",
        ),
        (
            &columns,
            "csv",
            "columns.csv:1: more than 1024 columns, the most a data file may have",
        ),
        (
            &jsonl,
            "jsonl",
            "line.jsonl:1: a row longer than 1 MiB",
        ),
    ] {
        let scenario = dir.path().join("s.yaml");
        std::fs::write(
            &scenario,
            format!(
                "target: {{url: 'http://127.0.0.1:9/'}}\ndata: {{d: {{{kind}: {}}}}}\nrequests: [{{name: a, path: '/{{{{ a }}}}', data: d}}]\nload: {{rate: 1, duration: 1s}}\n",
                file.display()
            ),
        )
        .unwrap();
        let (err, took, rss_mib) = refused_in_memory(&["run", "--check", scenario.to_str().unwrap()]);
        assert!(err.contains(says), "{err}");
        assert!(rss_mib < 48, "{file:?}: {rss_mib} MiB");
        assert!(took < Duration::from_secs(60), "{file:?}: took {took:?}");
    }
}

/// A request whose templates could fill to more than a request may take (a batch of a
/// hundred 1 MiB values) is refused when the scenario is checked, not when a
/// send allocates gigabytes.
#[test]
fn a_template_that_could_fill_past_a_request_is_refused_when_checked() {
    let dir = tempfile::tempdir().unwrap();
    let (err, _) = check_refused(
        dir.path(),
        "target: {url: 'http://127.0.0.1:9/'}\ndata: {kv: {generate: {keys: 10, value_bytes: 1048576}}}\nrequests:\n  - {name: many, method: POST, path: /many, json: {v: '{{ value | batch(100) }}'}, data: kv}\nload: {rate: 1, duration: 1s}\n",
    );
    assert!(
        err.contains("requests[0] (many): its templates may fill to 100 MiB (the longest values of its data and captures, its batches and escaping), above the 64 MiB one request may take"),
        "{err}"
    );
}
