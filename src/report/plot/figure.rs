//! A figure as data (titled axes and named series) and its drawing with plotters, as SVG
//! text or a PNG file. Log and percentile axes are drawn on linear coordinates of the
//! transformed values, so every figure goes through one code path.

use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

/// Pixel size of every figure.
pub const SIZE: (u32, u32) = (960, 540);

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
    fn to_axis(self, v: f64) -> f64 {
        match self {
            Scale::Linear => v,
            Scale::Log => v.max(1e-9).log10(),
            // Capped at six nines: 100 % itself is infinitely far.
            Scale::Nines => -(1.0 - (v / 100.0).min(0.999_999)).log10(),
        }
    }

    fn label(self, at: f64) -> String {
        match self {
            Scale::Linear => short_number(at),
            Scale::Log => short_number(10f64.powf(at)),
            Scale::Nines => {
                // Ticks sit on whole nines: 0 %, 90 %, 99 %, 99.9 % …
                let nines = at.round().max(0.0);
                let p = 100.0 * (1.0 - 10f64.powf(-nines));
                format!("{p:.*}%", (nines as usize).saturating_sub(2))
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
}

impl Axis {
    /// A linear axis.
    pub fn linear(label: &str) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Linear,
            most: None,
        }
    }

    /// A logarithmic axis.
    pub fn log(label: &str) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Log,
            most: None,
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

const PALETTE: [RGBColor; 8] = [
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

    fn range(
        &self,
        axis: &Axis,
        pick: impl Fn(&Series, &(f64, f64)) -> Option<f64>,
    ) -> std::ops::Range<f64> {
        let values: Vec<f64> = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().filter_map(|p| pick(s, p)))
            .filter(|v| v.is_finite() && (axis.scale != Scale::Log || *v > 0.0))
            .map(|v| axis.scale.to_axis(v))
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
                None => 0.0..(hi * 1.08).max(1e-9),
            },
            Scale::Linear => lo - (hi - lo) * 0.05..hi + (hi - lo) * 0.05,
            Scale::Log => lo.floor()..(hi.ceil()).max(lo.floor() + 1.0),
            Scale::Nines => 0.0..hi.max(2.0).ceil(),
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
        // Log and percentile axes get one tick per decade (or nine), so every label is round.
        let ticks = |axis: &Axis, r: &std::ops::Range<f64>| match axis.scale {
            Scale::Linear => 10,
            Scale::Log | Scale::Nines => (r.end - r.start).round().max(1.0) as usize + 1,
        };
        let (x_ticks, y_ticks, y2_ticks) =
            (ticks(&self.x, &xr), ticks(&self.y, &yr), ticks(&y2, &y2r));
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, ("sans-serif", 22))
            .margin(12)
            .margin_right(32)
            .x_label_area_size(48)
            .y_label_area_size(64)
            .right_y_label_area_size(if self.y2.is_some() { 64 } else { 8 })
            .build_cartesian_2d(xr.clone(), yr)?
            .set_secondary_coord(xr, y2r);
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
            .x_labels(x_ticks)
            .y_labels(y_ticks)
            .light_line_style(RGBColor(235, 235, 235))
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 15))
            .draw()?;
        if let Some(y2) = &self.y2 {
            chart
                .configure_secondary_axes()
                .y_desc(y2.label.as_str())
                .y_label_formatter(&y2_fmt)
                .y_labels(y2_ticks)
                .label_style(("sans-serif", 14))
                .axis_desc_style(("sans-serif", 15))
                .draw()?;
        }
        for (i, s) in self.series.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let axis_y = if s.secondary { y2s } else { ys };
            let points: Vec<(f64, f64)> = s
                .points
                .iter()
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .filter(|(_, y)| axis_y != Scale::Log || *y > 0.0)
                .map(|&(x, y)| (xs.to_axis(x), axis_y.to_axis(y)))
                .collect();
            let style = ShapeStyle::from(color).stroke_width(2);
            let legend = move |(x, y): (i32, i32)| {
                PathElement::new(
                    vec![(x, y), (x + 18, y)],
                    ShapeStyle::from(color).stroke_width(3),
                )
            };
            match (s.mark, s.secondary) {
                (Mark::Dashed, _) | (_, true) => {
                    let series = DashedLineSeries::new(points, 6, 4, style);
                    if s.secondary {
                        chart.draw_secondary_series(series)?
                    } else {
                        chart.draw_series(series)?
                    }
                    .label(s.name.as_str())
                    .legend(legend);
                }
                (Mark::Line, false) => {
                    chart
                        .draw_series(LineSeries::new(points, style))?
                        .label(s.name.as_str())
                        .legend(legend);
                }
                (Mark::LinePoints, false) => {
                    // Thin: a wide line doubling back between close points draws miter spikes.
                    let thin = ShapeStyle::from(color).stroke_width(1);
                    chart
                        .draw_series(LineSeries::new(points.clone(), thin))?
                        .label(s.name.as_str())
                        .legend(legend);
                    chart.draw_series(
                        points
                            .into_iter()
                            .map(|p| Circle::new(p, 3, ShapeStyle::from(color).filled())),
                    )?;
                }
            }
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(200, 200, 200))
            .label_font(("sans-serif", 14))
            .draw()?;
        Ok(())
    }
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

    #[test]
    fn a_figure_draws_as_svg_with_its_title_labels_and_legend() {
        let fig = Figure {
            name: "t".into(),
            title: "Latency by percentile".into(),
            x: Axis {
                label: "percentile".into(),
                scale: Scale::Nines,
                most: None,
            },
            y: Axis::log("latency (ms)"),
            y2: Some(Axis::linear("server CPU (%)")),
            series: vec![
                Series {
                    name: "run A".into(),
                    points: vec![(50.0, 1.0), (99.0, 5.0), (99.9, 20.0)],
                    mark: Mark::LinePoints,
                    secondary: false,
                },
                Series {
                    name: "cpu".into(),
                    points: vec![(50.0, 10.0), (99.9, 80.0)],
                    mark: Mark::Dashed,
                    secondary: true,
                },
            ],
        };
        let svg = fig.svg().unwrap();
        for text in [
            "Latency by percentile",
            "run A",
            "latency (ms)",
            "server CPU (%)",
            "99%",
        ] {
            assert!(svg.contains(text), "missing {text}");
        }
    }
}
