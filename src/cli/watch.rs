//! `headroom watch`: the live page of runs other processes write — one run, or the shard
//! runs of one test merged exactly as `merge` merges them — read from their directories as
//! they grow, until every one has ended (the page then becomes the merged report) or Ctrl-C.

use anyhow::Context;
use headroom::engine::CancellationToken;
use headroom::live::{LiveServer, LiveSettings, LiveState, Phase, Position, ShardStatus};
use headroom::store::merge::follow::{second_number, Follow, Settings, ShardState, ShardView};
use headroom::store::RunDir;
use headroom::summary::Summary;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// How often the directories are read: each shard writes a line a second, and a line is
/// shown within this of being written (a read costs a few system calls when nothing came).
const POLL: Duration = Duration::from_millis(250);
/// How often the page is sent the state when nothing changed (its clock, shards' states).
const PUBLISH_EVERY: Duration = Duration::from_secs(1);
/// How often a plain line says where the watch is, unless `--quiet`.
const SAY_EVERY: Duration = Duration::from_secs(10);

/// Options of `headroom watch`.
#[derive(Debug, clap::Args)]
pub struct WatchArgs {
    /// The run directories to follow: one run, or the shard runs of one test (`--shard
    /// I/N`, each shard once; on a shared volume, or copied in as they grow). They need not
    /// exist yet.
    #[arg(required = true, num_args = 1..)]
    pub runs: Vec<PathBuf>,
    /// Serve the page here: loopback at a free port by default; off loopback every request
    /// needs the token printed with the address.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    pub live: SocketAddr,
    /// Follow the shards given even when some of the test's are not; the page then names
    /// the missing ones (as `merge --partial`).
    #[arg(long)]
    pub partial: bool,
    /// A run that writes no line for this long, and no end.json, is said stopped; a sharded
    /// test's view then goes on without it, as `merge` would.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = super::positive_duration)]
    pub stalled_after: Duration,
    /// Keep the merged run here when every shard has ended (as `merge --out` writes it);
    /// by default it is written to a temporary directory for the page and removed. Shards
    /// only: one run is already stored where it is.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// No line every 10 seconds saying where the watch is (problems are still said).
    #[arg(long)]
    pub quiet: bool,
}

/// Runs `headroom watch` until every run has ended or `shutdown`.
pub fn run(args: WatchArgs, shutdown: CancellationToken) -> anyhow::Result<ExitCode> {
    let command: Vec<String> = std::env::args().collect();
    let settings = Settings {
        partial: args.partial,
        stall: args.stalled_after,
    };
    let mut follow = Follow::start(&args.runs, settings, &command, Instant::now())
        .context("cannot watch these runs")?;
    // Said before the page starts: nothing would be written there, and silence would
    // leave the user looking for it. (Directories yet to appear may still be shards.)
    if args.out.is_some() && follow.is_one_run() {
        let run = args
            .runs
            .first()
            .map_or(String::new(), |r| r.display().to_string());
        anyhow::bail!(
            "--out keeps the merged run of a sharded test; {run} is one run, already stored where it is (drop --out; its report: headroom report {run})"
        );
    }
    let server = LiveServer::start(LiveSettings {
        addr: args.live,
        // The runs are other processes': the page cannot stop them.
        stops: None,
        ..LiveSettings::default()
    })?;
    eprintln!(
        "headroom: live page at {}",
        page_address(&server, args.live)
    );
    let mut said_at = Instant::now();
    let mut published: Option<(Instant, Option<u64>)> = None;
    loop {
        let now = Instant::now();
        let said = follow.poll(now);
        for notice in &said {
            eprintln!("headroom watch: {notice}");
        }
        // As `--live` does: each new second (less often as the run grows, see `cadence`, so
        // the page's rebuilding stays bounded), anything said, the end, and once a second
        // for the shards' states.
        let due = match published {
            None => true,
            Some((at, shown)) => {
                let seconds = follow.shown().map_or(0, |s| s + 1);
                let step = headroom::live::cadence(seconds);
                let advanced = follow.shown() != shown
                    && seconds.saturating_sub(shown.map_or(0, |s| s + 1)) >= step;
                let quiet_for = PUBLISH_EVERY * u32::try_from(step).unwrap_or(u32::MAX);
                advanced
                    || !said.is_empty()
                    || follow.ended()
                    || now.duration_since(at) >= quiet_for
            }
        };
        if due {
            if let Some(state) = state(&follow, now) {
                server.publish(state);
                published = Some((now, follow.shown()));
            }
        }
        if follow.ended() {
            break;
        }
        if !args.quiet && now.duration_since(said_at) >= SAY_EVERY {
            eprintln!("headroom watch: {}", where_line(&follow, now));
            said_at = now;
        }
        if wait(&shutdown, POLL) {
            eprintln!("headroom: watch stopped (the runs go on)");
            return Ok(super::stopped_code());
        }
    }
    let report = final_report(&follow, &args, &command)?;
    // The page is sent the last state (every second merged) before it becomes the report:
    // the report replaces it at once, and a page would otherwise never show those numbers.
    std::thread::sleep(PUBLISH_EVERY);
    server.finished(report.page.clone());
    eprintln!(
        "headroom watch: every run ended; {}",
        match (&report.kept, follow.is_merged()) {
            (Some(dir), _) => format!("the merged run is in {}", dir.display()),
            (None, true) => "`headroom merge` makes the merged run".into(),
            (None, false) => "`headroom report` renders the run".into(),
        }
    );
    Ok(ExitCode::SUCCESS)
}

/// The address to print: with the token off loopback (every request needs it there), but
/// not on loopback, where the page is read-only anyway (a watch stops nothing).
fn page_address(server: &LiveServer, addr: SocketAddr) -> String {
    if addr.ip().is_loopback() {
        server.public_url()
    } else {
        server.url()
    }
}

/// Sleeps `span`, or less when `shutdown` comes; whether it came.
fn wait(shutdown: &CancellationToken, span: Duration) -> bool {
    let until = Instant::now() + span;
    while Instant::now() < until {
        if shutdown.is_cancelled() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    shutdown.is_cancelled()
}

/// What the page shows now; `None` before any run began.
fn state(follow: &Follow, now: Instant) -> Option<LiveState> {
    let run = follow.run()?;
    let views = follow.shards(now);
    let phase = phase(follow.ended(), &views);
    let mut position = Position::of_stored(&run, phase);
    // The phase is the shards' (above), not the merged run's plan read alone: a shard that
    // started late sends past the plan's time, so the time left is counted to the last
    // shard's planned end on the merged clock.
    position.phase = phase;
    if let Some(secs) = follow.sending_ends() {
        position.planned_secs = Some(secs);
    }
    Some(LiveState {
        position,
        shards: if follow.is_merged() {
            views.iter().map(status).collect()
        } else {
            Vec::new()
        },
        warnings: follow.notices().iter().map(ToString::to_string).collect(),
        latest: follow.latest().cloned(),
        run,
    })
}

/// What the test is doing, from what its runs are: it sends while any run still does (or
/// has yet to start); past that, it is stopping while a run's abort condition held and it
/// still writes, else draining. Nothing writing any more, yet not all ended: stalled, never
/// "sending" of a test whose shard was killed (merge would call it partial).
fn phase(ended: bool, views: &[ShardView]) -> Phase {
    let any = |states: &[ShardState]| views.iter().any(|v| states.contains(&v.state));
    if ended {
        Phase::Ended
    } else if any(&[
        ShardState::Waiting,
        ShardState::Late,
        ShardState::Running,
        ShardState::Lagging,
    ]) {
        Phase::Sending
    } else if any(&[ShardState::Stopping]) {
        Phase::Stopping
    } else if any(&[ShardState::Draining]) {
        Phase::Draining
    } else {
        Phase::Stalled
    }
}

/// One shard's row on the page.
fn status(v: &ShardView) -> ShardStatus {
    let name = v.dir.file_name().map_or_else(
        || v.dir.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    ShardStatus {
        index: v.index,
        state: v.state.to_string(),
        last_second: v.last_numbered(),
        note: match (&v.problem, v.late_secs) {
            (Some(problem), _) => format!("{name}: {problem}"),
            // As the report's Shards table counts lateness: from 0.1 s on.
            (None, Some(late)) if late >= 0.1 => {
                format!("{name}: began {late:.1}s after the common start")
            }
            (None, _) => name,
        },
    }
}

/// The plain line said every 10 seconds: the last second shown, each shard's state.
fn where_line(follow: &Follow, now: Instant) -> String {
    let shown = match follow.shown() {
        Some(s) => format!("second {} shown", second_number(s)),
        None => "nothing to show yet".into(),
    };
    let shards: Vec<String> = follow
        .shards(now)
        .iter()
        .map(|v| {
            let who = v
                .index
                .map_or_else(|| v.dir.display().to_string(), |i| format!("shard {i}"));
            match v.last_numbered() {
                Some(last) => format!("{who} {} (second {last})", v.state),
                None => format!("{who} {}", v.state),
            }
        })
        .collect();
    format!("{shown}; {}", shards.join(", "))
}

/// The final report the page becomes, and where the merged run was kept (`--out`).
struct FinalReport {
    page: PathBuf,
    kept: Option<PathBuf>,
    /// Removed when the watch ends: the report was only for the page.
    _scratch: Option<Scratch>,
}

/// A directory of the watch's own, removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes the report the page becomes, never into the watched directories: the merged
/// run made by `merge` itself (into `--out`, or a scratch directory), its report.html
/// beside it; for one run, its report in a scratch directory.
fn final_report(
    follow: &Follow,
    args: &WatchArgs,
    command: &[String],
) -> anyhow::Result<FinalReport> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let scratch =
        std::env::temp_dir().join(format!("headroom-watch-{}-{nanos}", std::process::id()));
    let (dir, kept) = match (&args.out, follow.is_merged()) {
        (Some(out), true) => (out.clone(), Some(out.clone())),
        (Some(out), false) => {
            // The directory given turned out to be one run once it appeared.
            eprintln!(
                "headroom watch: nothing written to {}: --out keeps a merged run, and this was one run, stored where it is",
                out.display()
            );
            (scratch.join("run"), None)
        }
        (None, _) => (scratch.join("run"), None),
    };
    let scratch = Scratch(scratch);
    let (stored, run_dir) = if follow.is_merged() {
        let out = RunDir::at(&dir);
        // The shards the page showed: a set with some missing was refused at the start
        // unless --partial, so any missing now came to light later and the page said so.
        headroom::store::merge::merge(&follow.shard_dirs(), &out, true, command)
            .with_context(|| format!("cannot merge into {}", dir.display()))?;
        let stored = out
            .load()
            .with_context(|| format!("cannot read the merged run in {}", dir.display()))?;
        (stored, dir.clone())
    } else {
        let stored = follow.run().context("the run was not read")?;
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        (stored, watched_dir(args))
    };
    let summary = Summary::of(&stored);
    let page =
        super::report::render_run(&stored, &summary, &run_dir, headroom::report::Format::Html)?;
    let path = dir.join("report.html");
    std::fs::write(&path, page).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(FinalReport {
        page: path,
        _scratch: kept.is_none().then_some(scratch),
        kept,
    })
}

fn watched_dir(args: &WatchArgs) -> PathBuf {
    args.runs
        .first()
        .map_or_else(|| Path::new(".").to_path_buf(), Clone::clone)
}
