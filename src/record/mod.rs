//! What happened, aggregated: per-interval HDR histograms, counts and the error set.
//!
//! Each engine worker records into its own [`IntervalRecord`] (no locks on the hot path); at
//! every one-second boundary the worker hands it to the [`Aggregator`], which merges the parts
//! of an interval losslessly (HDR histograms add) and passes the whole interval on.

mod aggregate;
mod histogram;
mod interval;

pub use aggregate::{Aggregator, Part};
pub use histogram::Histogram;
pub use interval::{
    ClassStats, ErrorKindKey, FlowStats, IntervalRecord, RequestStats, StatusClass, StepStats,
};
