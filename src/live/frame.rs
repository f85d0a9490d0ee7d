//! One frame of the live page: built from the run so far by the report's own path — the
//! summary ([`Summary::of`]), the run's document ([`build::run::build`]), its figures
//! ([`plot::for_run`]) as the interactive charts' data, the HTML writer's answer box and
//! tables — so the page and the final report cannot disagree. No PNG or SVG is drawn.
//!
//! Bounds: a frame is rebuilt at most once a second, less often as the run grows
//! ([`cadence`]), and each line of a chart carries at most [`MAX_POINTS`] points (a longer
//! history keeps each stretch's highest point, so a spike is never thinned away); the
//! tables are the report's, whose length does not grow with the run's duration.

use super::{LiveState, Phase, Position, SearchState, ShardStatus, Shared, Showing};
use crate::report::build;
use crate::report::document::{Cell, Document, Table, Tone};
use crate::report::plot::{self, Axis, Figure, Mark, Series};
use crate::report::write::html;
use crate::summary::{RequestRow, Summary, ROW_QUANTILES};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

/// Most points of one line of a live chart.
pub const MAX_POINTS: usize = 1200;

/// How many seconds apart states are published, after `seconds` of run: every second for
/// half an hour, then less often, so the work of rebuilding (which grows with the run)
/// stays bounded over the run (an 8-hour run is redrawn every 16 s).
pub fn cadence(seconds: u64) -> u64 {
    (seconds / 1800).max(1)
}

/// What the page remembers between frames: when each objective last changed state.
#[derive(Default)]
pub(super) struct Memory {
    since: BTreeMap<String, (bool, u64)>,
}

/// Renders states into frames until the page closes.
pub(super) fn render_loop(shared: &Shared) {
    let mut memory = Memory::default();
    // The last frame, sent again just before the end event (and its typed answer carried
    // by it): a page behind skips to the newest, and the newest must not skip the last
    // state the report was written from.
    let mut last_answer = serde_json::Value::Null;
    let mut last_frame = String::new();
    loop {
        let (state, report, closing) = {
            let mut p = super::lock(&shared.pending);
            while p.state.is_none() && p.report.is_none() && !p.closing {
                p = shared.wake.wait(p).unwrap_or_else(|e| e.into_inner());
            }
            (p.state.take(), p.report.take(), p.closing)
        };
        if let Some(state) = state {
            let data = match &state {
                Showing::Run(run) => frame_data(run, &mut memory),
                Showing::Search(search) => search_data(search, &mut memory),
            };
            last_answer = data["answer_data"].clone();
            last_frame = format!("event: frame\ndata: {data}\n\n");
            shared.frames.send_replace(Arc::from(last_frame.as_str()));
        }
        if let Some(path) = report {
            let end = last_frame.clone() + &end_frame(&path, &last_answer);
            shared.frames.send_replace(Arc::from(end));
        }
        if closing {
            return;
        }
    }
}

/// The last frame: the final report itself, so a page left open keeps it after the
/// process ends (and `/report` serves it while the process lives).
fn end_frame(path: &std::path::Path, last_answer: &serde_json::Value) -> String {
    let report = std::fs::read_to_string(path).unwrap_or_else(|e| {
        html::page(
            "headroom",
            &format!(
                "<p class=\"note\">The report could not be read back ({}); it is in the run directory.</p>",
                html::escape(&e.to_string())
            ),
        )
    });
    let data = serde_json::json!({ "report": report, "answer_data": last_answer });
    format!("{END}data: {data}\n\n")
}

/// How the end event begins.
const END: &str = "event: end\n";

/// Whether `chunk` (one or more events) holds the end event, the stream's last.
pub(super) fn holds_end(chunk: &[u8]) -> bool {
    // Each event's data is one line of JSON, with its newlines escaped: an event's name
    // is only ever at the chunk's start or after a blank line.
    let after_blank = [b"\n\n".as_slice(), END.as_bytes()].concat();
    chunk.starts_with(END.as_bytes()) || chunk.windows(after_blank.len()).any(|w| w == after_blank)
}

/// The frame's data: the pieces of the page, each already HTML, and the charts' data.
pub(super) fn frame_data(state: &LiveState, memory: &mut Memory) -> serde_json::Value {
    let mut summary = Summary::of(&state.run);
    if state.position.phase != Phase::Ended && summary.partial.is_some() {
        // Not a crash: a run still going. The report's own note says so in its words.
        let doing = match state.position.phase {
            Phase::Stopping => "stopping",
            Phase::Stalled => {
                "not written any more (a run stopped writing: killed or crashed?), not ended"
            }
            _ => "still going",
        };
        summary.partial = Some(format!(
            "the run is {doing}: {} whole second(s) so far",
            state.run.intervals.len()
        ));
    }
    let view = plot::RunView {
        label: "all requests".into(),
        run: &state.run,
        summary: &summary,
        scatter: None,
    };
    let mut figures = plot::for_run(&view);
    figures
        .shown
        .insert(2.min(figures.shown.len()), cpu_figure(&summary));
    let specs: Vec<serde_json::Value> = figures
        .shown
        .iter_mut()
        .filter(|f| !f.is_empty())
        .map(|f| {
            thin(f);
            plot::interactive::spec(f)
        })
        .collect();
    let left_out: String = figures
        .left_out
        .iter()
        .map(|l| format!("<p class=\"note\">{}</p>\n", html::escape(&l.sentence())))
        .collect();
    let doc = build::run::build(&summary, crate::report::Extras::default());
    let second = state.position.elapsed_secs;
    serde_json::json!({
        "title": doc.title,
        "what": doc.what_ran.join(" · "),
        "position": position(&state.position, &state.run, state.latest.as_ref(), &doc),
        "ended": state.position.phase == Phase::Ended,
        "warnings": state.warnings.iter().map(|w| format!("<p class=\"note\">{}</p>\n", html::escape(w))).collect::<String>(),
        "shards": shards(&state.shards),
        "answer": html::answer_box(&doc),
        // The answer typed, as `report --format json` writes it: what a frame shows can be
        // checked against the stored run's report, number for number.
        "answer_data": crate::report::write::json::answer_of(&doc),
        "now": now(&doc, &summary, state, memory, second),
        "figures": specs,
        "left_out": left_out,
        "sections": html::sections(&doc),
    })
}

/// The frame of a capacity search: its own document of the probes so far (the answer, the
/// probes table, its figures), and the probe in progress as a run's page shows it.
pub(super) fn search_data(state: &SearchState, memory: &mut Memory) -> serde_json::Value {
    let mut doc = state.record.as_ref().map(build::capacity::build);
    if let (Some(d), Some(r)) = (doc.as_mut(), state.record.as_ref()) {
        if r.outcome.is_none() && state.probe.is_some() {
            // Not a search that was stopped: one still going. Said so in the answer's place.
            if let Some(v) = d.answer.verdict.as_mut() {
                v.sentence = format!(
                    "The search is still going ({} probe(s) so far): no capacity yet; the bracket so far is in the probe table.",
                    r.probes.len()
                );
            }
        }
    }
    let mut figures: Vec<Figure> = state
        .record
        .as_ref()
        .map(plot::for_capacity)
        .unwrap_or_default();
    let mut specs: Vec<serde_json::Value> = figures
        .iter_mut()
        .filter(|f| !f.is_empty())
        .map(|f| {
            thin(f);
            plot::interactive::spec(f)
        })
        .collect();
    let (mut position, mut now) = (String::new(), String::new());
    if let Some(probe) = &state.probe {
        let p = frame_data(probe, memory);
        position = format!(
            "<p class=\"where\" id=\"where\">probe <strong>{}</strong>: {}</p>",
            html::escape(&state.probe_name),
            p["position"]
                .as_str()
                .unwrap_or_default()
                .trim_start_matches("<p class=\"where\" id=\"where\">")
                .trim_end_matches("</p>")
        );
        now = format!(
            "<h2>The probe in progress: {}</h2>\n{}{}",
            html::escape(&state.probe_name),
            p["answer"].as_str().unwrap_or_default(),
            p["now"].as_str().unwrap_or_default()
        );
        // The probe's charts beside the search's, named apart.
        for mut f in p["figures"].as_array().cloned().unwrap_or_default() {
            let name = format!("probe-{}", f["name"].as_str().unwrap_or_default());
            let title = format!(
                "Probe in progress: {}",
                f["title"].as_str().unwrap_or_default()
            );
            f["name"] = name.into();
            f["title"] = title.into();
            specs.push(f);
        }
    }
    if position.is_empty() {
        position = "<p class=\"where\" id=\"where\">Between probes…</p>".into();
    }
    serde_json::json!({
        "title": doc.as_ref().map_or_else(|| "capacity search".to_string(), |d| d.title.clone()),
        "what": doc.as_ref().map_or_else(String::new, |d| d.what_ran.join(" · ")),
        "position": position,
        "ended": false,
        "warnings": state.probe.iter().flat_map(|p| &p.warnings).map(|w| format!("<p class=\"note\">{}</p>\n", html::escape(w))).collect::<String>(),
        "shards": "",
        "answer": doc.as_ref().map_or_else(String::new, html::answer_box),
        "answer_data": doc.as_ref().map_or(serde_json::Value::Null, crate::report::write::json::answer_of),
        "now": now,
        "figures": specs,
        "left_out": "",
        "sections": doc.as_ref().map_or_else(String::new, html::sections),
    })
}

/// Where the run is: its phase, step, time, and what was asked, sent and completed.
fn position(
    p: &Position,
    run: &crate::store::StoredRun,
    latest: Option<&crate::record::IntervalRecord>,
    doc: &Document,
) -> String {
    let mut parts = Vec::new();
    parts.push(format!(
        "<strong class=\"phase\">{}</strong>",
        match p.phase {
            Phase::Sending => "sending",
            Phase::Draining => "draining (all sent; waiting for the last answers)",
            Phase::Stopping => "stopping (stopped early; waiting for the answers in flight)",
            Phase::Stalled => "stalled (nothing is written any more; see the runs below)",
            Phase::Ended => "ended",
        }
    ));
    if let Some(step) = &p.step {
        parts.push(html::escape(&step.to_string()));
    }
    let stopped_early = run
        .end
        .as_ref()
        .is_some_and(|end| end.status != crate::store::EndStatus::Completed);
    parts.push(elapsed(p, stopped_early, run.meta.merged.is_some()));
    if let Some(asked) = doc.what_ran.first() {
        parts.push(format!("asked: {}", html::escape(asked)));
    }
    let count = |n: u64| Cell::Count(n).to_text();
    // The progress counts every request, as the plan does; the tables below count only the
    // measured ones, so the warm-up's share is said beside them, or the two would disagree.
    let warmup = |all: u64, measured: u64| {
        let share = all.saturating_sub(measured);
        if run.counting.is_whole() || share == 0 {
            String::new()
        } else {
            format!(" ({} in warm-up)", count(share))
        }
    };
    let mut sent = format!("sent {}", count(run.all.sent));
    if let Some(n) = p.planned_requests {
        let _ = write!(sent, " of {}", count(n));
    }
    sent += &warmup(run.all.sent, run.total.sent);
    parts.push(sent);
    parts.push(format!(
        "completed {}{}",
        count(run.all.completed()),
        warmup(run.all.completed(), run.total.completed())
    ));
    if let Some(r) = latest {
        parts.push(format!(
            "last second: sent {}, completed {}",
            count(r.sent),
            count(r.completed())
        ));
    }
    format!("<p class=\"where\" id=\"where\">{}</p>", parts.join(" · "))
}

/// The time part of the position: the time left only while sending as planned; after, the
/// seconds so far, and a run stopped early says it was (never "5s left" of a stopped run,
/// nor "14s of 12s", nor "stopped before its planned 20s" at 33s). `stopped_early`: the
/// run's end says it did not complete; `merged`: the seconds are a merged test's clock
/// (`watch` of shards), where a stall is a shard that stopped writing.
fn elapsed(p: &Position, stopped_early: bool, merged: bool) -> String {
    let e = p.elapsed_secs;
    let early = matches!(p.phase, Phase::Stopping | Phase::Stalled)
        || (p.phase == Phase::Ended && stopped_early);
    match (p.phase, p.planned_secs) {
        (Phase::Stalled, _) if merged => {
            format!("{e}s on the merged clock (a shard stopped writing before its end)")
        }
        (Phase::Sending, Some(total)) if e <= total => {
            format!("{e}s of {total}s, {}s left", total - e)
        }
        // Only a test of shards whose end is not yet known (one not started) gets here.
        (Phase::Sending, Some(total)) => format!("{e}s (still sending past {total}s)"),
        (_, Some(total)) if early && e < total => {
            format!("{e}s (stopped before its planned {total}s)")
        }
        (Phase::Draining, Some(total)) => format!("{e}s (sending ended at {total}s)"),
        _ if early => format!("{e}s (stopped early)"),
        _ => format!("{e}s"),
    }
}

/// The shards of a watched test, one row each.
fn shards(shards: &[ShardStatus]) -> String {
    if shards.is_empty() {
        return String::new();
    }
    let mut t = Table::new(&["shard", "state", "last second", "note"], 1);
    for s in shards {
        let tone = match s.state.as_str() {
            "running" | "draining" | "ended" => Some(Tone::Good),
            "waiting" | "late" | "lagging" => Some(Tone::Unsure),
            _ => Some(Tone::Bad),
        };
        t.rows.push(vec![
            s.index
                .map_or(Cell::text("?"), |i| Cell::Count(u64::from(i))),
            match tone {
                Some(t) => Cell::Status(t, s.state.clone()),
                None => Cell::text(s.state.clone()),
            },
            s.last_second.map_or(Cell::text("–"), Cell::Count),
            Cell::text(s.note.clone()),
        ]);
    }
    format!("<h2>Shards</h2>\n{}", html::table(&t))
}

/// The objectives now (holding, or breached since which second) and each request's last
/// second beside its whole run so far.
fn now(
    doc: &Document,
    summary: &Summary,
    state: &LiveState,
    memory: &mut Memory,
    second: u64,
) -> String {
    let mut out = String::new();
    if !doc.answer.objectives.is_empty() {
        let mut t = Table::new(&["objective", "measured so far", "now", "since"], 1);
        for o in &doc.answer.objectives {
            let entry = memory
                .since
                .entry(o.text.clone())
                .or_insert((o.met, second));
            if entry.0 != o.met {
                *entry = (o.met, second);
            }
            let (tone, word) = if o.met {
                (Tone::Good, "✔ holding")
            } else {
                (Tone::Bad, "✘ breached")
            };
            t.rows.push(vec![
                Cell::text(o.text.clone()),
                o.measured.clone(),
                Cell::Status(tone, word.into()),
                Cell::text(format!("second {}", entry.1)),
            ]);
        }
        out.push_str("<h3>Objectives now</h3>\n");
        out.push_str(&html::table(&t));
    }
    let Some(latest) = &state.latest else {
        return out;
    };
    let mut t = Table::new(
        &[
            "request",
            "now: count",
            "now: failures",
            "now: p50",
            "now: p95",
            "now: p99",
            "so far: count",
            "so far: failures",
            "so far: rate",
            "so far: p50",
            "so far: p95",
            "so far: p99",
        ],
        1,
    );
    // The report's own rows: the run so far is `summary`'s per-request table (its rate over
    // the measured seconds, its percentiles), the last second the same row over one second.
    let at = |row: &RequestRow, q: f64| match (
        row.percentiles(),
        ROW_QUANTILES.iter().position(|&p| p == q),
    ) {
        (Some(p), Some(i)) => Cell::Duration(p[i] as f64),
        _ => crate::report::build::run::by_request::no_latency(),
    };
    let empty = crate::record::RequestStats::default();
    for (i, so_far) in summary.by_request.iter().enumerate() {
        let now = RequestRow::of(
            &so_far.name,
            &so_far.method,
            latest.requests.get(i).unwrap_or(&empty),
            1.0,
        );
        t.rows.push(vec![
            Cell::text(so_far.name.clone()),
            Cell::Count(now.count),
            Cell::Count(now.failures),
            at(&now, 0.5),
            at(&now, 0.95),
            at(&now, 0.99),
            Cell::Count(so_far.count),
            Cell::Count(so_far.failures),
            Cell::Rate(so_far.rps),
            at(so_far, 0.5),
            at(so_far, 0.95),
            at(so_far, 0.99),
        ]);
    }
    out.push_str("<h3>Requests: the last second and the run so far</h3>\n");
    out.push_str(&html::table(&t));
    out
}

/// The generator's and the watched server's CPU each second, drawn by the report's chart code.
fn cpu_figure(s: &Summary) -> Figure {
    let generator: Vec<(f64, f64)> = s
        .timeline
        .iter()
        .map(|d| {
            (
                d.index as f64 + 1.0,
                d.health.cpu.total.as_secs_f64() * 100.0,
            )
        })
        .collect();
    let server: Vec<(f64, f64)> = s
        .timeline
        .iter()
        .filter_map(|d| Some((d.index as f64 + 1.0, d.server.as_ref()?.cpu_percent)))
        .collect();
    let line = |name: &str, points| Series {
        name: name.into(),
        points,
        mark: Mark::Line,
        secondary: false,
        labels: Vec::new(),
    };
    let mut series = vec![line("generator", generator)];
    if !server.is_empty() {
        series.push(line("server", server));
    }
    Figure {
        name: "cpu-over-time".into(),
        title: "CPU over time (100% = one core)".into(),
        x: Axis::seconds("seconds since start"),
        y: Axis::linear("CPU (%)"),
        y2: None,
        series,
        distinct: false,
    }
}

/// Thins each long line of `f` to [`MAX_POINTS`], keeping each stretch's highest point.
/// Lines with labels (a sweep's steps) are short and kept whole.
fn thin(f: &mut Figure) {
    for s in &mut f.series {
        if s.points.len() <= MAX_POINTS || !s.labels.is_empty() {
            continue;
        }
        let stretch = s.points.len().div_ceil(MAX_POINTS);
        s.points = s
            .points
            .chunks(stretch)
            .filter_map(|c| c.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1)))
            .collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_left_is_shown_only_while_sending_as_planned() {
        let at = |elapsed_secs, phase, planned_secs| Position {
            elapsed_secs,
            planned_secs,
            phase,
            ..Position::default()
        };
        let p = at(5, Phase::Sending, Some(10));
        assert_eq!(elapsed(&p, false, false), "5s of 10s, 5s left");
        let p = at(14, Phase::Draining, Some(12));
        assert_eq!(elapsed(&p, false, false), "14s (sending ended at 12s)");
        let p = at(6, Phase::Stopping, Some(15));
        assert_eq!(
            elapsed(&p, false, false),
            "6s (stopped before its planned 15s)"
        );
        let p = at(6, Phase::Ended, Some(15));
        assert_eq!(
            elapsed(&p, true, false),
            "6s (stopped before its planned 15s)"
        );
        assert_eq!(
            elapsed(&at(13, Phase::Ended, Some(12)), false, false),
            "13s"
        );
        assert_eq!(
            elapsed(&at(4, Phase::Stalled, None), false, false),
            "4s (stopped early)"
        );
        assert_eq!(elapsed(&at(4, Phase::Sending, None), false, false), "4s");
    }

    #[test]
    fn a_run_that_ran_past_its_plan_is_never_said_to_have_stopped_before_it() {
        let at = |elapsed_secs, phase| Position {
            elapsed_secs,
            planned_secs: Some(20),
            phase,
            ..Position::default()
        };
        // A merged test whose late shard ran to second 33 while another was killed.
        assert_eq!(
            elapsed(&at(33, Phase::Stalled), false, true),
            "33s on the merged clock (a shard stopped writing before its end)"
        );
        assert_eq!(
            elapsed(&at(33, Phase::Stalled), false, false),
            "33s (stopped early)"
        );
        assert_eq!(
            elapsed(&at(25, Phase::Ended), true, true),
            "25s (stopped early)"
        );
        assert_eq!(
            elapsed(&at(20, Phase::Stopping), false, true),
            "20s (stopped early)"
        );
        // A shard not yet started: the end known so far is passed, and it is said so.
        assert_eq!(
            elapsed(&at(22, Phase::Sending), false, true),
            "22s (still sending past 20s)"
        );
    }

    #[test]
    fn long_lines_are_thinned_keeping_their_peaks() {
        let mut points: Vec<(f64, f64)> = (0..28_800).map(|i| (i as f64, 1.0)).collect();
        points[12_345].1 = 99.0;
        let mut f = Figure {
            name: "x".into(),
            title: "x".into(),
            x: Axis::seconds("s"),
            y: Axis::linear("y"),
            y2: None,
            series: vec![Series {
                name: "a".into(),
                points,
                mark: Mark::Line,
                secondary: false,
                labels: Vec::new(),
            }],
            distinct: false,
        };
        thin(&mut f);
        let p = &f.series[0].points;
        assert!(p.len() <= MAX_POINTS, "{}", p.len());
        assert!(p.contains(&(12_345.0, 99.0)));
        assert!(p.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn the_cadence_slows_as_the_run_grows_so_total_work_stays_bounded() {
        assert_eq!(cadence(1), 1);
        assert_eq!(cadence(1799), 1);
        assert_eq!(cadence(3600), 2);
        assert_eq!(cadence(8 * 3600), 16);
        // Frames over an 8-hour run: a rebuild costs about the seconds so far, so the sum of
        // their sizes stays within a bound linear in the run (not quadratic).
        let mut work = 0u64;
        let mut frames = 0u64;
        for n in 1..=8 * 3600u64 {
            if n % cadence(n) == 0 {
                work += n;
                frames += 1;
            }
        }
        // Every second for the first hour, then at most one a second-of-run per 1800.
        assert!(frames < 8_000, "{frames}");
        assert!(work <= 2 * 1800 * 8 * 3600, "{work}");
    }
}
