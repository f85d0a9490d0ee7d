//! The Shards table of a merged run: each generator, when it started, what it sent, and
//! whether it kept up.

use crate::summary::Shards;
use crate::units::{fmt_count, fmt_us, plural, shard_list};

/// Text columns at the left (shard, host).
pub const LEFT: usize = 2;

/// The header and one row per shard merged.
pub fn rows(s: &Shards) -> Vec<Vec<String>> {
    let header = [
        "Shard", "Host", "Start", "Late", "Sent", "Done", "CPU", "Lag p99", "Verdict",
    ];
    let mut out = vec![header.iter().map(|h| h.to_string()).collect()];
    for r in &s.rows {
        out.push(vec![
            format!("{}/{}", r.index, s.set.count),
            r.host.clone(),
            format!("+{:.3}s", r.offset_secs),
            r.late_secs.map_or("-".into(), |l| format!("{l:.3}s")),
            fmt_count(r.sent),
            match (r.finished, r.interrupted || r.torn_tail) {
                (false, _) => format!("{} (unfinished)", fmt_count(r.completed)),
                (true, true) => format!("{} (cut short)", fmt_count(r.completed)),
                (true, false) => fmt_count(r.completed),
            },
            format!("{:.1}%", r.generator.cpu_percent),
            fmt_us(r.generator.lag.p99_us),
            super::verdict::cell(&r.verdict),
        ]);
    }
    out
}

/// The merged run in a line: how many shards, how far apart they started, which are missing.
pub fn line(s: &Shards) -> String {
    let mut text = format!(
        "{} of {}, starts {:.3}s apart, seconds counted from {}",
        s.rows.len(),
        plural(s.set.count, "shard"),
        s.set.start_spread_secs,
        s.set.origin
    );
    if !s.set.missing.is_empty() {
        text.push_str(&format!("; MISSING: {}", shard_list(&s.set.missing)));
    }
    if let Some(from) = s.set.server_from {
        text.push_str(&format!("; server readings from shard {from}"));
    }
    text
}
