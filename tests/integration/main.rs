//! Integration tests: real servers on loopback, started and stopped by the tests themselves.
//!
//! The built-in target and the hostile servers run in-process. The tests that drive a system
//! server or tool (nginx, etcd, Chromium, ...) run with the `lab` feature, which `tests/run`
//! turns on after installing them; without it each is listed as ignored with what it needs.

mod abort;
mod arrivals;
mod bad_input;
mod breakdowns;
mod capacity;
mod check;
mod ci;
mod cli;
mod cli_expectations;
mod counts;
mod data;
mod diagnosis;
mod distributed;
mod docs;
mod examples;
mod hostile;
mod html;
mod import;
mod import_bounds;
mod influx;
mod kube;
mod live;
mod matrix;
mod merge;
mod merge_killed;
mod nginx;
mod noise;
mod overrides;
mod ports;
mod protocols;
mod push;
mod raw;
mod readme;
mod report;
mod scenario;
mod seeds;
mod shard;
mod stopped;
mod support;
mod target;
mod verdicts;
mod watch;
mod yaml;
