//! `--shard I/N`, `--shards N` and `--start-at TIME` (`attack` and `run`): one part of a
//! test split over several generators, begun at a common instant.

use anyhow::{bail, Context};
use headroom::launch::{parse_start_at, Launch, LATE_NOTICE};
use headroom::plan::shard::Shard;
use headroom::plan::AttackPlan;
use std::time::SystemTime;

/// The number of shards, when `--shards` is not given (a Kubernetes Job's environment).
pub const SHARDS_ENV: &str = "HEADROOM_SHARDS";
/// The shard index a Kubernetes Indexed Job gives each of its pods.
pub const INDEX_ENV: &str = "JOB_COMPLETION_INDEX";

/// Options of a run that is one part of a sharded test.
#[derive(Debug, Default, clap::Args)]
pub struct ShardArgs {
    /// Run part INDEX (from 0) of a test split over COUNT generators, e.g. 0/4: the open
    /// model's requests INDEX, INDEX+COUNT, … of the whole schedule; the closed model's share
    /// of the users; in both, the whole test's data rows at its requests. `headroom merge`
    /// joins the parts.
    #[arg(long, value_name = "INDEX/COUNT")]
    pub shard: Option<String>,
    /// The number of shards, the index then taken from JOB_COMPLETION_INDEX (set by a
    /// Kubernetes Indexed Job); HEADROOM_SHARDS in the environment does the same.
    #[arg(long, value_name = "COUNT")]
    pub shards: Option<String>,
    /// Begin the schedule at this time, so shards on several machines start together:
    /// RFC 3339 with its zone (2026-11-25T04:00:00Z) or unix seconds. The run waits until
    /// then (Ctrl-C stops it); a start already past runs at once and records how late.
    #[arg(long, value_name = "TIME")]
    pub start_at: Option<String>,
    /// This run's objectives are judged by its merge: exit 0, not 3, when it completes but
    /// misses one (or nothing succeeds); the report still says so. For a shard, whose part is
    /// not the test (`headroom kube` sets it, so that its Job completes whatever the verdict).
    #[arg(long)]
    pub judged_by_merge: bool,
}

impl ShardArgs {
    /// The shard this run is, from the flags and then the environment; `None` for a
    /// whole test.
    pub fn shard(&self) -> anyhow::Result<Option<Shard>> {
        resolve(
            self.shard.as_deref(),
            self.shards.as_deref(),
            std::env::var(SHARDS_ENV).ok().as_deref(),
            std::env::var(INDEX_ENV).ok().as_deref(),
        )
    }

    /// Who judges the run's objectives for its exit status.
    pub fn judged(&self) -> super::exit::Judged {
        match self.judged_by_merge {
            true => super::exit::Judged::ByMerge,
            false => super::exit::Judged::Here,
        }
    }

    /// True when the run is to be a shard or wait for a start.
    pub fn asked(&self) -> bool {
        self.shard.is_some()
            || self.shards.is_some()
            || self.start_at.is_some()
            || std::env::var_os(SHARDS_ENV).is_some()
    }

    /// The plan this run sends (the whole, or the part of `shard`, from [`Self::shard`])
    /// and how it is launched; says on stderr what it does.
    pub fn launch(
        &self,
        shard: Option<Shard>,
        whole: AttackPlan,
        raw: bool,
    ) -> anyhow::Result<(AttackPlan, Launch)> {
        let start_at = self
            .start_at
            .as_deref()
            .map(|t| parse_start_at(t, SystemTime::now()))
            .transpose()?;
        let (plan, launch) = match shard {
            Some(shard) => Launch::sharded(&whole, shard, raw, start_at)?,
            None => (
                whole,
                Launch {
                    raw,
                    shard: None,
                    start_at,
                    push: Vec::new(),
                },
            ),
        };
        if let Some(s) = &launch.shard {
            eprintln!(
                "shard {} of {} (plan {})",
                s.whole.shard.index,
                s.whole.shard.count,
                &s.fingerprint[..12]
            );
        }
        if let Some(at) = start_at {
            match at.duration_since(SystemTime::now()) {
                Ok(ahead) => eprintln!(
                    "waiting until {} (in {}) to start",
                    humantime::format_rfc3339_seconds(at),
                    humantime::format_duration(std::time::Duration::from_secs(ahead.as_secs()))
                ),
                Err(past) if past.duration() >= LATE_NOTICE => eprintln!(
                    "the common start {} is {:.1} s past: starting at once, late",
                    humantime::format_rfc3339_seconds(at),
                    past.duration().as_secs_f64()
                ),
                Err(_) => {}
            }
        }
        Ok((plan, launch))
    }
}

/// The shard from `--shard`, `--shards` and the environment's count and index.
fn resolve(
    shard: Option<&str>,
    shards: Option<&str>,
    env_shards: Option<&str>,
    env_index: Option<&str>,
) -> anyhow::Result<Option<Shard>> {
    let count = |text: &str, from: &str| -> anyhow::Result<u64> {
        match text.trim().parse::<u64>() {
            Ok(n) => Ok(n),
            Err(_) => bail!("{from} takes a number of shards, got {text:?}"),
        }
    };
    let count = match (shards, env_shards) {
        (Some(n), _) => Some(count(n, "--shards")?),
        (None, Some(n)) if !n.trim().is_empty() => Some(count(n, SHARDS_ENV)?),
        _ => None,
    };
    if let Some(text) = shard {
        let shard: Shard = text.parse()?;
        if let Some(n) = count.filter(|&n| n != u64::from(shard.count)) {
            bail!(
                "--shard {text} says {} shards but --shards or {SHARDS_ENV} says {n}",
                shard.count
            );
        }
        return Ok(Some(shard));
    }
    let Some(count) = count else {
        return Ok(None);
    };
    let Some(index) = env_index else {
        bail!("{count} shards but no shard index: give --shard INDEX/{count}, or run as a Kubernetes Indexed Job ({INDEX_ENV})");
    };
    let index: u64 = match index.trim().parse() {
        Ok(i) => i,
        Err(_) => bail!("{INDEX_ENV} must be a shard index from 0, got {index:?}"),
    };
    Shard::new(index, count)
        .map(Some)
        .with_context(|| format!("{INDEX_ENV}={index} (from the environment)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shard_comes_from_the_flag_or_the_jobs_environment() {
        let s = |i, n| Some(Shard::new(i, n).unwrap());
        assert_eq!(resolve(Some("1/4"), None, None, None).unwrap(), s(1, 4));
        assert_eq!(resolve(None, Some("4"), None, Some("3")).unwrap(), s(3, 4));
        assert_eq!(resolve(None, None, Some("4"), Some("2")).unwrap(), s(2, 4));
        assert_eq!(
            resolve(None, Some("3"), Some("4"), Some("2")).unwrap(),
            s(2, 3)
        );
        // An Indexed Job that is not a sharded test.
        assert_eq!(resolve(None, None, None, Some("2")).unwrap(), None);
        assert_eq!(
            resolve(Some("1/4"), None, Some("4"), Some("3")).unwrap(),
            s(1, 4)
        );
    }

    #[test]
    fn bad_shards_are_one_line_errors() {
        for (shard, shards, env_n, env_i, says) in [
            (Some("4/4"), None, None, None, "out of range"),
            (Some("0/0"), None, None, None, "between 1 and 10000"),
            (Some("x"), None, None, None, "INDEX/COUNT"),
            (Some("1/4"), Some("3"), None, None, "says 4 shards"),
            (None, Some("4"), None, None, "no shard index"),
            (None, Some("4"), None, Some("4"), "out of range"),
            (None, Some("-1"), None, None, "number of shards"),
            (None, None, Some("four"), Some("0"), SHARDS_ENV),
            (None, Some("20000"), None, Some("0"), "between 1 and 10000"),
            (None, Some("4"), None, Some("a"), INDEX_ENV),
        ] {
            // As the CLI prints it: the context and its cause on one line.
            let e = format!("{:#}", resolve(shard, shards, env_n, env_i).unwrap_err());
            assert!(
                e.contains(says) && !e.contains('\n'),
                "{shard:?} {shards:?}: {e}"
            );
        }
    }
}
