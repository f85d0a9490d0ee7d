//! A figure as data: titled axes, named series, and how each series is told apart. Its
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

    /// How series `i` is told apart: its dash pattern, marker and width (see [`Figure::looks`]).
    pub fn look(&self, i: usize) -> Look {
        self.looks().get(i).copied().unwrap_or(Look {
            dash: None,
            marker: None,
            width: 2,
        })
    }

    /// Each series' look, in order. Colour alone never tells two series apart (grey print,
    /// colour-blind readers): a series whose dash and marker another already has gets the
    /// first pair no other has, its marker kept when it can be (a secondary series stays
    /// dashed, a sweep's dots stay on its steps), and dots (a scatter) take marker shapes.
    /// A series of one point is a dot, never a line with nothing to join.
    pub fn looks(&self) -> Vec<Look> {
        // Dots and a line differ in form whatever their dash and marker.
        let mut taken: Vec<(bool, Dash, Option<Marker>)> = Vec::new();
        self.series
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let mut look = self.base_look(i, s);
                if s.points.len() == 1 && s.mark != Mark::Points && look.marker.is_none() {
                    look.marker = Some(Marker::Circle);
                }
                let dots = s.mark == Mark::Points;
                let pair = |l: &Look| (dots, l.dash, l.marker);
                if taken.contains(&pair(&look)) {
                    let markers: Vec<Option<Marker>> = std::iter::once(look.marker)
                        .chain(std::iter::once(None).filter(|_| !dots))
                        .chain(MARKERS.iter().copied().map(Some))
                        .collect();
                    // Dots have no line: only their shape can differ. Lines take the plain
                    // dashes (solid, dashed, dotted) with each marker before the finer ones,
                    // which are harder to tell apart.
                    let (plain, fine): (Vec<Dash>, Vec<Dash>) = if dots {
                        (vec![look.dash], Vec::new())
                    } else {
                        (
                            std::iter::once(look.dash)
                                .chain(DASHES[..PLAIN_DASHES].iter().copied())
                                .collect(),
                            DASHES[PLAIN_DASHES..].to_vec(),
                        )
                    };
                    let free = [plain, fine]
                        .iter()
                        .flat_map(|dashes| {
                            markers
                                .iter()
                                .flat_map(move |&m| dashes.iter().map(move |&d| (d, m)))
                        })
                        .find(|&(d, m)| !taken.contains(&(dots, d, m)));
                    if let Some((dash, marker)) = free {
                        look.dash = dash;
                        look.marker = marker;
                    }
                }
                taken.push(pair(&look));
                look
            })
            .collect()
    }

    fn base_look(&self, i: usize, s: &Series) -> Look {
        if self.distinct && s.mark != Mark::Points {
            return Look {
                dash: DASHES[i % DASHES.len()],
                marker: Some(MARKERS[(i / DASHES.len() + i) % MARKERS.len()]),
                width: 2,
            };
        }
        match (s.mark, s.secondary) {
            // A scatter's dots: small filled circles unless another series has them.
            (Mark::Points, _) => Look {
                dash: None,
                marker: Some(Marker::Circle),
                width: 1,
            },
            (Mark::Dashed, _) | (_, true) => Look {
                dash: SECONDARY_DASH,
                marker: None,
                width: 2,
            },
            (Mark::Line, false) => Look {
                dash: None,
                marker: None,
                width: 2,
            },
            // Thin: a wide line doubling back between close points draws miter spikes.
            (Mark::LinePoints, false) => Look {
                dash: None,
                marker: Some(Marker::Circle),
                width: 1,
            },
        }
    }
}

/// A dash pattern: on and off pixels, or `None` for a solid line.
type Dash = Option<(u32, u32)>;

/// The dash of a series read against the secondary axis.
const SECONDARY_DASH: Option<(u32, u32)> = Some((6, 4));
/// Dash patterns (on, off pixels) that tell lines apart: the plain ones (solid, dashed,
/// dotted) first, then finer ones; none is the secondary axis's.
const DASHES: [Dash; 8] = [
    None,
    Some((12, 5)),
    Some((2, 3)),
    Some((18, 4)),
    Some((4, 8)),
    Some((8, 2)),
    Some((1, 6)),
    Some((24, 8)),
];
/// How many of `DASHES` are plain.
const PLAIN_DASHES: usize = 3;
const MARKERS: [Marker; 4] = [
    Marker::Circle,
    Marker::Triangle,
    Marker::Square,
    Marker::Cross,
];

/// A point's marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// A filled dot.
    Circle,
    /// A filled triangle.
    Triangle,
    /// A filled square.
    Square,
    /// An ×.
    Cross,
}

/// How a series is drawn: dash (on, off pixels; `None` solid), marker, line width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Look {
    /// Dash pattern, or a solid line.
    pub dash: Option<(u32, u32)>,
    /// Marker at the points, if any.
    pub marker: Option<Marker>,
    /// Line width in pixels.
    pub width: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

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

    fn line(name: &str, points: Vec<(f64, f64)>) -> Series {
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
    fn no_two_series_of_a_figure_differ_by_colour_alone() {
        let marks = [Mark::Line, Mark::LinePoints, Mark::Dashed, Mark::Points];
        for distinct in [false, true] {
            for n in 2..=24 {
                for mix in 0..5 {
                    let mut dots = 0;
                    let series = (0..n)
                        .map(|i| {
                            // All one kind (mix 4: lines only), or the kinds mixed; a
                            // scatter has at most a few sets of dots.
                            let mut mark = if mix == 4 {
                                Mark::Line
                            } else {
                                marks[(mix + i * 7 / 3) % 4]
                            };
                            if mark == Mark::Points {
                                dots += 1;
                                if dots > 4 {
                                    mark = Mark::Line;
                                }
                            }
                            Series {
                                mark,
                                secondary: i % 5 == 4 && mark != Mark::Points,
                                ..line(&format!("s{i}"), vec![(1.0, 1.0), (2.0, 2.0)])
                            }
                        })
                        .collect();
                    let fig = Figure {
                        name: "t".into(),
                        title: "t".into(),
                        x: Axis::linear("x"),
                        y: Axis::linear("y"),
                        y2: Some(Axis::linear("y2")),
                        series,
                        distinct,
                    };
                    let looks = fig.looks();
                    let key = |i: usize| {
                        (
                            fig.series[i].mark == Mark::Points,
                            looks[i].dash,
                            looks[i].marker,
                        )
                    };
                    for a in 0..n {
                        for b in a + 1..n {
                            assert_ne!(key(a), key(b), "series {a} and {b} of {n}: {looks:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn the_look_of_a_series_keeps_its_meaning_when_it_can() {
        let fig = Figure {
            name: "t".into(),
            title: "t".into(),
            x: Axis::seconds("s"),
            y: Axis::linear("req/s"),
            y2: None,
            series: vec![
                Series {
                    mark: Mark::Line,
                    ..line("OK/s", vec![(0.0, 1.0), (1.0, 1.0)])
                },
                Series {
                    mark: Mark::Line,
                    ..line("failed/s", vec![(0.0, 1.0), (1.0, 1.0)])
                },
                Series {
                    mark: Mark::Dashed,
                    ..line("sent/s", vec![(0.0, 1.0), (1.0, 1.0)])
                },
                Series {
                    mark: Mark::Points,
                    ..line("OK", vec![(0.0, 1.0)])
                },
                Series {
                    mark: Mark::Points,
                    ..line("failed", vec![(0.0, 1.0)])
                },
            ],
            distinct: false,
        };
        let looks = fig.looks();
        // The first line as it always was; the second dashed its own way; the dashed one
        // keeps the secondary dash; dots differ by shape.
        assert_eq!((looks[0].dash, looks[0].marker), (None, None));
        assert!(looks[1].dash.is_some() && looks[1].dash != SECONDARY_DASH);
        assert_eq!(looks[2].dash, SECONDARY_DASH);
        assert_eq!(looks[3].marker, Some(Marker::Circle));
        assert!(looks[4].marker.is_some() && looks[4].marker != looks[3].marker);
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
