//! The verdict in words: which side set the numbers, and each piece of evidence as a
//! sentence (long, for reports) or a phrase (short, for table cells).

use crate::sample::ErrorKind;
use crate::summary::{Attribution, Blame, Finding, GeneratorHealth, Limit};
use crate::units::{fmt_us, fmt_us_f};

/// The verdict's headline, ending in a colon when evidence follows.
pub fn headline(a: &Attribution) -> &'static str {
    match a.limit {
        Limit::Neither => "neither side was the limit: the load left as asked and the server kept up",
        Limit::Generator => {
            "WARNING: the generator was the limit; these numbers describe the generator, not the server:"
        }
        Limit::Server => "the server was the limit:",
        Limit::Both => {
            "WARNING: both sides were limits; these numbers describe the generator in part, not only the server:"
        }
        Limit::Unexplained => {
            "WARNING: the load did not leave as asked, and neither side shows why:"
        }
    }
}

/// The verdict as lines: the headline, each finding (marked with its side when both sides
/// show evidence), and for a server limit what the generator did meanwhile.
pub fn lines(a: &Attribution, g: &GeneratorHealth) -> Vec<String> {
    let mut out = vec![headline(a).to_string()];
    for f in &a.findings {
        let side = match (a.limit, f.blame()) {
            (Limit::Both, Blame::Generator) => "generator: ",
            (Limit::Both, Blame::Server) => "server: ",
            _ => "",
        };
        out.push(format!("{side}{}", sentence(f)));
    }
    if a.limit == Limit::Server {
        out.push(format!(
            "the generator kept up: {:.1}% of a core over {} thread(s), lag p99 {}",
            g.cpu_percent,
            g.threads,
            fmt_us(g.lag.p99_us)
        ));
    }
    out
}

/// The verdict in a table cell: "ok", or the side and its evidence in brief.
pub fn cell(a: &Attribution) -> String {
    let side = match a.limit {
        Limit::Neither => return "ok".into(),
        Limit::Generator => "generator",
        Limit::Server => "server",
        Limit::Both => "both",
        Limit::Unexplained => "unexplained",
    };
    let evidence: Vec<String> = a.findings.iter().map(phrase).collect();
    format!("{side}: {}", evidence.join("; "))
}

fn error_text(key: &str) -> String {
    ErrorKind::from_key(key).map_or_else(|| key.to_string(), |k| k.description().to_string())
}

fn percent(share: f64) -> String {
    format!("{:.1} %", 100.0 * share)
}

/// One finding as a sentence.
pub fn sentence(f: &Finding) -> String {
    match f {
        Finding::RateShort { asked, sent } => format!(
            "sent {sent:.1} req/s of the {asked} asked ({})",
            percent(sent / asked)
        ),
        Finding::CountShort { asked, sent } => format!(
            "sent {sent} of the {asked} requests the stages asked ({})",
            percent(*sent as f64 / (*asked).max(1) as f64)
        ),
        Finding::SentLate { p99_us, max_us } => format!(
            "requests left late (lag p99 {}, max {})",
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
            format!("{peak} descriptors open of a limit of {limit} (ulimit -n)")
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
            "latency climbed through the run, a queue growing at the server: median {} in its first third, {} in its last",
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
            "requests waited for connections slow to open (connect p99 {}, TLS handshake p99 {})",
            fmt_us(*connect_p99_us),
            fmt_us(*tls_p99_us)
        ),
    }
}

/// One finding in a few words, for a table cell.
pub fn phrase(f: &Finding) -> String {
    match f {
        Finding::RateShort { asked, sent } => format!("sent {sent:.0} of {asked:.0} req/s"),
        Finding::CountShort { asked, sent } => format!("sent {sent} of {asked}"),
        Finding::SentLate { p99_us, .. } => format!("lag p99 {}", fmt_us(*p99_us)),
        Finding::CpuBusy { share, .. } => format!("cpu {:.0}%", 100.0 * share),
        Finding::CpuStarved { waiting_share } => {
            format!("waited for cpu {:.0}%", 100.0 * waiting_share)
        }
        Finding::Shortage { error, count } => format!("{count} {error}"),
        Finding::Descriptors { peak, limit } => format!("fds {peak}/{limit}"),
        Finding::ConnectionCap {
            max_connections,
            needed,
            ..
        } => format!("needs {needed:.0} of {max_connections} connections"),
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
            "p50 climbed {}→{}",
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
        } => format!("slow connects {}", fmt_us(connect_p99_us + tls_p99_us)),
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
