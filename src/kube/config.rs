//! The ConfigMap (the scenario and the files that may be seen) and the Secret (what may
//! not), each checked against the 1 MiB an object holds.

use super::files::{self, Materials};
use super::naming::Naming;
use super::objects::{ConfigMap, Secret};
use super::KubeError;
use base64::Engine as _;
use std::collections::BTreeMap;

fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The ConfigMap `NAME-files`: the rewritten scenario and every file that is not secret,
/// text as text and anything else base64 (`binaryData`).
pub(super) fn config_map(naming: &Naming, materials: &Materials) -> Result<ConfigMap, KubeError> {
    let mut config = ConfigMap {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        metadata: naming.meta("files", "files"),
        data: BTreeMap::new(),
        binary_data: BTreeMap::new(),
    };
    config
        .data
        .insert(files::SCENARIO_KEY.into(), materials.scenario.clone());
    for f in &materials.files {
        match std::str::from_utf8(&f.bytes) {
            Ok(text) => config.data.insert(f.key.clone(), text.to_string()),
            Err(_) => config.binary_data.insert(f.key.clone(), base64(&f.bytes)),
        };
    }
    let bytes = materials.scenario.len() as u64
        + materials
            .files
            .iter()
            .map(|f| f.bytes.len() as u64)
            .sum::<u64>();
    if bytes > files::OBJECT_BYTES {
        return Err(KubeError::TooBig {
            object: "ConfigMap",
            what: "the scenario and its files together".into(),
            bytes,
        });
    }
    Ok(config)
}

/// The Secret `NAME-secret`: key files and the values of variables, base64 as the API keeps
/// them; none when the scenario has nothing secret.
pub(super) fn secret(naming: &Naming, materials: &Materials) -> Result<Option<Secret>, KubeError> {
    if materials.secret_files.is_empty() && materials.secret_env.is_empty() {
        return Ok(None);
    }
    let mut data = BTreeMap::new();
    for f in &materials.secret_files {
        data.insert(f.key.clone(), base64(&f.bytes));
    }
    for (var, value) in &materials.secret_env {
        data.insert(env_key(var), base64(value.as_bytes()));
    }
    let bytes = materials
        .secret_files
        .iter()
        .map(|f| f.bytes.len() as u64)
        .chain(materials.secret_env.iter().map(|(_, v)| v.len() as u64))
        .sum::<u64>();
    if bytes > files::OBJECT_BYTES {
        return Err(KubeError::TooBig {
            object: "Secret",
            what: "the secret files and values together".into(),
            bytes,
        });
    }
    Ok(Some(Secret {
        api_version: "v1".into(),
        kind: "Secret".into(),
        metadata: naming.meta("secret", "secret"),
        kind_of_secret: "Opaque".into(),
        data,
    }))
}

/// The Secret's key for a variable.
pub fn env_key(var: &str) -> String {
    format!("env.{var}")
}
