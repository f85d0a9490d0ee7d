//! The generator watching itself: CPU time, descriptors and the open-files limit.
//!
//! A load generator that runs out of CPU, ports or descriptors measures itself, not the
//! server; these readings let every report say which it was.

mod process;
mod target;

pub use process::{
    open_fds, peak_rss_bytes, raise_open_files_limit, CpuTime, Health, ProcessProbe,
};
pub use target::{MonitorError, TargetHealth, TargetProbe};
