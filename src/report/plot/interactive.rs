//! A figure as data for the HTML report's interactive charts (uPlot, inlined in the page
//! with `assets/figures.js`, which reads this): the same series, axes, ranges and looks as
//! the SVG, so the two never disagree.

use super::figure::{Axis, Figure, Mark, Scale, PALETTE};
use super::look::Marker;
use serde_json::{json, Value};

/// The JSON the page's script turns into one chart.
pub fn spec(figure: &Figure) -> Value {
    let xr = figure.range(&figure.x, |_, p| Some(p.0));
    let yr = figure.range(&figure.y, |s, p| (!s.secondary).then_some(p.1));
    let y2 = figure.y2.as_ref().map(|axis| {
        let r = figure.range(axis, |s, p| s.secondary.then_some(p.1));
        axis_spec(axis, &r)
    });
    let looks = figure.looks();
    let series: Vec<Value> = figure
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let look = looks[i];
            let c = PALETTE[i % PALETTE.len()];
            json!({
                "name": s.name,
                "color": format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2),
                "width": look.width.max(2),
                "dash": look.dash.map(|(on, off)| vec![on, off]),
                "marker": look.marker.map(|m| match m {
                    Marker::Circle => "circle",
                    Marker::Triangle => "triangle",
                    Marker::Square => "square",
                    Marker::Cross => "cross",
                }),
                "dots": s.mark == Mark::Points,
                "secondary": s.secondary,
                "labels": s.labels,
            })
        })
        .collect();
    // uPlot joins series on one ascending x; a sweep that turns back on itself (less
    // throughput at a higher step) keeps its step order as series of their own points, and
    // so does a scatter (each request its own dot).
    let aligned = figure
        .series
        .iter()
        .all(|s| s.mark != Mark::Points && s.points.windows(2).all(|w| w[0].0 < w[1].0));
    let data = if aligned {
        let mut xs: Vec<f64> = figure
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0))
            .filter(|x| x.is_finite())
            .collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        let mut columns = vec![json!(xs)];
        for s in &figure.series {
            // Both ascending: one walk along the joined x.
            let mut at = s.points.iter().peekable();
            let ys: Vec<Option<f64>> = xs
                .iter()
                .map(|x| {
                    while at.next_if(|p| p.0 < *x || !p.0.is_finite()).is_some() {}
                    at.next_if(|p| p.0 == *x)
                        .map(|p| p.1)
                        .filter(|y| y.is_finite())
                })
                .collect();
            columns.push(json!(ys));
        }
        Value::Array(columns)
    } else {
        let mut columns = vec![Value::Null];
        for s in &figure.series {
            let (xs, ys): (Vec<f64>, Vec<f64>) = s.points.iter().copied().unzip();
            columns.push(json!([xs, ys]));
        }
        Value::Array(columns)
    };
    json!({
        "name": figure.name,
        "title": figure.title,
        "mode": if aligned { 1 } else { 2 },
        "x": axis_spec(&figure.x, &xr),
        "y": axis_spec(&figure.y, &yr),
        "y2": y2,
        "series": series,
        "data": data,
    })
}

fn axis_spec(axis: &Axis, range: &std::ops::Range<f64>) -> Value {
    json!({
        "label": axis.label,
        "scale": match axis.scale {
            Scale::Linear => "linear",
            Scale::Log => "log",
            Scale::Nines => "nines",
        },
        "whole": axis.whole,
        "min": axis.scale.from_axis(range.start),
        "max": axis.scale.from_axis(range.end),
        "most": axis.most,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::plot::Series;

    fn line(name: &str, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.into(),
            points,
            mark: Mark::LinePoints,
            secondary: false,
            labels: Vec::new(),
        }
    }

    fn figure(series: Vec<Series>) -> Figure {
        Figure {
            name: "f".into(),
            title: "F".into(),
            x: Axis::seconds("s"),
            y: Axis::log("ms"),
            y2: None,
            series,
            distinct: true,
        }
    }

    #[test]
    fn series_on_ascending_x_are_joined_on_one_x_with_gaps() {
        let spec = spec(&figure(vec![
            line("a", vec![(0.0, 1.0), (2.0, 3.0)]),
            line("b", vec![(1.0, 2.0), (2.0, 4.0)]),
        ]));
        assert_eq!(spec["mode"], 1);
        assert_eq!(
            spec["data"],
            json!([[0.0, 1.0, 2.0], [1.0, null, 3.0], [null, 2.0, 4.0]])
        );
        assert_eq!(spec["x"]["whole"], true);
        assert_eq!(spec["y"]["scale"], "log");
        assert_eq!(
            spec["y"]["min"].as_f64().map(|v| (v * 1e9).round()),
            Some(1e9)
        );
        assert_ne!(spec["series"][0]["dash"], spec["series"][1]["dash"]);
    }

    #[test]
    fn the_charts_tell_series_apart_by_dash_or_marker_not_colour_alone() {
        let mut lines = figure(
            (0..6)
                .map(|i| Series {
                    mark: Mark::Line,
                    ..line(&format!("p{i}"), vec![(0.0, 1.0), (1.0, 2.0)])
                })
                .collect(),
        );
        lines.distinct = false;
        let mut dots = lines.clone();
        dots.series = ["OK", "failed"]
            .map(|name| Series {
                mark: Mark::Points,
                ..line(name, vec![(0.0, 1.0)])
            })
            .into();
        for fig in [lines, dots] {
            let spec = spec(&fig);
            let looks: Vec<String> = spec["series"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| format!("{} {} {}", s["dots"], s["dash"], s["marker"]))
                .collect();
            let mut apart = looks.clone();
            apart.sort();
            apart.dedup();
            assert_eq!(apart.len(), looks.len(), "{looks:?}");
        }
    }

    #[test]
    fn a_sweep_turning_back_keeps_its_step_order() {
        let spec = spec(&figure(vec![line(
            "p99",
            vec![(100.0, 1.0), (200.0, 2.0), (180.0, 50.0)],
        )]));
        assert_eq!(spec["mode"], 2);
        assert_eq!(
            spec["data"][1],
            json!([[100.0, 200.0, 180.0], [1.0, 2.0, 50.0]])
        );
    }
}
