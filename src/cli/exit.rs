//! Every exit status headroom ends with, in one place (docs/ci.md's table and `headroom
//! --help` list the same).

use std::process::ExitCode;

/// The command did what was asked, and every objective and rule held.
pub const SUCCESS: u8 = 0;
/// An error: bad input, a run that could not start, a file that cannot be read or written.
pub const ERROR: u8 = 1;
/// The command line cannot be read (clap's own status for usage errors).
// clap exits with it before any command runs; named here for the table and its test.
#[allow(dead_code)]
pub const USAGE: u8 = 2;
/// A run completed but missed one of its objectives (`--slo`, a scenario's `slo`), or not
/// one of its requests succeeded.
pub const SLO_NOT_MET: u8 = 3;
/// `compare --baseline … --fail-on …`: the candidate broke a rule.
pub const REGRESSION: u8 = 4;
/// The run's safety stop ended it: an `--abort-when` condition (a scenario's `abort_when`)
/// held for its window; the run and its report are kept. Not a signal's status: nobody
/// stopped it, the target did.
pub const ABORTED: u8 = 5;
/// A signal stopped the run: the status is this plus the signal (130 for Ctrl-C, 143 for
/// SIGTERM, 129 for SIGHUP), as a shell reports it; the run and its report are kept.
pub const SIGNAL_BASE: u8 = 128;

/// The table shown after `headroom --help`.
pub const TABLE: &str = "Exit status:
  0        success: every objective and rule held
  1        error (bad input or a refused value, a run that could not start, an unreadable run)
  2        the command line cannot be parsed (an unknown flag, a missing argument)
  3        a run completed but missed an objective (--slo, a scenario's slo), or nothing succeeded;
           capacity: no rate met (or held) the objectives
  4        compare --fail-on: the candidate regressed against the baseline, or a run is partial
  5        a run was aborted: an --abort-when condition held for its window (run and report kept)
  128+N    stopped by signal N, run and report kept (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP)";

/// Who judges a completed run's objectives for its exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judged {
    /// The run itself: [`SLO_NOT_MET`] when it missed one.
    Here,
    /// Its merge (`--judged-by-merge`, a shard's part): [`SUCCESS`], with a note; the merged
    /// run carries the whole test's verdict.
    ByMerge,
}

/// The status of a run that ended by itself: [`ABORTED`] when its safety stop ended it,
/// [`SLO_NOT_MET`] when not one request succeeded or an
/// objective was missed and the run is judged here, said on stderr; [`SUCCESS`] otherwise.
pub fn of_run(summary: &headroom::summary::Summary, judged: Judged) -> u8 {
    if let Some(a) = &summary.aborted {
        let how = headroom::report::build::words::aborted(a);
        return match judged {
            Judged::Here => {
                eprintln!("the run was {how} (exit status {ABORTED})");
                ABORTED
            }
            Judged::ByMerge => {
                eprintln!("this shard's part was {how} (exit status {SUCCESS}: --judged-by-merge, the merged run says it)");
                SUCCESS
            }
        };
    }
    let missed = if summary.nothing_succeeded() {
        Some("not one request succeeded")
    } else if !summary.slo_met() {
        Some("an objective was not met")
    } else {
        None
    };
    match (missed, judged) {
        (None, _) => SUCCESS,
        (Some(what), Judged::Here) => {
            eprintln!("{what} (exit status {SLO_NOT_MET})");
            SLO_NOT_MET
        }
        (Some(what), Judged::ByMerge) => {
            eprintln!("{what} in this shard's part (exit status {SUCCESS}: --judged-by-merge, the merged run is judged)");
            SUCCESS
        }
    }
}

/// The status of a capacity search that ended by itself, said on stderr when not
/// [`SUCCESS`]: [`SLO_NOT_MET`] when it found no capacity because the objectives failed —
/// no rate it tried met them (not one request succeeded being the plainest case), or none
/// held them for the confirmation — as a run that missed them. A capacity found, or none
/// because the server changed with time (the objectives held; the report says what would
/// settle it), is [`SUCCESS`].
pub fn of_search(record: &headroom::capacity::study::CapacityRecord) -> u8 {
    use headroom::capacity::search::Verdict;
    let Some(outcome) = record.outcome else {
        return SUCCESS;
    };
    if outcome.capacity.is_some() {
        return SUCCESS;
    }
    let missed = if record.probes.iter().all(|p| !p.measured()) {
        "not one request succeeded at any rate tried"
    } else if !record
        .probes
        .iter()
        // The objectives alone, as the probes' SLO column: a probe that met them at a rate
        // it could not hold steadily (a queue, a drift) is not `met`, but no objective failed.
        .any(|p| p.verdicts.iter().all(|v| v.met))
    {
        "no rate tried met the objectives"
    } else if outcome.verdict == Verdict::NeverHeld {
        "no rate held the objectives for the confirmation"
    } else {
        return SUCCESS;
    };
    eprintln!("{missed} (exit status {SLO_NOT_MET})");
    SLO_NOT_MET
}

/// `code` as the process's exit status.
pub fn code(code: u8) -> ExitCode {
    ExitCode::from(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_table_lists_every_code() {
        for c in [SUCCESS, ERROR, USAGE, SLO_NOT_MET, REGRESSION, ABORTED] {
            assert!(
                TABLE
                    .lines()
                    .any(|l| l.trim_start().starts_with(&format!("{c} "))),
                "{c} is missing from the table"
            );
        }
        assert!(TABLE.contains(&format!("{SIGNAL_BASE}+N")));
        assert!(TABLE.contains(&format!("{} Ctrl-C", SIGNAL_BASE + 2)));
    }
}
