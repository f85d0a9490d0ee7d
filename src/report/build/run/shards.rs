//! The Shards table of a merged run: each generator, when it started, what it sent, and
//! whether it kept up.

use crate::report::document::{Cell, Table};
use crate::summary::Shards;
use crate::units::{fmt_count, plural, shard_list};

/// Text columns at the left (shard, host).
pub const LEFT: usize = 2;

/// One row per shard merged.
pub fn table(s: &Shards) -> Table {
    let mut t = Table::new(
        &[
            "Shard", "Host", "Start", "Late", "Sent", "Done", "CPU", "Lag p99", "Verdict",
        ],
        LEFT,
    );
    for r in &s.rows {
        t.rows.push(vec![
            Cell::Text(format!("{}/{}", r.index, s.set.count)),
            Cell::Text(r.host.clone()),
            // Offsets to the millisecond, as the merge reports them.
            Cell::Text(format!("+{:.3}s", r.offset_secs)),
            r.late_secs
                .map_or(Cell::Empty, |l| Cell::Text(format!("{l:.3}s"))),
            Cell::Count(r.sent),
            match (r.finished, r.interrupted || r.torn_tail) {
                (false, _) => Cell::Text(format!("{} (unfinished)", fmt_count(r.completed))),
                (true, true) => Cell::Text(format!("{} (cut short)", fmt_count(r.completed))),
                (true, false) => Cell::Count(r.completed),
            },
            Cell::Text(format!("{:.1}%", r.generator.cpu_percent)),
            Cell::Duration(r.generator.lag.p99_us as f64),
            Cell::Text(crate::report::build::verdict::cell(&r.verdict)),
        ]);
    }
    t
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
