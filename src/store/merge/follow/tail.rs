//! One run directory followed as another process writes it: its log read on from where it
//! was, whole lines only, and what became of the directory (ended, damaged, gone).

use crate::store::{IntervalLine, IntervalReader, LineBounds, RunEnd};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What a directory's writer is doing, as far as its files tell.
#[derive(Debug, Clone, PartialEq)]
pub enum TailState {
    /// Lines may still come.
    Open,
    /// `end.json` is written and every line before it read.
    Ended,
    /// A line, or `end.json`, is not what headroom writes: nothing past it is read.
    Damaged(String),
    /// The directory is no longer there.
    Gone,
}

/// One run directory's log, followed.
pub struct Tail {
    dir: PathBuf,
    bounds: LineBounds,
    reader: Option<IntervalReader>,
    /// How it ended, once `end.json` is read.
    pub end: Option<RunEnd>,
    /// What its writer is doing.
    pub state: TailState,
    /// Whole lines read.
    pub lines: u64,
    /// When a line was last read (or the tail began, before any).
    pub grew: Instant,
}

impl std::fmt::Debug for Tail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tail")
            .field("dir", &self.dir)
            .field("state", &self.state)
            .field("lines", &self.lines)
            .finish_non_exhaustive()
    }
}

impl Tail {
    /// Follows the run in `dir`, whose lines hold at most `bounds`.
    pub fn new(dir: &Path, bounds: LineBounds, now: Instant) -> Tail {
        Tail {
            dir: dir.to_path_buf(),
            bounds,
            reader: None,
            end: None,
            state: TailState::Open,
            lines: 0,
            grew: now,
        }
    }

    /// Every whole line written since the last call, each with its line number; `take`
    /// refuses a line (damage it finds in it) with the whole message, file and line. Damage and a lost directory end the
    /// tail (see `state`); what was read before stays read.
    pub fn read(
        &mut self,
        now: Instant,
        take: &mut dyn FnMut(IntervalLine, usize) -> Result<(), String>,
    ) {
        if self.state != TailState::Open {
            return;
        }
        if !self.dir.is_dir() {
            self.state = TailState::Gone;
            return;
        }
        // Looked for before the lines are read: the writer writes it after its last line,
        // so once it is there, the lines read next are all there will be. A copy of the
        // directory may bring it before the log's last lines (tar writes end.json first):
        // the run has ended once a read after it found nothing more.
        let end_path = self.dir.join("end.json");
        let ending = end_path.exists();
        let before = self.reader.as_ref().map(IntervalReader::consumed);
        if let Err(e) = self.read_lines(now, take) {
            self.state = TailState::Damaged(e);
            return;
        }
        let grew = self.reader.as_ref().map(IntervalReader::consumed) != before;
        if ending && !grew {
            match crate::store::read_json::<RunEnd>(&end_path) {
                Ok(end) => {
                    if let Some(reader) = self.reader.as_mut() {
                        reader.ended();
                    }
                    self.end = Some(end);
                    self.state = TailState::Ended;
                }
                Err(e) => self.state = TailState::Damaged(e.to_string()),
            }
        }
    }

    fn read_lines(
        &mut self,
        now: Instant,
        take: &mut dyn FnMut(IntervalLine, usize) -> Result<(), String>,
    ) -> Result<(), String> {
        if self.reader.is_none() {
            let path = self.dir.join("intervals.jsonl");
            self.reader = IntervalReader::follow(&path, self.bounds).map_err(|e| e.to_string())?;
        }
        let Some(reader) = self.reader.as_mut() else {
            return Ok(());
        };
        reader.reopen_if_replaced().map_err(|e| e.to_string())?;
        while let Some(line) = reader.next_line().map_err(|e| e.to_string())? {
            let number = reader.line_number();
            take(line, number)?;
            self.lines += 1;
            self.grew = now;
        }
        Ok(())
    }

    /// The run directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether its last line was torn (a kill mid-write), known once it ended.
    pub fn torn_tail(&self) -> bool {
        self.reader.as_ref().is_some_and(|r| r.torn_tail)
    }
}
