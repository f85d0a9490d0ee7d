//! Scenario files: the traffic of a run described once, in YAML, and lowered to a plan.
//!
//! Everything is checked before any request is sent, and a mistake is reported with the file,
//! line and column it is at.

mod file;

pub use file::ScenarioFile;

use super::{
    json_path, AttackPlan, Capture, CaptureFrom, ClientIdentity, ConnectionOptions, Context,
    DataBinding, Dataset, Expect, Flow, HttpVersion, Load, Login, NamedRequest, Pick, Rate,
    RequestSpec, Slo, Stage, Stop, Target, Template, TemplateError, Templates, TlsOptions,
};
use file::{HttpChoice, RequestSection};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
    let source = std::fs::read_to_string(path).map_err(|e| ScenarioError {
        file: path.to_path_buf(),
        at: None,
        message: format!("cannot read the scenario: {e}"),
    })?;
    parse(&source, path, threads)
}

/// Checks scenario text read from `path` (which relative file paths are resolved against).
pub fn parse(source: &str, path: &Path, threads: usize) -> Result<AttackPlan, ScenarioError> {
    let lower = Lowering {
        source,
        file: path,
        dir: path.parent().unwrap_or(Path::new(".")),
    };
    let scenario: ScenarioFile = yaml_serde::from_str(source).map_err(|e| {
        let at = e.location().map(|l| (l.line(), l.column()));
        let mut message = e.to_string();
        if let Some((line, column)) = at {
            let suffix = format!(" at line {line} column {column}");
            if let Some(cut) = message.find(&suffix) {
                message.replace_range(cut..cut + suffix.len(), "");
            }
        }
        lower.error_at(at, message)
    })?;
    lower.plan(scenario, threads)
}

/// The context a scenario is lowered in: its text (to place errors) and its directory.
struct Lowering<'a> {
    source: &'a str,
    file: &'a Path,
    dir: &'a Path,
}

impl Lowering<'_> {
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
        let data = self.data(&s.data)?;
        // Every captured name is a variable any template may use, after its capture.
        let mut variables: Vec<String> = Vec::new();
        for r in &s.requests {
            for name in r.capture.keys() {
                if !variables.contains(name) {
                    variables.push(name.clone());
                }
            }
        }
        let mut requests = Vec::with_capacity(s.requests.len());
        for (i, r) in s.requests.iter().enumerate() {
            if let Some(first) = s.requests[..i].iter().position(|o| o.name == r.name) {
                return Err(self.error_near(
                    &format!("name: {}", r.name),
                    1,
                    format!(
                        "requests[{i}]: the name {:?} is already used by requests[{first}]; each request needs its own name (its row in the report)",
                        r.name
                    ),
                ));
            }
            requests.push(self.request(&target, &t.headers, r, i, &data, &variables)?);
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
        let defaults = ConnectionOptions::default();
        let plan = AttackPlan {
            target,
            requests,
            load,
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
            threads: s.threads.unwrap_or(threads),
            slo,
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
        plan.validate()
            .map_err(|e| self.error_at(None, e.to_string()))?;
        Ok(plan)
    }

    fn load(&self, l: &file::LoadSection) -> Result<Load, ScenarioError> {
        match (l.rate, l.users) {
            (Some(rate), None) if rate.is_finite() && rate > 0.0 => {
                Ok(Load::Open { rate: Rate(rate) })
            }
            (Some(rate), None) => Err(self.error_near(
                "rate",
                0,
                format!("load.rate must be a positive number of requests per second, got {rate}"),
            )),
            (None, Some(0)) => {
                Err(self.error_near("users", 0, "load.users must be at least 1".into()))
            }
            (None, Some(users)) => Ok(Load::Closed { concurrency: users }),
            (Some(_), Some(_)) => Err(self.error_near(
                "load",
                0,
                "load: give rate (open model) or users (closed model), not both".into(),
            )),
            (None, None) => Err(self.error_near(
                "load",
                0,
                "load: give rate (requests per second, open model), users (closed model) or stages"
                    .into(),
            )),
        }
    }

    fn stages(
        &self,
        stages: &[file::StageSection],
        load: &file::LoadSection,
    ) -> Result<Vec<Stage>, ScenarioError> {
        if load.rate.is_some() || load.users.is_some() || load.duration.is_some() {
            return Err(self.error_near(
                "stages",
                0,
                "load: give stages, or rate/users with duration, not both (each stage has its own rate or users and duration)".into(),
            ));
        }
        let open = stages.iter().any(|s| s.rate.is_some());
        let mut out = Vec::with_capacity(stages.len());
        for (i, s) in stages.iter().enumerate() {
            let name = s.name.clone().unwrap_or_else(|| format!("stage {}", i + 1));
            let here = |message: String| {
                self.error_near(
                    &s.duration,
                    0,
                    format!("load.stages[{i}] ({name}): {message}"),
                )
            };
            let level = match (s.rate, s.users) {
                (Some(_), Some(_)) => return Err(here("give rate or users, not both".into())),
                (Some(rate), None) if open => rate,
                (None, Some(users)) if !open => users,
                (None, None) => {
                    return Err(here("give rate (requests per second) or users".into()))
                }
                _ => {
                    return Err(here(
                        "every stage must use the same model: all rate, or all users".into(),
                    ))
                }
            };
            let (from, to) = level.span();
            out.push(Stage {
                name: name.clone(),
                from,
                to,
                duration: file::duration(&s.duration).map_err(&here)?,
                warmup: s.warmup,
            });
        }
        if out.is_empty() {
            return Err(self.error_near(
                "stages",
                0,
                "load.stages: give at least one stage".into(),
            ));
        }
        Ok(out)
    }

    fn data(
        &self,
        sets: &BTreeMap<String, file::DataSection>,
    ) -> Result<BTreeMap<String, Arc<Dataset>>, ScenarioError> {
        let mut out = BTreeMap::new();
        for (name, d) in sets {
            let at = format!("{name}:");
            let fail = |e: String| self.error_near(&at, 0, format!("data.{name}: {e}"));
            let set = match (&d.csv, &d.jsonl, &d.generate) {
                (Some(p), None, None) => Dataset::csv(&self.path(p)),
                (None, Some(p), None) => Dataset::jsonl(&self.path(p)),
                (None, None, Some(g)) => Dataset::generate(g.keys, g.value_bytes),
                _ => return Err(fail("give one of csv, jsonl and generate".into())),
            }
            .map_err(|e| fail(e.to_string()))?;
            if set.rows() == 0 {
                return Err(fail("the data set has no rows".into()));
            }
            out.insert(name.clone(), Arc::new(set));
        }
        Ok(out)
    }

    fn flows(
        &self,
        sections: &[file::FlowSection],
        requests: &[NamedRequest],
        variables: &[String],
        logged_in: &[usize],
    ) -> Result<Vec<Flow>, ScenarioError> {
        let mut flows = Vec::with_capacity(sections.len());
        for (f, section) in sections.iter().enumerate() {
            let name = section
                .name
                .clone()
                .unwrap_or_else(|| format!("flow {}", f + 1));
            let think = match &section.think {
                Some(t) => file::duration(t).map_err(|e| self.error_near(t, 0, e))?,
                None => std::time::Duration::ZERO,
            };
            if section.steps.is_empty() {
                return Err(self.error_near(
                    "steps",
                    f,
                    format!("flows[{f}] ({name}): give at least one step"),
                ));
            }
            // What the login captures is there before any step.
            let mut set: Vec<bool> = (0..variables.len())
                .map(|v| logged_in.contains(&v))
                .collect();
            let mut steps = Vec::with_capacity(section.steps.len());
            for step in &section.steps {
                let index = requests
                    .iter()
                    .position(|r| &r.name == step)
                    .ok_or_else(|| {
                        self.error_near(
                            step,
                            0,
                            format!("flows[{f}] ({name}): no request named {step:?}"),
                        )
                    })?;
                let r = &requests[index];
                let data_columns = r.data.as_ref().map_or(0, |b| b.dataset.columns().len());
                for c in captured_uses(r, data_columns) {
                    if !set[c] {
                        return Err(self.error_near(
                            step,
                            0,
                            format!(
                                "flows[{f}] ({name}): step {step:?} uses {{{{ {} }}}} before any step of the flow captures it",
                                variables[c]
                            ),
                        ));
                    }
                }
                for c in &r.captures {
                    set[c.slot] = true;
                }
                steps.push(index as u16);
            }
            flows.push(Flow {
                name,
                weight: section.weight,
                think,
                steps,
            });
        }
        if flows.is_empty() {
            // Without flows, a request can only use a captured value it never gets.
            for r in requests {
                let data_columns = r.data.as_ref().map_or(0, |b| b.dataset.columns().len());
                if captured_uses(r, data_columns).any(|v| !logged_in.contains(&v)) {
                    return Err(self.error_near(
                        &r.name,
                        0,
                        format!("request {:?} uses a captured value, which only a flow step can pass to it: add flows", r.name),
                    ));
                }
            }
        }
        Ok(flows)
    }

    fn login(
        &self,
        section: Option<&file::LoginSection>,
        requests: &[NamedRequest],
    ) -> Result<Option<Login>, ScenarioError> {
        let Some(l) = section else {
            return Ok(None);
        };
        let index = requests
            .iter()
            .position(|r| r.name == l.request)
            .ok_or_else(|| {
                self.error_near(
                    &l.request,
                    0,
                    format!("login: no request named {:?}", l.request),
                )
            })?;
        if requests[index].captures.is_empty() {
            return Err(self.error_near(
                &l.request,
                0,
                format!("login: request {:?} captures nothing; give it capture: {{token: {{json: ...}}}}", l.request),
            ));
        }
        let refresh_after = match &l.refresh_after {
            Some(t) => Some(file::duration(t).map_err(|e| self.error_near(t, 0, e))?),
            None => None,
        };
        Ok(Some(Login {
            request: index as u16,
            refresh_after,
            refresh_on: l.refresh_on.clone().unwrap_or_else(|| vec![401]),
        }))
    }

    fn json_checks(
        &self,
        checks: &BTreeMap<String, serde_json::Value>,
        i: usize,
        name: &str,
    ) -> Result<Vec<(String, serde_json::Value)>, ScenarioError> {
        checks
            .iter()
            .map(|(path, want)| match json_path(path) {
                Some(_) => Ok((path.clone(), want.clone())),
                None => Err(self.error_near(
                    path,
                    0,
                    format!("requests[{i}] ({name}): expect.json: {path:?} is not a JSON path; write e.g. \"data.state\""),
                )),
            })
            .collect()
    }

    fn tls(&self, t: &file::TlsSection) -> Result<TlsOptions, ScenarioError> {
        let identity = match (&t.cert, &t.key) {
            (Some(cert), Some(key)) => Some(ClientIdentity {
                cert: self.path(cert),
                key: self.path(key),
            }),
            (None, None) => None,
            _ => {
                return Err(self.error_near(
                    "tls",
                    0,
                    "target.tls: give both cert and key for a client certificate".into(),
                ))
            }
        };
        Ok(TlsOptions {
            ca: t.ca.as_deref().map(|p| self.path(p)),
            identity,
            insecure: t.insecure,
            session_resumption: t.session_resumption.unwrap_or(true),
            server_name: t.server_name.clone(),
        })
    }

    fn request(
        &self,
        target: &Target,
        common: &std::collections::BTreeMap<String, String>,
        r: &RequestSection,
        i: usize,
        data: &BTreeMap<String, Arc<Dataset>>,
        variables: &[String],
    ) -> Result<NamedRequest, ScenarioError> {
        let here = |message: String| {
            self.error_near(&r.path, 0, format!("requests[{i}] ({}): {message}", r.name))
        };
        if !r.path.starts_with('/') {
            return Err(here(format!("path {:?} must start with '/'", r.path)));
        }
        let base = target.path_and_query.trim_end_matches('/');
        let path = format!("{base}{}", r.path);
        let binding =
            match &r.data {
                None => None,
                Some(name) => {
                    Some(DataBinding {
                        name: name.clone(),
                        dataset: data.get(name).cloned().ok_or_else(|| {
                            let known: Vec<&str> = data.keys().map(String::as_str).collect();
                            self.error_near(
                                &format!("data: {name}"),
                                0,
                                format!(
                            "requests[{i}] ({}): no data set named {name:?} (data: defines {})",
                            r.name,
                            if known.is_empty() { "none".into() } else { known.join(", ") }
                        ),
                            )
                        })?,
                        pick: match r.pick {
                            file::PickChoice::Sequential => Pick::Sequential,
                            file::PickChoice::Random => Pick::Random,
                            file::PickChoice::Unique => Pick::Unique,
                        },
                    })
                }
            };
        // A template's names are the data set's columns, then the flows' captured variables.
        let mut columns: Vec<String> = binding
            .as_ref()
            .map(|b| b.dataset.columns().to_vec())
            .unwrap_or_default();
        columns.extend(variables.iter().cloned());
        let template = |text: &str, context: Context| {
            Template::parse(text, &columns, context).map_err(|e| {
                let message = format!("requests[{i}] ({}): {e}", r.name);
                // A JSON body was re-serialized: find the slot itself in the file.
                let slot = match &e {
                    TemplateError::Undefined { name, .. } => Some(name.as_str()),
                    TemplateError::Filter { filter, .. } => Some(filter.as_str()),
                    TemplateError::Unclosed(_) => None,
                };
                match slot.and_then(|s| self.find_slot(s)) {
                    Some(at) => self.error_at(Some(at), message),
                    None => self.error_near(text, 0, message),
                }
            })
        };
        let path_template = template(&path, Context::Path)?;
        // The path must be valid with any value in its slots (they are percent-encoded).
        let mut probe = Vec::new();
        path_template.render(0, &|_, _, out: &mut Vec<u8>| out.push(b'x'), &mut probe);
        if let Err(e) = http::uri::PathAndQuery::try_from(probe.as_slice()) {
            return Err(here(format!(
                "path {:?} is not a valid path and query: {e}",
                r.path
            )));
        }
        let (body, content_type) = match (&r.body, &r.json, &r.body_file) {
            (None, None, None) => (bytes::Bytes::new(), None),
            (Some(text), None, None) => (bytes::Bytes::from(text.clone()), None),
            (None, Some(json), None) => (
                bytes::Bytes::from(serde_json::to_vec(json).expect("JSON values serialize")),
                Some("application/json"),
            ),
            (None, None, Some(file)) => {
                let full = self.path(file);
                let bytes = std::fs::read(&full).map_err(|e| {
                    self.error_near(
                        &file.display().to_string(),
                        0,
                        format!(
                            "requests[{i}] ({}): body_file {}: {e}",
                            r.name,
                            full.display()
                        ),
                    )
                })?;
                (bytes::Bytes::from(bytes), None)
            }
            _ => return Err(here("give at most one of body, json and body_file".into())),
        };
        // A request's own header replaces the target's of the same name.
        let mut headers: Vec<String> = common
            .iter()
            .filter(|(k, _)| !r.headers.keys().any(|own| own.eq_ignore_ascii_case(k)))
            .chain(&r.headers)
            .map(|(k, v)| format!("{k}: {v}"))
            .collect();
        if let Some(ct) = content_type {
            if !common
                .keys()
                .chain(r.headers.keys())
                .any(|k| k.eq_ignore_ascii_case("content-type"))
            {
                headers.push(format!("content-type: {ct}"));
            }
        }
        let mut spec =
            RequestSpec::parse(&r.method, &headers, body).map_err(|e| here(e.to_string()))?;
        spec.path = Some(path);
        // body_file is sent as it is; text and JSON bodies may hold templates.
        let body_context = match (&r.json, &r.body_file) {
            (Some(_), _) => Some(Context::Json),
            (None, Some(_)) => None,
            (None, None) => Some(Context::Verbatim),
        };
        let body_text = String::from_utf8_lossy(&spec.body).into_owned();
        let body_template = match body_context {
            Some(context) => template(&body_text, context)?,
            None => Template::parse("", &[], Context::Verbatim).expect("empty parses"),
        };
        let mut header_templates = Vec::with_capacity(spec.headers.len());
        for (name, value) in &spec.headers {
            let text = value.to_str().unwrap_or_default();
            let t = template(text, Context::Verbatim)?;
            for column in t.columns() {
                if let Some(row) = binding
                    .as_ref()
                    .and_then(|b| b.dataset.line_break_in(column))
                {
                    return Err(self.error_near(
                        text,
                        0,
                        format!(
                            "requests[{i}] ({}): header {name} takes column {:?}, whose row {} holds a line break, which would end the header",
                            r.name,
                            columns[column],
                            row + 1
                        ),
                    ));
                }
            }
            header_templates.push((name.clone(), t));
        }
        let varies = !path_template.is_static()
            || (body_context.is_some() && !body_template.is_static())
            || header_templates.iter().any(|(_, t)| !t.is_static());
        let mut captures = Vec::with_capacity(r.capture.len());
        for (name, c) in &r.capture {
            let at = |message: String| {
                self.error_near(
                    &format!("{name}:"),
                    0,
                    format!("requests[{i}] ({}): capture {name}: {message}", r.name),
                )
            };
            let from = match (&c.json, &c.header, &c.regex) {
                (Some(path), None, None) => CaptureFrom::Json(
                    json_path(path).ok_or_else(|| at(format!("{path:?} is not a JSON path; write e.g. \"id\" or \"data.items[0].id\"")))?,
                ),
                (None, Some(h), None) => CaptureFrom::Header(
                    http::HeaderName::from_bytes(h.trim().as_bytes())
                        .map_err(|_| at(format!("{h:?} is not a header name")))?,
                ),
                (None, None, Some(re)) => CaptureFrom::Regex(
                    regex::bytes::Regex::new(re).map_err(|e| at(format!("invalid regex: {e}")))?,
                ),
                _ => return Err(at("give one of json, header and regex".into())),
            };
            captures.push(Capture {
                name: name.clone(),
                slot: variables
                    .iter()
                    .position(|v| v == name)
                    .expect("collected above"),
                from,
            });
        }
        let data_columns = binding.as_ref().map_or(0, |b| b.dataset.columns().len());
        let uses_data = std::iter::once(&path_template)
            .chain(header_templates.iter().map(|(_, t)| t))
            .chain(body_context.map(|_| &body_template))
            .flat_map(|t| t.columns())
            .any(|c| c < data_columns);
        if binding.is_some() && !uses_data {
            return Err(here(format!(
                "the request names data {:?} but uses none of it: put {{{{ column }}}} in its path, headers or body",
                r.data.as_deref().unwrap_or_default()
            )));
        }
        let templates = varies.then(|| Templates {
            path: path_template,
            headers: header_templates,
            body: body_context.map(|_| body_template),
        });
        Ok(NamedRequest {
            templates,
            data: binding,
            captures,
            name: r.name.clone(),
            weight: r.weight,
            spec,
            expect: match &r.expect.status {
                None => Expect {
                    body: r.expect.body.clone(),
                    json: self.json_checks(&r.expect.json, i, &r.name)?,
                    ..Expect::default()
                },
                Some(patterns) => Expect {
                    body: r.expect.body.clone(),
                    json: self.json_checks(&r.expect.json, i, &r.name)?,
                    status: patterns
                        .iter()
                        .map(|p| {
                            file::status_range(p).map_err(|e| {
                                let text = match p {
                                    file::StatusPattern::Code(c) => c.to_string(),
                                    file::StatusPattern::Text(t) => t.clone(),
                                };
                                self.error_near(
                                    &text,
                                    0,
                                    format!("requests[{i}] ({}): {e}", r.name),
                                )
                            })
                        })
                        .collect::<Result<_, _>>()?,
                },
            },
        })
    }
}

/// The variables (slots) of captured values a request's templates use.
fn captured_uses(r: &NamedRequest, data_columns: usize) -> impl Iterator<Item = usize> + '_ {
    r.templates.iter().flat_map(move |t| {
        std::iter::once(&t.path)
            .chain(t.headers.iter().map(|(_, t)| t))
            .chain(&t.body)
            .flat_map(move |t| {
                t.columns()
                    .filter(move |&c| c >= data_columns)
                    .map(move |c| c - data_columns)
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
target:
  url: https://127.0.0.1:8443/v1
  tls:
    ca: certs/ca.pem
    cert: certs/client.pem
    key: certs/client.key
  headers:
    X-Team: perf
  timeout: 5s
requests:
  - name: read
    path: /kv/key1?consistent=1
    weight: 95
  - name: write
    method: put
    path: /kv/key1
    json: {value: "abc"}
    weight: 5
    expect:
      status: ["2xx", 409]
  - name: bad credentials
    path: /kv/key1
    headers:
      Authorization: Bearer wrong
    weight: 0
    expect:
      status: [401, "403"]
load:
  rate: 200
  duration: 30s
slo:
  - p95 < 250ms
  - "read: p99 < 50ms"
  - error_rate < 1%
"#;

    fn parse_at(source: &str) -> Result<AttackPlan, ScenarioError> {
        parse(source, Path::new("/scenarios/kv.yaml"), 2)
    }

    #[test]
    fn a_scenario_lowers_to_a_plan() {
        let plan = parse_at(GOOD).unwrap();
        assert_eq!(plan.requests.len(), 3);
        let write = &plan.requests[1];
        assert_eq!(write.spec.method, http::Method::PUT);
        assert_eq!(write.spec.path.as_deref(), Some("/v1/kv/key1"));
        assert_eq!(&write.spec.body[..], br#"{"value":"abc"}"#);
        assert!(write
            .spec
            .headers
            .iter()
            .any(|(k, v)| k == "content-type" && v == "application/json"));
        assert!(write.expect.allows(204) && write.expect.allows(409) && !write.expect.allows(404));
        assert_eq!(
            plan.requests[0].spec.path.as_deref(),
            Some("/v1/kv/key1?consistent=1")
        );
        assert!(plan.requests[0].expect.allows(301) && !plan.requests[0].expect.allows(401));
        assert!(plan.requests[2].expect.allows(403));
        assert_eq!(plan.weights(), vec![95, 5, 0]);
        assert_eq!(plan.load, Load::Open { rate: Rate(200.0) });
        assert_eq!(plan.connection.timeout, std::time::Duration::from_secs(5));
        let id = plan.tls.identity.as_ref().unwrap();
        assert_eq!(id.key, Path::new("/scenarios/certs/client.key"));
        assert_eq!(plan.slo.len(), 3);
        assert_eq!(plan.slo[1].request.as_deref(), Some("read"));
        assert_eq!(plan.threads, 2);
    }

    /// The error for `GOOD` with `from` replaced by `to`, and where `needle` (its `nth`
    /// occurrence) sits in that text, as ":line:column:".
    fn error_at(from: &str, to: &str, needle: &str, nth: usize) -> (String, String) {
        let source = GOOD.replace(from, to);
        assert_ne!(source, GOOD, "{from:?} is in the scenario");
        let offset = source
            .match_indices(needle)
            .nth(nth)
            .expect("needle present")
            .0;
        let before = &source[..offset];
        let line = before.matches('\n').count() + 1;
        let column = offset - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        let e = parse_at(&source).unwrap_err().to_string();
        (e, format!(":{line}:{column}: "))
    }

    #[test]
    fn mistakes_are_reported_at_their_line_and_column() {
        let cases = [
            (
                "    weight: 95",
                "    wieght: 95",
                "wieght",
                0,
                "unknown field `wieght`, expected one of",
            ),
            ("rate: 200", "rate: fast", "fast", 0, "invalid type"),
            (
                "duration: 30s",
                "duration: 30 parsecs",
                "30 parsecs",
                0,
                "invalid duration",
            ),
            (
                "[\"2xx\", 409]",
                "[\"2xx\", \"6xx\"]",
                "6xx",
                0,
                "invalid status \"6xx\"",
            ),
            (
                "name: write",
                "name: read",
                "name: read",
                1,
                "already used by requests[0]",
            ),
            (
                "read: p99 < 50ms",
                "reed: p99 < 50ms",
                "reed:",
                0,
                "\"reed\", which the scenario does not have",
            ),
            ("p95 < 250ms", "p95 > > 250ms", "p95 > >", 0, "e.g."),
            (
                "json: {value: \"abc\"}",
                "body_file: missing.json",
                "missing.json",
                0,
                "/scenarios/missing.json",
            ),
            (
                "url: https://127.0.0.1:8443/v1",
                "url: ftp://x",
                "ftp://x",
                0,
                "target: invalid URL",
            ),
        ];
        for (from, to, needle, nth, says) in cases {
            let (e, at) = error_at(from, to, needle, nth);
            assert!(e.starts_with("/scenarios/kv.yaml"), "{e}");
            assert!(e.contains(&at), "{to:?}: expected {at} in {e}");
            assert!(e.contains(says), "{to:?}: expected {says:?} in {e}");
        }
        let e = parse_at(&GOOD.replace("  rate: 200\n", ""))
            .unwrap_err()
            .to_string();
        assert!(e.contains("give rate"), "{e}");
    }

    #[test]
    fn the_schema_describes_every_section() {
        let schema = json_schema();
        for field in [
            "target",
            "requests",
            "load",
            "slo",
            "expect",
            "weight",
            "body_file",
        ] {
            assert!(schema.contains(&format!("\"{field}\"")), "{field}");
        }
    }
}

#[cfg(test)]
mod stage_tests {
    use super::*;

    fn plan(load: &str) -> Result<AttackPlan, String> {
        let source = format!(
            "target: {{url: 'http://127.0.0.1:9'}}\nrequests: [{{name: a, path: /}}]\nload:\n{load}"
        );
        parse(&source, Path::new("s.yaml"), 1).map_err(|e| e.to_string())
    }

    #[test]
    fn stages_lower_to_a_staged_plan_sized_by_their_peak() {
        let p = plan("  stages:\n    - {rate: [0, 500], duration: 1m}\n    - {name: hold, rate: 500, duration: 5m}\n").unwrap();
        assert_eq!(p.load, Load::Open { rate: Rate(500.0) });
        assert_eq!(p.stop.duration, Some(std::time::Duration::from_secs(360)));
        assert_eq!(
            (p.stages[0].name.as_str(), p.stages[0].from, p.stages[0].to),
            ("stage 1", 0.0, 500.0)
        );
        assert_eq!(p.stages[1].name, "hold");
        let p = plan("  stages:\n    - {users: [1, 20], duration: 30s}\n").unwrap();
        assert_eq!(p.load, Load::Closed { concurrency: 20 });
    }

    #[test]
    fn stages_that_cannot_run_are_refused() {
        let e = plan("  rate: 10\n  stages:\n    - {rate: 5, duration: 1s}\n").unwrap_err();
        assert!(e.contains("not both"), "{e}");
        let e = plan("  stages:\n    - {rate: 5, duration: 1s}\n    - {users: 5, duration: 1s}\n")
            .unwrap_err();
        assert!(e.contains("same model") && e.contains("s.yaml:5:"), "{e}");
        let e = plan("  stages:\n    - {users: 2.5, duration: 1s}\n").unwrap_err();
        assert!(e.contains("whole number"), "{e}");
        let e = plan("  stages:\n    - {rate: 0, duration: 1s}\n").unwrap_err();
        assert!(e.contains("send nothing"), "{e}");
        let e = plan("  stages:\n    - {rate: 5, duration: soon}\n").unwrap_err();
        assert!(e.contains("invalid duration"), "{e}");
    }
}

#[cfg(test)]
mod instance_tests {
    use super::*;

    fn plan(target: &str) -> Result<AttackPlan, String> {
        let source = format!(
            "target: {target}\nrequests: [{{name: a, path: /}}]\nload: {{rate: 1, duration: 1s}}\n"
        );
        parse(&source, Path::new("i.yaml"), 1).map_err(|e| e.to_string())
    }

    #[test]
    fn instances_share_scheme_and_path_and_are_given_one_way() {
        let p = plan("{urls: ['http://127.0.0.1:1/v1', 'http://127.0.0.1:2/v1']}").unwrap();
        assert_eq!(p.targets().count(), 2);
        assert_eq!(p.instances[0].port, 2);
        let e = plan("{urls: ['http://127.0.0.1:1/v1', 'https://127.0.0.1:2/v1']}").unwrap_err();
        assert!(e.contains("share scheme and path"), "{e}");
        let e = plan("{url: 'http://a', urls: ['http://b']}").unwrap_err();
        assert!(e.contains("not both"), "{e}");
        let e = plan("{urls: []}").unwrap_err();
        assert!(e.contains("give url"), "{e}");
    }
}

#[cfg(test)]
mod flow_tests {
    use super::*;

    fn plan(rest: &str) -> Result<AttackPlan, String> {
        let source = format!(
            "target: {{url: 'http://127.0.0.1:9'}}\nload: {{users: 1, requests: 1}}\n{rest}"
        );
        parse(&source, Path::new("f.yaml"), 1).map_err(|e| e.to_string())
    }

    const REQUESTS: &str = "requests:\n  - {name: create, method: POST, path: /k, capture: {id: {json: data.id}}}\n  - {name: read, path: '/k/{{ id }}'}\n";

    #[test]
    fn flows_lower_with_their_steps_and_variables() {
        let p = plan(&format!(
            "{REQUESTS}flows:\n  - {{steps: [create, read], think: 1s}}\n"
        ))
        .unwrap();
        assert_eq!(p.variables, ["id"]);
        assert_eq!(p.flows[0].steps, [0, 1]);
        assert_eq!(p.flows[0].name, "flow 1");
        assert_eq!(p.flows[0].think, std::time::Duration::from_secs(1));
        assert_eq!(p.requests[0].captures[0].slot, 0);
    }

    #[test]
    fn a_value_used_before_it_is_captured_is_refused() {
        let e = plan(&format!(
            "{REQUESTS}flows:\n  - {{steps: [read, create]}}\n"
        ))
        .unwrap_err();
        assert!(
            e.contains("uses {{ id }} before any step of the flow captures it"),
            "{e}"
        );
        let e = plan(REQUESTS).unwrap_err();
        assert!(e.contains("only a flow step can pass"), "{e}");
        let e = plan(&format!(
            "{REQUESTS}flows:\n  - {{steps: [create, raed]}}\n"
        ))
        .unwrap_err();
        assert!(
            e.contains("no request named \"raed\"") && e.contains("f.yaml:"),
            "{e}"
        );
        let e = plan("requests:\n  - {name: c, path: /, capture: {x: {json: 'a..b'}}}\nflows: [{steps: [c]}]\n")
            .unwrap_err();
        assert!(e.contains("not a JSON path"), "{e}");
    }
}
