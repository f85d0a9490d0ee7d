//! A figure drawn with plotters, as SVG text or a PNG file. Log and percentile axes are
//! drawn on linear coordinates of the transformed values, so every figure goes through one
//! code path.

use super::figure::{Axis, Figure, Mark, PlotError, Scale, PALETTE};
use super::labels;
use super::look::Marker;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

/// Pixel size of every figure.
pub const SIZE: (u32, u32) = (960, 540);

/// The legend's left and right inset, and the height of one of its rows, in pixels.
const LEGEND_INSET: i32 = 70;
const LEGEND_ROW: i32 = 22;

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
        let looks = self.looks();
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
            let look = looks[i];
            let style = ShapeStyle::from(color).stroke_width(look.width);
            let dash = look.dash;
            if s.mark == Mark::Points {
                // Dots are drawn by their marker below, at every point.
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
                // A marker on every point of a short series, on a regular few of a long one;
                // a scatter's dots are its markers, small and a little transparent.
                let dots = s.mark == Mark::Points;
                let every = if dots { 1 } else { (points.len() / 24).max(1) };
                let at: Vec<(f64, f64)> = points.iter().copied().step_by(every).collect();
                let color = if dots { color.mix(0.7) } else { color.into() };
                let filled = ShapeStyle::from(color).filled();
                let (r, tri, half, cross) = if dots { (2, 4, 2, 3) } else { (3, 5, 3, 4) };
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
                    Marker::Circle => marks!(|p| Circle::new(*p, r, filled)),
                    Marker::Triangle => marks!(|p| TriangleMarker::new(*p, tri, filled)),
                    Marker::Cross => {
                        marks!(|p| Cross::new(*p, cross, ShapeStyle::from(color).stroke_width(2)))
                    }
                    Marker::Square => {
                        marks!(|p| EmptyElement::at(*p)
                            + Rectangle::new([(-half, -half), (half, half)], filled))
                    }
                }
            }
            if !s.labels.is_empty() {
                let font = ("sans-serif", 13).into_font().color(&RGBColor(60, 60, 60));
                // Each label's box where it would go (6 px right of its point, 16 up); those
                // that would overlap one drawn before are left out, never stacked.
                let placed: Vec<(String, (f64, f64), labels::Box)> = kept
                    .iter()
                    .zip(&points)
                    .filter_map(|(&k, &p)| {
                        let text = s.labels.get(k)?.clone();
                        // The glyphs' box is a little shorter than the line: a line of
                        // 13 px type and 2 px between labels.
                        let (w, _) = root.estimate_text_size(&text, &font).ok()?;
                        let (x, y) = chart.backend_coord(&p);
                        let left = f64::from(x + 6);
                        let top = f64::from(y - 16);
                        let b = labels::Box {
                            left,
                            top,
                            right: left + f64::from(w) + 2.0,
                            bottom: top + 15.0,
                        };
                        Some((text, p, b))
                    })
                    .collect();
                let boxes: Vec<labels::Box> = placed.iter().map(|l| l.2).collect();
                let texts = labels::apart(&boxes).into_iter().map(|i| {
                    let (text, p, _) = &placed[i];
                    EmptyElement::at(*p) + Text::new(text.clone(), (6, -16), font.clone())
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
        let looks = self.looks();
        for (r, row) in rows.iter().enumerate() {
            let y = 10 + LEGEND_ROW * r as i32;
            for &(i, x) in row {
                let s = &self.series[i];
                let color = PALETTE[i % PALETTE.len()];
                let look = looks[i];
                let x = LEGEND_INSET + x;
                let line = ShapeStyle::from(color).stroke_width(look.width.max(2));
                let dashes: Vec<(i32, i32)> = match look.dash {
                    None => vec![(0, 28)],
                    Some((on, off)) => (0..28)
                        .step_by((on + off) as usize)
                        .map(|a| (a, (a + on as i32).min(28)))
                        .collect(),
                };
                // A scatter's entry is its marker alone (drawn below): dots are not joined.
                if s.mark != Mark::Points {
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
