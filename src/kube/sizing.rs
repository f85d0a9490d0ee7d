//! CPU and memory a shard asks for, from the benchmark's measured CPU per request
//! (bench/RESULTS.md, written by bench/run.sh), its measured peak RSS, and the measured
//! memory of held connections. Every figure is quoted with its source in the Job, so a user
//! can check it against their own bench run.

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
/// 64 MiB besides its connections and its data sets.
pub const BASE_MEMORY_MIB: u64 = 64;

/// What a held connection (or an HTTP/2 request in flight) costs, measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PerConnection {
    /// KiB reserved for each.
    pub kib: u64,
    /// What is counted: `connection` or `request in flight`.
    pub unit: &'static str,
    /// What was measured.
    pub source: &'static str,
}

// Measured on the 2-core development VM with the release build: peak RSS (GNU time's
// "Maximum resident set size", and the run's own peak rss) of `headroom attack URL
// --concurrency N --duration 5s` against nginx on loopback answering every request after
// 8 s, so that N connections (N streams with --http2) are held at once; N = 1, 500, 1,000,
// 2,000, 4,000:
//   HTTP/1.1        1 thread  9,924 12,332 14,124 18,892  27,752 KiB
//                   2 threads 10,016 12,412 14,956 19,020 27,852 KiB  → 4.46 KiB a connection
//   HTTPS/1.1       1 thread  11,172 21,456 32,208 53,116 95,456 KiB
//                   2 threads 10,764 21,864 32,548 53,516 94,984 KiB  → 21.1 KiB a connection
//   HTTP/2 over TLS 1 thread  11,176 14,572 19,068 26,424 41,756 KiB  → 7.6 KiB a request
//                   (100 streams a connection: 4,000 requests on some 40 connections)
// Linear in N (each step's slope within 10 % of the slope from 1 to 4,000), and the same
// with one engine thread or two. Reserved with some 15 % on top, rounded up.

/// A plain HTTP/1.1 connection: 4.46 KiB measured, 5 reserved.
pub const PLAIN_CONNECTION: PerConnection = PerConnection {
    kib: 5,
    unit: "connection",
    source: "4.46 KiB measured a held HTTP/1.1 connection",
};
/// An HTTPS/1.1 connection (its TLS buffers): 21.1 KiB measured, 24 reserved.
pub const TLS_CONNECTION: PerConnection = PerConnection {
    kib: 24,
    unit: "connection",
    source: "21.1 KiB measured a held HTTPS connection",
};
/// An HTTP/2 request in flight (with its share of its connection): 7.6 KiB measured over
/// TLS, 9 reserved.
pub const HTTP2_REQUEST: PerConnection = PerConnection {
    kib: 9,
    unit: "request in flight",
    source: "7.6 KiB measured an HTTP/2 request in flight over TLS",
};
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
    /// Memory request, in MiB.
    pub memory_mib: u64,
    /// Memory limit, in MiB: twice the request.
    pub memory_limit_mib: u64,
    /// The most connections (HTTP/2: requests in flight) a shard may hold, as sized.
    pub connections: u64,
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
    let per = per_connection(plan);
    let (connections, held_note) = held(plan, shards, per);
    let held_mib = (connections * per.kib).div_ceil(1024);
    let memory_mib = BASE_MEMORY_MIB + held_mib + data_mib;
    let memory_note = format!(
        "{BASE_MEMORY_MIB} MiB (bench/RESULTS.md: peak RSS at most 14.1 MiB in rows (a) to (f)) + {connections} × {} KiB a {} ({held_note}; {}) + {DATA_MEMORY_FACTOR} × {data_bytes} bytes of data files (a 257 MiB CSV took 291 MiB) = {memory_mib} MiB; limit twice that",
        per.kib, per.unit, per.source
    );
    Sizing {
        cpu_milli,
        memory_mib,
        memory_limit_mib: memory_mib * 2,
        connections,
        // No more than a run takes: every pod would refuse `--set threads=` past it.
        threads: cpu_milli
            .div_ceil(1000)
            .clamp(1, crate::plan::MAX_THREADS as u64),
        cpu_note,
        memory_note,
    }
}

/// What a held connection of `plan`'s costs: over HTTPS a server may pick HTTP/1.1 (`http:
/// auto`), so the HTTPS/1.1 figure unless HTTP/2 is asked for.
pub fn per_connection(plan: &AttackPlan) -> PerConnection {
    match (plan.connection.http, plan.target.scheme) {
        (HttpVersion::Http2, _) => HTTP2_REQUEST,
        (_, Scheme::Https) => TLS_CONNECTION,
        (_, Scheme::Http) => PLAIN_CONNECTION,
    }
}

/// The most connections (HTTP/2: requests in flight) one of `shards` shards may hold, and
/// why: its share of the connection cap (`max_connections`, or that × the streams a
/// connection carries with HTTP/2), or fewer when the load bounds it — its users, or its
/// requests in flight at its peak rate, none of which outlives the request timeout.
pub fn held(plan: &AttackPlan, shards: u32, per: PerConnection) -> (u64, String) {
    let n = u64::from(shards.max(1));
    let streams = match per == HTTP2_REQUEST {
        true => u64::from(plan.connection.max_streams.max(1)),
        false => 1,
    };
    // The first shards of an uneven split take one more.
    let cap = u64::from(plan.connection.max_connections).div_ceil(n) * streams;
    let cap_note = match streams {
        1 => format!(
            "its share of max_connections {}",
            plan.connection.max_connections
        ),
        s => format!(
            "its share of max_connections {} × {s} streams",
            plan.connection.max_connections
        ),
    };
    let timeout = plan.connection.timeout.as_secs_f64();
    let bound = match peak_rate(plan) {
        Some(rate) => {
            let share = rate / n as f64;
            let inflight = (share * timeout).ceil() as u64 + 1;
            (
                inflight,
                format!("{share} req/s × a {timeout} s timeout in flight"),
            )
        }
        None => {
            let users = match plan.stages.is_empty() {
                true => match plan.load {
                    Load::Closed { concurrency } => u64::from(concurrency),
                    Load::Open { .. } => 0,
                },
                false => plan
                    .stages
                    .iter()
                    .map(|s| s.from.max(s.to))
                    .fold(0.0, f64::max) as u64,
            };
            (users.div_ceil(n), format!("its share of {users} users"))
        }
    };
    match bound.0 < cap {
        true => (bound.0, bound.1),
        false => (cap, cap_note),
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
        assert_eq!((s.cpu_milli, s.threads), (1510, 2));
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
        // Data files: 1.25 × their size on top (of 64 MiB and 25 users' 5 KiB each).
        assert_eq!(
            size(&closed, 2, 8 * 1024 * 1024, None).memory_mib,
            64 + 1 + 10
        );
    }

    #[test]
    fn memory_follows_the_connections_a_shard_may_hold() {
        let tls = |load: &str| plan("{url: 'https://a/'}", load);
        // The case: 3,837 TLS connections held on one thread took 88 MiB; a shard
        // of 3,837 users reserves more than that, and its limit is twice it.
        let s = size(&tls("{users: 3837, duration: 1m}"), 1, 0, None);
        assert_eq!(s.connections, 3837);
        assert_eq!(s.memory_mib, 64 + (3837 * 24_u64).div_ceil(1024));
        assert!(s.memory_mib > 88 + 64, "{}", s.memory_note);
        assert_eq!(s.memory_limit_mib, 2 * s.memory_mib);
        assert!(
            s.memory_note
                .contains("3837 × 24 KiB a connection (its share of 3837 users"),
            "{}",
            s.memory_note
        );
        // An open model: its share of the cap (10,000 over 4 shards), when the rate could
        // fill it within the request timeout...
        let s = size(&tls("{rate: 20000, duration: 60s}"), 4, 0, None);
        assert_eq!(s.connections, 2500);
        assert!(
            s.memory_note.contains("its share of max_connections 10000"),
            "{}",
            s.memory_note
        );
        // ...or the requests its rate keeps in flight within the 30 s timeout.
        let s = size(&tls("{rate: 10, duration: 60s}"), 2, 0, None);
        assert_eq!(s.connections, 5 * 30 + 1);
        // Plain HTTP costs less a connection; HTTP/2 counts requests in flight.
        let plain = size(
            &plan("{url: 'http://a/'}", "{users: 4000, duration: 1m}"),
            1,
            0,
            None,
        );
        assert_eq!(plain.memory_mib, 64 + (4000 * 5_u64).div_ceil(1024));
        let h2 = size(
            &plan(
                "{url: 'https://a/', http: http2}",
                "{users: 4000, duration: 1m}",
            ),
            1,
            0,
            None,
        );
        assert_eq!(h2.memory_mib, 64 + (4000 * 9_u64).div_ceil(1024));
        assert!(
            h2.memory_note.contains("a request in flight"),
            "{}",
            h2.memory_note
        );
    }
}
