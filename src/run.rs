//! Runs a plan end to end: the engine's intervals go to the run directory as they arrive,
//! with the generator's health beside each; the summary is then read back from the store,
//! so the end-of-run report and `headroom report` are one path.

use crate::engine::{self, CancellationToken, EngineError};
use crate::launch::Launch;
use crate::monitor::{peak_rss_bytes, ProcessProbe, ServerWatch};
use crate::plan::AttackPlan;
use crate::record::IntervalRecord;
use crate::store::{
    EndStatus, IntervalLine, RawWriter, RunDir, RunEnd, RunMeta, ShardMeta, StoreError, StoredRun,
};

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The engine could not start.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The run directory could not be written or read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Writing the run's seconds failed mid-run (a full disk, an I/O error): the attack was
    /// stopped rather than sent on unrecorded.
    #[error("{cause}; the attack was stopped within a second, and the {written} second(s) written before are kept in the run directory")]
    Lost {
        /// The write that failed (in the message, not a `source`: the CLI would print it twice).
        cause: StoreError,
        /// Seconds written before it.
        written: u64,
    },
    /// The run was stopped while it waited for its common start (`--start-at`).
    #[error("stopped while waiting for the common start; nothing was sent or stored")]
    NotStarted,
    /// A live output (`--push`) could not start.
    #[error(transparent)]
    Push(#[from] crate::push::PushError),
    /// Writing the raw records (`--raw`) failed mid-run: the attack was stopped likewise.
    #[error("{cause}; the attack was stopped within a second, and the {written} request record(s) written before are kept in the run directory")]
    RawLost {
        /// The write that failed.
        cause: StoreError,
        /// Records written before it.
        written: u64,
    },
}

/// Receives each whole interval as it is stored (live progress).
pub trait Observer {
    /// Called once per interval, in order.
    fn interval(&mut self, line: &IntervalLine);

    /// Something the preflight noticed, before the run starts.
    fn notice(&mut self, _notice: &crate::sample::Notice) {}

    /// The safety stop (`--abort-when`) is stopping the run: told once, at the second
    /// it decided, before the requests in flight drain.
    fn aborting(&mut self, _aborted: &crate::store::Aborted) {}

    /// The run is stopping before its plan's end, whoever stopped it (Ctrl-C, the live
    /// page's stop button, the safety stop, a failed write, a sweep's limit): told once,
    /// before the first second recorded after the stop; the seconds from there drain it.
    fn stopping(&mut self) {}

    /// Why the observer stopped the run itself, if it did.
    fn stopped_early(&self) -> Option<String> {
        None
    }
}

impl Observer for () {
    fn interval(&mut self, _line: &IntervalLine) {}
}

/// Runs `plan`, storing it in `dir`; returns the stored run, read back from disk.
pub fn attack(
    plan: &AttackPlan,
    command: &[String],
    dir: &RunDir,
    shutdown: CancellationToken,
    observer: &mut dyn Observer,
) -> Result<StoredRun, RunError> {
    attack_watching(plan, command, dir, shutdown, observer, None)
}

/// Like [`attack`], sampling the `server` every second into the run log too.
pub fn attack_watching(
    plan: &AttackPlan,
    command: &[String],
    dir: &RunDir,
    shutdown: CancellationToken,
    observer: &mut dyn Observer,
    server: Option<ServerWatch>,
) -> Result<StoredRun, RunError> {
    attack_recording(plan, command, dir, shutdown, observer, server, false)
}

/// Like [`attack_watching`], also keeping each request's record in the run directory when
/// `raw` (`--raw`; see `store::RawWriter`).
pub fn attack_recording(
    plan: &AttackPlan,
    command: &[String],
    dir: &RunDir,
    shutdown: CancellationToken,
    observer: &mut dyn Observer,
    server: Option<ServerWatch>,
    raw: bool,
) -> Result<StoredRun, RunError> {
    let launch = Launch {
        raw,
        ..Launch::default()
    };
    attack_launched(plan, command, dir, shutdown, observer, server, &launch)
}

/// Like [`attack_recording`], as `launch` says: as one shard of a test (`plan` being the
/// shard's part, from `Launch::sharded`), and at a common start. The target is checked
/// (the preflight) before the wait, so a wrong address fails at once rather than at the
/// start; nothing is stored before the schedule begins.
pub fn attack_launched(
    plan: &AttackPlan,
    command: &[String],
    dir: &RunDir,
    shutdown: CancellationToken,
    observer: &mut dyn Observer,
    mut server: Option<ServerWatch>,
    launch: &Launch,
) -> Result<StoredRun, RunError> {
    let raw = launch.raw;
    // Poisson arrivals not given a seed draw one here, once per run; meta.json keeps it, so
    // the run can be repeated exactly (a shard is always given one: see `Shard::split`).
    let plan = &AttackPlan {
        arrivals: plan.arrivals.seeded(crate::plan::fresh_seed),
        ..plan.clone()
    };
    let open_files = crate::monitor::raise_open_files_limit();
    let mut prepared = engine::prepare(plan, open_files)?;
    if let Some(shard) = &launch.shard {
        prepared.shard_of(shard.whole.clone());
    }
    let started = match launch.start_at {
        Some(at) => {
            let (instant, started) =
                crate::launch::wait_for_start(at, &shutdown).ok_or(RunError::NotStarted)?;
            prepared.start_at(instant);
            Some(started)
        }
        None => None,
    };
    let mut meta = RunMeta::describe(
        prepared.plan(),
        command,
        open_files,
        prepared.protocol(),
        prepared.notices(),
    );
    if let Some(started) = started {
        meta.started_at = humantime::format_rfc3339_millis(started.at).to_string();
    }
    meta.shard = launch.shard.as_ref().map(|s| ShardMeta {
        index: s.whole.shard.index,
        count: s.whole.shard.count,
        plan: s.fingerprint.clone(),
        whole_load: s.whole.load,
        whole_stages: s.whole.stages.clone(),
        start_at: launch
            .start_at
            .map(|at| humantime::format_rfc3339_millis(at).to_string()),
        late_secs: started.map(|s| s.late.as_secs_f64()),
    });
    for notice in prepared.notices() {
        observer.notice(notice);
    }
    let labels = crate::push::RunLabels::of(
        &meta,
        &dir.path()
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
    );
    // Started before the run directory, so a thread that cannot start leaves nothing behind.
    let mut push = crate::push::Pushers::start(&launch.push, &labels)?;
    let mut writer = dir.create(&meta)?;
    // Like the log, a raw file that cannot be written stops the run.
    let mut raw = if raw {
        let stop = shutdown.clone();
        Some(dir.record_raw(move || stop.cancel())?)
    } else {
        None
    };
    if let Some(raw) = raw.as_mut() {
        prepared.record_raw(raw.sink());
    }
    let mut probe = ProcessProbe::new();
    let cpu_at_start = probe.cpu_time();
    let mut peak_fds = 0;
    let mut write_error: Option<StoreError> = None;
    let mut written = 0;
    // The safety stop ends this run only, through a token of its own.
    let shutdown = shutdown.child_token();
    let mut observer = crate::abort::AbortWatch::new(plan, shutdown.clone(), observer);
    // Load that cannot be recorded is load for nothing: a failed write stops the run.
    let stop = shutdown.clone();
    let bounds = crate::plan::StageBounds::of(&plan.stages);
    // The run queue's wait is read per live thread: an engine thread that has exited takes
    // its share with it, so the wait is also summed from each second's sample, taken while
    // the threads ran.
    let mut waited = std::time::Duration::ZERO;
    let mut told_stopping = false;
    let report = engine::run(prepared, shutdown, |record: IntervalRecord| {
        let health = probe.sample();
        peak_fds = peak_fds.max(health.open_fds);
        waited += health.cpu.waiting;
        let stage = bounds.interval_stage(
            std::time::Duration::from_secs(record.index),
            record.steps.keys().next_back().copied(),
        );
        let line = IntervalLine {
            record,
            health,
            stage,
            server: server.as_mut().and_then(ServerWatch::sample),
            shards: Vec::new(),
        };
        if write_error.is_none() {
            match writer.append(&line) {
                Ok(()) => written += 1,
                Err(e) => {
                    write_error = Some(e);
                    stop.cancel();
                }
            }
        }
        // After the log: the second is on disk before any output sees it.
        push.offer(&line);
        // Every stop cancels this run's token, so the observers learn of each one here,
        // in one way, in order with the seconds.
        if !told_stopping && stop.is_cancelled() {
            told_stopping = true;
            observer.stopping();
        }
        observer.interval(&line);
    });
    // The run's requests are done: the outputs get their flush, bounded by its deadline.
    let outputs = (!push.is_empty()).then(|| push.finish());
    // Every worker's sink is gone with the engine: the writer drains what is queued and ends.
    let raw = raw.map(RawWriter::finish).transpose();
    if let Some(cause) = write_error {
        return Err(RunError::Lost { cause, written });
    }
    let raw = raw.map_err(|f| RunError::RawLost {
        cause: f.cause,
        written: f.written,
    })?;
    let report = report?;
    if let Some(raw) = raw {
        dir.finish_raw(&raw)?;
    }
    if let Some(outputs) = &outputs {
        dir.finish_outputs(outputs)?;
    }
    let reason = observer.stopped_early();
    let aborted = observer.aborted().cloned();
    // One instant for both forms, so `ended_unix` is `ended_at` to the millisecond.
    let ended_at = humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string();
    dir.finish(&RunEnd {
        status: match (report.interrupted, &reason, &aborted) {
            // Stopped by its safety stop, whatever came after (a Ctrl-C in the drain).
            (_, _, Some(_)) => EndStatus::Aborted,
            (true, Some(_), None) => EndStatus::Stopped,
            (true, None, None) => EndStatus::Interrupted,
            (false, _, None) => EndStatus::Completed,
        },
        ended_unix: crate::store::unix_secs_of(&ended_at),
        ended_at,
        attack_secs: report.attack.as_secs_f64(),
        wait_secs: report.wait.as_secs_f64(),
        cpu: {
            let mut cpu = probe.cpu_time().since(&cpu_at_start);
            cpu.waiting = cpu.waiting.max(waited);
            cpu
        },
        peak_open_fds: peak_fds,
        peak_rss_bytes: peak_rss_bytes(),
        reason,
        aborted,
    })?;
    Ok(dir.load()?)
}
