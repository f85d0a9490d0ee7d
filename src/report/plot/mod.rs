//! Plots of runs as PNG and SVG: the figures a run gets, and how one is drawn.

mod draw;
mod figure;
mod figures;
pub mod interactive;
mod labels;
mod look;
mod multiples;
mod over_time;
pub mod rates;
pub mod scatter;
pub mod ticks;

pub use draw::SIZE;
pub use figure::{short_number, Axis, Figure, Mark, PlotError, Scale, Series};
pub use figures::{for_capacity, for_comparison, for_run, Figures, RunView};
pub use look::{Look, Marker};
pub use over_time::{LeftOut, Why, MIN_SECONDS};

use std::path::{Path, PathBuf};

/// Writes each figure as `NAME.svg` and `NAME.png` into `dir`; returns the files written.
pub fn write_all(figures: &[Figure], dir: &Path) -> Result<Vec<PathBuf>, PlotError> {
    std::fs::create_dir_all(dir).map_err(|e| PlotError {
        name: dir.display().to_string(),
        reason: e.to_string(),
    })?;
    let mut written = Vec::new();
    for f in figures {
        let svg = dir.join(format!("{}.svg", f.name));
        std::fs::write(&svg, f.svg()?).map_err(|e| PlotError {
            name: f.name.clone(),
            reason: format!("{}: {e}", svg.display()),
        })?;
        let png = dir.join(format!("{}.png", f.name));
        f.png(&png)?;
        written.extend([svg, png]);
    }
    Ok(written)
}
