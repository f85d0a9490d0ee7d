//! Lowering one request: its path, headers and body as templates over its data set and the
//! captured variables, its captures and what it expects.

use super::file::{self, RequestSection};
use super::{Lowering, ScenarioError};
use crate::plan::{
    json_path, Capture, CaptureFrom, Context, DataBinding, Dataset, Expect, NamedRequest, Names,
    Pick, RequestSpec, Target, Template, TemplateError, Templates,
};
use std::collections::BTreeMap;
use std::sync::Arc;

impl Lowering<'_> {
    pub(super) fn request(
        &self,
        target: &Target,
        common: &std::collections::BTreeMap<String, String>,
        r: &RequestSection,
        i: usize,
        data: &BTreeMap<String, Arc<Dataset>>,
        captured: &std::collections::HashMap<String, usize>,
    ) -> Result<NamedRequest, ScenarioError> {
        let here = |message: String| {
            self.error_near(&r.path, 0, format!("requests[{i}] ({}): {message}", r.name))
        };
        if !r.path.starts_with('/') {
            return Err(here(format!("path {:?} must start with '/'", r.path)));
        }
        // The request's path goes after the target's path, and the target's query (an API
        // key in the URL, say) after the request's own.
        let (base, query) = match target.path_and_query.split_once('?') {
            Some((base, query)) => (base, Some(query)),
            None => (target.path_and_query.as_str(), None),
        };
        let mut path = format!("{}{}", base.trim_end_matches('/'), r.path);
        if let Some(query) = query {
            path.push(if r.path.contains('?') { '&' } else { '?' });
            path.push_str(query);
        }
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
        let names = Names {
            columns: binding.as_ref().map_or(&[], |b| b.dataset.columns()),
            captured,
        };
        let template = |text: &str, context: Context| {
            Template::parse_names(text, names, context).map_err(|e| {
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
        if let Err(e) = http::uri::PathAndQuery::try_from(path_template.sample().as_slice()) {
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
                let bytes = crate::plan::read_body_file(&full).map_err(|e| {
                    self.error_near(
                        &file.display().to_string(),
                        0,
                        format!("requests[{i}] ({}): body_file: {e}", r.name),
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
                // Names past the data set's columns are captured values, checked as they
                // arrive, not rows of a file.
                if let Some(row) = binding
                    .as_ref()
                    .filter(|b| column < b.dataset.columns().len())
                    .and_then(|b| b.dataset.line_break_in(column))
                {
                    return Err(self.error_near(
                        text,
                        0,
                        format!(
                            "requests[{i}] ({}): header {name} takes column {:?}, whose row {} holds a line break, which would end the header",
                            r.name,
                            names.columns[column],
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
                slot: captured[name],
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
        if let Some(t) = &templates {
            // What a send can fill to is known now: a batch of long values, escaped, must
            // not make one request take more memory than a body file may.
            let widest = |slot: usize| match (slot.checked_sub(data_columns), &binding) {
                (None, Some(b)) => b.dataset.widest(slot),
                _ => (crate::plan::MAX_CAPTURED, false),
            };
            let most = std::iter::once(&t.path)
                .chain(t.headers.iter().map(|(_, h)| h))
                .chain(&t.body)
                .map(|t| t.max_len(&widest))
                .fold(0, u64::saturating_add);
            if most > crate::plan::MAX_BODY_FILE {
                return Err(here(format!(
                    "its templates may fill to {} MiB (the longest values of its data and captures, its batches and escaping), above the {} MiB one request may take",
                    most >> 20,
                    crate::plan::MAX_BODY_FILE >> 20
                )));
            }
        }
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

    pub(super) fn json_checks(
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
}

/// The variables (slots) of captured values a request's templates use.
pub(super) fn captured_uses(
    r: &NamedRequest,
    data_columns: usize,
) -> impl Iterator<Item = usize> + '_ {
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
