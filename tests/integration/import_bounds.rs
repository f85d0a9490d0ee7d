//! `headroom import` and `run --check` against inputs built to hurt them, as a new user and an
//! attacker would try them: each bounded in time, memory and breadth, refused with one line
//! when it cannot be read, leaving nothing half-written, and stopped by the first signal.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `headroom args` started, its output going to files in `logs` (a pipe nobody reads would
/// fill and block it).
fn spawn(args: &[&str], env: &[(&str, &str)], logs: &Path) -> Child {
    let file = |name: &str| std::fs::File::create(logs.join(name)).unwrap();
    Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(file("stdout"))
        .stderr(file("stderr"))
        .spawn()
        .expect("the binary runs")
}

/// What a child started by [`spawn`] wrote, once it ended.
fn ended(mut child: Child, logs: &Path) -> Output {
    let status = child.wait().unwrap();
    Output {
        status,
        stdout: std::fs::read(logs.join("stdout")).unwrap(),
        stderr: std::fs::read(logs.join("stderr")).unwrap(),
    }
}

/// `headroom args`, killed (and the test failed) if it has not ended within `limit`: a
/// command that blocks for ever fails the test instead of hanging it.
fn within(args: &[&str], env: &[(&str, &str)], limit: Duration) -> (Output, Duration) {
    let logs = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let mut child = spawn(args, env, logs.path());
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if started.elapsed() > limit {
            child.kill().unwrap();
            let o = ended(child, logs.path());
            panic!("{args:?} still running after {limit:?}:\n{}", text(&o));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let took = started.elapsed();
    (ended(child, logs.path()), took)
}

/// Everything under `dir`, hidden entries too, relative and sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            out.push(p.strip_prefix(dir).unwrap().display().to_string());
            if p.is_dir() {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

/// A HAR file of `entries` (each a JSON request object) for https://shop.example.
fn har(entries: &[String]) -> String {
    let entries: Vec<String> = entries
        .iter()
        .map(|r| format!(r#"{{"request": {r}, "response": {{"status": 200}}}}"#))
        .collect();
    format!(
        r#"{{"log": {{"version": "1.2", "entries": [{}]}}}}"#,
        entries.join(",\n")
    )
}

fn request(method: &str, path: &str, headers: &[(&str, &str)]) -> String {
    let headers: Vec<String> = headers
        .iter()
        .map(|(n, v)| format!(r#"{{"name": "{n}", "value": "{v}"}}"#))
        .collect();
    format!(
        r#"{{"method": "{method}", "url": "https://shop.example{path}", "headers": [{}]}}"#,
        headers.join(", ")
    )
}

/// `n` S3 requests, each signed (its own `Authorization: AWS4-HMAC-SHA256 …`).
fn signed_har(n: usize) -> String {
    let entries: Vec<String> = (0..n)
        .map(|i| {
            let auth = format!(
                "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20260101/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature={:064x}",
                i as u128 * 0x9e37_79b9_7f4a_7c15 + 1
            );
            request(
                "GET",
                &format!("/bucket/object-{i}"),
                &[("Authorization", &auth), ("X-Amz-Date", "20260101T000000Z")],
            )
        })
        .collect();
    har(&entries)
}

/// A HAR of 6,000 signed requests took time that grew with the cube of the count (1,000:
/// 0.26 s, 3,000: 4.5 s, 6,000: killed at 15 s, in a release build): every new credential
/// searched every variable, and each new name every name. It is linear now, and no signature
/// is written.
#[test]
fn a_har_of_six_thousand_signed_requests_imports_in_bounded_time() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s3.har");
    std::fs::write(&file, signed_har(6_000)).unwrap();
    let out = dir.path().join("out");
    let (o, took) = within(
        &[
            "import",
            "har",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
        Duration::from_secs(120),
    );
    assert!(o.status.success(), "{}", text(&o));
    // Linear: a second or two in a debug build on a busy machine; the cubic search took
    // minutes (in a debug build, far more).
    assert!(took < Duration::from_secs(60), "took {took:?}");
    let scenario = std::fs::read_to_string(out.join("scenario.yaml")).unwrap();
    assert_eq!(
        scenario.matches("\n- name: GET /bucket/object-").count(),
        6_000
    );
    assert!(scenario.contains("AWS4-HMAC-SHA256 ${HEADROOM_AUTHORIZATION_6000}"));
    let written = crate::support::all_text_under(&out) + &text(&o);
    assert!(!written.contains("Signature="), "a signature was written");
}

/// A session id in a query is taken out as a variable; the same value in later requests'
/// Referer headers (and their paths) was written as it was. Every copy is the variable now.
#[test]
fn a_session_id_taken_out_of_a_query_is_taken_out_of_every_referer() {
    let session = "c0ffee5e55101d42";
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("page.har");
    let page = format!("https://shop.example/cart?session_id={session}");
    std::fs::write(
        &file,
        har(&[
            request(
                "GET",
                &format!("/cart?session_id={session}"),
                &[("Accept", "*/*")],
            ),
            request("GET", "/api/items", &[("Referer", &page)]),
            request(
                "GET",
                &format!("/api/sessions/{session}"),
                &[("Referer", &page)],
            ),
        ]),
    )
    .unwrap();
    let out = dir.path().join("out");
    let (o, _) = within(
        &[
            "import",
            "har",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
        Duration::from_secs(60),
    );
    assert!(o.status.success(), "{}", text(&o));
    let written = crate::support::all_text_under(&out);
    assert!(
        !written.contains(session),
        "the session id was written:\n{written}"
    );
    assert!(!text(&o).contains(session), "{}", text(&o));
    assert!(
        written.contains("Referer: https://shop.example/cart?session_id=${HEADROOM_SESSION_ID}"),
        "{written}"
    );
    assert!(
        written.contains("/api/sessions/${HEADROOM_SESSION_ID}"),
        "{written}"
    );
    // And the scenario checks with the variable set, the value never printed.
    let scenario = out.join("scenario.yaml");
    let (o, _) = within(
        &["run", "--check", scenario.to_str().unwrap()],
        &[("HEADROOM_SESSION_ID", session)],
        Duration::from_secs(60),
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(!text(&o).contains(session), "{}", text(&o));
}

fn fifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

/// A HAR file, an OpenAPI document or curl's `-d @FILE` that is a FIFO blocked the import
/// for ever (an open waits for a writer). It is refused at once, without reading a byte; a
/// device and a directory likewise.
#[test]
fn fifos_devices_and_directories_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let pipe = dir.path().join("pipe");
    fifo(&pipe);
    let p = pipe.to_str().unwrap();
    let out = dir.path().join("out");
    let o_ = out.to_str().unwrap();
    let data = format!("curl -d @{p} http://h/x");
    let cases: Vec<Vec<&str>> = vec![
        vec!["import", "har", p, "--out", o_],
        vec!["import", "openapi", p, "--out", o_],
        vec!["import", "curl", &data, "--out", o_],
        vec!["import", "curl", "--file", p, "--out", o_],
        vec!["import", "har", "/dev/zero", "--out", o_],
        vec![
            "import",
            "openapi",
            dir.path().to_str().unwrap(),
            "--out",
            o_,
        ],
    ];
    for args in cases {
        // Refused before any read: well within a second; the limit only keeps a hang from
        // hanging the test.
        let (o, _) = within(&args, &[], Duration::from_secs(60));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", text(&o));
        assert!(
            err.contains("is not a regular file (a FIFO, device, socket or directory); save what it gives to a file and import that"),
            "{args:?}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!out.exists(), "{args:?} made {}", out.display());
    }
}

/// The CPU time `pid` has used, from /proc/PID/stat (utime + stime, in clock ticks of 10 ms).
fn cpu_time(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// Starts `args`, waits until it has worked `busy` of CPU time (so it is past start-up,
/// reading or building), sends SIGTERM, and returns how it ended and how long after the
/// signal. The input must be one the command takes far longer than `busy` to get through.
fn terminated_while_busy(
    args: &[&str],
    env: &[(&str, &str)],
    busy: Duration,
) -> (ExitStatus, String, Duration) {
    let logs = tempfile::tempdir().unwrap();
    let mut child = spawn(args, env, logs.path());
    let pid = child.id();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let o = ended(child, logs.path());
            panic!(
                "{args:?} ended ({status}) before it was busy for {busy:?}: give it a larger input\n{}",
                text(&o)
            );
        }
        if cpu_time(pid).is_some_and(|t| t >= busy) {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let signalled = Instant::now();
    let status = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if signalled.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("{args:?} still running a minute after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let took = signalled.elapsed();
    let o = ended(child, logs.path());
    (o.status, text(&o), took)
}

/// `import` and `run --check` went on after the first SIGTERM (only a run they never start
/// was cancelled). Both stop at once now, with the stopped status; the import leaves nothing.
#[test]
fn the_first_sigterm_stops_import_and_check_at_once() {
    let dir = tempfile::tempdir().unwrap();
    // Many seconds of work in a debug build: the signal comes well before the end.
    let file = dir.path().join("s3.har");
    std::fs::write(&file, signed_har(40_000)).unwrap();
    let out = dir.path().join("out");
    let (status, said, took) = terminated_while_busy(
        &[
            "import",
            "har",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
        Duration::from_millis(300),
    );
    assert_eq!(status.code(), Some(143), "{said}");
    assert!(
        said.contains("import stopped; nothing was written"),
        "{said}"
    );
    // Stopped at the signal, not at the end of the work (the watcher looks every 20 ms).
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert_eq!(listing(dir.path()), ["s3.har"], "something was left");

    let scenario = dir.path().join("big.yaml");
    let mut yaml = String::from("target: {url: 'http://127.0.0.1:9/'}\nrequests:\n");
    for i in 0..60_000 {
        yaml += &format!(
            "  - {{name: r{i}, path: '/p/{i}', headers: {{Authorization: 'Bearer ${{TOKEN}}'}}}}\n"
        );
    }
    yaml += "load: {rate: 1, duration: 1s}\n";
    std::fs::write(&scenario, yaml).unwrap();
    let (status, said, took) = terminated_while_busy(
        &["run", "--check", scenario.to_str().unwrap()],
        &[("TOKEN", "t0k3n-of-the-test")],
        Duration::from_millis(300),
    );
    assert_eq!(status.code(), Some(143), "{said}");
    assert!(said.contains("check stopped"), "{said}");
    assert!(took < Duration::from_secs(10), "took {took:?}");
}

/// A tree node schema (456 bytes) whose children are each the node again, three or four
/// times over: its example grew with the power of its depth (fan-out 3: 4.5 s, 1 GiB, a
/// 112 MB body file; fan-out 4: still running at 30 s). Now cut at 1 MiB, and said so.
#[test]
fn schemas_that_hold_themselves_three_and_four_times_over_are_cut_at_their_bound() {
    for fan_out in [3, 4] {
        let dir = tempfile::tempdir().unwrap();
        let children: Vec<String> = (0..fan_out)
            .map(|i| format!("child{i}: {{$ref: '#/components/schemas/Node'}}"))
            .collect();
        let doc = format!(
            "openapi: 3.0.3\ninfo: {{title: tree, version: '1'}}\nservers: [{{url: 'http://127.0.0.1:8080'}}]\npaths:\n  /tree:\n    post:\n      operationId: plant\n      requestBody:\n        content:\n          application/json:\n            schema: {{$ref: '#/components/schemas/Node'}}\n      responses: {{'201': {{description: planted}}}}\ncomponents:\n  schemas:\n    Node:\n      type: object\n      properties: {{label: {{type: string}}, {}}}\n",
            children.join(", ")
        );
        let file = dir.path().join("tree.yaml");
        std::fs::write(&file, doc).unwrap();
        let out = dir.path().join("out");
        let (o, took) = within(
            &[
                "import",
                "openapi",
                file.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ],
            &[],
            Duration::from_secs(120),
        );
        assert!(o.status.success(), "{}", text(&o));
        assert!(
            took < Duration::from_secs(60),
            "fan-out {fan_out}: took {took:?}"
        );
        let body = std::fs::metadata(out.join("bodies/plant.json"))
            .unwrap()
            .len();
        assert!(
            (512 << 10..=1280 << 10).contains(&body),
            "fan-out {fan_out}: {body} bytes"
        );
        assert!(
            text(&o).contains("POST /tree: its example was cut at 1024 KiB"),
            "{}",
            text(&o)
        );
        let scenario = std::fs::read_to_string(out.join("scenario.yaml")).unwrap();
        assert!(
            scenario.contains("# POST /tree: its example was cut"),
            "{scenario}"
        );
    }
}

/// 195 KB of 100,000 nested arrays was parsed in time that grows with the square of the
/// depth (killed at 15 s; 24 s in a release build, 88 s for `[1, ` nested in YAML). It is
/// refused where it passes 128 levels, at once.
#[test]
fn a_document_of_a_hundred_thousand_nested_arrays_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("api.json");
    // In a mapping, as a document's value: bare at the top level, libyaml's scanner happens
    // to be quick; there, the old parse took 24 s in a release build.
    let nested = "[".repeat(100_000) + &"]".repeat(100_000);
    std::fs::write(
        &file,
        format!("{{\"openapi\": \"3.0.0\", \"x\": {nested}}}"),
    )
    .unwrap();
    let (o, took) = within(
        &[
            "import",
            "openapi",
            file.to_str().unwrap(),
            "--out",
            dir.path().join("out").to_str().unwrap(),
        ],
        &[],
        Duration::from_secs(120),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        err.contains("api.json:1:154: nested deeper than 128 levels, far past what an OpenAPI document needs; is it one?"),
        "{err}"
    );
    assert!(took < Duration::from_secs(10), "took {took:?}");
}

/// A tmpfs of its own, unmounted when dropped.
struct SmallDisk(PathBuf);

impl SmallDisk {
    fn mount(at: &Path, size: &str) -> SmallDisk {
        std::fs::create_dir_all(at).unwrap();
        let o = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "mount a tmpfs (the tests run as root): {}",
            text(&o)
        );
        SmallDisk(at.to_path_buf())
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// An import onto a full disk left a truncated body file, and a retry was refused as
/// "already exists". Now nothing is left, and the retry after freeing space writes it all.
#[test]
#[cfg_attr(
    not(feature = "lab"),
    ignore = "needs root (mounts a tmpfs): run tests/run"
)]
fn an_import_onto_a_full_disk_leaves_nothing_and_a_retry_works() {
    let dir = tempfile::tempdir().unwrap();
    let disk = SmallDisk::mount(&dir.path().join("disk"), "1m");
    // A 600 KB body: it does not fit beside the 600 KB filler.
    let body = dir.path().join("body.txt");
    std::fs::write(&body, "x".repeat(600_000)).unwrap();
    let command = format!(
        "curl -H 'Content-Type: text/plain' -d @{} http://h/upload",
        body.display()
    );
    let filler = disk.0.join("filler");
    std::fs::write(&filler, vec![0u8; 600_000]).unwrap();
    let out = disk.0.join("imported");
    let args = [
        "import",
        "curl",
        command.as_str(),
        "--out",
        out.to_str().unwrap(),
    ];
    let (o, _) = within(&args, &[], Duration::from_secs(60));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        err.contains("no space left on the device; nothing was written: free some space (or choose another --out) and import again"),
        "{err}"
    );
    assert_eq!(listing(&disk.0), ["filler"], "something was left");
    std::fs::remove_file(&filler).unwrap();
    let (o, _) = within(&args, &[], Duration::from_secs(60));
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        listing(&disk.0),
        [
            "imported",
            "imported/bodies",
            "imported/bodies/post-upload.txt",
            "imported/scenario.yaml"
        ]
    );
    assert_eq!(
        std::fs::metadata(out.join("bodies/post-upload.txt"))
            .unwrap()
            .len(),
        600_000
    );
}

/// An 8 KB token used in 1,000 requests: `run --check` took 10 s for 700 of them and 27 s for
/// 1,000 (a release build), scrubbing each line of every use of every value. One pass a line
/// now; the token is never printed.
#[test]
fn a_long_token_in_a_thousand_requests_checks_in_bounded_time() {
    let dir = tempfile::tempdir().unwrap();
    let token = "s3cr3t-".repeat(1_171);
    let mut yaml = String::from(
        "target: {url: 'http://127.0.0.1:9/', headers: {X-Tenant: acme}}\nrequests:\n",
    );
    for i in 0..1_000 {
        yaml += &format!(
            "  - {{name: r{i}, path: '/p/{i}', headers: {{Authorization: 'Bearer ${{TOKEN}}'}}}}\n"
        );
    }
    yaml += "load: {rate: 1, duration: 1s}\n";
    let scenario = dir.path().join("s.yaml");
    std::fs::write(&scenario, yaml).unwrap();
    let (o, took) = within(
        &["run", "--check", scenario.to_str().unwrap()],
        &[("TOKEN", &token)],
        Duration::from_secs(300),
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(!text(&o).contains("s3cr3t-"), "the token was printed");
    assert_eq!(
        text(&o).matches("\n  request r").count(),
        1_000,
        "{}",
        text(&o)
    );
    // One pass a line: about a second in a debug build; every use of every value for each
    // line: tens of seconds in a release build, minutes in a debug one.
    assert!(took < Duration::from_secs(30), "took {took:?}");
}
