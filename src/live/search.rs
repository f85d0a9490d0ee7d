//! The live page's feed from a capacity search in this process: each probe is a run of its
//! own in the search's directory, so the probe in progress is built (by the same loader as a
//! run's page) from the newest probe directory's metadata and the seconds the observer is
//! handed, and the probes so far are the search's record (`capacity.json`, written after
//! each probe) read back.

use super::feed::{Feed, Planned, Told};
use super::{LiveError, LiveState, Phase, Publisher, SearchState};
use crate::capacity::study::CapacityRecord;
use crate::store::{read_json, IntervalLine, Loader, RunMeta};
use std::path::{Path, PathBuf};
use std::sync::mpsc;

/// Feeds a live page from the capacity search it observes: the feed of a run, following
/// each probe in turn.
pub struct SearchFeed;

impl SearchFeed {
    /// Feeds `live` with the search stored in `dir`.
    pub fn start(live: &super::LiveServer, dir: &Path) -> Result<Feed, LiveError> {
        let publisher = live.publisher();
        let dir = dir.to_path_buf();
        let address = live.public_url();
        Feed::spawn(move |rx| follow(&rx, &publisher, &dir, &address))
    }
}

/// The probe being followed.
struct Probe {
    name: String,
    loader: Loader,
    planned: Planned,
    last_index: u64,
    broken: bool,
}

/// The newest probe directory of the search in `dir` (probes are numbered in order).
fn newest_probe(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("meta.json").exists())
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_string();
            let n: u64 = name.split('-').next()?.parse().ok()?;
            Some((n, p))
        })
        .max_by_key(|(n, _)| *n)
        .map(|(_, p)| p)
}

fn follow(rx: &mpsc::Receiver<Told>, publisher: &Publisher, dir: &Path, address: &str) {
    let mut probe: Option<Probe> = None;
    let mut warnings: Vec<String> = Vec::new();
    let mut noted = false;
    // Only Ctrl-C or the stop button stops a probe early, and it ends the search.
    let mut stopping = false;
    while let Ok(told) = rx.recv() {
        let line: IntervalLine = match told {
            Told::Second(line) => *line,
            Told::Stopping => {
                stopping = true;
                continue;
            }
        };
        // A probe's seconds count from 0 again: a new probe has begun.
        let fresh = probe
            .as_ref()
            .is_none_or(|p| p.loader.lines() > 0 && line.record.index <= p.last_index);
        if fresh {
            probe = newest_probe(dir).and_then(|path| {
                let meta: RunMeta = read_json(&path.join("meta.json")).ok()?;
                let planned = Planned::of_parts(&meta.stop, &meta.stages);
                Some(Probe {
                    name: path.file_name()?.to_string_lossy().into_owned(),
                    loader: Loader::new(meta).ok()?,
                    planned,
                    last_index: 0,
                    broken: false,
                })
            });
            if !noted {
                noted = true;
                let live = serde_json::json!({ "address": address });
                if let Err(e) = crate::store::write_json(&dir.join("live.json"), &live) {
                    warnings.push(format!(
                        "cannot note the page's address in the search's directory: {e}"
                    ));
                }
            }
        }
        let Some(p) = probe.as_mut() else { continue };
        p.last_index = line.record.index;
        if p.broken {
            continue;
        }
        if let Err(reason) = p.loader.add(&line) {
            warnings.push(format!(
                "{} second {}: {reason}; its page stops here, the search goes on",
                p.name,
                line.record.index + 1
            ));
            p.broken = true;
            continue;
        }
        let n = p.loader.lines();
        if n % super::frame::cadence(n) != 0 {
            continue;
        }
        let run = p.loader.so_far(None);
        let phase = match stopping {
            true => Phase::Stopping,
            false => Phase::Sending,
        };
        let position = p.planned.position(&line, &run, phase);
        publisher.publish_search(SearchState {
            record: CapacityRecord::load(dir).ok().flatten(),
            probe: Some(LiveState {
                run,
                position,
                shards: Vec::new(),
                warnings: warnings.clone(),
                latest: Some(line.record.clone()),
            }),
            probe_name: p.name.clone(),
        });
    }
    // The search is over: its record whole, no probe in progress.
    publisher.publish_search(SearchState {
        record: CapacityRecord::load(dir).ok().flatten(),
        probe: None,
        probe_name: String::new(),
    });
}
