//! A figure as data: titled axes and named series (how each is told apart: [`look`](super::look)). Its
//! drawing is in [`draw`](super::draw).

use super::ticks;
use plotters::prelude::*;

/// How an axis maps values to positions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    /// As they are.
    Linear,
    /// Logarithmic (latencies spanning decades); values must be positive.
    Log,
    /// Percentiles (0..100) spread by their nines: 90, 99, 99.9 equally apart.
    Nines,
}

impl Scale {
    /// The position of `v` on an axis of this scale.
    pub fn to_axis(self, v: f64) -> f64 {
        match self {
            Scale::Linear => v,
            Scale::Log => v.max(1e-9).log10(),
            // Capped at six nines: 100 % itself is infinitely far.
            Scale::Nines => -(1.0 - (v / 100.0).min(0.999_999)).log10(),
        }
    }

    /// The value at position `at`: the inverse of [`Scale::to_axis`].
    pub fn from_axis(self, at: f64) -> f64 {
        match self {
            Scale::Linear => at,
            Scale::Log => 10f64.powf(at),
            Scale::Nines => 100.0 * (1.0 - 10f64.powf(-at)),
        }
    }

    /// The text of the tick at axis position `at`.
    pub(super) fn label(self, at: f64) -> String {
        let v = self.from_axis(at);
        match self {
            Scale::Linear | Scale::Log => short_number(v),
            Scale::Nines => {
                // Enough decimals to tell 99.9 from 99.99, and no trailing zeros.
                let s = format!("{v:.4}");
                format!("{}%", s.trim_end_matches('0').trim_end_matches('.'))
            }
        }
    }
}

/// A number in few characters: 12, 1.5, 0.25, 12k, 1.2M.
pub fn short_number(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{}M", trim(v / 1e6))
    } else if a >= 1e4 {
        format!("{}k", trim(v / 1e3))
    } else {
        trim(v)
    }
}

fn trim(v: f64) -> String {
    let s = if v.abs() >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// One axis: its label and scale.
#[derive(Debug, Clone)]
pub struct Axis {
    /// What it measures, with the unit.
    pub label: String,
    /// How values map to positions.
    pub scale: Scale,
    /// The highest value the axis shows, when the measure has one (a server's CPU cannot
    /// pass 100 % per core it runs on); a linear axis then spans up to it.
    pub most: Option<f64>,
    /// Labelled on whole numbers only (seconds of a per-second axis).
    pub whole: bool,
}

impl Axis {
    /// A linear axis.
    pub fn linear(label: &str) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Linear,
            most: None,
            whole: false,
        }
    }

    /// A linear axis of whole seconds.
    pub fn seconds(label: &str) -> Axis {
        Axis {
            whole: true,
            ..Axis::linear(label)
        }
    }

    /// A logarithmic axis.
    pub fn log(label: &str) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Log,
            most: None,
            whole: false,
        }
    }

    /// A percentile axis (in %), spread by nines.
    pub fn percentile(label: &str) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Nines,
            most: None,
            whole: false,
        }
    }

    /// Where labels go on `range` (axis positions), at most about `most` of them.
    pub fn ticks(&self, range: &std::ops::Range<f64>, most: usize) -> Vec<f64> {
        let (lo, hi) = (range.start, range.end);
        match self.scale {
            Scale::Linear => ticks::linear_ticks(lo, hi, most, self.whole),
            Scale::Log => ticks::log_ticks(10f64.powf(lo), 10f64.powf(hi))
                .into_iter()
                .map(|v| v.log10())
                .collect(),
            Scale::Nines => {
                // Locust's columns crowd between 66 and 80 %: keep those a label apart.
                let gap = (hi - lo) / 26.0;
                let mut kept: Vec<f64> = Vec::new();
                for at in
                    ticks::percentile_ticks(self.scale.from_axis(lo), self.scale.from_axis(hi))
                        .into_iter()
                        .map(|v| self.scale.to_axis(v))
                {
                    if kept.last().is_none_or(|last| at - last >= gap) {
                        kept.push(at);
                    }
                }
                kept
            }
        }
    }
}

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// A line.
    Line,
    /// A line with a dot at each point (one per step of a sweep).
    LinePoints,
    /// A dashed line (the secondary axis).
    Dashed,
    /// Dots alone, unjoined (one per request of a scatter).
    Points,
}

/// A named set of points.
#[derive(Debug, Clone)]
pub struct Series {
    /// Its name in the legend.
    pub name: String,
    /// The points, in x order.
    pub points: Vec<(f64, f64)>,
    /// How it is drawn.
    pub mark: Mark,
    /// Read against the secondary (right) axis.
    pub secondary: bool,
    /// A label beside each point (a sweep step's level), or none.
    pub labels: Vec<String>,
}

/// A figure: title, axes and series.
#[derive(Debug, Clone)]
pub struct Figure {
    /// File name stem and anchor ("latency-over-time").
    pub name: String,
    /// Its title.
    pub title: String,
    /// The horizontal axis.
    pub x: Axis,
    /// The left axis.
    pub y: Axis,
    /// The right axis, for series marked secondary.
    pub y2: Option<Axis>,
    /// What is drawn.
    pub series: Vec<Series>,
    /// Each series gets its own dash pattern and marker as well as its colour, so lines
    /// that overlap (runs compared) stay apart.
    pub distinct: bool,
}

/// Why a figure could not be drawn.
#[derive(Debug, thiserror::Error)]
#[error("cannot draw the figure {name}: {reason}")]
pub struct PlotError {
    /// The figure.
    pub name: String,
    /// What went wrong.
    pub reason: String,
}

/// The colours of series, in order.
pub(super) const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

impl Figure {
    /// True when no series has a point: nothing to draw.
    pub fn is_empty(&self) -> bool {
        self.series.iter().all(|s| s.points.is_empty())
    }

    /// The span of `axis` (in axis positions) over the values `pick` takes from the series.
    pub fn range(
        &self,
        axis: &Axis,
        pick: impl Fn(&Series, &(f64, f64)) -> Option<f64>,
    ) -> std::ops::Range<f64> {
        let values: Vec<f64> = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().filter_map(|p| pick(s, p)))
            .filter(|v| v.is_finite() && (axis.scale != Scale::Log || *v > 0.0))
            .collect();
        let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if !lo.is_finite() {
            return 0.0..1.0;
        }
        match axis.scale {
            // Counts and latencies read best from zero.
            Scale::Linear if lo >= 0.0 => match axis.most {
                Some(most) => 0.0..most.max(1e-9),
                None if axis.whole => 0.0..hi.ceil().max(1.0),
                None => 0.0..(hi * 1.08).max(1e-9),
            },
            Scale::Linear => lo - (hi - lo) * 0.05..hi + (hi - lo) * 0.05,
            // From the 1-2-5 value below the least to the one above the most.
            Scale::Log => ticks::log_floor(lo).log10()..ticks::log_ceil(hi.max(lo * 1.01)).log10(),
            // The median up: what lies below it is in the tables.
            Scale::Nines => {
                let top = Scale::Nines.to_axis(hi);
                Scale::Nines.to_axis(50.0)..(top + 0.15).max(2.0)
            }
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::report::plot::look::Marker;

    #[test]
    fn scales_place_percentiles_by_their_nines_and_label_them_back() {
        let n = Scale::Nines;
        assert!((n.to_axis(90.0) - 1.0).abs() < 1e-9);
        assert!((n.to_axis(99.9) - 3.0).abs() < 1e-9);
        assert_eq!(n.label(2.0), "99%");
        assert_eq!(n.label(4.0), "99.99%");
        assert_eq!(n.label(0.0), "0%");
        assert_eq!(Scale::Log.label(2.0), "100");
        assert_eq!(short_number(12_500.0), "12.5k");
        assert_eq!(short_number(0.25), "0.25");
    }

    /// A plain line series: shared with the looks' tests.
    pub(in crate::report::plot) fn line(name: &str, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.into(),
            points,
            mark: Mark::LinePoints,
            secondary: false,
            labels: Vec::new(),
        }
    }

    /// The text of every `<text>` element of an SVG.
    fn texts(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| {
                let body = &t[t.find('>')? + 1..];
                Some(body[..body.find("</text>")?].trim().to_string())
            })
            .collect()
    }

    #[test]
    fn a_figure_draws_as_svg_with_its_title_labels_and_legend() {
        let fig = Figure {
            name: "t".into(),
            title: "Latency by percentile".into(),
            x: Axis::percentile("percentile"),
            y: Axis::log("latency (ms)"),
            y2: Some(Axis::linear("server CPU (%)")),
            series: vec![
                line("run A", vec![(50.0, 1.0), (99.0, 5.0), (99.9, 20.0)]),
                Series {
                    mark: Mark::Dashed,
                    secondary: true,
                    ..line("cpu", vec![(50.0, 10.0), (99.9, 80.0)])
                },
            ],
            distinct: false,
        };
        let svg = fig.svg().unwrap();
        let texts = texts(&svg);
        for text in [
            "Latency by percentile",
            "run A",
            "latency (ms)",
            "server CPU (%)",
            "50%",
            "66%",
            "75%",
            "90%",
            "99%",
            "99.9%",
        ] {
            assert!(
                texts.iter().any(|t| t == text),
                "missing {text} in {texts:?}"
            );
        }
    }

    #[test]
    fn svg_axes_are_labelled_at_one_two_five_and_whole_seconds() {
        let fig = Figure {
            name: "t".into(),
            title: "over time".into(),
            x: Axis::seconds("seconds since start"),
            y: Axis::log("latency (ms)"),
            y2: None,
            series: vec![line("p99", vec![(0.0, 1.3), (1.0, 40.0), (3.0, 480.0)])],
            distinct: false,
        };
        let texts = texts(&fig.svg().unwrap());
        for label in [
            "1", "2", "5", "10", "20", "50", "100", "200", "500", "0", "3",
        ] {
            assert!(
                texts.iter().any(|t| t == label),
                "missing {label} in {texts:?}"
            );
        }
        for not in ["0.5", "1.5", "2.5", "3.0", "30", "300"] {
            assert!(
                !texts.iter().any(|t| t == not),
                "{not} labelled in {texts:?}"
            );
        }
    }

    /// Each `<text>` whose body passes `keep`, with its position.
    fn placed(svg: &str, keep: impl Fn(&str) -> bool) -> Vec<(f64, f64, String)> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| {
                let attr = |name: &str| -> Option<f64> {
                    let at = t.find(&format!(" {name}=\""))? + name.len() + 3;
                    t[at..t[at..].find('"')? + at].parse().ok()
                };
                let body = &t[t.find('>')? + 1..];
                let body = body[..body.find("</text>")?].trim().to_string();
                keep(&body).then(|| Some((attr("x")?, attr("y")?, body)))?
            })
            .collect()
    }

    #[test]
    fn a_smear_of_step_labels_is_thinned_so_none_overlap() {
        // The committed seed 003 plot: 120 steps at about 2,000 req/s, latency climbing.
        let points: Vec<(f64, f64)> = (0..120)
            .map(|i| (1990.0 + f64::from(i % 5), 1.0 + 0.5 * f64::from(i)))
            .collect();
        let fig = Figure {
            name: "headroom".into(),
            title: "Headroom".into(),
            x: Axis::linear("throughput (req/s)"),
            y: Axis::log("latency (ms)"),
            y2: None,
            series: vec![Series {
                labels: (1..=120).map(|u| format!("{u} users")).collect(),
                ..line("p99", points)
            }],
            distinct: true,
        };
        let labels = placed(&fig.svg().unwrap(), |t| t.ends_with(" users"));
        assert!(
            labels.len() > 5 && labels.len() < 60,
            "{} labels drawn",
            labels.len()
        );
        assert_eq!(labels[0].2, "1 users");
        // No two drawn labels share any pixel: 13 px type is at least 6 px a character
        // wide and 13 px a line.
        for (n, a) in labels.iter().enumerate() {
            for b in &labels[n + 1..] {
                let (left, right) = if a.0 <= b.0 { (a, b) } else { (b, a) };
                let apart = right.0 - left.0 >= 6.0 * left.2.chars().count() as f64
                    || (a.1 - b.1).abs() >= 13.0;
                assert!(apart, "{a:?} and {b:?} overlap");
            }
        }
    }

    #[test]
    fn a_series_of_one_point_is_a_dot() {
        let fig = Figure {
            name: "t".into(),
            title: "t".into(),
            x: Axis::linear("x"),
            y: Axis::linear("y"),
            y2: None,
            series: vec![Series {
                mark: Mark::Line,
                ..line("one", vec![(1.0, 2.0)])
            }],
            distinct: false,
        };
        assert_eq!(fig.look(0).marker, Some(Marker::Circle));
    }

    #[test]
    fn sweep_points_carry_their_level_and_compared_lines_their_own_look() {
        let fig = Figure {
            name: "t".into(),
            title: "Headroom".into(),
            x: Axis::linear("throughput (req/s)"),
            y: Axis::log("latency (ms)"),
            y2: None,
            series: vec![
                Series {
                    labels: vec!["100 req/s".into(), "200 req/s".into()],
                    ..line("run A", vec![(100.0, 1.0), (200.0, 2.0)])
                },
                line("run B", vec![(100.0, 1.0), (200.0, 2.0)]),
            ],
            distinct: true,
        };
        let texts = texts(&fig.svg().unwrap());
        assert!(texts.iter().any(|t| t == "100 req/s") && texts.iter().any(|t| t == "200 req/s"));
        let (a, b) = (fig.look(0), fig.look(1));
        assert_ne!(a.dash, b.dash);
        assert_ne!(a.marker, b.marker);
    }
}
