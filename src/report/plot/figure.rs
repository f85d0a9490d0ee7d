//! A figure as data (titled axes and named series) and its drawing with plotters, as SVG
//! text or a PNG file. Log and percentile axes are drawn on linear coordinates of the
//! transformed values, so every figure goes through one code path.

use super::ticks;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

/// Pixel size of every figure.
pub const SIZE: (u32, u32) = (960, 540);

/// The legend's left and right inset, and the height of one of its rows, in pixels.
const LEGEND_INSET: i32 = 70;
const LEGEND_ROW: i32 = 22;

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

    fn label(self, at: f64) -> String {
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

/// The font every figure's text uses, shipped inside the binary so a PNG draws the same on
/// any machine (DejaVu Sans; its licence is in assets/fonts).
static FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");

fn register_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // The font is a fixed, valid file: failing here would be a build defect.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

impl Figure {
    /// True when no series has a point: nothing to draw.
    pub fn is_empty(&self) -> bool {
        self.series.iter().all(|s| s.points.is_empty())
    }

    /// The figure as an SVG document.
    pub fn svg(&self) -> Result<String, PlotError> {
        register_font();
        let mut out = String::new();
        {
            let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
            self.draw(&root).map_err(|e| self.error(e))?;
            root.present().map_err(|e| self.error(e))?;
        }
        Ok(out)
    }

    /// Writes the figure as a PNG file.
    pub fn png(&self, path: &Path) -> Result<(), PlotError> {
        register_font();
        let root = BitMapBackend::new(path, SIZE).into_drawing_area();
        self.draw(&root).map_err(|e| self.error(e))?;
        root.present().map_err(|e| self.error(e))
    }

    fn error(&self, e: impl std::fmt::Display) -> PlotError {
        PlotError {
            name: self.name.clone(),
            reason: e.to_string(),
        }
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

    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        root.fill(&WHITE)?;
        let xr = self.range(&self.x, |_, p| Some(p.0));
        let yr = self.range(&self.y, |s, p| (!s.secondary).then_some(p.1));
        let y2 = self.y2.clone().unwrap_or_else(|| Axis::linear(""));
        let y2r = self.range(&y2, |s, p| s.secondary.then_some(p.1));
        let (xt, yt, y2t) = (
            self.x.ticks(&xr, 12),
            self.y.ticks(&yr, 8),
            y2.ticks(&y2r, 8),
        );
        let rows = self.legend_rows();
        let legend_h = 8 + LEGEND_ROW * rows.len() as i32;
        let (plot_area, legend_area) = root.split_vertically(SIZE.1 as i32 - legend_h);
        let mut chart = ChartBuilder::on(&plot_area)
            .caption(&self.title, ("sans-serif", 22))
            .margin(12)
            .margin_right(32)
            .x_label_area_size(48)
            .y_label_area_size(64)
            .right_y_label_area_size(if self.y2.is_some() { 64 } else { 8 })
            .build_cartesian_2d(Ticked::new(&xr, xt.clone()), Ticked::new(&yr, yt))?
            .set_secondary_coord(Ticked::new(&xr, xt), Ticked::new(&y2r, y2t));
        let (xs, ys, y2s) = (self.x.scale, self.y.scale, y2.scale);
        let x_fmt = move |v: &f64| xs.label(*v);
        let y_fmt = move |v: &f64| ys.label(*v);
        let y2_fmt = move |v: &f64| y2s.label(*v);
        chart
            .configure_mesh()
            .x_desc(self.x.label.as_str())
            .y_desc(self.y.label.as_str())
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .light_line_style(RGBColor(235, 235, 235))
            .bold_line_style(RGBColor(225, 225, 225))
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 15))
            .draw()?;
        if let Some(y2) = &self.y2 {
            chart
                .configure_secondary_axes()
                .y_desc(y2.label.as_str())
                .y_label_formatter(&y2_fmt)
                .label_style(("sans-serif", 14))
                .axis_desc_style(("sans-serif", 15))
                .draw()?;
        }
        for (i, s) in self.series.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let axis_y = if s.secondary { y2s } else { ys };
            let kept: Vec<usize> = (0..s.points.len())
                .filter(|&k| {
                    let (x, y) = s.points[k];
                    x.is_finite() && y.is_finite() && (axis_y != Scale::Log || y > 0.0)
                })
                .collect();
            let points: Vec<(f64, f64)> = kept
                .iter()
                .map(|&k| (xs.to_axis(s.points[k].0), axis_y.to_axis(s.points[k].1)))
                .collect();
            let look = self.look(i, s);
            let style = ShapeStyle::from(color).stroke_width(look.width);
            let dash = look.dash;
            if s.mark == Mark::Points {
                let dots = points
                    .iter()
                    .map(|p| Circle::new(*p, 2, ShapeStyle::from(color.mix(0.7)).filled()));
                if s.secondary {
                    chart.draw_secondary_series(dots)?;
                } else {
                    chart.draw_series(dots)?;
                }
            } else if let Some((on, off)) = dash {
                let series = DashedLineSeries::new(points.clone(), on, off, style);
                if s.secondary {
                    chart.draw_secondary_series(series)?;
                } else {
                    chart.draw_series(series)?;
                }
            } else if s.secondary {
                chart.draw_secondary_series(LineSeries::new(points.clone(), style))?;
            } else {
                chart.draw_series(LineSeries::new(points.clone(), style))?;
            }
            if let Some(marker) = look.marker {
                // A marker on every point of a short series, on a regular few of a long one.
                let every = (points.len() / 24).max(1);
                let at: Vec<(f64, f64)> = points.iter().copied().step_by(every).collect();
                let filled = ShapeStyle::from(color).filled();
                macro_rules! marks {
                    ($make:expr) => {
                        if s.secondary {
                            chart.draw_secondary_series(at.iter().map($make))?;
                        } else {
                            chart.draw_series(at.iter().map($make))?;
                        }
                    };
                }
                match marker {
                    Marker::Circle => marks!(|p| Circle::new(*p, 3, filled)),
                    Marker::Triangle => marks!(|p| TriangleMarker::new(*p, 5, filled)),
                    Marker::Cross => {
                        marks!(|p| Cross::new(*p, 4, ShapeStyle::from(color).stroke_width(2)))
                    }
                    Marker::Square => {
                        marks!(|p| EmptyElement::at(*p) + Rectangle::new([(-3, -3), (3, 3)], filled))
                    }
                }
            }
            if !s.labels.is_empty() {
                let font = ("sans-serif", 13).into_font().color(&RGBColor(60, 60, 60));
                let texts = kept.iter().zip(&points).filter_map(|(&k, &p)| {
                    let text = s.labels.get(k)?.clone();
                    Some(EmptyElement::at(p) + Text::new(text, (6, -16), font.clone()))
                });
                chart.draw_series(texts)?;
            }
        }
        self.draw_legend(&legend_area, &rows)?;
        Ok(())
    }

    /// The legend's items in rows that fit the figure's width: each item's series index
    /// and its x offset.
    fn legend_rows(&self) -> Vec<Vec<(usize, i32)>> {
        let width = SIZE.0 as i32 - 2 * LEGEND_INSET;
        let mut rows: Vec<Vec<(usize, i32)>> = Vec::new();
        let mut x = width;
        for (i, s) in self.series.iter().enumerate() {
            let w = 44 + 8 * s.name.chars().count() as i32;
            if x + w > width {
                rows.push(Vec::new());
                x = 0;
            }
            if let Some(row) = rows.last_mut() {
                row.push((i, x));
            }
            x += w;
        }
        rows
    }

    /// The legend under the plot, outside it, so it never hides a line.
    fn draw_legend<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        rows: &[Vec<(usize, i32)>],
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        let font = ("sans-serif", 14).into_font().color(&RGBColor(40, 40, 40));
        for (r, row) in rows.iter().enumerate() {
            let y = 10 + LEGEND_ROW * r as i32;
            for &(i, x) in row {
                let s = &self.series[i];
                let color = PALETTE[i % PALETTE.len()];
                let look = self.look(i, s);
                let x = LEGEND_INSET + x;
                let line = ShapeStyle::from(color).stroke_width(look.width.max(2));
                let dashes: Vec<(i32, i32)> = match look.dash {
                    None => vec![(0, 28)],
                    Some((on, off)) => (0..28)
                        .step_by((on + off) as usize)
                        .map(|a| (a, (a + on as i32).min(28)))
                        .collect(),
                };
                if s.mark == Mark::Points {
                    area.draw(&Circle::new(
                        (x + 14, y),
                        3,
                        ShapeStyle::from(color).filled(),
                    ))?;
                } else {
                    for (a, b) in dashes {
                        area.draw(&PathElement::new(vec![(x + a, y), (x + b, y)], line))?;
                    }
                }
                let filled = ShapeStyle::from(color).filled();
                let at = (x + 14, y);
                match look.marker {
                    Some(Marker::Circle) => area.draw(&Circle::new(at, 3, filled))?,
                    Some(Marker::Triangle) => area.draw(&TriangleMarker::new(at, 5, filled))?,
                    Some(Marker::Square) => area.draw(&Rectangle::new(
                        [(at.0 - 3, y - 3), (at.0 + 3, y + 3)],
                        filled,
                    ))?,
                    Some(Marker::Cross) => area.draw(&Cross::new(at, 4, line))?,
                    None => {}
                }
                area.draw(&Text::new(s.name.clone(), (x + 34, y - 8), font.clone()))?;
            }
        }
        Ok(())
    }

    /// How series `i` is told apart: its dash pattern, marker and width.
    pub fn look(&self, i: usize, s: &Series) -> Look {
        if self.distinct {
            const DASHES: [Option<(u32, u32)>; 4] =
                [None, Some((10, 5)), Some((3, 4)), Some((14, 4))];
            const MARKERS: [Marker; 4] = [
                Marker::Circle,
                Marker::Triangle,
                Marker::Square,
                Marker::Cross,
            ];
            return Look {
                dash: DASHES[i % DASHES.len()],
                marker: Some(MARKERS[(i / DASHES.len() + i) % MARKERS.len()]),
                width: 2,
            };
        }
        match (s.mark, s.secondary) {
            (Mark::Points, _) => Look {
                dash: None,
                marker: None,
                width: 1,
            },
            (Mark::Dashed, _) | (_, true) => Look {
                dash: Some((6, 4)),
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

/// A linear coordinate labelled at given ticks: plotters' own key-point binding cannot
/// take a label formatter.
struct Ticked {
    range: std::ops::Range<f64>,
    ticks: Vec<f64>,
}

impl Ticked {
    fn new(range: &std::ops::Range<f64>, ticks: Vec<f64>) -> Ticked {
        Ticked {
            range: range.clone(),
            ticks,
        }
    }
}

impl Ranged for Ticked {
    type ValueType = f64;
    type FormatOption = plotters::coord::ranged1d::DefaultFormatting;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let span = (self.range.end - self.range.start).max(1e-12);
        let at = (v - self.range.start) / span;
        limit.0 + (at * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<H: plotters::coord::ranged1d::KeyPointHint>(&self, hint: H) -> Vec<f64> {
        // Grid lines at the labels only: no lighter lines between.
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.range.clone()
    }
}

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
        let (a, b) = (fig.look(0, &fig.series[0]), fig.look(1, &fig.series[1]));
        assert_ne!(a.dash, b.dash);
        assert_ne!(a.marker, b.marker);
    }
}
