//! How much load until the objective breaks: sweeps over a ladder of loads, and the search
//! for the highest rate that meets an SLO.

pub mod clock;
pub mod knee;
mod ladder;
pub mod search;
pub mod steady;
pub mod study;
mod sweep;

pub use ladder::{Ladder, MAX_STEPS};
pub use sweep::{
    fmt_level, parse_limits, parse_objectives, Axis, StepLength, StopWatch, Sweep, DEFAULT_LIMITS,
};

/// A sweep or search that cannot be run as asked.
#[derive(Debug, thiserror::Error)]
pub enum CapacityError {
    /// The loads to step through cannot be read.
    #[error("cannot read the loads {0}")]
    Ladder(String),
    /// The steps cannot be built.
    #[error("cannot build the steps: {0}")]
    Step(String),
    /// A limit or objective cannot be read.
    #[error("{0}")]
    Limit(String),
    /// A search setting is out of range.
    #[error("{0}")]
    Search(String),
}
