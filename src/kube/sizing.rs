//! CPU and memory a shard asks for, from the benchmark's measured CPU per request
//! (bench/RESULTS.md, written by bench/run.sh) and its measured peak RSS. Every figure is
//! quoted with its source in the Job, so a user can check it against their own bench run.

use crate::plan::{AttackPlan, HttpVersion, Load, Scheme};

/// A measured CPU cost per request and where it was measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figure {
    /// CPU microseconds per request (user + system, median round).
    pub micros: f64,
    /// The bench row it comes from.
    pub source: &'static str,
}

/// Keep-alive HTTP/1.1 at 5,000 req/s.
pub const PLAIN: Figure = Figure {
    micros: 18.8,
    source: "bench/RESULTS.md row (a), 5,000 req/s HTTP/1.1 keep-alive: 18.8 µs/req",
};
/// Keep-alive HTTPS at 5,000 req/s.
pub const TLS: Figure = Figure {
    micros: 22.2,
    source: "bench/RESULTS.md row (c), 5,000 req/s HTTPS keep-alive: 22.2 µs/req",
};
/// Keep-alive HTTPS with a client certificate at 5,000 req/s.
pub const MUTUAL_TLS: Figure = Figure {
    micros: 21.8,
    source: "bench/RESULTS.md row (d), 5,000 req/s HTTPS with a client certificate: 21.8 µs/req",
};
/// A new TLS connection per request, sessions resumed.
pub const HANDSHAKE_RESUMED: Figure = Figure {
    micros: 151.0,
    source: "bench/RESULTS.md row (f), a TLS connection per request, resumed: 151 µs/req",
};
/// A new TLS connection per request, full handshakes.
pub const HANDSHAKE_FULL: Figure = Figure {
    micros: 322.0,
    source: "bench/RESULTS.md row (f), a TLS connection per request, full handshakes: 322 µs/req",
};

/// How many times the measured CPU a shard reserves: a generator near its core's limit
/// sends late, and its health check says so; at half its reservation it has room for bursts.
pub const HEADROOM_FACTOR: f64 = 2.0;
/// Measured peak RSS of a run is at most 14.1 MiB in bench rows (a) to (f); a shard reserves
/// 64 MiB besides its data sets.
pub const BASE_MEMORY_MIB: u64 = 64;
/// A CSV data set of 257 MiB took 291 MiB of RSS to load (bench/RESULTS.md, "Loading a data
/// set"): 1.14 × its size, reserved as 1.25 ×.
pub const DATA_MEMORY_FACTOR: f64 = 1.25;
/// Least CPU a shard asks for, in millicores: a tenth of a core, so that a shard of a light
/// test still gets the time to start, check its target and write its run without waiting on
/// its neighbours on the node.
pub const MIN_CPU_MILLI: u64 = 100;
/// A closed-model shard has no rate to size from (its throughput is the server's answer).
pub const CLOSED_MODEL_CPU_MILLI: u64 = 1000;

/// What one shard asks the scheduler for, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Sizing {
    /// CPU request, in millicores.
    pub cpu_milli: u64,
    /// Memory request, in MiB; the limit is twice it.
    pub memory_mib: u64,
    /// Engine threads (`--set threads=`): the whole cores requested, at least one and at
    /// most [`crate::plan::MAX_THREADS`].
    pub threads: u64,
    /// How the CPU was worked out, for the Job's annotation.
    pub cpu_note: String,
    /// How the memory was worked out.
    pub memory_note: String,
}

/// The figure that fits `plan`'s traffic best, and a note when none fits exactly.
pub fn figure_for(plan: &AttackPlan) -> (Figure, Option<&'static str>) {
    let tls = plan.target.scheme == Scheme::Https;
    if !plan.connection.keepalive {
        return match (tls, plan.tls.session_resumption) {
            (true, true) => (HANDSHAKE_RESUMED, None),
            (true, false) => (HANDSHAKE_FULL, None),
            (false, _) => (
                PLAIN,
                Some("the bench has no row for a new plain-HTTP connection per request: this keep-alive figure is a floor; give --cpu"),
            ),
        };
    }
    let http2 = matches!(plan.connection.http, HttpVersion::Http2);
    let note = http2.then_some(
        "HTTP/2 at a set rate has no bench row; the HTTPS/1.1 figure is used (row (e), full speed, is lower)",
    );
    match (tls || http2, plan.tls.identity.is_some()) {
        (false, _) => (PLAIN, None),
        (true, false) => (TLS, note),
        (true, true) => (MUTUAL_TLS, note),
    }
}

/// The peak rate of `plan` (requests, or flow iterations, per second), none for users.
pub fn peak_rate(plan: &AttackPlan) -> Option<f64> {
    if plan.stages.is_empty() {
        return match plan.load {
            Load::Open { rate } => Some(rate.0),
            Load::Closed { .. } => None,
        };
    }
    match plan.load {
        Load::Open { .. } => Some(
            plan.stages
                .iter()
                .map(|s| s.from.max(s.to))
                .fold(0.0, f64::max),
        ),
        Load::Closed { .. } => None,
    }
}

/// Sizes one of `shards` shards of `plan`; `cpu_milli` overrides the CPU worked out.
pub fn size(plan: &AttackPlan, shards: u32, data_bytes: u64, cpu_milli: Option<u64>) -> Sizing {
    let (figure, caveat) = figure_for(plan);
    let steps = plan
        .flows
        .iter()
        .map(|f| f.steps.len())
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let (cpu_milli, cpu_note) = match (cpu_milli, peak_rate(plan)) {
        (Some(m), _) => (m, format!("{m}m as given with --cpu")),
        (None, Some(rate)) => {
            let per_shard = rate / f64::from(shards) * steps;
            let product = (per_shard * figure.micros * HEADROOM_FACTOR / 1000.0).ceil() as u64;
            let milli = product.max(MIN_CPU_MILLI);
            // The minimum is said, not applied silently: the product is what the bench gives.
            let result = match milli == product {
                true => format!("{milli}m"),
                false => format!("{product}m, raised to the {MIN_CPU_MILLI}m minimum"),
            };
            let flows = if steps > 1.0 {
                format!(" × {steps} requests per flow iteration")
            } else {
                String::new()
            };
            (
                milli,
                format!(
                    "{rate} req/s / {shards} shards{flows} × {} µs/req × {HEADROOM_FACTOR} = {result} ({}){}",
                    figure.micros,
                    figure.source,
                    caveat.map(|c| format!("; {c}")).unwrap_or_default()
                ),
            )
        }
        (None, None) => (
            CLOSED_MODEL_CPU_MILLI,
            format!("{CLOSED_MODEL_CPU_MILLI}m: a closed model's rate is the server's answer, so there is none to size from; give --cpu"),
        ),
    };
    let data_mib = (data_bytes as f64 * DATA_MEMORY_FACTOR / (1024.0 * 1024.0)).ceil() as u64;
    let memory_mib = BASE_MEMORY_MIB + data_mib;
    let memory_note = format!(
        "{BASE_MEMORY_MIB} MiB (bench/RESULTS.md: peak RSS at most 14.1 MiB in rows (a) to (f)) + {DATA_MEMORY_FACTOR} × {data_bytes} bytes of data files (a 257 MiB CSV took 291 MiB) = {memory_mib} MiB; limit twice that"
    );
    Sizing {
        cpu_milli,
        memory_mib,
        // No more than a run takes: every pod would refuse `--set threads=` past it.
        threads: cpu_milli
            .div_ceil(1000)
            .clamp(1, crate::plan::MAX_THREADS as u64),
        cpu_note,
        memory_note,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(target: &str, load: &str) -> AttackPlan {
        let text = format!("target: {target}\nrequests: [{{name: get, path: /}}]\nload: {load}\n");
        crate::plan::scenario::parse(&text, std::path::Path::new("t.yaml"), 1).unwrap()
    }

    #[test]
    fn the_bench_row_follows_the_traffic() {
        let rate = "{rate: 20000, duration: 60s}";
        let figure = |target: &str| figure_for(&plan(target, rate)).0;
        assert_eq!(figure("{url: 'http://a/'}"), PLAIN);
        assert_eq!(figure("{url: 'https://a/'}"), TLS);
        assert_eq!(
            figure("{url: 'https://a/', tls: {cert: c.pem, key: k.pem}}"),
            MUTUAL_TLS
        );
        assert_eq!(
            figure("{url: 'https://a/', keepalive: false}"),
            HANDSHAKE_RESUMED
        );
        assert_eq!(
            figure("{url: 'https://a/', keepalive: false, tls: {session_resumption: false}}"),
            HANDSHAKE_FULL
        );
        // No row fits: the nearest, and a note that says so.
        assert!(
            figure_for(&plan("{url: 'http://a/', keepalive: false}", rate))
                .1
                .is_some()
        );
    }

    #[test]
    fn cpu_is_rate_per_shard_times_cost_times_the_factor() {
        let p = plan(
            "{url: 'https://a/', keepalive: false}",
            "{rate: 20000, duration: 60s}",
        );
        let s = size(&p, 4, 0, None);
        // 20,000 / 4 × 151 µs × 2 = 1.51 cores.
        assert_eq!((s.cpu_milli, s.threads, s.memory_mib), (1510, 2, 64));
        assert!(s.cpu_note.contains("row (f)"), "{}", s.cpu_note);
        // Stages: sized by the peak.
        let staged = plan(
            "{url: 'http://a/'}",
            "{stages: [{rate: [0, 10000], duration: 1m}, {rate: 5000, duration: 1m}]}",
        );
        assert_eq!(size(&staged, 1, 0, None).cpu_milli, 376);
        // Users: no rate, one core unless told.
        let closed = plan("{url: 'http://a/'}", "{users: 50, duration: 1m}");
        assert_eq!(size(&closed, 2, 0, None).cpu_milli, CLOSED_MODEL_CPU_MILLI);
        assert_eq!(size(&closed, 2, 0, Some(2500)).threads, 3);
        // More cores than a run takes threads: as many as it takes.
        assert_eq!(
            size(&closed, 2, 0, Some(1_024_000)).threads,
            crate::plan::MAX_THREADS as u64
        );
        // A light test: the product is said, and the minimum it is raised to.
        let light = plan(
            "{url: 'https://a/', tls: {cert: c.pem, key: k.pem}}",
            "{rate: 100, duration: 60s}",
        );
        let s = size(&light, 4, 0, None);
        assert_eq!(s.cpu_milli, MIN_CPU_MILLI);
        assert!(
            s.cpu_note.contains(
                "100 req/s / 4 shards × 21.8 µs/req × 2 = 2m, raised to the 100m minimum"
            ),
            "{}",
            s.cpu_note
        );
        // Data files: 1.25 × their size on top.
        assert_eq!(size(&closed, 2, 8 * 1024 * 1024, None).memory_mib, 74);
    }
}
