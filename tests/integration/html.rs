//! The HTML report as a reader sees it: opened in headless Chromium at a 1280-pixel window,
//! and printed to PDF, for a run, a sweep, a capacity search and a comparison against the
//! built-in target, and for a document built here with every kind of block.

use crate::support::chromium;
use crate::support::{headroom, start_target, succeeded as ok};
use headroom::report::write::html::LONG;
use std::path::Path;
use std::time::Duration;

/// What every report page must be (issue 27, "answer first; accessible and printable"): no
/// errors or overflow at 1280 px, the verdict and the headline numbers on the first screen,
/// the first figure within 1,200 px, long tables collapsed; printed, every table row and
/// preformatted line whole on a page and legible, with scripts on and off (the tables are
/// plain HTML and the print stylesheet opens the collapsed ones without a script).
fn reads_first_and_prints_whole(page: &Path, charts: u64) -> chromium::Rendered {
    let work = tempfile::tempdir().unwrap();
    let rendered = chromium::render(page, work.path());
    rendered.assert_fits(charts);
    rendered.assert_answer_first(LONG);
    let printed = chromium::print(page, work.path(), true);
    printed.assert_carries(&rendered.layout);
    let without_scripts = chromium::print(page, work.path(), false);
    without_scripts.assert_carries(&rendered.layout);
    rendered
}

fn html_report(run: &Path, page: &Path) -> String {
    ok(headroom(&[
        "report",
        run.to_str().unwrap(),
        "--format",
        "html",
        "-o",
        page.to_str().unwrap(),
    ]));
    std::fs::read_to_string(page).unwrap()
}

/// The figures' data the page carries, as the page's script reads it.
fn figures(html: &str) -> Vec<serde_json::Value> {
    let open = "<script type=\"application/json\" id=\"headroom-figures\">";
    let start = html.find(open).expect("the page carries its figures") + open.len();
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end].replace("<\\/", "</")).unwrap()
}

fn names(figures: &[serde_json::Value]) -> Vec<&str> {
    figures
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect()
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs Chromium: run tests/run")]
fn a_sweeps_html_report_fits_a_1280_pixel_window_with_interactive_charts() {
    let _one = crate::support::one_heavy_at_a_time();
    let target = start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    ok(headroom(&[
        "sweep",
        &format!("http://{}/", target.addr()),
        "--rate",
        "50,100,150",
        "--step-duration",
        "1s",
        "-q",
        "--out",
        run.to_str().unwrap(),
    ]));
    let page = dir.path().join("report.html");
    let html = html_report(&run, &page);
    // One file: uPlot and the figures' data are inline, nothing is fetched.
    assert!(html.contains("uPlot") && !html.contains("<link") && !html.contains("src=\""));
    let figures = figures(&html);
    let names = names(&figures);
    for needed in [
        "latency-over-time",
        "throughput-over-time",
        "latency-by-percentile",
        "latency-by-percentile-by-stage",
        "headroom",
    ] {
        assert!(names.contains(&needed), "no {needed} in {names:?}");
    }
    // Without --raw there are no per-request records to scatter.
    assert!(!names.contains(&"latency-scatter"));
    // The headroom plot: mean beside the percentiles, each point named by its step.
    let headroom = &figures[names.iter().position(|n| *n == "headroom").unwrap()];
    let series: Vec<&str> = headroom["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(series, ["mean", "p50", "p95", "p99"]);
    assert_eq!(
        headroom["series"][3]["labels"],
        serde_json::json!(["50 req/s", "100 req/s", "150 req/s"])
    );
    // Per-second axes are whole seconds; sent/s is drawn beside OK/s and failed/s.
    let over_time = &figures[names
        .iter()
        .position(|n| *n == "throughput-over-time")
        .unwrap()];
    assert_eq!(over_time["x"]["whole"], true);
    let series: Vec<&str> = over_time["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(&series[..3], ["OK/s", "failed/s", "sent/s"]);
    // No table twice: the stages are a table, not also a block of the summary text.
    assert_eq!(html.matches("<h2>Stages</h2>").count(), 1);
    assert!(!html.contains("Stages:\n") && !html.contains("Steps:\n"));
    // The options stored with the run, in a section of their own.
    assert!(html.contains("<section id=\"options\">\n<h2>Options</h2>"));
    let work = tempfile::tempdir().unwrap();
    let rendered = chromium::render(&page, work.path());
    rendered.assert_fits(names.len() as u64);
    rendered.assert_interactive();
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs Chromium: run tests/run")]
fn a_scenario_runs_html_report_fits_and_draws_each_request() {
    let target = start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("scenario.yaml");
    std::fs::write(
        &scenario,
        format!(
            "target: {{url: 'http://{}'}}\nrequests:\n  - {{name: home, path: /}}\n  - {{name: slow, path: /delay/3}}\n  - {{name: broken, path: /status/500}}\nload: {{rate: 60, duration: 3s}}\n",
            target.addr()
        ),
    )
    .unwrap();
    let run = dir.path().join("run");
    // The run's verdict may fail (a request answers 500 by design): only the store counts.
    let _ = headroom(&[
        "run",
        scenario.to_str().unwrap(),
        "-q",
        "--raw",
        "--out",
        run.to_str().unwrap(),
    ]);
    let page = dir.path().join("report.html");
    let html = html_report(&run, &page);
    let figures = figures(&html);
    let by_percentile = figures
        .iter()
        .find(|f| f["name"] == "latency-by-percentile")
        .expect("a percentile figure");
    let lines: Vec<&str> = by_percentile["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    // A line per request that answered; `broken` never did (its 500s are failures).
    assert_eq!(lines, ["all requests", "home", "slow"]);
    // Its failures and status codes are tables, not also blocks of the summary text.
    assert_eq!(html.matches("<h2>Failures</h2>").count(), 1);
    assert!(!html.contains("Failures:\n") && !html.contains("Status codes by request:\n"));
    // Its failures show per second beside the answers.
    let over_time = figures
        .iter()
        .find(|f| f["name"] == "throughput-over-time")
        .expect("a throughput figure");
    assert_eq!(over_time["series"][1]["name"], "failed/s");
    let failed = over_time["data"][2].as_array().unwrap();
    assert!(
        failed.iter().any(|v| v.as_f64().is_some_and(|v| v > 0.0)),
        "{failed:?}"
    );
    // Lines that overlap stay apart: each has its own dash pattern or marker.
    let looks: Vec<String> = by_percentile["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| format!("{}{}", s["dash"], s["marker"]))
        .collect();
    let mut distinct = looks.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), looks.len(), "{looks:?}");
    // The run kept its raw records: each request is a dot at its due time, OK and failed apart.
    let scatter = figures
        .iter()
        .find(|f| f["name"] == "latency-scatter")
        .expect("a per-request scatter from the raw records");
    assert_eq!(scatter["series"][0]["name"], "OK");
    assert_eq!(scatter["series"][1]["name"], "failed");
    for kind in [1, 2] {
        let dots = scatter["data"][kind][0].as_array().unwrap();
        assert!(
            !dots.is_empty(),
            "no dots in {}",
            scatter["series"][kind - 1]
        );
        assert!(dots.iter().all(|x| x.as_f64().unwrap() < 3.0));
    }
    let work = tempfile::tempdir().unwrap();
    let rendered = chromium::render(&page, work.path());
    rendered.assert_fits(names(&figures).len() as u64);
    rendered.assert_interactive();
    let readout = rendered
        .interaction
        .as_ref()
        .and_then(|i| i.readout.clone());
    assert!(
        readout.is_some(),
        "the scatter has no readout: {rendered:?}"
    );
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs Chromium: run tests/run")]
fn the_chromium_check_sees_errors_overflow_and_cut_off_tables() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("bad.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body>\
         <div style=\"width:2000px\">wide</div>\
         <table style=\"display:block;width:100px;overflow:auto\"><tr><td style=\"white-space:nowrap\">a cell far wider than its table's box</td></tr></table>\
         <script>console.error('broken'); null.x;</script></body></html>",
    )
    .unwrap();
    let r = chromium::render(&page, dir.path());
    assert!(r.scroll_width > r.client_width, "{r:?}");
    assert_eq!(r.cut.len(), 1, "{r:?}");
    assert_eq!(r.errors.len(), 2, "{r:?}");
    assert_eq!(r.charts, 0);
}

/// A run in a few stages of several requests (seed 004's users levels) has a percentile
/// figure per stage with a line per request.
#[test]
fn each_stage_of_a_few_has_its_percentile_figure_per_request() {
    let target = start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("levels.yaml");
    std::fs::write(
        &scenario,
        format!(
            "target: {{url: 'http://{}'}}\nrequests:\n  - {{name: create, method: POST, path: /, body: x}}\n  - {{name: read, path: /}}\nload:\n  stages:\n    - {{name: 2 users, users: 2, duration: 1s}}\n    - {{name: 4 users, users: 4, duration: 1s}}\n",
            target.addr()
        ),
    )
    .unwrap();
    let run = dir.path().join("run");
    ok(headroom(&[
        "run",
        scenario.to_str().unwrap(),
        "-q",
        "--out",
        run.to_str().unwrap(),
    ]));
    let html = html_report(&run, &dir.path().join("report.html"));
    let figures = figures(&html);
    for (n, stage) in [(1, "2 users"), (2, "4 users")] {
        let name = format!("latency-by-percentile-stage-{n}");
        let f = figures
            .iter()
            .find(|f| f["name"] == name.as_str())
            .unwrap_or_else(|| panic!("no {name} in {:?}", names(&figures)));
        assert!(
            f["title"]
                .as_str()
                .unwrap()
                .ends_with(&format!("at {stage}")),
            "{}",
            f["title"]
        );
        let lines: Vec<&str> = f["series"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap())
            .collect();
        assert_eq!(lines, ["create", "read"]);
    }
}

/// A document as a builder fills it for a long run: a verdict with its evidence, objectives,
/// headline numbers, notes, two figures, a table of a row per second (long), a table wider
/// than the page (split), vegeta's lines, a command line and a subsection.
fn full_document() -> headroom::report::document::Document {
    use headroom::report::document::*;
    use headroom::report::plot::{Axis, Figure, Mark, Series};
    let line = |name: &str, k: f64| Series {
        name: name.into(),
        points: (0..60).map(|s| (s as f64, k + (s % 7) as f64)).collect(),
        mark: Mark::Line,
        secondary: false,
        labels: Vec::new(),
    };
    let figure = |name: &str, title: &str| Figure {
        name: name.into(),
        title: title.into(),
        x: Axis::seconds("elapsed (s)"),
        y: Axis::linear("latency (ms)"),
        y2: None,
        series: vec![line("p50", 2.0), line("p90", 4.0), line("p99", 9.0)],
        distinct: false,
    };
    let mut per_second = Table::new(&["second", "sent/s", "OK/s", "p50", "p99", "status"], 1);
    for s in 0..60u64 {
        per_second.rows.push(vec![
            Cell::Count(s),
            Cell::Rate(500.0),
            Cell::Rate(499.0 - (s % 3) as f64),
            Cell::Duration(1200.0 + s as f64),
            Cell::Duration(9100.0 + 10.0 * s as f64),
            Cell::Status(Tone::Good, "held".into()),
        ]);
    }
    let mut header = vec!["request".to_string(), "# requests".into(), "# fails".into()];
    header.extend(["avg", "min", "max", "size", "req/s", "fail/s"].map(String::from));
    header.extend(
        [
            "50%", "66%", "75%", "80%", "90%", "95%", "98%", "99%", "99.9%", "99.99%", "100%",
        ]
        .map(String::from),
    );
    let mut wide = Table {
        header,
        rows: Vec::new(),
        left: 1,
    };
    for name in [
        "create secret",
        "read secret",
        "list versions",
        "schedule destroy",
    ] {
        let mut row = vec![Cell::text(name), Cell::Count(123_456), Cell::Count(12)];
        row.extend((0..17).map(|i| Cell::Duration(1234.5 * (i + 1) as f64)));
        wide.rows.push(row);
    }
    Document {
        title: "GET http://127.0.0.1:8080/keys/{id}".into(),
        what_ran: vec![
            "open model, 500 req/s for 60s".into(),
            "HTTP/1.1".into(),
            "started 2026-11-26T12:00:00Z".into(),
        ],
        answer: Answer {
            verdict: Some(Verdict {
                tone: Tone::Bad,
                sentence: "The server was the limit: it answered slower as the load held, while the generator kept its schedule.".into(),
                evidence: vec![
                    "Server latency p99 rose from 9.1ms to 9.7ms over the run.".into(),
                    "The generator sent on time (send lag p99 0.2ms) with CPU to spare (31%).".into(),
                ],
            }),
            objectives: vec![
                Objective {
                    text: "p99 < 9ms".into(),
                    measured: Cell::DurationCi {
                        us: 9700.0,
                        lo: Some(9500.0),
                        hi: Some(9900.0),
                    },
                    met: false,
                },
                Objective {
                    text: "errors < 0.1%".into(),
                    measured: Cell::Percent(0.0),
                    met: true,
                },
            ],
            numbers: vec![
                Fact {
                    label: "throughput".into(),
                    value: Cell::Rate(499.2),
                },
                Fact {
                    label: "success".into(),
                    value: Cell::Percent(100.0),
                },
                Fact {
                    label: "p50".into(),
                    value: Cell::Duration(1204.0),
                },
                Fact {
                    label: "p99".into(),
                    value: Cell::Duration(9700.0),
                },
            ],
            notes: vec!["Shard 1 of 2: these numbers are this shard's alone.".into()],
        },
        figures: Figures {
            shown: vec![
                figure("latency-over-time", "Latency over time"),
                figure("throughput-over-time", "Throughput over time"),
            ],
            left_out: Vec::new(),
        },
        sections: vec![
            Section::table("per-second", "Per second", per_second),
            Section::table("by-request", "By request", wide),
            Section::new(
                "summary",
                "Summary",
                vec![Block::Fields(vec![FieldLine {
                    label: "Latencies".into(),
                    fields: "[min, mean, 50, 90, 95, 99, max]".into(),
                    values: Cell::text("1.001ms, 2.204ms, 1.204ms, 4.100ms, 6.000ms, 9.700ms, 21.000ms"),
                }])],
            ),
            Section::new(
                "command",
                "Command",
                vec![
                    Block::Paragraph("As run (secrets redacted).".into()),
                    // Wider than the page: it wraps, on screen and on paper.
                    Block::Preformatted(format!(
                        "headroom attack http://127.0.0.1:8080/keys/{{id}} --rate 500 --duration 60s -H 'Authorization: [redacted]' {}",
                        (0..12).map(|i| format!("-H 'X-Trace-{i}: abcdef0123456789'")).collect::<Vec<_>>().join(" ")
                    )),
                    Block::Sub(Section::new(
                        "stage-1",
                        "Stage 1",
                        vec![Block::Note("Warm-up, left out of the numbers.".into())],
                    )),
                ],
            ),
        ],
        ..Document::default()
    }
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs Chromium: run tests/run")]
fn a_full_documents_page_leads_with_its_answer_and_prints_every_table_whole() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let html = headroom::report::write::html::write(&full_document()).unwrap();
    std::fs::write(&page, &html).unwrap();
    // The long table is collapsed, the wide one split in two (a part of percentiles).
    assert_eq!(html.matches("<details>").count(), 1, "{html}");
    let rendered = reads_first_and_prints_whole(&page, 2);
    let l = &rendered.layout;
    assert_eq!(l.details, 1);
    assert!(
        l.tables.iter().any(|t| t.collapsed && t.rows.len() == 61),
        "{l:?}"
    );
    assert!(l.toc_lines == 1, "{l:?}");
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs Chromium: run tests/run")]
fn the_print_check_sees_unopened_cut_and_shrunk_tables() {
    let dir = tempfile::tempdir().unwrap();
    let rows = |n: usize, columns: usize| -> String {
        (0..n)
            .map(|r| {
                let cells: String = (0..columns)
                    .map(|c| format!("<td>r{r}c{c}xx</td>"))
                    .collect();
                format!("<tr>{cells}</tr>")
            })
            .collect()
    };
    let page = |name: &str, body: String| {
        let path = dir.path().join(name);
        std::fs::write(
            &path,
            format!("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><style>table{{font-size:7pt;border-collapse:collapse}}td{{white-space:nowrap;padding:0 4px}}</style></head><body>{body}</body></html>"),
        )
        .unwrap();
        path
    };
    let check = |path: &Path| -> String {
        let work = tempfile::tempdir().unwrap();
        let rendered = chromium::render(path, work.path());
        let printed = chromium::print(path, work.path(), true);
        let caught = std::panic::catch_unwind(|| printed.assert_carries(&rendered.layout));
        let message = caught.expect_err("the print check passed a bad page");
        message
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default()
    };
    // A collapsed table with no print style stays closed on paper.
    let closed = page(
        "closed.html",
        format!(
            "<details><summary>rows</summary><table>{}</table></details>",
            rows(20, 3)
        ),
    );
    assert!(check(&closed).contains("not whole"));
    // A table far wider than the paper loses its last columns at the edge.
    let wide = page("wide.html", format!("<table>{}</table>", rows(3, 60)));
    assert!(check(&wide).contains("not whole"));
    // One a little wider is shrunk to fit, below legible.
    let shrunk = page("shrunk.html", format!("<table>{}</table>", rows(3, 26)));
    assert!(
        check(&shrunk).contains("shrunk to fit"),
        "{}",
        check(&shrunk)
    );
    // A plain table prints whole.
    let fine = page("fine.html", format!("<table>{}</table>", rows(40, 3)));
    let work = tempfile::tempdir().unwrap();
    let rendered = chromium::render(&fine, work.path());
    chromium::print(&fine, work.path(), true).assert_carries(&rendered.layout);
}

/// A run of a few requests (one fails by design) against the built-in target: its page.
fn a_runs_page(dir: &Path) -> std::path::PathBuf {
    let target = start_target(Duration::ZERO);
    let scenario = dir.join("scenario.yaml");
    std::fs::write(
        &scenario,
        format!(
            "target: {{url: 'http://{}'}}\nrequests:\n  - {{name: home, path: /}}\n  - {{name: slow, path: /delay/3}}\n  - {{name: broken, path: /status/500}}\nload: {{rate: 60, duration: 4s}}\nslo: ['p99 < 250ms', 'errors < 0.1%']\n",
            target.addr()
        ),
    )
    .unwrap();
    let run = dir.join("run");
    // Its objectives fail (a request answers 500 by design): only the store counts.
    let _ = headroom(&[
        "run",
        scenario.to_str().unwrap(),
        "-q",
        "--raw",
        "--out",
        run.to_str().unwrap(),
    ]);
    let page = dir.join("run.html");
    html_report(&run, &page);
    page
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs Chromium: run tests/run")]
fn a_runs_page_answers_on_its_first_screen_and_prints_whole() {
    let dir = tempfile::tempdir().unwrap();
    let page = a_runs_page(dir.path());
    reads_first_and_prints_whole(&page, 3);
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs Chromium: run tests/run")]
fn a_sweeps_page_answers_on_its_first_screen_and_prints_whole() {
    let _one = crate::support::one_heavy_at_a_time();
    let target = start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    // Enough steps that the steps' table is long (collapsed on screen, whole on paper).
    let rates: Vec<String> = (1..=LONG + 3).map(|k| (20 * k).to_string()).collect();
    ok(headroom(&[
        "sweep",
        &format!("http://{}/", target.addr()),
        "--rate",
        &rates.join(","),
        "--step-duration",
        "1s",
        "-q",
        "--out",
        run.to_str().unwrap(),
    ]));
    let page = dir.path().join("sweep.html");
    html_report(&run, &page);
    let rendered = reads_first_and_prints_whole(&page, 3);
    assert!(
        rendered.layout.tables.iter().any(|t| t.collapsed),
        "{:?}",
        rendered.layout
    );
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs Chromium: run tests/run")]
fn a_capacity_searchs_page_answers_on_its_first_screen_and_prints_whole() {
    let _one = crate::support::one_heavy_at_a_time();
    let target = start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("capacity.html");
    // Tight bounds: the built-in target meets the objectives at the highest rate tried,
    // and the search says so after a probe or two.
    ok(headroom(&[
        "capacity",
        &format!("http://{}/", target.addr()),
        "--slo",
        "p99 < 50ms, errors < 1%",
        "--max",
        "100",
        "--window",
        "5s",
        "--warmup",
        "0s",
        "--confirm",
        "0",
        "--max-probes",
        "4",
        "-q",
        "--out",
        dir.path().join("search").to_str().unwrap(),
        "--format",
        "html",
        "-o",
        page.to_str().unwrap(),
    ]));
    reads_first_and_prints_whole(&page, 1);
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs Chromium: run tests/run")]
fn a_comparisons_page_answers_on_its_first_screen_and_prints_whole() {
    let dir = tempfile::tempdir().unwrap();
    let mut runs = Vec::new();
    for (name, latency) in [("fast", 0), ("slow", 5)] {
        let target = start_target(Duration::from_millis(latency));
        let run = dir.path().join(name);
        ok(headroom(&[
            "attack",
            &format!("http://{}/", target.addr()),
            "--rate",
            "50",
            "-d",
            "4s",
            "-q",
            "--out",
            run.to_str().unwrap(),
        ]));
        runs.push(run);
    }
    let page = dir.path().join("compare.html");
    ok(headroom(&[
        "compare",
        runs[0].to_str().unwrap(),
        runs[1].to_str().unwrap(),
        "--format",
        "html",
        "-o",
        page.to_str().unwrap(),
    ]));
    reads_first_and_prints_whole(&page, 2);
}
