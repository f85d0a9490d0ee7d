//! `--live` at the CLI's edge: starts the page before the run or search (its address first
//! on standard error), and at the end writes `report.html` for the page to become.

use anyhow::Context;
use headroom::engine::CancellationToken;
use headroom::live::{Feed, LiveServer, LiveSettings, SearchFeed};
use headroom::plan::AttackPlan;
use headroom::store::{RunDir, StoredRun};
use headroom::summary::Summary;
use std::net::SocketAddr;

/// A run's live page.
pub struct Live {
    server: LiveServer,
}

/// Starts the page of the run of `plan` stored in `dir` at `addr`; its stop button cancels
/// `shutdown` as Ctrl-C does.
pub fn start(
    addr: SocketAddr,
    plan: &AttackPlan,
    dir: &RunDir,
    shutdown: &CancellationToken,
) -> anyhow::Result<(Live, Feed)> {
    let server = serve(addr, shutdown)?;
    let feed = Feed::start(&server, plan, dir)?;
    Ok((Live { server }, feed))
}

/// Starts the page of the capacity search stored in `dir` at `addr`.
pub fn start_search(
    addr: SocketAddr,
    dir: &std::path::Path,
    shutdown: &CancellationToken,
) -> anyhow::Result<(Live, Feed)> {
    let server = serve(addr, shutdown)?;
    let feed = SearchFeed::start(&server, dir)?;
    Ok((Live { server }, feed))
}

/// The page's server, its address said first.
fn serve(addr: SocketAddr, shutdown: &CancellationToken) -> anyhow::Result<LiveServer> {
    let server = LiveServer::start(LiveSettings {
        addr,
        stops: Some(shutdown.clone()),
        ..LiveSettings::default()
    })?;
    // The token is the starter's alone: printed for them, never stored.
    eprintln!("headroom: live page at {}", server.url());
    if !addr.ip().is_loopback() {
        eprintln!(
            "headroom: the page is not on loopback: every request to it needs the token above"
        );
    }
    Ok(server)
}

impl Live {
    /// The report in `dir` (`report.html`) is written: the page becomes it.
    pub fn show_report(&self, dir: &std::path::Path) {
        self.server.finished(dir.join("report.html"));
        self.note_stop();
    }

    fn note_stop(&self) {
        if self.server.stop_requested().is_cancelled() {
            super::STOP_SIGNAL.store(2, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// The run is over and reported: writes its HTML report (unless `written` already, as a
    /// sweep's is) and turns the page into it. A stop from the page ends the process as
    /// Ctrl-C does.
    pub fn finish(
        &self,
        stored: &StoredRun,
        summary: &Summary,
        dir: &RunDir,
        written: bool,
    ) -> anyhow::Result<()> {
        let path = dir.path().join("report.html");
        if !written {
            let page = super::report::render_run(
                stored,
                summary,
                dir.path(),
                headroom::report::Format::Html,
            )?;
            std::fs::write(&path, page)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        self.server.finished(path);
        self.note_stop();
        Ok(())
    }
}
