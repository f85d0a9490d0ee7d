//! The words every builder of a run's subjects shares: the load model, what was attacked,
//! a stage's level, which shard a run was. Kept apart so a run, a sweep's step, a comparison
//! and a regression gate name the same load the same way.

use crate::plan::Load;
use crate::summary::Summary;
use crate::units::{fmt_num, fmt_secs, plural};
use std::fmt::Write as _;

/// What was attacked: the method and URL, or how many kinds of request went to it.
pub fn target(s: &Summary) -> String {
    match &s.method {
        Some(method) => format!("{method} {}", s.target),
        None => format!("{} ({} requests)", s.target, s.by_request.len()),
    }
}

/// What was attacked, with the load and the protocol: vegeta's Target line.
pub fn target_line(s: &Summary, load: &str) -> String {
    format!("{}  ({load}, {})", target(s), s.protocol)
}

/// Which part of a sharded test the run was: "shard 1 of 4 (plan 3f2a…), started 2.3 s
/// after the common start"; `None` for a whole test.
pub fn shard_words(s: &Summary) -> Option<String> {
    let shard = s.shard.as_ref()?;
    let mut words = format!(
        "shard {} of {} of one test (plan {}); its numbers are its part only, headroom merge joins the parts",
        shard.index,
        shard.count,
        shard.plan.get(..12).unwrap_or(&shard.plan)
    );
    if let Some(late) = shard
        .late_secs
        .filter(|&l| l >= crate::plan::shard::LATE_NOTICE.as_secs_f64())
    {
        let _ = write!(
            words,
            "; started {} after the common start {}",
            fmt_secs(late),
            shard.start_at.as_deref().unwrap_or("?")
        );
    }
    Some(words)
}

/// The load model in words.
pub fn load_words(s: &Summary) -> String {
    let n = s.stages.len();
    match (s.load, n) {
        // A shard's share of a rate can be a long fraction (100 / 3): three decimals
        // say it, and leave whole and short rates as they were.
        (Load::Open { rate }, 0) => format!(
            "open model, {} req/s",
            (rate.per_second() * 1000.0).round() / 1000.0
        ),
        (Load::Closed { concurrency }, 0) => format!(
            "closed model, {}{}",
            plural(concurrency, "worker"),
            cap_words(s)
        ),
        (Load::Open { rate }, _) => {
            format!(
                "open model in {n} stages, up to {} req/s",
                rate.per_second()
            )
        }
        (Load::Closed { concurrency }, _) => {
            format!(
                "closed model in {n} stages, up to {}{}",
                plural(concurrency, "user"),
                cap_words(s)
            )
        }
    }
}

/// ", at most 150 req/s" for a closed model capped by `--max-rate`: a step's verdict that
/// its users were held to the cap needs the cap said where the load is.
fn cap_words(s: &Summary) -> String {
    match s.max_rate {
        Some(cap) => format!(
            ", at most {} req/s",
            (cap.per_second() * 1000.0).round() / 1000.0
        ),
        None => String::new(),
    }
}

/// A load level for people: "2,000", "0.5".
pub fn stage_level_number(x: f64) -> String {
    if x.fract() == 0.0 {
        fmt_num(x, 0)
    } else {
        fmt_num(x, 2)
    }
}

/// A stage's load: "200/s", "0→500/s", "1 user", "10 users".
pub fn stage_level(s: &Summary, from: f64, to: f64) -> String {
    let level = stage_level_number;
    match s.load {
        Load::Open { .. } if from == to => format!("{}/s", level(from)),
        Load::Open { .. } => format!("{}→{}/s", level(from), level(to)),
        Load::Closed { .. } if from == to => plural(level(from), "user"),
        Load::Closed { .. } => format!("{}→{}", level(from), plural(level(to), "user")),
    }
}

/// How a safety stop ended a run: "aborted at second 12: \"errors > 5% for 5s\" held for
/// 5 s (from second 7; 62.50% in its last second)".
pub fn aborted(a: &crate::summary::Aborted) -> String {
    let last = if a.last.is_empty() {
        String::new()
    } else {
        format!("; {} in its last second", a.last)
    };
    format!(
        "aborted at second {}: \"{}\" held for {} s (from second {}{last})",
        a.at_second, a.condition, a.held_secs, a.from_second
    )
}
