//! What a run was asked to do (`meta.json`) and how it ended (`end.json`).

use crate::monitor::CpuTime;
use crate::plan::secret_names::redact_query;
use crate::plan::{
    Arrivals, AttackPlan, ConnectionOptions, Expect, Load, Stage, Stop, Target, TlsOptions,
};
use serde::{Deserialize, Serialize};

/// Everything needed to know what a run was, with secrets already removed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunMeta {
    /// Always "headroom".
    pub tool: String,
    /// headroom's version.
    pub version: String,
    /// The command line, secrets redacted.
    pub command: Vec<String>,
    /// Host the generator ran on.
    pub host: String,
    /// Wall-clock start, RFC 3339.
    pub started_at: String,
    /// Where requests went.
    pub target: Target,
    /// The run's requests, in plan order (the order of the per-request records).
    pub requests: Vec<RequestMeta>,
    /// The run's flows, in plan order (the order of the per-flow records).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<FlowMeta>,
    /// The objectives the run is judged against, as written.
    #[serde(default)]
    pub slo: Vec<String>,
    /// The safety stop's conditions (`--abort-when`), as written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub abort_when: Vec<String>,
    /// The stages of the load, when it had stages.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<Stage>,
    /// The load model.
    pub load: Load,
    /// The closed model's cap on requests started per second (`--max-rate`), when asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rate: Option<crate::plan::Rate>,
    /// How the open model's arrivals were spaced, with a Poisson run's seed (absent: even).
    #[serde(default, skip_serializing_if = "Arrivals::is_even")]
    pub arrivals: Arrivals,
    /// When the run was to stop.
    pub stop: Stop,
    /// Connection behaviour.
    pub connection: ConnectionOptions,
    /// TLS settings (file paths only; key material is never read into the store).
    pub tls: TlsOptions,
    /// Engine threads.
    pub threads: usize,
    /// The open-files limit in force.
    pub open_files_limit: Option<u64>,
    /// The HTTP version actually spoken (after ALPN).
    pub protocol: String,
    /// What the preflight noticed about the server.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<crate::sample::Notice>,
    /// Which part of a sharded test this run was (`--shard I/N`); `None` for a whole test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardMeta>,
    /// The shard runs this run was merged from (`headroom merge`); `None` for a run one
    /// generator made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<MergedRun>,
}

/// Where a merged run came from: the shards, how their clocks were lined up, which are missing.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MergedRun {
    /// The set of shards and their common clock (its fields at this level in `meta.json`).
    #[serde(flatten)]
    pub set: MergedSet,
    /// The shards merged, by index.
    pub shards: Vec<MergedShard>,
}

/// The shards a merged run was made of as a set: how many the test has, the common clock
/// they were placed on, which are missing, whose server readings were kept. The stored run
/// (`meta.json`'s `merged`) and the summary (`shards`) both carry it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MergedSet {
    /// How many shards the whole test has.
    pub count: u32,
    /// The common start every shard's seconds were counted from, RFC 3339: the shared
    /// `--start-at` when the shards had one, else the earliest shard's start.
    pub origin: String,
    /// Seconds between the earliest and the latest shard's start.
    pub start_spread_secs: f64,
    /// Shards of the test that were not merged (`--partial`), by index.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<u32>,
    /// The shard whose server readings (`--monitor-pid`, `--monitor-prometheus`) were kept:
    /// the server is one, so its readings are kept once, never added up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_from: Option<u32>,
}

/// One shard of a merged run: where it ran, when it started, and the generator's own facts
/// its verdict is judged on (the merged record adds the shards' requests up; whether each
/// generator kept up is judged on its own).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MergedShard {
    /// Its index, from 0.
    pub index: u32,
    /// The run directory's name.
    pub dir: String,
    /// Host it ran on.
    pub host: String,
    /// Its wall-clock start, RFC 3339.
    pub started_at: String,
    /// Seconds its start fell after the merged run's origin (exact, to the millisecond).
    pub offset_secs: f64,
    /// Whole seconds added to its interval indices to place them on the merged timeline
    /// (its offset rounded to the nearest second).
    pub shift_secs: u64,
    /// Seconds it began after `--start-at`, as it recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late_secs: Option<f64>,
    /// Its share of the load.
    pub load: Load,
    /// Its share of the stages.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<Stage>,
    /// Its engine threads.
    pub threads: usize,
    /// Its open-files limit.
    pub open_files_limit: Option<u64>,
    /// Its whole intervals.
    pub intervals: u64,
    /// How it ended; `None` when it did not write `end.json`.
    pub end: Option<RunEnd>,
    /// Its generator's side, over its whole run: requests sent and retried, lag, failures
    /// by error and status, and the service time of its answered requests (one request
    /// entry holding all of them). Latencies by request are in the merged intervals.
    pub generator: crate::record::IntervalRecord,
    /// Whether its log's last line was torn (a kill mid-write) and skipped.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub torn_tail: bool,
    /// Its generator's CPU over the seconds it wrote, and the most descriptors open at a
    /// second's end: what its own report reads of its health when it wrote no end (killed).
    #[serde(default)]
    pub seconds_health: crate::monitor::Health,
    /// Still writing when this view of the test was taken (`watch`, before the shard ended
    /// or stopped writing): the test is not over, so its rate is not yet held to what it
    /// asked. A stored merge never has one: it takes a shard without its end as killed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sending: bool,
}

/// One shard's place in a sharded test: what `headroom merge` checks and rebuilds the whole from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardMeta {
    /// This shard, from 0.
    pub index: u32,
    /// How many shards the whole test has.
    pub count: u32,
    /// Fingerprint of the whole test's plan (hex): shards of one test share it, and a merge
    /// refuses runs whose fingerprints differ.
    pub plan: String,
    /// The whole test's load; this run's `load` is its share of it.
    pub whole_load: Load,
    /// The whole test's stages; this run's `stages` are its share of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub whole_stages: Vec<Stage>,
    /// The common start asked with `--start-at`, RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at: Option<String>,
    /// Seconds this shard began after `start_at` (0 when on time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late_secs: Option<f64>,
}

impl RunMeta {
    /// Describes `plan` as started now by `command`.
    pub fn describe(
        plan: &AttackPlan,
        command: &[String],
        open_files_limit: Option<u64>,
        protocol: &str,
        notices: &[crate::sample::Notice],
    ) -> Self {
        RunMeta {
            tool: "headroom".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            command: super::redact_args(command),
            host: rustix::system::uname()
                .nodename()
                .to_string_lossy()
                .into_owned(),
            started_at: humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string(),
            target: crate::plan::Target {
                path_and_query: redact_query(&plan.target.path_and_query),
                ..plan.target.clone()
            },
            requests: plan
                .requests
                .iter()
                .enumerate()
                .map(|(i, r)| RequestMeta {
                    login: plan
                        .login
                        .as_ref()
                        .is_some_and(|l| usize::from(l.request) == i),
                    name: r.name.clone(),
                    weight: r.weight,
                    method: r.spec.method.to_string(),
                    path: redact_query(
                        r.spec
                            .path
                            .as_deref()
                            .unwrap_or(&plan.target.path_and_query),
                    ),
                    headers: r.spec.redacted_headers(),
                    body_bytes: r.spec.body.len(),
                    expect: r.expect.clone(),
                })
                .collect(),
            flows: plan
                .flows
                .iter()
                .map(|f| FlowMeta {
                    name: f.name.clone(),
                    steps: f.steps.clone(),
                    weight: f.weight,
                    think_us: u64::try_from(f.think.as_micros()).unwrap_or(u64::MAX),
                })
                .collect(),
            slo: plan.slo.iter().map(|s| s.text.clone()).collect(),
            abort_when: plan.abort.iter().map(|a| a.text.clone()).collect(),
            stages: plan.stages.clone(),
            load: plan.load,
            max_rate: plan.max_rate,
            arrivals: plan.arrivals,
            stop: plan.stop,
            connection: plan.connection.clone(),
            tls: plan.tls.clone(),
            threads: plan.threads,
            open_files_limit,
            protocol: protocol.to_string(),
            notices: notices.to_vec(),
            shard: None,
            merged: None,
        }
    }
}

/// One of the run's requests, as described in `meta.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RequestMeta {
    /// The name it is reported under.
    pub name: String,
    /// Its share of the load.
    pub weight: u32,
    /// HTTP method.
    pub method: String,
    /// Path and query.
    pub path: String,
    /// Request headers, secret values redacted.
    pub headers: Vec<String>,
    /// Request body size in bytes (the body itself is not stored).
    pub body_bytes: usize,
    /// The answers it expects.
    pub expect: Expect,
    /// True for the login each connection runs before its first request.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub login: bool,
}

/// One of the run's flows, as described in `meta.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FlowMeta {
    /// The name it is reported under.
    pub name: String,
    /// Its steps, by request index, in order.
    pub steps: Vec<u16>,
    /// Its share of the iterations, relative to the other flows (1 in runs stored before
    /// it was kept).
    #[serde(default = "one")]
    pub weight: u32,
    /// Pause between one step's answer and the next step, µs (0 in runs stored before it
    /// was kept): Little's law counts it as time in the users' loop.
    #[serde(default)]
    pub think_us: u64,
}

fn one() -> u32 {
    1
}

/// Why a run stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EndStatus {
    /// It ran to its stop condition.
    Completed,
    /// It was stopped early (Ctrl-C).
    Interrupted,
    /// It stopped itself early: a sweep step passed a limit (`RunEnd::reason` says which).
    Stopped,
    /// Its safety stop ended it: an `--abort-when` condition held for its window
    /// (`RunEnd::aborted` says which, and when).
    Aborted,
}

/// How a run ended; written once, after the last interval.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunEnd {
    /// Completed or interrupted.
    pub status: EndStatus,
    /// Wall-clock end, RFC 3339.
    pub ended_at: String,
    /// The same instant in Unix seconds, to the millisecond (what PromQL's `@` takes);
    /// absent from runs stored before it was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_unix: Option<f64>,
    /// Seconds from the start to the last request sent.
    pub attack_secs: f64,
    /// Seconds from the last request sent to the last response.
    pub wait_secs: f64,
    /// CPU time the generator used over the whole run.
    pub cpu: CpuTime,
    /// Most descriptors open at once (sampled each second).
    pub peak_open_fds: u64,
    /// Peak resident memory of the generator in bytes.
    pub peak_rss_bytes: Option<u64>,
    /// Why it stopped early by itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The condition that aborted it, when one did (absent from runs stored before it was
    /// kept, and from every run not aborted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aborted: Option<Aborted>,
}

/// The safety stop that ended a run: which condition held, over which seconds. Seconds are
/// counted from the run's start: second 7 is the interval from 7 s to 8 s.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Aborted {
    /// The condition as written ("errors > 5% for 30s").
    pub condition: String,
    /// Its window, whole seconds (0: the first second it held).
    pub window_secs: u64,
    /// The first second of the streak that stopped the run.
    pub from_second: u64,
    /// The seconds of that streak the condition held in (seconds with nothing to judge,
    /// such as a second without one answer, pause a streak without counting).
    pub held_secs: u64,
    /// When the run was told to stop: the end of the streak's last second.
    pub at_second: u64,
    /// What the condition measured in that last second, in its unit ("62.50%", "2.4s").
    pub last: String,
}

impl RunEnd {
    /// The end in Unix seconds: `ended_unix`, or read from `ended_at` for older runs.
    pub fn unix_secs(&self) -> Option<f64> {
        self.ended_unix.or_else(|| unix_secs_of(&self.ended_at))
    }
}

/// An RFC 3339 time (as `ended_at` is written) in Unix seconds, to the millisecond.
pub fn unix_secs_of(rfc3339: &str) -> Option<f64> {
    let t = humantime::parse_rfc3339_weak(rfc3339).ok()?;
    let ms = t.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis();
    Some(ms as f64 / 1e3)
}
