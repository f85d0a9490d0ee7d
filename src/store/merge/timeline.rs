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

struct Source<'a> {
    shard: &'a Shard,
    reader: Option<IntervalReader>,
    head: Option<IntervalLine>,
    /// The head's index on the merged timeline.
    at: u64,
    /// The last index read, to refuse a log out of order.
    last: Option<u64>,
    stages: usize,
}

impl Source<'_> {
    /// Reads the next line into `head`, placed on the merged timeline.
    fn advance(&mut self, tally: &mut ShardTally) -> Result<(), MergeError> {
        self.head = None;
        let Some(reader) = self.reader.as_mut() else {
            return Ok(());
        };
        let Some(line) = reader.next_line()? else {
            tally.torn_tail = reader.torn_tail;
            self.reader = None;
            return Ok(());
        };
        let corrupt = |reason: String| {
            MergeError::from(StoreError::Corrupt {
                path: self.shard.dir.path().join("intervals.jsonl"),
                reason: format!("line {}: {reason}", reader.line_number()),
            })
        };
        let index = line.record.index;
        if self.last.is_some_and(|last| index <= last) {
            return Err(corrupt(format!(
                "interval {index} after interval {}, out of order",
                self.last.unwrap_or_default()
            )));
        }
        if line.stage.is_some_and(|s| usize::from(s) >= self.stages) {
            return Err(corrupt(format!(
                "stage {}, but the test has {} stage(s)",
                line.stage.unwrap_or_default(),
                self.stages
            )));
        }
        self.at = index
            .checked_add(self.shard.shift_secs)
            .ok_or_else(|| corrupt(format!("interval {index}, past any run")))?;
        self.last = Some(index);
        tally.intervals += 1;
        tally.generator.merge(&generator_side(&line.record));
        // Each line is within bounds (the reader checks it), so adding one to a total within
        // them cannot overflow; the total is checked before the next.
        if let Some(reason) = check::implausible(&tally.generator) {
            return Err(corrupt(format!("the run's {reason}")));
        }
        self.head = Some(line);
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
    let mut tallies: Vec<ShardTally> = shards.iter().map(|_| ShardTally::default()).collect();
    let mut sources = Vec::with_capacity(shards.len());
    for shard in shards {
        let bounds = LineBounds {
            requests: shard.meta.requests.len(),
            stages: shard.meta.stages.len().min(stages),
            flows: shard.meta.flows.len(),
        };
        let path = shard.dir.path().join("intervals.jsonl");
        sources.push(Source {
            shard,
            reader: IntervalReader::open(&path, bounds)?,
            head: None,
            at: 0,
            last: None,
            stages: bounds.stages,
        });
    }
    for (source, tally) in sources.iter_mut().zip(&mut tallies) {
        source.advance(tally)?;
    }
    // The stage of a merged second is that of the shard nearest the origin: the one whose
    // seconds fall most exactly on the merged ones.
    let mut by_start: Vec<usize> = (0..sources.len()).collect();
    by_start.sort_by(|&a, &b| {
        shards[a]
            .offset_secs
            .total_cmp(&shards[b].offset_secs)
            .then(shards[a].id.index.cmp(&shards[b].id.index))
    });
    let mut merged = Merged::default();
    while let Some(at) = sources
        .iter()
        .filter(|s| s.head.is_some())
        .map(|s| s.at)
        .min()
    {
        let mut record = IntervalRecord::new(at);
        let mut health = Health::default();
        let mut stage = None;
        let mut server = None;
        let mut each = Vec::new();
        for &i in &by_start {
            let source = &sources[i];
            let Some(line) = source.head.as_ref().filter(|_| source.at == at) else {
                continue;
            };
            let shift_us = (source.shard.offset_secs * 1e6) as u64;
            let mut part = line.record.clone();
            shift_times(&mut part, shift_us);
            record.merge(&part);
            // Checked after each shard's part, as a run's total is after each line: never
            // added past what the next addition could overflow.
            if let Some(reason) = check::implausible(&record) {
                return Err(StoreError::Corrupt {
                    path: out_path.to_path_buf(),
                    reason: format!("second {at} of the merged run: {reason}"),
                }
                .into());
            }
            health.cpu = super::cpu_sum(&health.cpu, &line.health.cpu);
            health.open_fds = health.open_fds.saturating_add(line.health.open_fds);
            stage = stage.or(line.stage);
            each.push(ShardHealth {
                shard: source.shard.id.index,
                health: line.health,
            });
            // The server is one: its readings are kept from one shard only, the first met
            // with any (the one nearest the origin when several start with them).
            if line.server.is_some() {
                let index = source.shard.id.index;
                let from = *merged.server_from.get_or_insert(index);
                if from == index {
                    server = line.server.clone();
                }
            }
        }
        each.sort_by_key(|h| h.shard);
        out.append(&IntervalLine {
            record,
            health,
            stage,
            server,
            shards: each,
        })?;
        merged.lines += 1;
        for (source, tally) in sources.iter_mut().zip(&mut tallies) {
            if source.head.is_some() && source.at == at {
                source.advance(tally)?;
            }
        }
    }
    merged.tallies = tallies;
    Ok(merged)
}
