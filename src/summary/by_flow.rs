//! One row per flow: how many iterations ended, how many failed, and how long the others
//! took from their first step's intended send to their last answer (think times included).

use super::Stats;
use crate::record::FlowStats;
use crate::store::FlowMeta;
use serde::{Deserialize, Serialize};

/// One flow over a span (the run, a stage).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FlowRow {
    /// The flow's name.
    pub name: String,
    /// Iterations ended.
    pub count: u64,
    /// Of those, iterations a step of which did not get what it expects.
    pub failures: u64,
    /// Time of the iterations that succeeded.
    pub took: Stats,
    /// Iterations ended per second of the span.
    pub per_sec: f64,
}

/// One row per flow of the run, in plan order; none for a run without flows (or stored
/// before iterations were kept).
pub fn rows(flows: &[FlowMeta], stats: &[FlowStats], secs: f64) -> Vec<FlowRow> {
    if stats.is_empty() {
        return Vec::new();
    }
    let empty = FlowStats::default();
    flows
        .iter()
        .enumerate()
        .map(|(i, meta)| {
            let st = stats.get(i).unwrap_or(&empty);
            FlowRow {
                name: meta.name.clone(),
                count: st.count,
                failures: st.failures,
                took: Stats::of(&st.took),
                per_sec: if secs > 0.0 {
                    st.count as f64 / secs
                } else {
                    0.0
                },
            }
        })
        .collect()
}
