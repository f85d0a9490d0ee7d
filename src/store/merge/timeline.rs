//! The shards' interval logs merged second by second on the common clock, one line of each
//! shard in memory at a time.

use super::shards::Shard;
use super::MergeError;
use crate::monitor::Health;
use crate::record::{IntervalRecord, RequestStats};
use crate::store::log::{IntervalReader, LineBounds};
use crate::store::{check, IntervalLine, IntervalWriter, ShardHealth, StoreError};

/// What the merge learnt of each shard while reading its log.
#[derive(Debug, Default)]
pub struct ShardTally {
    /// Its whole intervals.
    pub intervals: u64,
    /// Its generator's side over the whole run (see `MergedShard::generator`).
    pub generator: IntervalRecord,
    /// Whether its log's last line was torn (a kill mid-write) and skipped.
    pub torn_tail: bool,
    /// Its generator's health over the seconds it wrote (see `MergedShard::seconds_health`).
    pub seconds_health: Health,
}

/// What the merged log holds.
#[derive(Debug, Default)]
pub struct Merged {
    /// Lines written.
    pub lines: u64,
    /// Each shard's tally, in the order of the shards.
    pub tallies: Vec<ShardTally>,
    /// The shard whose server readings were kept.
    pub server_from: Option<u32>,
}

/// One shard's lines placed on the merged timeline, each checked as it comes: in order,
/// of the test's stages, its generator's running total plausible. The one placing of a
/// line, for `merge` and for `watch` (which places lines as the shard writes them).
#[derive(Debug)]
pub struct Placing {
    /// Its log, to name in errors.
    path: std::path::PathBuf,
    shift_secs: u64,
    stages: usize,
    /// The last index read, to refuse a log out of order.
    last: Option<u64>,
    /// What was learnt of the shard so far.
    pub tally: ShardTally,
}

/// A shard's line with its second on the merged timeline.
#[derive(Debug)]
pub struct Placed {
    /// Its index on the merged timeline.
    pub at: u64,
    /// The line, as the shard wrote it.
    pub line: IntervalLine,
}

impl Placing {
    /// The placing of `shard`'s lines in a test of `stages` stages, and the bounds its
    /// reader checks each line against.
    pub fn of(shard: &Shard, stages: usize) -> (Placing, LineBounds) {
        let bounds = LineBounds {
            requests: shard.meta.requests.len(),
            stages: shard.meta.stages.len().min(stages),
            flows: shard.meta.flows.len(),
        };
        let placing = Placing {
            path: shard.dir.path().join("intervals.jsonl"),
            shift_secs: shard.shift_secs,
            stages: bounds.stages,
            last: None,
            tally: ShardTally::default(),
        };
        (placing, bounds)
    }

    /// The last second placed, on the merged timeline.
    pub fn last_at(&self) -> Option<u64> {
        self.last.map(|l| l.saturating_add(self.shift_secs))
    }

    /// The shard's first second on the merged timeline (its lines never come before).
    pub fn first_at(&self) -> u64 {
        self.shift_secs
    }

    /// Places `line`, line `number` of the shard's log.
    pub fn place(&mut self, line: IntervalLine, number: usize) -> Result<Placed, MergeError> {
        let corrupt = |reason: String| {
            MergeError::from(StoreError::Corrupt {
                path: self.path.clone(),
                reason: format!("line {number}: {reason}"),
            })
        };
        let index = line.record.index;
        if let Some(last) = self.last.filter(|&last| index <= last) {
            return Err(corrupt(format!(
                "interval {index} after interval {last}, out of order"
            )));
        }
        if line.stage.is_some_and(|s| usize::from(s) >= self.stages) {
            return Err(corrupt(format!(
                "stage {}, but the test has {} stage(s)",
                line.stage.unwrap_or_default(),
                self.stages
            )));
        }
        let at = index
            .checked_add(self.shift_secs)
            .ok_or_else(|| corrupt(format!("interval {index}, past any run")))?;
        // Each line is within bounds (the reader checks it), so adding one to a total within
        // them cannot overflow; the total is checked before the next.
        self.tally.generator.merge(&generator_side(&line.record));
        if let Some(reason) = check::implausible(&self.tally.generator) {
            return Err(corrupt(format!("the run's {reason}")));
        }
        let health = &mut self.tally.seconds_health;
        health.cpu = super::cpu_sum(&health.cpu, &line.health.cpu);
        health.open_fds = health.open_fds.max(line.health.open_fds);
        self.tally.intervals += 1;
        self.last = Some(index);
        Ok(Placed { at, line })
    }
}

/// The merging of one second of the shards' lines: the order they are added in and the
/// shard whose server readings are kept. The one merge of a second, for `merge` and
/// `watch`.
#[derive(Debug)]
pub struct Seconds {
    /// Positions of the shards, nearest the origin first.
    by_start: Vec<usize>,
    /// Each shard's index in the test, by position.
    indices: Vec<u32>,
    /// Each shard's start after the origin, µs, by position.
    shifts_us: Vec<u64>,
    /// The merged log, to name in errors.
    out_path: std::path::PathBuf,
    /// The shard whose server readings are kept, once one had any.
    pub server_from: Option<u32>,
}

impl Seconds {
    /// The merging of `shards`' seconds into the log at `out_path`.
    pub fn of(shards: &[Shard], out_path: &std::path::Path) -> Seconds {
        // The stage of a merged second is that of the shard nearest the origin: the one
        // whose seconds fall most exactly on the merged ones.
        let mut by_start: Vec<usize> = (0..shards.len()).collect();
        by_start.sort_by(|&a, &b| {
            shards[a]
                .offset_secs
                .total_cmp(&shards[b].offset_secs)
                .then(shards[a].id.index.cmp(&shards[b].id.index))
        });
        Seconds {
            by_start,
            indices: shards.iter().map(|s| s.id.index).collect(),
            shifts_us: shards
                .iter()
                .map(|s| (s.offset_secs * 1e6) as u64)
                .collect(),
            out_path: out_path.to_path_buf(),
            server_from: None,
        }
    }

    /// Merged second `at` from `heads`, by shard position: the line each shard has at
    /// `at`, if any.
    pub fn merge(
        &mut self,
        at: u64,
        heads: &[Option<&IntervalLine>],
    ) -> Result<IntervalLine, MergeError> {
        let mut record = IntervalRecord::new(at);
        let mut health = Health::default();
        let mut stage = None;
        let mut server = None;
        let mut each = Vec::new();
        for &i in &self.by_start {
            let Some(line) = heads.get(i).copied().flatten() else {
                continue;
            };
            let mut part = line.record.clone();
            shift_times(&mut part, self.shifts_us[i]);
            record.merge(&part);
            // Checked after each shard's part, as a run's total is after each line: never
            // added past what the next addition could overflow.
            if let Some(reason) = check::implausible(&record) {
                return Err(StoreError::Corrupt {
                    path: self.out_path.clone(),
                    reason: format!("second {at} of the merged run: {reason}"),
                }
                .into());
            }
            health.cpu = super::cpu_sum(&health.cpu, &line.health.cpu);
            health.open_fds = health.open_fds.saturating_add(line.health.open_fds);
            stage = stage.or(line.stage);
            let index = self.indices[i];
            each.push(ShardHealth {
                shard: index,
                health: line.health,
            });
            // The server is one: its readings are kept from one shard only, the first met
            // with any (the one nearest the origin when several start with them).
            if line.server.is_some() {
                let from = *self.server_from.get_or_insert(index);
                if from == index {
                    server = line.server.clone();
                }
            }
        }
        each.sort_by_key(|h| h.shard);
        Ok(IntervalLine {
            record,
            health,
            stage,
            server,
            shards: each,
        })
    }
}

struct Source {
    reader: Option<IntervalReader>,
    placing: Placing,
    head: Option<Placed>,
}

impl Source {
    /// Reads the next line into `head`, placed on the merged timeline.
    fn advance(&mut self) -> Result<(), MergeError> {
        self.head = None;
        let Some(reader) = self.reader.as_mut() else {
            return Ok(());
        };
        let Some(line) = reader.next_line()? else {
            self.placing.tally.torn_tail = reader.torn_tail;
            self.reader = None;
            return Ok(());
        };
        self.head = Some(self.placing.place(line, reader.line_number())?);
        Ok(())
    }
}

/// What a shard's verdict is judged on, from one of its intervals: its requests sent, lag
/// and failures, and the service time of its answers in one request entry.
fn generator_side(r: &IntervalRecord) -> IntervalRecord {
    let mut all = RequestStats::default();
    for q in &r.requests {
        all.count += q.count;
        all.failures += q.failures;
        all.service.add(&q.service);
    }
    IntervalRecord {
        index: 0,
        sent: r.sent,
        scheduled: r.scheduled,
        retried: r.retried,
        lag: r.lag.clone(),
        status: r.status.clone(),
        errors: r.errors.clone(),
        requests: vec![all],
        ..Default::default()
    }
}

/// Moves a shard's stage times (µs after its own start) onto the merged clock.
fn shift_times(r: &mut IntervalRecord, us: u64) {
    for step in r.steps.values_mut().filter(|s| s.count > 0) {
        step.first_us = step.first_us.saturating_add(us);
        step.first_done_us = step.first_done_us.saturating_add(us);
        step.last_us = step.last_us.saturating_add(us);
    }
}

/// Merges the logs of `shards` into `out`, second by second. `stages` is the number of
/// stages of the whole test.
pub fn merge(
    shards: &[Shard],
    stages: usize,
    out: &mut IntervalWriter,
    out_path: &std::path::Path,
) -> Result<Merged, MergeError> {
    let mut sources = Vec::with_capacity(shards.len());
    for shard in shards {
        let (placing, bounds) = Placing::of(shard, stages);
        sources.push(Source {
            reader: IntervalReader::open(&placing.path, bounds)?,
            placing,
            head: None,
        });
    }
    for source in &mut sources {
        source.advance()?;
    }
    let mut seconds = Seconds::of(shards, out_path);
    let mut merged = Merged::default();
    while let Some(at) = sources
        .iter()
        .filter_map(|s| s.head.as_ref())
        .map(|h| h.at)
        .min()
    {
        let heads: Vec<Option<&IntervalLine>> = sources
            .iter()
            .map(|s| s.head.as_ref().filter(|h| h.at == at).map(|h| &h.line))
            .collect();
        out.append(&seconds.merge(at, &heads)?)?;
        merged.lines += 1;
        for source in &mut sources {
            if source.head.as_ref().is_some_and(|h| h.at == at) {
                source.advance()?;
            }
        }
    }
    merged.server_from = seconds.server_from;
    merged.tallies = sources.into_iter().map(|s| s.placing.tally).collect();
    Ok(merged)
}
