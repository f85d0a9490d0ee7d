//! The generator watching itself: CPU time, descriptors and the open-files limit.
//!
//! A load generator that runs out of CPU, ports or descriptors measures itself, not the
//! server; these readings let every report say which it was.

mod process;
mod prometheus;
mod target;
mod tree;

pub use process::{
    open_fds, peak_rss_bytes, raise_open_files_limit, CpuTime, Health, ProcessProbe,
};
pub use prometheus::{PrometheusProbe, Reading, ScrapeError};
pub use target::{mean_cpu_percent, MonitorError, TargetHealth, TargetProbe, TreeHealth};
pub use tree::cores_online;

/// The server being watched, by PID or through its Prometheus endpoint.
#[derive(Debug)]
pub enum ServerWatch {
    /// A local process, from /proc.
    Process(TargetProbe),
    /// A Prometheus endpoint (node_exporter or the server's own).
    Prometheus(PrometheusProbe),
}

impl ServerWatch {
    /// The server since the last sample; `None` when nothing new was read.
    pub fn sample(&mut self) -> Option<TargetHealth> {
        match self {
            ServerWatch::Process(p) => p.sample(),
            ServerWatch::Prometheus(p) => p.sample(),
        }
    }
}
