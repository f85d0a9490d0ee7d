//! How the series of a figure are told apart: a dash pattern, a point marker and a width
//! for each, so that colour alone never separates two series (grey print, colour-blind
//! readers).

use super::figure::{Figure, Mark, Series};

impl Figure {
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
    use crate::report::plot::figure::tests::line;
    use crate::report::plot::figure::Axis;

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
}
