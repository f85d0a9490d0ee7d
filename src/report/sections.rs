//! The tables a run's report shows after its headline numbers, listed once so that text,
//! markdown and HTML show the same tables, under the same titles, in the same order.

use crate::summary::Summary;

/// One table of the report under its title.
pub struct Section {
    /// Its title ("Failures").
    pub title: &'static str,
    /// Its rows, header first.
    pub rows: Vec<Vec<String>>,
    /// How many leading columns are text (aligned left).
    pub left: usize,
}

/// The titles of every section, in order.
const TITLES: [&str; 8] = [
    "Failures",
    "Requests by name",
    "Status codes by request",
    "Flows",
    "Stages",
    "Requests by stage",
    "Steps",
    "Shards",
];

/// The run's tables in order: why requests failed, then by request, by flow, by stage, and
/// for a merged run by shard.
/// `single` keeps the per-request table of a run of one request (a Locust-style table
/// for markdown and HTML; the text report has the same numbers in its lines).
pub fn tables(s: &Summary, single: bool) -> Vec<Section> {
    let mut out = Vec::new();
    let mut add = |title, rows, left| out.push(Section { title, rows, left });
    if !s.failures.is_empty() {
        add(TITLES[0], super::failures::rows(s), super::failures::LEFT);
    }
    if s.by_request.len() > 1 || (single && !s.by_request.is_empty()) {
        add(
            TITLES[1],
            super::by_request::rows(s),
            super::by_request::LEFT,
        );
    }
    if s.by_request.len() > 1 {
        if let Some(rows) = super::request_status::rows(s) {
            add(TITLES[2], rows, super::request_status::LEFT);
        }
    }
    if !s.flows.is_empty() {
        add(TITLES[3], super::by_flow::rows(&s.flows), 1);
    }
    if !s.stages.is_empty() {
        add(TITLES[4], super::by_stage::rows(s), 1);
        if let Some(rows) = super::request_stage::rows(s) {
            add(TITLES[5], rows, super::request_stage::LEFT);
        }
    }
    if let Some(shards) = &s.shards {
        add(TITLES[7], super::shards::rows(shards), super::shards::LEFT);
    }
    out
}
