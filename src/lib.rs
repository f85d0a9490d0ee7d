//! headroom: an exact, cheap HTTP load generator that reports how much load a service takes.
//!
//! # Layout
//! The pipeline reads top to bottom, one module per stage:
//!
//! - [`plan`]: what to send, validated and unit-typed ([`plan::AttackPlan`]).
//! - [`schedule`]: when to send it; pure, clock-free pacing.
//! - [`engine`]: the only owner of threads, sockets and cancellation; turns a plan into
//!   [`sample::Sample`]s, HTTP/1.1 on its own epoll driver and HTTP/2 on tokio with `h2`
//!   (the only `h2` user). `engine::tls` builds the one rustls configuration both use.
//! - [`sample`]: the one type that crosses from the engine to the recorder.
//! - [`record`]: per-worker HDR histograms per one-second interval, merged losslessly.
//! - [`store`]: the run directory: metadata and the append-only interval log;
//!   [`store::merge`] makes one run directory from the shard runs of one test.
//! - [`summary`]: the serde model every report renders, built from recorded intervals only.
//! - [`report`]: text and JSON renderers of a [`summary::Summary`].
//! - [`run`]: wires engine → record → store for one run, with the monitor beside.
//! - [`live`]: the live page of a run while it goes (`--live`): its own thread, its own
//!   small HTTP server, fed what the recorder already produces each second.
//! - [`abort`]: the safety stop (`--abort-when`), judging each recorded second.
//! - [`launch`]: a run as one shard of a test, and a common start for several generators.
//! - [`matrix`]: runs a matrix's variants one after another, each a stored run.
//! - [`monitor`]: the generator's own health (CPU, descriptors).
//! - [`target`]: a built-in HTTP server for demos and self-tests.
//! - [`timer`]: microsecond-precise sleeping on tokio (timerfd), for the HTTP/2 pacer and the
//!   target.
//! - [`units`]: human-readable durations and byte counts, shared by the summary and the reports.
//! - [`yaml`]: the one writer of the YAML headroom writes (`kube`'s manifests, `import`'s
//!   scenarios), quoting whatever a YAML 1.1 or 1.2 reader could misread.
//!
//! `schedule`, `record`, `summary` and `report` never touch the network.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

// First: its macros shadow the standard printing macros in every module after it.
#[macro_use]
mod say;

pub mod abort;
pub mod capacity;
pub mod engine;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod kube;
pub mod launch;
pub mod live;
pub mod matrix;
pub mod monitor;
pub mod plan;
pub mod push;
pub mod record;
pub mod report;
pub mod run;
pub mod sample;
pub mod schedule;
pub mod store;
pub mod summary;
pub mod target;
pub mod timer;
pub mod units;
pub mod yaml;
