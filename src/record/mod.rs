//! What happened, aggregated: per-interval HDR histograms, counts and the error set.
//!
//! Each engine worker records into its own [`IntervalRecord`] (no locks on the hot path); at
//! every one-second boundary the worker hands it to the [`Aggregator`], which merges the parts
//! of an interval losslessly (HDR histograms add) and passes the whole interval on. Asked (`--raw`), each request is also kept whole, in a
//! bounded hand-over to a writer ([`RawSink`]).

mod aggregate;
mod by_class;
mod histogram;
mod interval;
mod raw;
mod send_gaps;
mod step;

pub use aggregate::{Aggregator, Part};
pub use by_class::{ByClass, ClassLatency};
pub use histogram::Histogram;
pub(crate) use interval::add_each;
pub use interval::{
    ClassStats, ErrorKindKey, FlowStats, IntervalRecord, RequestStats, StatusClass,
};
pub use raw::{raw_channel, RawBatch, RawRecord, RawSink, RawStream, RAW_BATCH, RAW_QUEUE};
pub use send_gaps::{arrivals_per_span, points as send_gaps_points, SendGaps, SEND_RESOLUTION_US};
pub use step::StepStats;
