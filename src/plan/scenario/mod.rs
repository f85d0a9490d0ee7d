//! Scenario files: the traffic of a run described once, in YAML, and lowered to a plan.
//!
//! Everything is checked before any request is sent, and a mistake is reported with the file,
//! line and column it is at.

mod budget;
pub mod env;
pub(crate) mod file;
mod flows;
mod load;
pub mod overrides;
mod request;
pub mod shape;
mod sources;

pub use file::ScenarioFile;
pub use overrides::{Override, OverrideError, ValuePath};

use super::{
    AttackPlan, ConnectionOptions, HttpVersion, Load, NamedRequest, Rate, Slo, Stop, Target,
};
use file::HttpChoice;
use std::path::{Path, PathBuf};

/// A scenario that cannot be run: where, and what is wrong.
#[derive(Debug, thiserror::Error)]
#[error("{}{}: {message}", file.display(), at.map(|(l, c)| format!(":{l}:{c}")).unwrap_or_default())]
pub struct ScenarioError {
    /// The scenario file.
    pub file: PathBuf,
    /// Line and column (from 1), when the mistake has a place.
    pub at: Option<(usize, usize)>,
    /// What is wrong, and what was expected.
    pub message: String,
}

/// The JSON Schema of scenario files, for editor completion and validation.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(ScenarioFile);
    serde_json::to_string_pretty(&schema).expect("a schema serializes")
}

/// Reads and checks the scenario at `path`; `threads` is used when the file sets none.
pub fn load(path: &Path, threads: usize) -> Result<AttackPlan, ScenarioError> {
    Document::read(path)?.lower(&[], threads)
}

/// Checks scenario text read from `path` (which relative file paths are resolved against).
pub fn parse(source: &str, path: &Path, threads: usize) -> Result<AttackPlan, ScenarioError> {
    Document::parse(source.to_string(), path, &|name| std::env::var(name).ok())?.lower(&[], threads)
}

/// A scenario file read and parsed, its environment variables expanded: ready to be
/// lowered as written or with overrides (each variant of a matrix lowers the same document).
#[derive(Debug)]
pub struct Document {
    source: String,
    file: PathBuf,
    value: yaml_serde::Value,
    expanded: env::Expanded,
    matrix: Option<crate::plan::matrix::MatrixSection>,
}

impl Document {
    /// Reads the scenario at `path`, expanding `${VARIABLES}` from the environment.
    pub fn read(path: &Path) -> Result<Document, ScenarioError> {
        let refuse = |message: String| ScenarioError {
            file: path.to_path_buf(),
            at: None,
            message,
        };
        let size = std::fs::metadata(path)
            .map_err(|e| refuse(format!("cannot read the scenario: {e}")))?
            .len();
        if size > budget::MAX_FILE_BYTES {
            return Err(refuse(format!(
                "the scenario is {size} bytes, above the 16 MiB a scenario may be; put large bodies in body_file and data in a data set"
            )));
        }
        let source = std::fs::read_to_string(path)
            .map_err(|e| refuse(format!("cannot read the scenario: {e}")))?;
        Document::parse(source, path, &|name| std::env::var(name).ok())
    }

    /// Parses scenario text read from `path`, reading variables with `lookup`.
    pub fn parse(
        source: String,
        path: &Path,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Document, ScenarioError> {
        let lower = Lowering {
            source: &source,
            file: path,
            dir: Path::new("."),
            generators: 1,
        };
        // Counted before it is built: aliases could make a small file gigabytes.
        let used = std::cell::Cell::new(0);
        serde::de::DeserializeSeed::deserialize(
            budget::Budget::new(&used, budget::MAX_EXPANDED_BYTES),
            yaml_serde::Deserializer::from_str(&source),
        )
        .map_err(|e| lower.yaml_error(e))?;
        let mut value: yaml_serde::Value =
            yaml_serde::from_str(&source).map_err(|e| lower.yaml_error(e))?;
        let expanded = env::expand(&mut value, lookup)
            .map_err(|e| lower.error_near(&e.needle(), 0, e.to_string()))?;
        let matrix = match value.get("matrix") {
            None => None,
            Some(m) => Some(
                yaml_serde::from_value(m.clone())
                    .map_err(|e| lower.error_near("matrix", 0, format!("matrix: {e}")))?,
            ),
        };
        Ok(Document {
            file: path.to_path_buf(),
            source,
            value,
            expanded,
            matrix,
        })
    }

    /// `text` with the value of every environment variable the scenario used replaced by
    /// its reference, for anything printed from the plan (values can be secrets).
    pub fn scrub(&self, text: &str) -> String {
        self.expanded.scrub(text)
    }

    /// The scenario's `matrix:` section, when it has one.
    pub fn matrix(&self) -> Option<&crate::plan::matrix::MatrixSection> {
        self.matrix.as_ref()
    }

    /// Lowers the document with `overrides` applied, checked as the file would be.
    pub fn lower(
        &self,
        overrides: &[Override],
        threads: usize,
    ) -> Result<AttackPlan, ScenarioError> {
        self.lower_for(overrides, threads, 1)
    }

    /// Like [`lower`](Self::lower), for the whole of a test split over `generators` shards
    /// (its load checked against what they offer together).
    pub fn lower_for(
        &self,
        overrides: &[Override],
        threads: usize,
        generators: u32,
    ) -> Result<AttackPlan, ScenarioError> {
        let lower = Lowering {
            source: &self.source,
            file: &self.file,
            dir: self.file.parent().unwrap_or(Path::new(".")),
            generators,
        };
        // Values of variables and of overrides may be secrets: an error shows neither.
        let scrub = |mut e: ScenarioError| {
            e.message = overrides
                .iter()
                .fold(self.expanded.scrub(&e.message), |m, o| o.scrub(&m));
            e
        };
        let scenario: ScenarioFile = if overrides.is_empty() && !self.expanded.any() {
            // As written: errors carry the file's line and column.
            yaml_serde::from_str(&self.source).map_err(|e| lower.yaml_error(e))?
        } else {
            let mut value = self.value.clone();
            for o in overrides {
                o.apply(&mut value)
                    .map_err(|e| lower.error_at(None, format!("override {e}")))?;
            }
            yaml_serde::from_value(value).map_err(|e| {
                // A mistake in the file itself is placed where the file has it.
                let message = e.to_string();
                match yaml_serde::from_str::<ScenarioFile>(&self.source) {
                    Err(located) if located.to_string().contains(&message) => {
                        scrub(lower.yaml_error(located))
                    }
                    _ => scrub(lower.error_at(
                        None,
                        format!("{message} (after the overrides and environment variables)"),
                    )),
                }
            })?
        };
        lower.plan(scenario, threads).map_err(scrub)
    }
}

/// The context a scenario is lowered in: its text (to place errors) and its directory.
struct Lowering<'a> {
    source: &'a str,
    file: &'a Path,
    dir: &'a Path,
    /// Generators the test is split over (1 unless sharded).
    generators: u32,
}

impl Lowering<'_> {
    /// A YAML error placed at its line and column, which the message then leaves out.
    fn yaml_error(&self, e: yaml_serde::Error) -> ScenarioError {
        let at = e.location().map(|l| (l.line(), l.column()));
        let mut message = e.to_string();
        if let Some((line, column)) = at {
            let suffix = format!(" at line {line} column {column}");
            if let Some(cut) = message.find(&suffix) {
                message.replace_range(cut..cut + suffix.len(), "");
            }
        }
        self.error_at(at, message)
    }

    fn error_at(&self, at: Option<(usize, usize)>, message: String) -> ScenarioError {
        ScenarioError {
            file: self.file.to_path_buf(),
            at,
            message,
        }
    }

    /// An error placed at the `nth` occurrence (from 0) of `needle` in the file, when found.
    fn error_near(&self, needle: &str, nth: usize, message: String) -> ScenarioError {
        let at = self
            .source
            .match_indices(needle)
            .nth(nth)
            .map(|(offset, _)| {
                let before = &self.source[..offset];
                let line = before.matches('\n').count() + 1;
                let column = offset - before.rfind('\n').map_or(0, |i| i + 1) + 1;
                (line, column)
            });
        self.error_at(at, message)
    }

    /// Where a `{{ … }}` slot naming `inner` (a variable or a filter) starts in the file.
    fn find_slot(&self, inner: &str) -> Option<(usize, usize)> {
        let offset = self.source.match_indices("{{").map(|(o, _)| o).find(|&o| {
            let after = self.source[o + 2..].trim_start();
            after.starts_with(inner)
                || after
                    .split_once('|')
                    .is_some_and(|(_, f)| f.trim_start().starts_with(inner))
        })?;
        let before = &self.source[..offset];
        let line = before.matches('\n').count() + 1;
        Some((line, offset - before.rfind('\n').map_or(0, |i| i + 1) + 1))
    }

    fn path(&self, p: &Path) -> PathBuf {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.dir.join(p)
        }
    }

    fn plan(&self, s: ScenarioFile, threads: usize) -> Result<AttackPlan, ScenarioError> {
        let t = &s.target;
        let urls: Vec<&String> = match (&t.url, &t.urls) {
            (Some(url), None) => vec![url],
            (None, Some(urls)) if !urls.is_empty() => urls.iter().collect(),
            _ => {
                return Err(self.error_near(
                    "target",
                    0,
                    "target: give url (one instance) or urls (several), not both".into(),
                ))
            }
        };
        let mut targets = Vec::with_capacity(urls.len());
        for url in urls {
            targets.push(
                Target::parse(url).map_err(|e| self.error_near(url, 0, format!("target: {e}")))?,
            );
        }
        let target = targets.remove(0);
        let instances = targets;
        if s.requests.is_empty() {
            return Err(self.error_near(
                "requests",
                0,
                "requests: give at least one request".into(),
            ));
        }
        if s.requests.len() > usize::from(u16::MAX) {
            return Err(self.error_near(
                "requests",
                0,
                format!(
                    "requests: {} requests, but a mix can hold at most {}",
                    s.requests.len(),
                    u16::MAX
                ),
            ));
        }
        let data = self.data(&s.data)?;
        // Every captured name is a variable any template may use, after its capture.
        let mut variables: Vec<String> = Vec::new();
        let mut captured = std::collections::HashMap::new();
        for r in &s.requests {
            for name in r.capture.keys() {
                if !captured.contains_key(name) {
                    captured.insert(name.clone(), variables.len());
                    variables.push(name.clone());
                }
            }
        }
        let mut requests = Vec::with_capacity(s.requests.len());
        let mut first_named = std::collections::HashMap::with_capacity(s.requests.len());
        for (i, r) in s.requests.iter().enumerate() {
            if let Some(first) = first_named.insert(r.name.as_str(), i) {
                return Err(self.error_near(
                    &format!("name: {}", r.name),
                    1,
                    format!(
                        "requests[{i}]: the name {:?} is already used by requests[{first}]; each request needs its own name (its row in the report)",
                        r.name
                    ),
                ));
            }
            requests.push(self.request(&target, &t.headers, r, i, &data, &captured)?);
        }
        let duration =
            |text: &Option<String>| -> Result<Option<std::time::Duration>, ScenarioError> {
                text.as_deref()
                    .map(|t| file::duration(t).map_err(|e| self.error_near(t, 0, e)))
                    .transpose()
            };
        let (load, stages, stop_after) = match &s.load.stages {
            Some(stages) => {
                let stages = self.stages(stages, &s.load)?;
                // A staged load is sized by its peak: the most users or the highest rate.
                let peak = stages.iter().map(|x| x.from.max(x.to)).fold(0.0, f64::max);
                let load = match s.load.stages.iter().flatten().any(|x| x.users.is_some()) {
                    true => Load::Closed {
                        concurrency: (peak as u32).max(1),
                    },
                    false => Load::Open {
                        rate: Rate(if peak > 0.0 { peak } else { 1.0 }),
                    },
                };
                let total = stages.iter().map(|x| x.duration).sum();
                (load, stages, Some(total))
            }
            None => (self.load(&s.load)?, Vec::new(), duration(&s.load.duration)?),
        };
        let timeout = duration(&t.timeout)?;
        let connect_timeout = duration(&t.connect_timeout)?;
        if stop_after.is_none() && s.load.requests.is_none() {
            return Err(self.error_near(
                "load",
                0,
                "load: give duration or requests, so the run stops by itself".into(),
            ));
        }
        let mut slo = Vec::with_capacity(s.slo.len());
        for text in &s.slo {
            let parsed: Slo = text
                .parse()
                .map_err(|e: super::SloError| self.error_near(text, 0, e.to_string()))?;
            if let Some(name) = &parsed.request {
                if !requests.iter().any(|r: &NamedRequest| &r.name == name) {
                    return Err(self.error_near(text, 0, format!("SLO {text:?} is about request {name:?}, which the scenario does not have")));
                }
            }
            slo.push(parsed);
        }
        let abort = match &s.abort_when {
            Some(conditions) => {
                let text = conditions.text();
                super::parse_abort_when(&text).map_err(|e| {
                    // A list's item is found by its own text; joined, the first item's.
                    let near = match conditions {
                        file::Conditions::List(items) => {
                            items.iter().find(|i| super::parse_abort_when(i).is_err())
                        }
                        file::Conditions::Text(t) => Some(t),
                    };
                    self.error_near(
                        near.map_or(text.as_str(), String::as_str),
                        0,
                        format!("abort_when: {e}"),
                    )
                })?
            }
            None => Vec::new(),
        };
        let defaults = ConnectionOptions::default();
        let plan = AttackPlan {
            target,
            requests,
            load,
            arrivals: self.arrivals(&s.load, &load)?,
            stop: Stop {
                duration: stop_after,
                requests: s.load.requests,
            },
            connection: ConnectionOptions {
                http: match t.http {
                    HttpChoice::Auto => HttpVersion::Auto,
                    HttpChoice::Http1 => HttpVersion::Http1,
                    HttpChoice::Http2 => HttpVersion::Http2,
                },
                keepalive: t.keepalive.unwrap_or(defaults.keepalive),
                max_connections: t.max_connections.unwrap_or(defaults.max_connections),
                timeout: timeout.unwrap_or(defaults.timeout),
                connect_timeout: connect_timeout.unwrap_or(defaults.connect_timeout),
                ..defaults
            },
            tls: self.tls(&t.tls)?,
            // `run --max-rate` replaces it after lowering.
            max_rate: self.max_rate(&s.load, matches!(load, Load::Open { .. }))?,
            threads: s.threads.unwrap_or(threads),
            slo,
            abort,
            stages,
            instances,
            flows: Vec::new(),
            variables,
            login: None,
        };
        let mut plan = plan;
        plan.login = self.login(s.login.as_ref(), &plan.requests)?;
        if let Some(l) = &plan.login {
            // The login runs when a connection needs it, never as part of the mix.
            plan.requests[usize::from(l.request)].weight = 0;
            if plan.flows.is_empty() && s.flows.is_empty() && plan.weights().iter().all(|&w| w == 0)
            {
                return Err(self.error_near(
                    "login",
                    0,
                    "login: give at least one request besides the login".into(),
                ));
            }
        }
        let logged_in: Vec<usize> = plan
            .login
            .iter()
            .flat_map(|l| {
                plan.requests[usize::from(l.request)]
                    .captures
                    .iter()
                    .map(|c| c.slot)
            })
            .collect();
        plan.flows = self.flows(&s.flows, &plan.requests, &plan.variables, &logged_in)?;
        plan.validate_for(self.generators)
            .map_err(|e| self.error_at(None, e.to_string()))?;
        Ok(plan)
    }
}

#[cfg(test)]
mod tests;
