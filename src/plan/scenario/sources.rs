//! Lowering what requests draw on: data sets and TLS settings, with paths relative to the
//! scenario file.

use super::file;
use super::{Lowering, ScenarioError};
use crate::plan::{ClientIdentity, Dataset, TlsOptions};
use std::collections::BTreeMap;
use std::sync::Arc;

impl Lowering<'_> {
    pub(super) fn data(
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
                (None, None, Some(g)) => {
                    Dataset::generate(g.keys, g.value_bytes, g.prefix.as_deref())
                }
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

    pub(super) fn tls(&self, t: &file::TlsSection) -> Result<TlsOptions, ScenarioError> {
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
}
