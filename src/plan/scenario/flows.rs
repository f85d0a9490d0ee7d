//! Lowering flows and the login: steps by request name, and which captured values each step
//! may use by then.

use super::file;
use super::request::captured_uses;
use super::{Lowering, ScenarioError};
use crate::plan::{Flow, Login, NamedRequest};

impl Lowering<'_> {
    pub(super) fn flows(
        &self,
        sections: &[file::FlowSection],
        requests: &[NamedRequest],
        variables: &[String],
        logged_in: &[usize],
    ) -> Result<Vec<Flow>, ScenarioError> {
        let mut flows = Vec::with_capacity(sections.len());
        let by_name: std::collections::HashMap<&str, usize> = requests
            .iter()
            .enumerate()
            .map(|(i, r)| (r.name.as_str(), i))
            .collect();
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
            let mut set: std::collections::HashSet<usize> = logged_in.iter().copied().collect();
            let mut steps = Vec::with_capacity(section.steps.len());
            for step in &section.steps {
                let index = by_name.get(step.as_str()).copied().ok_or_else(|| {
                    self.error_near(
                        step,
                        0,
                        format!("flows[{f}] ({name}): no request named {step:?}"),
                    )
                })?;
                let r = &requests[index];
                let data_columns = r.data.as_ref().map_or(0, |b| b.dataset.columns().len());
                for c in captured_uses(r, data_columns) {
                    if !set.contains(&c) {
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
                set.extend(r.captures.iter().map(|c| c.slot));
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

    pub(super) fn login(
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
}
