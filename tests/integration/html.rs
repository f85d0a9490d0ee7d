//! The HTML report as a reader sees it: opened in headless Chromium at a 1280-pixel window,
//! for a sweep and for a scenario run against the built-in target.

use crate::support::chromium;
use crate::support::{headroom, start_target, succeeded as ok};
use std::path::Path;
use std::time::Duration;

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
