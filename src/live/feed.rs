//! The live page's feed from a run in this process: an [`Observer`] that hands each second
//! the recorder produced to a thread of its own (one channel send a second: nothing per
//! request, nothing slow on the engine's side), where a [`Loader`] builds the run so far by
//! the path `RunDir::load` reads it, and the state is published to the page.

use super::{LiveError, LiveState, Phase, Position, Publisher};
use crate::plan::{AttackPlan, SendingEnd, StepPlace};
use crate::run::Observer;
use crate::store::{read_json, write_json, IntervalLine, Loader, RunDir, RunMeta, StoredRun};
use std::sync::mpsc;

/// Feeds a live page from the run it observes; [`Feed::finish`] once the run is over.
pub struct Feed {
    tx: Option<mpsc::Sender<Told>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// What the feed thread is told, in the run's order.
pub(super) enum Told {
    /// A second as it was stored.
    Second(Box<IntervalLine>),
    /// The run is stopping early: the seconds after this are its drain.
    Stopping,
}

impl Feed {
    /// Feeds `live` with the run of `plan` stored in `dir` (its metadata is read from there
    /// when the first second arrives: it is written before the first request). The page's
    /// address, never its token, is written beside the run as `live.json` then.
    pub fn start(
        live: &super::LiveServer,
        plan: &AttackPlan,
        dir: &RunDir,
    ) -> Result<Feed, LiveError> {
        let publisher = live.publisher();
        let plan = Planned::of(plan);
        let dir = dir.clone();
        let address = live.public_url();
        Feed::spawn(move |rx| follow(&rx, &publisher, &plan, &dir, &address))
    }

    /// Runs `follow` on a thread of the page's own, handed each second's line: the engine's
    /// side only sends it.
    pub(super) fn spawn(
        follow: impl FnOnce(mpsc::Receiver<Told>) + Send + 'static,
    ) -> Result<Feed, LiveError> {
        let (tx, rx) = mpsc::channel::<Told>();
        let thread = std::thread::Builder::new()
            .name("headroom-live-feed".into())
            .spawn(move || {
                super::yield_to_the_engine();
                follow(rx)
            })
            .map_err(LiveError::Thread)?;
        Ok(Feed {
            tx: Some(tx),
            thread: Some(thread),
        })
    }

    /// The run is over: its last state (marked ended) is published before this returns.
    pub fn finish(mut self) {
        self.close();
    }

    fn close(&mut self) {
        self.tx.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Feed {
    fn drop(&mut self) {
        self.close();
    }
}

impl Observer for Feed {
    fn interval(&mut self, line: &IntervalLine) {
        if let Some(tx) = &self.tx {
            // The feed thread gone (it stopped on a damaged line) costs the page, not the run.
            let _ = tx.send(Told::Second(Box::new(line.clone())));
        }
    }

    fn stopping(&mut self) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(Told::Stopping);
        }
    }
}

/// Two observers of one run: the progress line and the live page, say.
pub struct Tee<'a>(pub &'a mut dyn Observer, pub &'a mut dyn Observer);

impl Observer for Tee<'_> {
    fn interval(&mut self, line: &IntervalLine) {
        self.0.interval(line);
        self.1.interval(line);
    }

    fn notice(&mut self, notice: &crate::sample::Notice) {
        self.0.notice(notice);
        self.1.notice(notice);
    }

    fn aborting(&mut self, aborted: &crate::store::Aborted) {
        self.0.aborting(aborted);
        self.1.aborting(aborted);
    }

    fn stopping(&mut self) {
        self.0.stopping();
        self.1.stopping();
    }

    fn stopped_early(&self) -> Option<String> {
        self.0.stopped_early().or_else(|| self.1.stopped_early())
    }
}

/// What the plan says of where a run ends, for the page's first line.
pub(super) struct Planned {
    end: SendingEnd,
    stages: Vec<crate::plan::Stage>,
}

impl Planned {
    fn of(plan: &AttackPlan) -> Planned {
        Planned::of_parts(&plan.stop, &plan.stages)
    }

    /// From what a run stops on and its stages (a plan's, or a stored run's metadata).
    pub(super) fn of_parts(stop: &crate::plan::Stop, stages: &[crate::plan::Stage]) -> Planned {
        Planned {
            end: SendingEnd::of(stop, stages),
            stages: stages.to_vec(),
        }
    }

    /// Where the run is at `line`, `run` being the run so far (`line` its last second).
    pub(super) fn position(&self, line: &IntervalLine, run: &StoredRun, phase: Phase) -> Position {
        let sent_before = run
            .all
            .sent_first()
            .saturating_sub(line.record.sent_first());
        self.at(line.record.index + 1, line.stage, sent_before, phase)
    }

    /// Where a run is after `elapsed` seconds, the last run in `stage` and `sent_before`
    /// sent in the seconds before that one.
    fn at(&self, elapsed: u64, stage: Option<u16>, sent_before: u64, phase: Phase) -> Position {
        let drains = elapsed
            .checked_sub(1)
            .is_some_and(|index| self.end.drains(index, sent_before));
        Position {
            elapsed_secs: elapsed,
            planned_secs: self.end.secs(),
            planned_requests: self.end.requests,
            step: stage.and_then(|i| StepPlace::of(&self.stages, i.into())),
            phase: match phase {
                Phase::Sending if drains => Phase::Draining,
                p => p,
            },
        }
    }
}

impl Position {
    /// Where the stored run `run` is, as its metadata planned it (a run another process
    /// writes, followed by `watch`), in `phase` (sending becomes draining past the plan).
    pub fn of_stored(run: &StoredRun, phase: Phase) -> Position {
        let last = run.intervals.last();
        // A stored second's count includes its retries, which a count of requests to send
        // does not: with retries, a counted run shows as draining a second late, never early.
        let sent_before = run
            .all
            .sent_first()
            .saturating_sub(last.map_or(0, |d| d.sent));
        Planned::of_parts(&run.meta.stop, &run.meta.stages).at(
            last.map_or(0, |d| d.index + 1),
            last.and_then(|d| d.stage),
            sent_before,
            phase,
        )
    }
}

/// The feed thread: takes each second, publishes the run so far at the page's cadence.
fn follow(
    rx: &mpsc::Receiver<Told>,
    publisher: &Publisher,
    plan: &Planned,
    dir: &RunDir,
    address: &str,
) {
    let meta_path = dir.path().join("meta.json");
    let mut loader: Option<Loader> = None;
    let mut warnings = Vec::new();
    let mut last: Option<IntervalLine> = None;
    let mut broken = false;
    let mut stopping = false;
    while let Ok(told) = rx.recv() {
        let line = match told {
            Told::Second(line) => *line,
            Told::Stopping => {
                stopping = true;
                continue;
            }
        };
        if broken {
            continue;
        }
        if loader.is_none() {
            match read_json::<RunMeta>(&meta_path).map(Loader::new) {
                Ok(Ok(l)) => {
                    loader = Some(l);
                    let live = serde_json::json!({ "address": address });
                    if let Err(e) = write_json(&dir.path().join("live.json"), &live) {
                        warnings.push(format!(
                            "cannot note the page's address in the run directory: {e}"
                        ));
                    }
                }
                Ok(Err(reason)) => {
                    warnings.push(format!("the run's metadata is damaged ({reason}): the page stops here; the report is unaffected"));
                    broken = true;
                }
                Err(e) => {
                    warnings.push(format!("cannot read the run's metadata ({e}): the page stops here; the report is unaffected"));
                    broken = true;
                }
            }
        }
        let Some(l) = loader.as_mut() else { continue };
        if let Err(reason) = l.add(&line) {
            warnings.push(format!(
                "second {}: {reason}; the page stops here, the run goes on",
                line.record.index + 1
            ));
            broken = true;
            continue;
        }
        let n = l.lines();
        let due = n % super::frame::cadence(n) == 0;
        last = Some(line);
        // A state not published loses nothing: the loader has every line, the next has it.
        if due {
            let phase = match stopping {
                true => Phase::Stopping,
                false => Phase::Sending,
            };
            publish(publisher, l, plan, last.as_ref(), &warnings, phase);
        }
    }
    // The run is over and its end written: the last state is the stored run whole, as
    // `RunDir::load` reads it, so the last frame is the report's numbers exactly.
    if let (Some(l), Some(line)) = (loader.as_ref(), last.as_ref()) {
        let end = read_json(&dir.path().join("end.json")).ok();
        let outputs_path = dir.path().join("outputs.json");
        let outputs = if outputs_path.exists() {
            read_json(&outputs_path).unwrap_or_default()
        } else {
            Vec::new()
        };
        let run = l.clone().finish(end, false, outputs);
        let position = plan.position(line, &run, Phase::Ended);
        publisher.publish(LiveState {
            run,
            position,
            shards: Vec::new(),
            warnings: warnings.clone(),
            latest: Some(line.record.clone()),
        });
    }
}

fn publish(
    publisher: &Publisher,
    loader: &Loader,
    plan: &Planned,
    last: Option<&IntervalLine>,
    warnings: &[String],
    phase: Phase,
) {
    let Some(line) = last else { return };
    let run = loader.so_far(None);
    let position = plan.position(line, &run, phase);
    publisher.publish(LiveState {
        run,
        position,
        shards: Vec::new(),
        warnings: warnings.to_vec(),
        latest: Some(line.record.clone()),
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Stop;

    fn planned(duration_ms: Option<u64>, requests: Option<u64>) -> Planned {
        Planned::of_parts(&Stop::of_ms(duration_ms, requests), &[])
    }

    #[test]
    fn the_page_says_draining_in_the_seconds_the_progress_line_does() {
        // 12.5 s: the thirteenth second still sends; the fourteenth is the drain.
        let p = planned(Some(12_500), None);
        assert_eq!(p.at(13, None, 0, Phase::Sending).phase, Phase::Sending);
        assert_eq!(p.at(14, None, 0, Phase::Sending).phase, Phase::Draining);
        assert_eq!(p.at(13, None, 0, Phase::Sending).planned_secs, Some(13));
        // A count: the second that reaches it still sends; the next drains.
        let p = planned(None, Some(1_000));
        assert_eq!(p.at(4, None, 999, Phase::Sending).phase, Phase::Sending);
        assert_eq!(p.at(5, None, 1_000, Phase::Sending).phase, Phase::Draining);
        // Before any second, and once ended, the phase is as given.
        assert_eq!(p.at(0, None, 0, Phase::Sending).phase, Phase::Sending);
        assert_eq!(p.at(9, None, 1_000, Phase::Ended).phase, Phase::Ended);
    }
}
