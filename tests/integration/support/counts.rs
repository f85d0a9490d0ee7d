//! One set of counts: every run the suite makes is checked here, in every format. The
//! summary's own identity ([`Summary::count_identity`]: completions = status codes +
//! transport errors = the per-request rows = the measured stages = the per-second rows) and
//! each format's showing of it: text, markdown, JSON (read back and checked again), HTML
//! and JUnit state the summary's counts, not counts of their own.

use headroom::report::{plot, render_run, Extras, Format};
use headroom::store::{RunDir, StoredRun};
use headroom::summary::Summary;
use std::path::Path;

/// Loads the run at `dir` and checks its counts in every format.
pub fn check_dir(dir: impl AsRef<Path>) -> StoredRun {
    let dir = dir.as_ref();
    let stored = RunDir::at(dir)
        .load()
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    check(&stored, &dir.display().to_string());
    stored
}

/// Checks every run under `dir` that reads back: the run it is, or each run directory in it
/// (a capacity search's probes, a matrix's variants). A run that does not read back (a
/// test of a damaged one) is the test's to judge.
pub fn check_under(dir: &Path) {
    let one = |dir: &Path| {
        if let Ok(stored) = RunDir::at(dir).load() {
            check(&stored, &dir.display().to_string());
        }
    };
    if dir.join("meta.json").is_file() {
        one(dir);
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.path().join("meta.json").is_file() {
            one(&entry.path());
        }
    }
}

/// Checks the runs a command line stores (`--out DIR`), once it has run.
pub fn check_out(args: &[&str]) {
    if let Some(i) = args.iter().position(|a| *a == "--out") {
        if let Some(dir) = args.get(i + 1) {
            check_under(Path::new(dir));
        }
    }
}

/// Checks `stored`'s counts in every format; `name` says which run failed.
pub fn check(stored: &StoredRun, name: &str) {
    check_summary(stored, &Summary::of(stored), name);
}

/// Checks the counts of `s`, `stored`'s summary, in every format.
pub fn check_summary(stored: &StoredRun, s: &Summary, name: &str) {
    let started = std::time::Instant::now();
    check_formats(stored, s, name);
    // What the check costs the suite: HEADROOM_COUNTS_TIMING=1 prints it per run.
    if std::env::var_os("HEADROOM_COUNTS_TIMING").is_some() {
        eprintln!("counts checked in {:?}: {name}", started.elapsed());
    }
}

fn check_formats(stored: &StoredRun, s: &Summary, name: &str) {
    let bad = s.count_identity();
    assert!(bad.is_empty(), "{name}: the counts do not add up: {bad:?}");
    let out = |format| {
        let figures = (format == Format::Html).then(|| {
            plot::for_run(&plot::RunView {
                label: "all requests".into(),
                run: stored,
                summary: s,
                scatter: None,
            })
        });
        let extras = Extras {
            figures,
            run_id: Some("run"),
            ..Extras::default()
        };
        render_run(s, format, extras).unwrap()
    };

    let back: Summary = serde_json::from_str(&out(Format::Json)).unwrap();
    let bad = back.count_identity();
    assert!(bad.is_empty(), "{name}: JSON: {bad:?}");
    assert_eq!(
        (back.requests.total, back.requests.sent),
        (s.requests.total, s.requests.sent),
        "{name}: JSON"
    );

    let text = out(Format::Text);
    check_text(&text, s, &format!("{name}: text"));
    check_markdown(&out(Format::Markdown), s, &format!("{name}: markdown"));

    // vegeta's lines as a table of label, fields and values.
    let html = out(Format::Html);
    let lines: String = html
        .lines()
        .filter(|l| l.starts_with("<tr><td"))
        .map(|row| {
            let cells: Vec<String> = row
                .split("</td>")
                .filter_map(|c| c.rsplit('>').next())
                .filter(|c| !c.is_empty())
                .map(unescape)
                .collect();
            cells.join(" ") + "\n"
        })
        .collect();
    check_requests_line(&lines, s, &format!("{name}: HTML"));

    let junit = out(Format::Junit);
    let property = format!(
        "<property name=\"requests\" value=\"{}\"/>",
        s.requests.total
    );
    assert!(junit.contains(&property), "{name}: JUnit: {junit}");
}

/// The top line: `Requests [total, rate, throughput] N, R, T`, as the summary has them.
fn check_requests_line(text: &str, s: &Summary, what: &str) {
    let line = text
        .lines()
        .find(|l| l.starts_with("Requests "))
        .unwrap_or_else(|| panic!("{what}: no Requests line in\n{text}"));
    let values = line.split(']').nth(1).unwrap_or("").trim();
    assert_eq!(
        values,
        format!(
            "{}, {:.2}, {:.2}",
            s.requests.total, s.requests.rate, s.requests.throughput
        ),
        "{what}: {line}"
    );
}

fn check_text(text: &str, s: &Summary, what: &str) {
    check_requests_line(text, s, what);
    // Status codes, transport errors as code 0 (vegeta's way): they add up to the total.
    let codes = text
        .lines()
        .find(|l| l.starts_with("Status Codes"))
        .unwrap_or_else(|| panic!("{what}: no Status Codes line"));
    let shown: u64 = codes
        .split(']')
        .nth(1)
        .unwrap_or("")
        .split_whitespace()
        .map(|cell| cell.split(':').nth(1).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(shown, s.requests.total, "{what}: {codes}");
    // Each measured step's block: together, the run's completions.
    let steps: u64 = text
        .lines()
        .filter(|l| l.starts_with("    Requests "))
        .map(|l| {
            let values = l.split(']').nth(1).unwrap().trim();
            values.split(',').next().unwrap().parse::<u64>().unwrap()
        })
        .sum();
    if steps > 0 && s.counting != headroom::store::Counting::BySecond {
        assert_eq!(steps, s.requests.total, "{what}: the steps' blocks");
    }
}

fn check_markdown(md: &str, s: &Summary, what: &str) {
    // vegeta's lines in a code block, as the text report has them: the same counts.
    check_requests_line(md, s, what);
    let codes = md
        .lines()
        .find(|l| l.starts_with("Status Codes "))
        .unwrap_or_else(|| panic!("{what}: no Status Codes line in\n{md}"));
    let shown: u64 = codes
        .split(']')
        .nth(1)
        .unwrap_or("")
        .split_whitespace()
        .map(|cell| cell.split(':').nth(1).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(shown, s.requests.total, "{what}: {codes}");
}

fn unescape(html: &str) -> String {
    html.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}
