//! CI outputs as a pipeline reads them: JUnit XML validated against the JUnit XML schema,
//! the GitHub Actions step summary, and the regression verdict against a baseline run.

use crate::support::{headroom, start_target, stderr, stdout};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

/// The JUnit XML schema (`junit-10.xsd`) that `tests/run` extracts from pytest's pinned
/// sdist.
fn junit_schema() -> PathBuf {
    let path = std::env::var_os("HEADROOM_JUNIT_XSD")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let cache = std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache"));
            cache.join("headroom-tests/pytest-8.3.4/junit-10.xsd")
        });
    assert!(
        path.is_file(),
        "the JUnit XML schema is missing at {}: run the tests with tests/run, which fetches it",
        path.display()
    );
    path
}

/// Validates `xml` against the JUnit XML schema with xmllint, failing with its complaint.
pub(crate) fn assert_valid_junit(xml: &str, dir: &Path) {
    let file = dir.join("junit.xml");
    std::fs::write(&file, xml).unwrap();
    let out = std::process::Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(junit_schema())
        .arg(&file)
        .output()
        .expect("xmllint runs (tests/run installs libxml2-utils)");
    assert!(
        out.status.success(),
        "the JUnit report does not validate: {}\n{xml}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The `<testcase …>` element named `name` (attribute-escaped), up to its end.
pub(crate) fn testcase<'a>(xml: &'a str, name: &str) -> &'a str {
    let at = xml
        .find(&format!(" name=\"{name}\""))
        .unwrap_or_else(|| panic!("no test case {name}:\n{xml}"));
    let start = xml[..at].rfind("<testcase").unwrap();
    let rest = &xml[start..];
    let end = rest
        .find("/>")
        .filter(|&e| !rest[..e].contains('>'))
        .map(|e| e + 2)
        .unwrap_or_else(|| rest.find("</testcase>").unwrap() + "</testcase>".len());
    &rest[..end]
}

/// A scenario against `url`'s target: a fast request and one the server answers after 20 ms,
/// at 40 req/s for 1 s, with a run-wide and two per-request objectives.
fn scenario(dir: &Path, url: &str, objectives: &[&str]) -> PathBuf {
    let path = dir.join("scenario.yaml");
    let slo: Vec<String> = objectives.iter().map(|o| format!("{o:?}")).collect();
    std::fs::write(
        &path,
        format!(
            "target: {{url: \"{url}\"}}\nrequests:\n  - {{name: \"fast <a&b>\", path: /delay/0}}\n  - {{name: slow, path: /delay/20}}\nload: {{rate: 40, duration: 1s}}\nslo: [{}]\n",
            slo.join(", ")
        ),
    )
    .unwrap();
    path
}

#[test]
#[cfg_attr(
    not(feature = "lab"),
    ignore = "needs xmllint and the JUnit schema: run tests/run"
)]
fn junit_has_a_case_per_objective_validates_and_names_the_measured_value() {
    let server = start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let url = format!("http://{}", server.addr());
    // The slow request's median is at least the 20 ms the server sleeps: never under 5 ms;
    // the fast one's p99 under 1 s holds on any machine.
    let file = scenario(
        dir.path(),
        &url,
        &[
            "fast <a&b>: p99 < 1s",
            "slow: p50 < 5ms",
            "error_rate < 50%",
        ],
    );
    let run = dir.path().join("run");
    let out = headroom(&[
        "run",
        file.to_str().unwrap(),
        "--out",
        run.to_str().unwrap(),
        "-q",
        "--format",
        "junit",
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let xml = stdout(&out);
    assert_valid_junit(&xml, dir.path());

    // Six cases: three objectives, requests succeeded, the generator kept up, the run
    // completed.
    assert!(xml.contains(r#"<testsuite name="headroom: "#), "{xml}");
    assert!(xml.contains(r#" tests="6" "#), "{xml}");
    let failures = xml.matches("<failure ").count();
    assert!(
        xml.contains(&format!(r#" failures="{failures}" errors="0" skipped="0""#)),
        "{xml}"
    );
    assert!(xml.contains(r#"timestamp=""#) && xml.contains(r#"hostname=""#));
    assert!(
        xml.contains(r#"<property name="run_id" value="run"/>"#),
        "{xml}"
    );
    assert!(xml.contains(&format!(r#"<property name="target" value="{url}"/>"#)));
    assert!(xml.contains(r#"<property name="load" value="open model, 40 req/s"/>"#));

    let fast = testcase(&xml, "fast &lt;a&amp;b&gt;: p99 &lt; 1s");
    assert!(fast.contains(r#"classname="headroom.objectives.fast &lt;a&amp;b&gt;""#));
    assert!(!fast.contains("<failure"), "{fast}");
    let overall = testcase(&xml, "error_rate &lt; 50%");
    assert!(overall.contains(r#"classname="headroom.objectives""#));
    assert!(!overall.contains("<failure"), "{overall}");

    let slow = testcase(&xml, "slow: p50 &lt; 5ms");
    assert!(slow.contains(r#"classname="headroom.objectives.slow""#));
    let message = slow
        .split("message=\"measured ")
        .nth(1)
        .unwrap_or_else(|| panic!("no measured value in {slow}"));
    let ms: f64 = message.split("ms").next().unwrap().parse().unwrap();
    assert!(
        ms >= 20.0,
        "the slow request's median is its 20 ms sleep: {slow}"
    );
    assert!(slow.contains(r#"type="objective not met""#));

    let kept_up = testcase(&xml, "the generator kept up");
    assert!(kept_up.contains(r#"classname="headroom.run""#));
    assert_eq!(failures, 1 + usize::from(kept_up.contains("<failure")));

    // The stored run renders the same cases.
    let again = headroom(&["report", run.to_str().unwrap(), "--format", "junit"]);
    assert!(again.status.success(), "{}", stderr(&again));
    let again = stdout(&again);
    assert_valid_junit(&again, dir.path());
    // Three objectives, then whether any request succeeded, the generator kept up and the
    // run completed.
    assert_eq!(
        again.matches("<testcase ").count(),
        6,
        "report renders every case: {again}"
    );
    assert!(!testcase(&again, "requests succeeded").contains("<failure"));
}

/// The binary run with `args` and `GITHUB_STEP_SUMMARY` set to `summary`.
fn headroom_with_summary(args: &[&str], summary: &Path) -> Output {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(args)
        .env("GITHUB_STEP_SUMMARY", summary)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("the binary runs");
    crate::support::counts::check_out(args);
    out
}

#[test]
fn the_step_summary_is_appended_by_each_run_and_a_write_failure_is_a_warning() {
    let server = start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let url = format!("http://{}/delay/20", server.addr());
    let summary = dir.path().join("step_summary.md");
    // An earlier step of the job wrote its own summary: it stays.
    std::fs::write(&summary, "earlier step\n").unwrap();
    for (name, slo) in [("first", "p50 < 5ms"), ("second", "p50 > 5ms")] {
        let out_dir = dir.path().join(name);
        let out = headroom_with_summary(
            &[
                "attack",
                &url,
                "--rate",
                "20",
                "-n",
                "10",
                "-q",
                "--slo",
                slo,
                "--out",
                out_dir.to_str().unwrap(),
            ],
            &summary,
        );
        let expected = if name == "first" { 3 } else { 0 };
        assert_eq!(out.status.code(), Some(expected), "{}", stderr(&out));
    }
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(text.starts_with("earlier step\n"), "{text}");
    assert_eq!(
        text.matches("### headroom: GET http://").count(),
        2,
        "{text}"
    );
    assert!(
        text.contains("Run `first`") && text.contains("Run `second`"),
        "{text}"
    );
    assert!(text.contains("| ❌ | `p50 < 5ms` |"), "{text}");
    assert!(text.contains("| ✅ | `p50 > 5ms` |"), "{text}");
    assert!(text.contains("**Verdict: "), "{text}");

    // A summary file that cannot be written (a directory) warns; the run still succeeds.
    let out = headroom_with_summary(
        &[
            "attack",
            &url,
            "--rate",
            "20",
            "-n",
            "5",
            "-q",
            "--out",
            dir.path().join("third").to_str().unwrap(),
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("warning: cannot append the step summary"),
        "{}",
        stderr(&out)
    );
}

/// A run of 20 requests at 40 req/s on `url`, stored in `dir`.
fn stored_run(url: &str, dir: &Path) {
    let out = headroom(&[
        "attack",
        url,
        "--rate",
        "40",
        "-n",
        "20",
        "-q",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
#[cfg_attr(
    not(feature = "lab"),
    ignore = "needs xmllint and the JUnit schema: run tests/run"
)]
fn compare_against_a_baseline_fails_a_slower_candidate_with_its_exit_status() {
    // The server sleeps 1 ms for the baseline and 50 ms for the candidate: the candidate's
    // median is at least 50 ms whatever the machine's load, far past 10 % over the baseline's.
    let server = start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base");
    let cand = dir.path().join("cand");
    stored_run(&format!("http://{}/delay/1", server.addr()), &base);
    stored_run(&format!("http://{}/delay/50", server.addr()), &cand);
    let (base, cand) = (base.to_str().unwrap(), cand.to_str().unwrap());

    let strict = headroom(&[
        "compare",
        "--baseline",
        base,
        cand,
        "--fail-on",
        "p50 +10%, errors +0.1pp",
    ]);
    assert_eq!(strict.status.code(), Some(4), "{}", stderr(&strict));
    let table = stdout(&strict);
    let p50 = table
        .lines()
        .find(|l| l.starts_with("p50 +10%"))
        .unwrap_or_else(|| panic!("no line for the rule: {table}"));
    assert!(p50.ends_with("REGRESSED"), "{table}");
    let errors = table
        .lines()
        .find(|l| l.starts_with("errors +0.1pp"))
        .unwrap();
    assert!(errors.ends_with("passed"), "{table}");
    assert!(table.contains("regression: 1 of 2 rules failed"), "{table}");
    let err = stderr(&strict);
    assert!(err.contains("regression: p50 +10%: candidate "), "{err}");
    assert!(err.contains("exit status 4"), "{err}");
    // Same server, other paths: compared, with a warning that the targets differ.
    assert!(
        err.contains("warning: the runs loaded different targets"),
        "{err}"
    );

    // Per rule, a JUnit test case, valid against the schema.
    let junit = headroom(&[
        "compare",
        "--baseline",
        base,
        cand,
        "--fail-on",
        "p50 +10%, errors +0.1pp",
        "--format",
        "junit",
    ]);
    assert_eq!(junit.status.code(), Some(4));
    let xml = stdout(&junit);
    assert_valid_junit(&xml, dir.path());
    assert!(xml.contains(r#" tests="2" failures="1" "#), "{xml}");
    assert!(testcase(&xml, "p50 +10%").contains("<failure message=\"p50 +10%: candidate "));
    assert!(!testcase(&xml, "errors +0.1pp").contains("<failure"));

    // The same gate as a page: the verdict first, marked as bad news, then the rules.
    let html = headroom(&[
        "compare",
        "--baseline",
        base,
        cand,
        "--fail-on",
        "p50 +10%, errors +0.1pp",
        "--format",
        "html",
    ]);
    assert_eq!(html.status.code(), Some(4));
    let page = stdout(&html);
    let verdict = page
        .find("regression: 1 of 2 rules failed")
        .unwrap_or_else(|| panic!("no verdict: {page}"));
    let rule = page.find("<td class=\"bad\">REGRESSED</td>").unwrap();
    assert!(verdict < rule, "the verdict comes before the rules");
    assert!(page.contains("answer tone-bad"), "{page}");

    // A loose rule holds: exit 0.
    let loose = headroom(&[
        "compare",
        "--baseline",
        base,
        cand,
        "--fail-on",
        "p50 +10s, errors +1pp",
    ]);
    assert_eq!(loose.status.code(), Some(0), "{}", stderr(&loose));
    assert!(stdout(&loose).contains("no regression: all 2 rules held"));
}

#[test]
fn a_bad_rule_is_one_line_naming_it_and_the_grammar() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    for (rules, named) in [
        ("p99 +10%, p98 +5ms", "\"p98 +5ms\""),
        ("errors +0.1%", "\"errors +0.1%\""),
        ("rps +5%", "\"rps +5%\""),
    ] {
        let out = headroom(&["compare", "--baseline", d, d, "--fail-on", rules]);
        assert_eq!(out.status.code(), Some(1), "{rules}");
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(&format!("invalid rule {named}")), "{err}");
        assert!(err.contains("errors +Npp"), "{err}");
    }
    // Runs of different tests are refused in one line.
    let server = start_target(Duration::ZERO);
    let a = dir.path().join("a");
    stored_run(&format!("http://{}/", server.addr()), &a);
    let other = dir.path().join("scenario");
    std::fs::create_dir(&other).unwrap();
    let file = scenario(&other, &format!("http://{}", server.addr()), &["p99 < 1s"]);
    let b = dir.path().join("b");
    let run = headroom(&[
        "run",
        file.to_str().unwrap(),
        "-q",
        "--out",
        b.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let out = headroom(&[
        "compare",
        "--baseline",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--fail-on",
        "p99 +10%",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("the runs sent different requests"), "{err}");
}

#[test]
fn a_gate_that_cannot_fail_or_was_given_nothing_is_refused_before_anything_runs() {
    // Found trying the gates as a new user would: rules no candidate can break were taken
    // (a gate passing for ever, silently), and `--slo "$SLO"` with SLO unset ran with no
    // objective and exited 0.
    let server = start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base");
    stored_run(&format!("http://{}/", server.addr()), &base);
    let b = base.to_str().unwrap();
    for (rules, says) in [
        ("rps -1000%", "throughput cannot fall by 100 % or more"),
        (
            "p99 +10%, errors +200pp",
            "cannot rise by 100 percentage points or more",
        ),
        (
            "",
            "--fail-on is empty (was a variable unset?): the gate would be off",
        ),
        (
            " , ",
            "--fail-on is empty (was a variable unset?): the gate would be off",
        ),
    ] {
        let out = headroom(&["compare", "--baseline", b, b, "--fail-on", rules]);
        assert_eq!(out.status.code(), Some(1), "{rules:?}: {}", stdout(&out));
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(says), "{rules:?}: {err}");
        assert!(stdout(&out).is_empty(), "{rules:?}: a verdict was printed");
    }
    let url = format!("http://{}/", server.addr());
    for (command, objectives, says) in [
        (
            "attack",
            "",
            "--slo is empty (was a variable unset?): the gate would be off",
        ),
        (
            "attack",
            ",",
            "--slo is empty (was a variable unset?): the gate would be off",
        ),
        (
            "attack",
            "error_rate <= 100%",
            "so this objective can never fail",
        ),
        ("attack", "rps >= 0", "so this objective can never fail"),
        (
            "capacity",
            "",
            "--slo is empty (was a variable unset?): the gate would be off",
        ),
    ] {
        let run = dir.path().join(format!("{command}-refused"));
        let mut args = vec![command, url.as_str(), "--slo", objectives];
        if command == "attack" {
            args.extend(["--rate", "10", "-n", "10"]);
        }
        args.extend(["-q", "--out", run.to_str().unwrap()]);
        let out = headroom(&args);
        assert_eq!(out.status.code(), Some(1), "{command} --slo {objectives:?}");
        let err = stderr(&out);
        assert!(err.contains(says), "{command} --slo {objectives:?}: {err}");
        assert!(!run.exists(), "{command} --slo {objectives:?} ran");
    }
}

#[test]
#[cfg_attr(
    not(feature = "lab"),
    ignore = "needs xmllint and the JUnit schema: run tests/run"
)]
fn a_partial_run_fails_the_regression_check_whatever_the_rules() {
    // Loose rules that the two runs hold; the candidate then loses its end record, as a run
    // killed mid-way does: the gate must fail on it, not pass on its partial figures.
    let server = start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base");
    let cand = dir.path().join("cand");
    stored_run(&format!("http://{}/", server.addr()), &base);
    stored_run(&format!("http://{}/", server.addr()), &cand);
    let (b, c) = (base.to_str().unwrap(), cand.to_str().unwrap());
    let rules = "p50 +10s, errors +99pp";
    let whole = headroom(&["compare", "--baseline", b, c, "--fail-on", rules]);
    assert_eq!(whole.status.code(), Some(0), "{}", stderr(&whole));

    std::fs::remove_file(cand.join("end.json")).unwrap();
    let out = headroom(&["compare", "--baseline", b, c, "--fail-on", rules]);
    assert_eq!(out.status.code(), Some(4), "{}", stdout(&out));
    let text = stdout(&out);
    assert!(
        text.contains("FAILED: the candidate run is partial (the run did not finish"),
        "{text}"
    );
    assert!(
        text.contains("not passed: the candidate run is partial; all 2 rules held"),
        "{text}"
    );
    assert!(!text.contains("no regression"), "{text}");
    assert!(
        stderr(&out).contains("regression: the candidate run is partial"),
        "{}",
        stderr(&out)
    );

    // As the baseline, in JUnit: a failed case for it, valid against the schema.
    let junit = headroom(&[
        "compare",
        "--baseline",
        c,
        b,
        "--fail-on",
        rules,
        "--format",
        "junit",
    ]);
    assert_eq!(junit.status.code(), Some(4));
    let xml = stdout(&junit);
    assert_valid_junit(&xml, dir.path());
    assert!(xml.contains(r#" tests="3" failures="1" "#), "{xml}");
    assert!(testcase(&xml, "the baseline run is complete").contains("<failure"));
    let json = headroom(&[
        "compare",
        "--baseline",
        b,
        c,
        "--fail-on",
        rules,
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(v["passed"], false);
    assert_eq!(v["incomplete"][0]["side"], "candidate");
}

#[test]
fn a_baseline_without_rules_warns_that_nothing_is_gated() {
    let server = start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base");
    stored_run(&format!("http://{}/", server.addr()), &base);
    let b = base.to_str().unwrap();
    let out = headroom(&["compare", "--baseline", b, b]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("gates nothing"), "{err}");
    assert!(err.contains("add --fail-on RULES"), "{err}");
}

/// The steps of the first workflow in docs/ci.md, as YAML values.
fn sample_workflow_steps() -> Vec<serde_json::Value> {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ci.md")).unwrap();
    let start = doc
        .find("```yaml\nname: load test\n")
        .expect("the sample workflow")
        + 8;
    let len = doc[start..].find("```").unwrap();
    let workflow: serde_json::Value = yaml_serde::from_str(&doc[start..start + len])
        .unwrap_or_else(|e| panic!("docs/ci.md's workflow is not YAML: {e}"));
    workflow["jobs"]["load-test"]["steps"]
        .as_array()
        .unwrap()
        .clone()
}

fn step<'a>(steps: &'a [serde_json::Value], name: &str) -> &'a serde_json::Value {
    steps
        .iter()
        .find(|s| s["name"].as_str().is_some_and(|n| n.starts_with(name)))
        .unwrap_or_else(|| panic!("no step {name}"))
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs jq: run tests/run")]
fn the_sample_workflow_reports_both_verdicts_waits_for_the_service_and_copes_without_a_baseline() {
    let steps = sample_workflow_steps();
    // A plain `if:` implies success(): after an objective failed (exit 3) the gate would be
    // skipped and its verdict never shown.
    let gate = step(&steps, "Regression gate");
    let condition = gate["if"].as_str().unwrap();
    assert!(
        condition.contains("!cancelled()") || condition.contains("always()"),
        "{condition}"
    );
    // The service answers before the load starts.
    let start = step(&steps, "Start the service")["run"].as_str().unwrap();
    assert!(start.contains("until curl"), "{start}");
    // The first pull request has no baseline: an empty id skips the gate with a notice,
    // before any download is tried.
    let script = gate["run"].as_str().unwrap();
    let skip = script
        .find("if [ -z \"$id\" ]")
        .expect("an empty id is handled");
    assert!(skip < script.find("gh run download").unwrap(), "{script}");
    assert!(script[skip..].contains("::notice"), "{script}");
    // The id query yields nothing (not "null") when main has no run, and the id when it has.
    let jq = script
        .split("--jq '")
        .nth(1)
        .and_then(|rest| rest.split('\'').next())
        .expect("the id is picked with --jq");
    for (runs, want) in [("[]", ""), (r#"[{"databaseId": 42}]"#, "42")] {
        let mut child = std::process::Command::new("jq")
            .args(["-r", jq])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("jq runs (tests/run installs jq)");
        use std::io::Write as _;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(runs.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), want, "{runs}");
    }
    // A fork's read-only token cannot post a check run: the publishing step skips forks.
    let publish = step(&steps, "Publish the test report")["if"]
        .as_str()
        .unwrap();
    assert!(publish.contains("head.repo.full_name"), "{publish}");
}
