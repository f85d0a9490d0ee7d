//! `headroom import`: a scenario file made from what a team already has (a browser's HAR
//! file, curl command lines, an OpenAPI 3 document), for the user to edit and then run.
//!
//! Each source (`har`, `curl`, `openapi`) reads its input into [`Draft`] requests; `assemble`
//! turns those into the scenario file model ([`ScenarioFile`], the type the loader reads),
//! with credentials replaced by `${HEADROOM_…}` variables (`secrets`) and bodies set aside as
//! files; `writer` writes it out. The values of credentials are held in memory only while
//! importing: they are never written, printed or put in an error.

pub mod curl;
pub(crate) mod draft;
pub mod har;
pub mod openapi;
mod secrets;
mod staging;
mod writer;

pub use draft::{Body, Draft, Origin};
pub use writer::{render, write, Written};

use crate::plan::scenario::file::{
    ExpectSection, LoadSection, RequestSection, ScenarioFile, StatusPattern, TargetSection,
};
use secrets::Secrets;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The largest input file read (a HAR file, an OpenAPI document, a file of curl lines).
pub const MAX_INPUT_BYTES: u64 = 64 << 20;

/// The most an import writes in body files, all together: as much as it reads.
pub const MAX_OUTPUT_BYTES: u64 = MAX_INPUT_BYTES;

/// Why an import failed. Messages name places and fields, never the values of headers,
/// query parameters or bodies.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// The input file could not be read.
    #[error("cannot read {path}: {reason}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why (the system's error).
        reason: String,
    },
    /// The input is a device, FIFO, socket or directory: one that could block or never end.
    #[error("{0} is not a regular file (a FIFO, device, socket or directory); save what it gives to a file and import that")]
    NotAFile(PathBuf),
    /// The input is larger than [`MAX_INPUT_BYTES`].
    #[error("{path} is {size} bytes, above the {limit} bytes an import reads; cut it down (e.g. save only the page's requests)")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
        /// The bound.
        limit: u64,
    },
    /// The input is not well-formed: where, and what is wrong.
    #[error("{source_name}{}: {message}", at.map(|(l, c)| format!(":{l}:{c}")).unwrap_or_default())]
    Malformed {
        /// The file (or `curl line N`).
        source_name: String,
        /// Line and column, from 1, when known.
        at: Option<(usize, usize)>,
        /// What is wrong.
        message: String,
    },
    /// The input is well-formed but not something headroom can import.
    #[error("{0}")]
    Unsupported(String),
    /// Nothing was left to import.
    #[error("nothing to import: {0}")]
    Empty(String),
    /// The scenario or a body file could not be written.
    #[error("cannot write {path}: {reason}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A stop signal came before the files were in place: nothing was written.
    #[error("stopped before the scenario was written; nothing was written")]
    Stopped,
    /// The output exists and `--force` was not given.
    #[error("{0} already exists; give --force to overwrite it, or another --out directory")]
    Exists(PathBuf),
}

/// A variable the written scenario needs set before it runs: a credential taken out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variable {
    /// The environment variable, e.g. `HEADROOM_AUTHORIZATION`.
    pub name: String,
    /// What it stands for, e.g. `the Authorization header's Bearer credential (GET /me)`.
    pub what: String,
}

/// A scenario made from an import, not yet written.
#[derive(Debug)]
pub struct Imported {
    /// The scenario, as the loader reads it.
    pub scenario: ScenarioFile,
    /// Body files by path relative to the scenario (`bodies/NAME.json`), and their bytes.
    pub bodies: Vec<(PathBuf, Vec<u8>)>,
    /// Variables to set before the run.
    pub variables: Vec<Variable>,
    /// What the import left out or changed, one line each (for the user and the file).
    pub notes: Vec<String>,
    /// Where it came from, for the file's first comment (`curl lines`, `page.har`).
    pub origin: String,
}

/// Turns `drafts` (all to `origin`) into a scenario: names, secrets taken out, bodies set
/// aside, identical requests folded into one with a weight, headers every request shares
/// moved to the target.
pub fn assemble(
    origin: &Origin,
    drafts: Vec<Draft>,
    source: &str,
    notes: Vec<String>,
) -> Result<Imported, ImportError> {
    if drafts.is_empty() {
        return Err(ImportError::Empty(format!(
            "{source} has no request to keep"
        )));
    }
    let label = |draft: &Draft| {
        draft
            .name
            .clone()
            .unwrap_or_else(|| format!("{} {}", draft.method, draft.path_only()))
    };
    // Twice: the first pass finds every credential, so that the second can also take a value
    // out where a later request's name for it is not seen (a session id in a Referer).
    let mut secrets = Secrets::default();
    for draft in &drafts {
        secrets.take_out(
            &label(draft),
            draft.path.clone(),
            draft.headers.clone(),
            draft.body.clone(),
        );
    }
    if !secrets.seal() {
        return Err(ImportError::Unsupported(format!(
            "{source} holds too many credentials to take out of the text around them; import a part of it"
        )));
    }
    let mut notes = notes;
    let mut requests: Vec<(RequestSection, Option<Vec<u8>>)> = Vec::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut names: BTreeMap<String, u32> = BTreeMap::new();
    for draft in drafts {
        let raw = label(&draft);
        let (path, headers, body) = secrets.take_out(&raw, draft.path, draft.headers, draft.body);
        // A name is scenario text (expanded) and goes into every report: no credential, and
        // nothing read as a variable.
        let label = secrets.label(&raw).replace("${", "$${");
        // The same request again (a page that fetches a thing twice) is more weight.
        let key = format!("{}\n{path}\n{headers:?}\n{body:?}", draft.method);
        if let Some(&i) = seen.get(&key) {
            requests[i].0.weight += 1;
            continue;
        }
        let count = names.entry(label.clone()).or_insert(0);
        *count += 1;
        let name = match *count {
            1 => label,
            n => format!("{label} ({n})"),
        };
        let (inline, file) = match body {
            None => (None, None),
            Some(BodyOut::Inline(text)) => (Some(text), None),
            Some(BodyOut::File(bytes)) => (None, Some(bytes)),
        };
        let expect = ExpectSection {
            status: draft
                .expect
                .map(|codes| codes.into_iter().map(StatusPattern::Code).collect()),
            ..ExpectSection::default()
        };
        seen.insert(key, requests.len());
        requests.push((
            RequestSection {
                name,
                method: draft.method,
                path,
                headers,
                body: inline,
                json: None,
                body_file: None,
                weight: 1,
                expect,
                data: None,
                pick: Default::default(),
                capture: BTreeMap::new(),
            },
            file,
        ));
    }
    let common = hoist_common_headers(&mut requests);
    let mut bodies = Vec::new();
    let mut files: BTreeMap<String, u32> = BTreeMap::new();
    let mut sections = Vec::with_capacity(requests.len());
    for (mut r, file) in requests {
        if let Some(bytes) = file {
            let stem = file_stem(&r.name);
            let n = files.entry(stem.clone()).or_insert(0);
            *n += 1;
            let stem = if *n == 1 { stem } else { format!("{stem}-{n}") };
            let ext =
                extension(r.headers.iter().find_map(|(k, v)| {
                    k.eq_ignore_ascii_case("content-type").then_some(v.as_str())
                }));
            let path = PathBuf::from("bodies").join(format!("{stem}.{ext}"));
            r.body_file = Some(path.clone());
            bodies.push((path, bytes));
        }
        sections.push(r);
    }
    if let Some(first) = secrets.dropped_bodies().first() {
        let n = secrets.dropped_bodies().len();
        notes.push(format!(
            "left out the body of {}{}: it holds a credential taken out elsewhere and is not text, so it cannot refer to the variable; add it by hand",
            secrets.label(first),
            if n > 1 { format!(" and {} more", n - 1) } else { String::new() }
        ));
    }
    let body_bytes: usize = bodies
        .iter()
        .map(|(_, b): &(PathBuf, Vec<u8>)| b.len())
        .sum();
    if body_bytes as u64 > MAX_OUTPUT_BYTES {
        return Err(ImportError::Unsupported(format!(
            "{source} gives {body_bytes} bytes of body files, above the {MAX_OUTPUT_BYTES} an import writes; import a part of it"
        )));
    }
    if sections.len() > usize::from(u16::MAX) {
        return Err(ImportError::Unsupported(format!(
            "{source} gives {} distinct requests, above the 65,535 a scenario may have; import a part of it",
            sections.len()
        )));
    }
    Ok(Imported {
        scenario: ScenarioFile {
            target: TargetSection {
                url: Some(origin.url()),
                urls: None,
                tls: crate::plan::scenario::file::TlsSection {
                    insecure: origin.insecure,
                    ..Default::default()
                },
                http: origin.http,
                headers: common,
                timeout: None,
                connect_timeout: None,
                keepalive: None,
                max_connections: None,
            },
            requests: sections,
            load: LoadSection {
                rate: Some(crate::plan::scenario::file::RateValue::PerSecond(5.0)),
                max_rate: None,
                users: None,
                duration: Some("30s".into()),
                requests: None,
                stages: None,
                arrivals: None,
                seed: None,
            },
            slo: Vec::new(),
            abort_when: None,
            data: BTreeMap::new(),
            login: None,
            flows: Vec::new(),
            threads: None,
            matrix: None,
        },
        bodies,
        variables: secrets.variables(),
        notes,
        origin: source.to_string(),
    })
}

/// A body as it goes into the scenario: inline text when a credential in it became a
/// variable (variables are expanded in scenario text, not in body files), else a file.
#[derive(Debug, Clone, PartialEq, Eq)]
enum BodyOut {
    Inline(String),
    File(Vec<u8>),
}

/// Headers with the same value in every request (two or more), moved to the target.
fn hoist_common_headers(
    requests: &mut [(RequestSection, Option<Vec<u8>>)],
) -> BTreeMap<String, String> {
    let mut common = BTreeMap::new();
    if requests.len() < 2 {
        return common;
    }
    for (name, value) in &requests[0].0.headers {
        // Content-Type belongs with the body it describes.
        if name.eq_ignore_ascii_case("content-type") {
            continue;
        }
        if requests
            .iter()
            .all(|(r, _)| r.headers.get(name) == Some(value))
        {
            common.insert(name.clone(), value.clone());
        }
    }
    for (r, _) in requests.iter_mut() {
        r.headers.retain(|k, _| !common.contains_key(k));
    }
    common
}

/// `POST /api/items` → `post-api-items`: a file name made of the request's name.
fn file_stem(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
        if out.len() >= 60 {
            break;
        }
    }
    let out = out.trim_matches('-').to_string();
    if out.is_empty() {
        "body".into()
    } else {
        out
    }
}

/// The body file's extension from its content type.
fn extension(content_type: Option<&str>) -> &'static str {
    let t = content_type.unwrap_or("").to_ascii_lowercase();
    if t.contains("json") {
        "json"
    } else if t.contains("x-www-form-urlencoded") {
        "form"
    } else if t.contains("xml") {
        "xml"
    } else if t.starts_with("text/") {
        "txt"
    } else {
        "bin"
    }
}

/// Reads an input file of at most [`MAX_INPUT_BYTES`] as text. Only a regular file: a FIFO
/// would block the import until something writes to it (and a device never ends), so it is
/// refused before a byte is read, by an open that cannot block.
pub fn read_input(path: &std::path::Path) -> Result<String, ImportError> {
    use std::io::Read;
    let read_error = |e: std::io::Error| ImportError::Read {
        path: path.to_path_buf(),
        reason: e.to_string(),
    };
    let Some((file, len)) = crate::plan::regular_file::open_regular(path).map_err(read_error)?
    else {
        return Err(ImportError::NotAFile(path.to_path_buf()));
    };
    if len > MAX_INPUT_BYTES {
        return Err(ImportError::TooLarge {
            path: path.to_path_buf(),
            size: len,
            limit: MAX_INPUT_BYTES,
        });
    }
    let mut bytes = Vec::new();
    // Bounded again while reading: the file may grow after the size was taken.
    file.take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(read_error)?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(ImportError::TooLarge {
            path: path.to_path_buf(),
            size: bytes.len() as u64,
            limit: MAX_INPUT_BYTES,
        });
    }
    String::from_utf8(bytes).map_err(|e| ImportError::Malformed {
        source_name: path.display().to_string(),
        at: None,
        message: format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
    })
}

/// A serde error's message with the values it quotes taken out (`invalid type: string
/// "s3cret"`, `invalid type: integer `1234``): only the shape of the mistake is told. Field
/// names (`missing field `url``) stay.
pub(crate) fn without_values(message: &str) -> String {
    static FOUND: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let found = FOUND.get_or_init(|| {
        regex::Regex::new(r"(invalid (?:type|value|length): [a-z ]*?) ?(?:`[^`]*`|'[^']*')")
            .expect("a valid pattern")
    });
    let message = found.replace_all(message, "$1 (value not shown)");
    let mut out = String::with_capacity(message.len());
    let mut quoted = false;
    for c in message.chars() {
        if c == '"' {
            if !quoted {
                out.push_str("(value not shown)");
            }
            quoted = !quoted;
        } else if !quoted {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_stems_and_extensions() {
        assert_eq!(file_stem("POST /api/items (2)"), "post-api-items-2");
        assert_eq!(file_stem("///"), "body");
        assert_eq!(extension(Some("application/json; charset=utf-8")), "json");
        assert_eq!(extension(Some("application/x-www-form-urlencoded")), "form");
        assert_eq!(extension(None), "bin");
    }

    #[test]
    fn serde_messages_lose_their_values() {
        assert_eq!(
            without_values("invalid type: string \"Bearer s3cret\", expected a number"),
            "invalid type: string (value not shown), expected a number"
        );
        assert_eq!(
            without_values(
                "invalid type: integer `123456`, expected a string; missing field `url`"
            ),
            "invalid type: integer (value not shown), expected a string; missing field `url`"
        );
    }
}
