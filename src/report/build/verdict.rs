//! The diagnosis in words: what the evidence says (which side set the numbers, nothing
//! succeeded, a transient, a server changing with time, or that it cannot tell), each piece
//! of evidence as a sentence (long, for reports) or a phrase (short, for table cells), and
//! what would settle a "cannot tell". The one place a diagnosis becomes English, so the
//! run, a step, a probe, a comparison and the live progress say the same thing.

use super::words::stage_level_number;
use crate::sample::ErrorKind;
use crate::summary::diagnosis::{ReasonCount, TransientCause};
use crate::summary::{Blame, Diagnosis, Finding, GeneratorHealth, Limit};
use crate::units::{fmt_num, fmt_us, fmt_us_f};

/// The diagnosis' headline, ending in a colon when evidence follows.
pub fn headline(d: &Diagnosis) -> String {
    let words = match d.limit {
        Limit::Neither => {
            "neither side was the limit: the load left as asked and the server kept up"
        }
        Limit::Transient => {
            "nothing was at its limit: the load held, and a moment of slowness passed:"
        }
        Limit::NothingSucceeded => "NOTHING SUCCEEDED: not one request got an answer it expects:",
        Limit::Generator => {
            "WARNING: the generator was the limit; these numbers describe the generator, not the server:"
        }
        Limit::Server => "the server was the limit:",
        Limit::Both => {
            "WARNING: both sides were limits; these numbers describe the generator in part, not only the server:"
        }
        Limit::ChangedWithTime => {
            "the server changed with time: its latency rose while the load stayed the same:"
        }
        Limit::CannotTell => "CANNOT TELL which side was the limit:",
    };
    match crate::summary::diagnosis::staged::step_of(d) {
        Some((_, step)) => format!(
            "{} (first at step {step}){}",
            words.trim_end_matches(':'),
            if words.ends_with(':') { ":" } else { "" }
        ),
        None => words.to_string(),
    }
}

/// The diagnosis as lines: the headline, each finding (marked with its side when both sides
/// show evidence), for a server limit what the generator did meanwhile, and for "cannot
/// tell" what would settle it.
pub fn lines(d: &Diagnosis, g: &GeneratorHealth) -> Vec<String> {
    let mut out = vec![headline(d)];
    for f in d.evidence() {
        let side = match (d.limit, f.blame()) {
            (Limit::Both, Blame::Generator) => "generator: ",
            (Limit::Both, Blame::Server) => "server: ",
            _ => "",
        };
        out.push(format!("{side}{}", sentence(f)));
    }
    // The whole run's generator numbers stand beside a whole run's verdict, not a step's.
    let at_step = crate::summary::diagnosis::staged::step_of(d).is_some();
    if d.limit == Limit::Server && !at_step {
        // A closed model sends when a user is ready: it has no schedule to lag behind.
        let lag = match g.rate_asked {
            Some(_) => format!(", its send lag p99 {}", fmt_us(g.lag.p99_us)),
            None => String::new(),
        };
        out.push(format!(
            "the generator kept up: {:.1}% of a core over {} thread(s){lag}",
            g.cpu_percent, g.threads
        ));
    }
    if d.limit == Limit::CannotTell {
        out.extend(settle(d));
    }
    out
}

/// " plus 20ms of think time", when there was think time.
fn think(think_us: f64) -> String {
    if think_us > 0.0 {
        format!(" plus {} of think time", fmt_us_f(think_us))
    } else {
        String::new()
    }
}

/// What would settle a "cannot tell", one line per kind of doubt.
pub fn settle(d: &Diagnosis) -> Vec<String> {
    let mut out = Vec::new();
    if d.on(Blame::Symptom).next().is_some() && d.on(Blame::Undecided).next().is_none() {
        out.push(
            "to settle it: watch the server (--monitor-pid PID or --monitor-prometheus) to see whether it was busy, and give the generator cores of its own (taskset, fewer other processes) to see whether it was"
                .to_string(),
        );
    }
    // A staged run's doubt is its step's: the step is what must run longer.
    let longer = if d
        .findings
        .iter()
        .any(|f| matches!(f, Finding::AtStep { .. }))
    {
        "steps of 10 s: --step-duration 10s on a sweep"
    } else {
        "-d 10s"
    };
    for f in d.on(Blame::Undecided) {
        match f {
            Finding::TooShort {
                needed_secs,
                needed_answers,
                ..
            } => out.push(format!(
                "to settle it: run at least {} whole seconds with at least {needed_answers} answers (e.g. {longer})",
                fmt_num(*needed_secs, 0)
            )),
            Finding::FewPerUser { needed, .. } => out.push(format!(
                "to settle it: give the step at least {needed} requests ({} per user; --step-requests)", crate::summary::diagnosis::closed::FEW_PER_USER
            )),
            Finding::LatencyDrifting { .. } => out.push(
                "to settle it: run again at a clearly lower load; if latency still climbs as fast, the server changes with time; if it does not, this load was at the edge of its capacity".into(),
            ),
            Finding::MostFailed { .. } => out.push(
                "to settle it: fix what the failures say (a token, a certificate, an expectation, a URL) and run again".into(),
            ),
            _ => {}
        }
    }
    out
}

/// The diagnosis in a table cell: "ok", or the answer and its evidence in brief.
pub fn cell(d: &Diagnosis) -> String {
    let evidence: Vec<String> = d.evidence().map(phrase).collect();
    let answer = match d.limit {
        // Neither side, and what the user asked for explains the rest (a cap that held).
        Limit::Neither if evidence.is_empty() => return "ok".into(),
        Limit::Neither | Limit::Transient => return format!("ok ({})", evidence.join("; ")),
        Limit::NothingSucceeded => "nothing succeeded",
        Limit::Generator => "generator",
        Limit::Server => "server",
        Limit::Both => "both",
        Limit::ChangedWithTime => "changed with time",
        Limit::CannotTell => "cannot tell",
    };
    format!("{answer}: {}", evidence.join("; "))
}

fn error_text(key: &str) -> String {
    ErrorKind::from_key(key).map_or_else(|| key.to_string(), |k| k.description().to_string())
}

fn percent(share: f64) -> String {
    format!("{:.1} %", 100.0 * share)
}

/// "600 × HTTP 401 (not expected), 3 × reset: connection reset by peer".
fn reasons(reasons: &[ReasonCount]) -> String {
    reasons
        .iter()
        .map(|r| {
            format!(
                "{} × {}",
                crate::units::fmt_count(r.count),
                super::run::failures::words(r.reason)
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Seconds as "second 3" or "seconds 0–1".
fn seconds(s: &[u64]) -> String {
    match (s.first(), s.last()) {
        (Some(a), Some(b)) if a == b => format!("second {a}"),
        (Some(a), Some(b)) => format!("seconds {a}–{b}"),
        _ => "no second".into(),
    }
}

/// One finding as a sentence.
pub fn sentence(f: &Finding) -> String {
    match f {
        Finding::RateShort { asked, sent } => format!(
            "the generator sent {sent:.1} req/s of the {asked} asked ({})",
            percent(sent / asked)
        ),
        Finding::CountShort { asked, sent } => format!(
            "the generator sent {sent} of the {asked} requests the stages asked ({})",
            percent(*sent as f64 / (*asked).max(1) as f64)
        ),
        Finding::SentLate { p99_us, max_us } => format!(
            "requests left the generator later than they were due (its send lag p99 {}, max {})",
            fmt_us(*p99_us),
            fmt_us(*max_us)
        ),
        Finding::CpuBusy { share, threads } => format!(
            "the generator used {} of its {threads} core(s)",
            percent(*share)
        ),
        Finding::CpuStarved { waiting_share } => format!(
            "the generator's threads waited for a CPU {} of the time: other processes ran on its cores",
            percent(*waiting_share)
        ),
        Finding::Shortage { error, count } => format!(
            "{count} request(s) failed on the generator's side: {}",
            error_text(error)
        ),
        Finding::Descriptors { peak, limit } => {
            format!("the generator had {peak} descriptors open of a limit of {limit} (ulimit -n)")
        }
        Finding::ConnectionCap {
            max_connections,
            needed,
            service_mean_us,
        } => format!(
            "the asked rate at a service time of {} needs {needed:.0} connections; --max-connections allows {max_connections}",
            fmt_us_f(*service_mean_us)
        ),
        Finding::ServerFailed {
            error,
            count,
            share,
        } => format!(
            "{count} request(s) ({}): {}",
            percent(*share),
            error_text(error)
        ),
        Finding::ServerStatus {
            status,
            count,
            share,
        } => format!(
            "{count} answer(s) ({}) were HTTP {status}",
            percent(*share)
        ),
        Finding::LatencyRising {
            first_p50_us,
            last_p50_us,
        } => format!(
            "latency climbed as requests piled up at the server (a queue): median {} in the first third, {} in the last",
            fmt_us(*first_p50_us),
            fmt_us(*last_p50_us)
        ),
        Finding::ShardLimited {
            shard,
            host,
            findings,
        } => {
            let evidence: Vec<String> = findings.iter().map(sentence).collect();
            format!(
                "shard {shard} (on {host}) could not keep up: {}",
                evidence.join("; ")
            )
        }
        Finding::ShardLate {
            shard,
            host,
            late_us,
        } => format!(
            "shard {shard} (on {host}) started {} after the test's common start: its share of the load began late",
            fmt_us(*late_us)
        ),
        Finding::ShardsIncomplete { missing, cut_short } => format!(
            "{}: their share of the load is not in this run",
            incomplete(
                missing,
                cut_short,
                "missing from the merge",
                "stopped before their end"
            )
        ),
        Finding::SlowToConnect {
            connect_p99_us,
            tls_p99_us,
        } => format!(
            "requests waited for connections the server was slow to open (connect p99 {}, TLS handshake p99 {})",
            fmt_us(*connect_p99_us),
            fmt_us(*tls_p99_us)
        ),
        Finding::NothingSucceeded { completed, reasons: why } => format!(
            "every one of the {} completed requests failed: {}",
            crate::units::fmt_count(*completed),
            reasons(why)
        ),
        Finding::Transient {
            cause,
            seconds: s,
            lag_p99_us,
            connect_p99_us,
            tls_p99_us,
        } => match cause {
            TransientCause::ConnectionOpening => format!(
                "requests left the generator late only while connections were being opened ({}: its send lag p99 {}; connect p99 {}, TLS handshake p99 {}), then on time",
                seconds(s),
                fmt_us(*lag_p99_us),
                fmt_us(*connect_p99_us),
                fmt_us(*tls_p99_us)
            ),
            TransientCause::StartUp => format!(
                "requests left the generator late only at the start ({}: its send lag p99 {}), then on time",
                seconds(s),
                fmt_us(*lag_p99_us)
            ),
            TransientCause::OneSlowSecond => format!(
                "requests left the generator late in one second only ({}: its send lag p99 {}), on time before and after",
                seconds(s),
                fmt_us(*lag_p99_us)
            ),
        },
        Finding::LatencyDrifting {
            first_p50_us,
            last_p50_us,
            us_per_sec,
            secs,
        } => format!(
            "median latency rose from {} to {} ({} more each second, over {secs} s) at the same load while the server answered what it was sent: a server slowing with time (a leak, a cache or table filling, garbage collection, a neighbour), or one at the very edge of its capacity with a slowly growing queue; one load cannot tell them apart",
            fmt_us(*first_p50_us),
            fmt_us(*last_p50_us),
            fmt_us_f(*us_per_sec)
        ),
        Finding::ClockDrift {
            steps,
            slowest_us_per_sec,
            fastest_us_per_sec,
        } => format!(
            "latency rose with time at every one of these loads ({}), {} to {} more each second, whatever the load: not a queue, the server itself slowed (a leak, a cache or table filling, garbage collection, a neighbour); a longer run shows more of it, not less",
            steps.join(", "),
            fmt_us_f(*slowest_us_per_sec),
            fmt_us_f(*fastest_us_per_sec)
        ),
        Finding::MostFailed {
            share,
            completed,
            reasons: why,
        } => format!(
            "{} of the {} completed requests failed ({}): the latencies and rates describe the few that succeeded",
            percent(*share),
            crate::units::fmt_count(*completed),
            reasons(why)
        ),
        Finding::TooShort {
            secs, completed, ..
        } => format!(
            "the span was too short to say more: {} whole second(s), {} answer(s)",
            fmt_num(*secs, 0),
            crate::units::fmt_count(*completed)
        ),
        Finding::FewPerUser {
            users, requests, ..
        } => format!(
            "{} requests among {} users ({:.1} each): the step is mostly its users starting and finishing",
            crate::units::fmt_count(*requests),
            fmt_num(*users, 0),
            *requests as f64 / users.max(1.0)
        ),
        Finding::Saturated {
            knee_users,
            throughput,
            base_latency_us,
            from_users,
            from_p50_us,
            to_users,
            to_p50_us,
        } => format!(
            "the server saturated: throughput stayed at about {} req/s from {} users (median {}) to {} users (median {}); more users only waited in line. The knee is at about {} users ({} req/s at {} each, by Little's law)",
            fmt_num(*throughput, 0),
            fmt_num(*from_users, 0),
            fmt_us(*from_p50_us),
            fmt_num(*to_users, 0),
            fmt_us(*to_p50_us),
            fmt_num(*knee_users, 1),
            fmt_num(*throughput, 0),
            fmt_us(*base_latency_us)
        ),
        Finding::HeldToCap {
            users,
            implied,
            throughput,
            cap,
            latency_us,
            think_us,
        } => format!(
            "the {} users were held to the cap of {} req/s asked for: by Little's law, {} req/s at {} each{} keeps {} of them busy; the others waited for a start slot, as asked, not for the generator",
            fmt_num(*users, 0),
            stage_level_number(*cap),
            fmt_num(*throughput, 1),
            fmt_us_f(*latency_us),
            think(*think_us),
            fmt_num(*implied, 1),
        ),
        Finding::LittleMismatch {
            users,
            implied,
            throughput,
            latency_us,
            think_us,
        } => format!(
            "by Little's law, {} req/s at {} each{} keeps {} of the {} users busy: the others waited on the generator's side (for a connection, or for its CPU)",
            fmt_num(*throughput, 1),
            fmt_us_f(*latency_us),
            think(*think_us),
            fmt_num(*implied, 1),
            fmt_num(*users, 0)
        ),
        Finding::NotPoisson {
            lag_p99_us,
            statistic,
            critical,
        } => format!(
            "Poisson arrivals were asked, but what left the generator was not Poisson (its sends fail the check: KS D={statistic:.4} ≥ {critical:.4}; its send lag p99 {}): the latencies describe other traffic than was asked",
            fmt_us(*lag_p99_us)
        ),
        Finding::AtStep { name, .. } => format!("at step {name}"),
    }
}

/// One finding in a few words, for a table cell.
pub fn phrase(f: &Finding) -> String {
    match f {
        Finding::RateShort { asked, sent } => format!("sent {sent:.0} of {asked:.0} req/s"),
        Finding::CountShort { asked, sent } => format!("sent {sent} of {asked}"),
        Finding::SentLate { p99_us, .. } => {
            format!("generator sent late (p99 {})", fmt_us(*p99_us))
        }
        Finding::CpuBusy { share, .. } => format!("generator CPU {:.0}%", 100.0 * share),
        Finding::CpuStarved { waiting_share } => {
            format!("generator waited for a CPU {:.0}%", 100.0 * waiting_share)
        }
        Finding::Shortage { error, count } => {
            format!("generator out of resources: {count} × {error}")
        }
        Finding::Descriptors { peak, limit } => {
            format!("generator open files {peak} of {limit}")
        }
        Finding::ConnectionCap {
            max_connections,
            needed,
            ..
        } => format!("generator needs {needed:.0} connections, capped at {max_connections}"),
        Finding::ServerFailed { error, share, .. } => {
            format!("{error} {:.1}%", 100.0 * share)
        }
        Finding::ServerStatus { status, share, .. } => {
            format!("{status} {:.1}%", 100.0 * share)
        }
        Finding::LatencyRising {
            first_p50_us,
            last_p50_us,
        } => format!(
            "server queueing: p50 {}→{}",
            fmt_us(*first_p50_us),
            fmt_us(*last_p50_us)
        ),
        Finding::ShardLimited {
            shard, findings, ..
        } => {
            let evidence: Vec<String> = findings.iter().map(phrase).collect();
            format!("shard {shard}: {}", evidence.join(", "))
        }
        Finding::ShardLate { shard, late_us, .. } => {
            format!("shard {shard} {} late", fmt_us(*late_us))
        }
        Finding::ShardsIncomplete { missing, cut_short } => {
            incomplete(missing, cut_short, "missing", "cut short")
        }
        Finding::SlowToConnect {
            connect_p99_us,
            tls_p99_us,
        } => format!(
            "server slow to accept connections (p99 {})",
            fmt_us(connect_p99_us + tls_p99_us)
        ),
        Finding::NothingSucceeded { reasons: why, .. } => why
            .iter()
            .map(|r| {
                format!(
                    "{} × {}",
                    r.count,
                    match r.reason {
                        crate::summary::Reason::Status { code } => format!("HTTP {code}"),
                        crate::summary::Reason::Expectation { code } => {
                            format!("HTTP {code} body unexpected")
                        }
                        crate::summary::Reason::Error { error } => error.0.key().to_string(),
                    }
                )
            })
            .collect::<Vec<_>>()
            .join(", "),
        Finding::Transient {
            cause, lag_p99_us, ..
        } => format!(
            "transient: {} (generator sent late, p99 {})",
            match cause {
                TransientCause::ConnectionOpening => "connections opening",
                TransientCause::StartUp => "start-up",
                TransientCause::OneSlowSecond => "one slow second",
            },
            fmt_us(*lag_p99_us)
        ),
        Finding::LatencyDrifting { us_per_sec, .. } => {
            format!("p50 +{}/s at the same load", fmt_us_f(*us_per_sec))
        }
        Finding::ClockDrift {
            slowest_us_per_sec, ..
        } => format!(
            "p50 +{}/s at every load: the clock",
            fmt_us_f(*slowest_us_per_sec)
        ),
        Finding::MostFailed { share, .. } => format!("{:.0}% failed", 100.0 * share),
        Finding::TooShort {
            secs, completed, ..
        } => format!("too short ({} s, {completed} answers)", fmt_num(*secs, 0)),
        Finding::FewPerUser {
            users, requests, ..
        } => format!(
            "{:.1} requests per user, too few",
            *requests as f64 / users.max(1.0)
        ),
        Finding::Saturated {
            throughput,
            knee_users,
            ..
        } => format!(
            "saturated at {} req/s (knee ≈ {} users)",
            fmt_num(*throughput, 0),
            fmt_num(*knee_users, 1)
        ),
        Finding::LittleMismatch { users, implied, .. } => format!(
            "{} of {} users busy (Little's law)",
            fmt_num(*implied, 0),
            fmt_num(*users, 0)
        ),
        Finding::HeldToCap { users, cap, .. } => format!(
            "{} users held to the {} req/s cap asked for",
            fmt_num(*users, 0),
            stage_level_number(*cap)
        ),
        Finding::NotPoisson { .. } => "sends not Poisson".into(),
        Finding::AtStep { name, .. } => format!("at {name}"),
    }
}

/// "shards 1, 2 missing; shard 0 cut short", each part only when it has shards.
fn incomplete(missing: &[u32], cut_short: &[u32], gone: &str, short: &str) -> String {
    [(missing, gone), (cut_short, short)]
        .iter()
        .filter(|(list, _)| !list.is_empty())
        .map(|(list, what)| format!("{} {what}", crate::units::shard_list(list)))
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held() -> Diagnosis {
        Diagnosis::of(vec![Finding::HeldToCap {
            users: 8.0,
            implied: 0.91,
            throughput: 150.2,
            cap: 150.0,
            latency_us: 6_077.0,
            think_us: 0.0,
        }])
    }

    #[test]
    fn users_held_to_the_cap_read_as_asked_not_as_the_generator() {
        let d = held();
        assert_eq!(
            headline(&d),
            "neither side was the limit: the load left as asked and the server kept up"
        );
        let said: Vec<String> = d.evidence().map(sentence).collect();
        assert_eq!(
            said,
            ["the 8 users were held to the cap of 150 req/s asked for: by Little's law, 150.2 req/s at 6.077ms each keeps 0.9 of them busy; the others waited for a start slot, as asked, not for the generator"]
        );
        assert_eq!(cell(&d), "ok (8 users held to the 150 req/s cap asked for)");
        assert_eq!(cell(&Diagnosis::default()), "ok");
    }
}
