//! Which point labels a figure draws: each in order, unless it would overlap one already
//! drawn (a sweep of 120 steps at one throughput would stack 120 "N users" into a smear).
//! The labels left out are read on hover in the HTML report's charts.

/// A label's box on the canvas, in pixels: left, top, right, bottom.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Box {
    /// Left edge.
    pub left: f64,
    /// Top edge.
    pub top: f64,
    /// Right edge.
    pub right: f64,
    /// Bottom edge.
    pub bottom: f64,
}

impl Box {
    fn overlaps(&self, other: &Box) -> bool {
        self.left < other.right
            && other.left < self.right
            && self.top < other.bottom
            && other.top < self.bottom
    }
}

/// The indices of `boxes` to draw: in order, each that overlaps none drawn before it.
pub fn apart(boxes: &[Box]) -> Vec<usize> {
    let mut kept: Vec<usize> = Vec::new();
    for (i, b) in boxes.iter().enumerate() {
        if kept.iter().all(|&k| !boxes[k].overlaps(b)) {
            kept.push(i);
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(x: f64, y: f64) -> Box {
        Box {
            left: x,
            top: y,
            right: x + 60.0,
            bottom: y + 14.0,
        }
    }

    #[test]
    fn a_smear_of_labels_keeps_those_apart_and_the_first() {
        // 120 steps at about one throughput, a pixel or two apart: one in every few kept.
        let boxes: Vec<Box> = (0..120)
            .map(|i| label(800.0 + f64::from(i % 3), 400.0 - 1.5 * f64::from(i)))
            .collect();
        let kept = apart(&boxes);
        assert_eq!(kept[0], 0);
        assert!(kept.len() < 20 && kept.len() > 5, "{}", kept.len());
        for (n, &a) in kept.iter().enumerate() {
            for &b in &kept[n + 1..] {
                assert!(!boxes[a].overlaps(&boxes[b]), "{a} and {b} overlap");
            }
        }
        // Labels far apart are all kept.
        let spread: Vec<Box> = (0..10).map(|i| label(70.0 * f64::from(i), 100.0)).collect();
        assert_eq!(apart(&spread).len(), 10);
    }
}
