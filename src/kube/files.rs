//! What the pods read: the scenario rewritten for the mount points, the files it names split
//! between the ConfigMap and the Secret, and every secret value moved out of its text into the
//! Secret, where the pod reads it back as an environment variable (`${NAME}`).

use super::secret_values;
use super::KubeError;
use crate::plan::scenario::env;
use crate::plan::secret_names::{is_secret_name, is_secret_path};
use crate::plan::Dataset;
use std::path::{Path, PathBuf};
use yaml_serde::Value;

/// Where the ConfigMap's files are mounted in a shard's pod.
pub const FILES_DIR: &str = "/headroom/files";
/// Where the Secret's files are mounted.
pub const SECRET_DIR: &str = "/headroom/secret";
/// The scenario's key in the ConfigMap.
pub const SCENARIO_KEY: &str = "scenario.yaml";
/// Most bytes a ConfigMap or a Secret holds (the API server refuses more).
pub const OBJECT_BYTES: u64 = 1024 * 1024;
/// What the names of secret values moved out of the scenario start with.
pub const MOVED_PREFIX: &str = "HEADROOM_SECRET_";

/// A file the scenario reads, as one key of the ConfigMap or the Secret.
#[derive(Debug, Clone)]
pub struct MountedFile {
    /// Its key, which is also its file name under the mount.
    pub key: String,
    /// Its content.
    pub bytes: Vec<u8>,
    /// Where it was read from.
    pub source: PathBuf,
    /// Which field of the scenario names it (`target.tls.key`).
    pub field: String,
}

/// Everything the pods read, split into what may be seen and what may not.
#[derive(Debug)]
pub struct Materials {
    /// The scenario as the pods read it: paths at the mounts, secrets as `${NAME}`.
    pub scenario: String,
    /// Files for the ConfigMap.
    pub files: Vec<MountedFile>,
    /// Files for the Secret (client keys, data sets with secret columns).
    pub secret_files: Vec<MountedFile>,
    /// Environment variables for the Secret, by name: the scenario's own `${VARIABLES}` and the
    /// secret values moved out of its text.
    pub secret_env: Vec<(String, String)>,
    /// Bytes of data files (both mounts), which each shard loads: memory is sized from it.
    pub data_bytes: u64,
}

/// Reads the scenario at `path` and what it names, with `${VARIABLES}` read by `lookup`.
pub fn gather(
    path: &Path,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Materials, KubeError> {
    let source = std::fs::read_to_string(path).map_err(|e| KubeError::Unreadable {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    let yaml = |e: yaml_serde::Error| KubeError::Yaml(e.to_string());
    let mut raw: Value = yaml_serde::from_str(&source).map_err(yaml)?;
    let mut expanded = raw.clone();
    env::expand(&mut expanded, lookup).map_err(|e| KubeError::Yaml(e.to_string()))?;
    let dir = path.parent().unwrap_or(Path::new("."));

    let mut out = Materials {
        scenario: String::new(),
        files: Vec::new(),
        secret_files: Vec::new(),
        secret_env: Vec::new(),
        data_bytes: 0,
    };
    let mut keys: Vec<(PathBuf, String, bool)> = Vec::new();
    let mut file_fields: Vec<Vec<Seg>> = Vec::new();
    for (at, kind) in file_fields_of(&expanded) {
        let Some(Value::String(named)) = get(&expanded, &at) else {
            continue;
        };
        let field = render(&at);
        let named = Path::new(named);
        let resolved = if named.is_absolute() {
            named.to_path_buf()
        } else {
            dir.join(named)
        };
        let refuse = |reason: String| KubeError::File {
            field: field.clone(),
            path: resolved.clone(),
            reason,
        };
        let size = std::fs::metadata(&resolved)
            .map_err(|e| refuse(e.to_string()))?
            .len();
        if size > OBJECT_BYTES {
            return Err(KubeError::TooBig {
                object: "ConfigMap or Secret",
                what: format!("{field} ({})", resolved.display()),
                bytes: size,
            });
        }
        let secret = match kind {
            FileKind::Key => true,
            FileKind::Plain => false,
            FileKind::Data => {
                let set = if matches!(at.last(), Some(Seg::Key(k)) if k == "jsonl") {
                    Dataset::jsonl(&resolved)
                } else {
                    Dataset::csv(&resolved)
                }
                .map_err(|e| refuse(e.to_string()))?;
                out.data_bytes += size;
                // A column named like a credential, or one of bodies (which may hold any).
                set.columns()
                    .iter()
                    .any(|c| is_secret_name(c) || is_secret_path(c))
            }
        };
        let mount = if let Some((_, key, was_secret)) =
            keys.iter().find(|(p, _, s)| *p == resolved && *s == secret)
        {
            mount_path(key, *was_secret)
        } else {
            let bytes = std::fs::read(&resolved).map_err(|e| refuse(e.to_string()))?;
            let key = unique_key(&resolved, &keys);
            keys.push((resolved.clone(), key.clone(), secret));
            let file = MountedFile {
                key: key.clone(),
                bytes,
                source: resolved.clone(),
                field,
            };
            match secret {
                true => out.secret_files.push(file),
                false => out.files.push(file),
            }
            mount_path(&key, secret)
        };
        set(&mut raw, &at, Value::String(mount));
        file_fields.push(at);
    }

    // Secret values written in the file itself go to the Secret; the text keeps a reference.
    out.secret_env = secret_values::move_out(&mut raw, &expanded, &file_fields, lookup);
    out.secret_env.sort();
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    out.scenario = crate::yaml::comment(&[
        format!(
            "{name} as headroom kube wrote it for the pods: files at their mounts, secret values"
        ),
        "replaced by environment variables that the Secret sets.".to_string(),
    ]) + &crate::yaml::to_string(&raw)
        .map_err(|e| KubeError::Yaml(e.to_string()))?;
    Ok(out)
}

/// Where a key is mounted.
fn mount_path(key: &str, secret: bool) -> String {
    format!("{}/{key}", if secret { SECRET_DIR } else { FILES_DIR })
}

/// A key for `path`: its file name with other characters than `-._a-zA-Z0-9` replaced,
/// numbered when another file (or the scenario) has it already.
fn unique_key(path: &Path, keys: &[(PathBuf, String, bool)]) -> String {
    let name: String = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into())
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '.' | '_' => c,
            _ => '_',
        })
        .collect();
    let name = match name.trim_matches('.') {
        "" => "file".to_string(),
        n => n.chars().take(200).collect(),
    };
    let taken = |k: &str| k == SCENARIO_KEY || keys.iter().any(|(_, key, _)| key == k);
    let mut key = name.clone();
    let mut n = 2;
    while taken(&key) {
        key = format!("{n}-{name}");
        n += 1;
    }
    key
}

/// A step into a YAML document.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Seg {
    /// A mapping's key.
    Key(String),
    /// A sequence's item, from 0.
    Index(usize),
}

/// What a file field holds, which decides its mount.
#[derive(Debug, Clone, Copy)]
enum FileKind {
    /// A certificate, a CA bundle, a body: the ConfigMap.
    Plain,
    /// A private key: the Secret.
    Key,
    /// A data set: the Secret when a column is named like a secret.
    Data,
}

/// Every field of the scenario that names a file.
fn file_fields_of(doc: &Value) -> Vec<(Vec<Seg>, FileKind)> {
    let key = |k: &str| Seg::Key(k.to_string());
    let mut out = Vec::new();
    for (field, kind) in [
        ("ca", FileKind::Plain),
        ("cert", FileKind::Plain),
        ("key", FileKind::Key),
    ] {
        out.push((vec![key("target"), key("tls"), key(field)], kind));
    }
    if let Some(Value::Sequence(requests)) = doc.get("requests") {
        for i in 0..requests.len() {
            out.push((
                vec![key("requests"), Seg::Index(i), key("body_file")],
                FileKind::Plain,
            ));
        }
    }
    if let Some(Value::Mapping(sets)) = doc.get("data") {
        for name in sets.keys().filter_map(Value::as_str) {
            for field in ["csv", "jsonl"] {
                out.push((vec![key("data"), key(name), key(field)], FileKind::Data));
            }
        }
    }
    out
}

/// The node at `at`, when there is one.
pub(super) fn get<'a>(doc: &'a Value, at: &[Seg]) -> Option<&'a Value> {
    at.iter().try_fold(doc, |node, seg| match seg {
        Seg::Key(k) => node.get(k.as_str()),
        Seg::Index(i) => node.get(*i),
    })
}

/// Puts `value` at `at`, when there is a node there.
pub(super) fn set(doc: &mut Value, at: &[Seg], value: Value) {
    let mut node = doc;
    for seg in at {
        let next = match seg {
            Seg::Key(k) => node.get_mut(k.as_str()),
            Seg::Index(i) => node.get_mut(*i),
        };
        match next {
            Some(n) => node = n,
            None => return,
        }
    }
    *node = value;
}

/// `requests[0].headers.Authorization`, as `--set` names a value.
pub(super) fn render(at: &[Seg]) -> String {
    let mut out = String::new();
    for seg in at {
        match seg {
            Seg::Key(k) if out.is_empty() => out.push_str(k),
            Seg::Key(k) => {
                out.push('.');
                out.push_str(k);
            }
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_render_as_set_names_them() {
        assert_eq!(
            render(&[
                Seg::Key("requests".into()),
                Seg::Index(2),
                Seg::Key("body".into())
            ]),
            "requests[2].body"
        );
    }

    #[test]
    fn credentials_in_urls_headers_and_bodies_leave_the_scenario() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.yaml");
        std::fs::write(
            &path,
            "target: {urls: ['https://u:pw-in-url-1@a/', 'https://b/'], headers: {Cookie: 'sid=cookie-2'}}\nrequests: [{name: p, path: /, body: 'secret-body-3 {{ x }}', expect: {body: ok}}]\nload: {rate: 1, duration: 1s}\n",
        )
        .unwrap();
        let m = gather(&path, &|_| None).unwrap();
        for secret in ["pw-in-url-1", "cookie-2", "secret-body-3"] {
            assert!(!m.scenario.contains(secret), "{secret} in {}", m.scenario);
            assert!(m.secret_env.iter().any(|(_, v)| v.contains(secret)));
        }
        // What is not a credential stays where it is.
        assert!(m.scenario.contains("https://b/"));
        assert!(m.scenario.contains("name: p"));
    }

    #[test]
    fn a_value_read_as_yaml_comes_back_as_written() {
        for v in [
            Value::from("0123"),
            Value::from("true"),
            Value::from("a: b"),
            Value::from(1234),
        ] {
            let text = yaml_serde::to_string(&v).unwrap();
            let back: Value = yaml_serde::from_str(text.trim_end()).unwrap();
            assert_eq!(back, v, "{text}");
        }
    }
}
