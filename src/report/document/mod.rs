//! The format-neutral report: what a builder says about one subject (a run, a sweep, a
//! capacity search, a comparison, a matrix, a regression gate), before any writer lays it
//! out. Builders fill it from the summary; writers (text, markdown, HTML, JSON, JUnit) read
//! only this, so every format says the same thing in the same order: the answer first, then
//! the figures, then the tables.

mod cell;
pub mod interval;

pub use cell::{Cell, Tone};

use super::plot::Figure;

/// One report: what ran, the answer, the figures, then the sections that back it.
#[derive(Debug, Clone, Default)]
pub struct Document {
    /// What the report is about, one line ("GET https://api/keys", "Capacity of …").
    pub title: String,
    /// What was run, as short facts ("open model, 100 req/s", "HTTP/1.1", "started …").
    pub what_ran: Vec<String>,
    /// The answer: verdict, objectives, headline numbers, notes that change how to read them.
    pub answer: Answer,
    /// The figures, in the order they are shown.
    pub figures: Figures,
    /// The evidence, section by section, in the order they are shown.
    pub sections: Vec<Section>,
    /// Pass/fail checks, for writers that report tests (JUnit).
    pub checks: Vec<Check>,
    /// Named facts about the run for machines (JUnit properties): "target", "load", …
    pub properties: Vec<(String, String)>,
    /// When and where it ran, and for how long, when known.
    pub stamp: Option<Stamp>,
    /// The subject as data, for the JSON writer (the summary, the capacity record, …).
    pub data: serde_json::Value,
}

/// What a reader must see before anything else.
#[derive(Debug, Clone, Default)]
pub struct Answer {
    /// Which side was the limit, and the evidence; `None` when the subject has no verdict.
    pub verdict: Option<Verdict>,
    /// Each objective and whether it held.
    pub objectives: Vec<Objective>,
    /// The few numbers that answer the question (throughput, success, p50, p99, capacity).
    pub numbers: Vec<Fact>,
    /// What changes how to read the numbers: a partial run, a shard, a stop.
    pub notes: Vec<String>,
}

/// A verdict: one sentence, its tone, and the evidence as sentences.
#[derive(Debug, Clone)]
pub struct Verdict {
    /// Good (nothing at its limit, every objective held), bad, or unsure.
    pub tone: Tone,
    /// The sentence that answers ("the server was the limit:").
    pub sentence: String,
    /// The evidence, one sentence each.
    pub evidence: Vec<String>,
}

/// One objective and its outcome.
#[derive(Debug, Clone)]
pub struct Objective {
    /// The objective as written ("p99 < 250ms").
    pub text: String,
    /// What was measured, typed (a duration, a percentage, a rate), with its interval.
    pub measured: Cell,
    /// True when it held.
    pub met: bool,
}

/// A named value ("throughput": 812.5/s).
#[derive(Debug, Clone)]
pub struct Fact {
    /// What it is.
    pub label: String,
    /// Its value.
    pub value: Cell,
}

/// The figures and why any were left out.
#[derive(Debug, Clone, Default)]
pub struct Figures {
    /// The figures drawn.
    pub shown: Vec<Figure>,
    /// One sentence per figure left out (too short a run, no raw records, …).
    pub left_out: Vec<String>,
}

/// A titled part of the report.
#[derive(Debug, Clone)]
pub struct Section {
    /// A stable identifier (an HTML anchor, a JSON key): "failures", "by-request".
    pub id: String,
    /// Its heading.
    pub title: String,
    /// Its content, in order.
    pub blocks: Vec<Block>,
}

/// A piece of a section.
#[derive(Debug, Clone)]
pub enum Block {
    /// Prose.
    Paragraph(String),
    /// A remark that changes how to read what is near it.
    Note(String),
    /// A table.
    Table(Table),
    /// vegeta's lines: a label, the fields it holds, their values ("Latencies",
    /// "[min, mean, 50, …]", "1.0ms, …").
    Fields(Vec<FieldLine>),
    /// Lines whose layout is the content (a command line, the Error Set).
    Preformatted(String),
    /// A subsection (a step of a sweep, a variant).
    Sub(Section),
}

/// One of vegeta's lines.
#[derive(Debug, Clone)]
pub struct FieldLine {
    /// The label ("Latencies"); empty for a continuation line.
    pub label: String,
    /// The fields' names ("[min, mean, 50, 90]"); may be empty.
    pub fields: String,
    /// The values, as one cell (a line of values joined the way vegeta does).
    pub values: Cell,
}

/// A table whose first `left` columns are names (aligned left) and the rest values.
#[derive(Debug, Clone, Default)]
pub struct Table {
    /// The column headings.
    pub header: Vec<String>,
    /// The rows, each as long as the header.
    pub rows: Vec<Vec<Cell>>,
    /// How many leading columns are names.
    pub left: usize,
}

/// When and where a run ran.
#[derive(Debug, Clone)]
pub struct Stamp {
    /// Its start, ISO 8601.
    pub started: String,
    /// The generator's host name.
    pub host: String,
    /// How long it ran, seconds.
    pub secs: f64,
}

/// A test-like check: a case in JUnit.
#[derive(Debug, Clone)]
pub struct Check {
    /// The group it belongs to (JUnit's classname: "headroom.objectives").
    pub group: String,
    /// Its name ("p99 < 250ms").
    pub name: String,
    /// Why it failed; `None` when it passed.
    pub failure: Option<CheckFailure>,
    /// What a passing check wants said all the same (JUnit's system-out).
    pub output: Option<String>,
}

/// Why a check failed.
#[derive(Debug, Clone)]
pub struct CheckFailure {
    /// One line.
    pub message: String,
    /// The kind of failure ("objective not met").
    pub kind: String,
    /// The evidence, one line each.
    pub detail: String,
}

impl Section {
    /// A section holding `blocks`.
    pub fn new(id: &str, title: &str, blocks: Vec<Block>) -> Section {
        Section {
            id: id.into(),
            title: title.into(),
            blocks,
        }
    }

    /// A section holding one table.
    pub fn table(id: &str, title: &str, table: Table) -> Section {
        Section::new(id, title, vec![Block::Table(table)])
    }
}

impl Table {
    /// A table with `header`, its first `left` columns names.
    pub fn new(header: &[&str], left: usize) -> Table {
        Table {
            header: header.iter().map(|h| (*h).to_string()).collect(),
            rows: Vec::new(),
            left,
        }
    }

    /// A table from rows of text, header first: for builders whose cells are words.
    pub fn from_text(rows: &[Vec<String>], left: usize) -> Table {
        let mut rows = rows.iter();
        Table {
            header: rows.next().cloned().unwrap_or_default(),
            rows: rows.map(|r| r.iter().map(Cell::text).collect()).collect(),
            left,
        }
    }

    /// The header and every row as text, header first: what text-like writers align.
    pub fn text_rows(&self) -> Vec<Vec<String>> {
        std::iter::once(self.header.clone())
            .chain(
                self.rows
                    .iter()
                    .map(|r| r.iter().map(Cell::to_text).collect()),
            )
            .collect()
    }
}
