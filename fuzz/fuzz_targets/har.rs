//! A HAR file, imported as `headroom import har` imports it (no file: its text).
//!
//! Input: byte 0 picks the options (bit 0: keep static assets), the rest is the file's text.
//!
//! Invariants: no panic, in bounded time and memory; an error is one line; an import gives a
//! scenario whose text renders and reads back as the scenario file model, in which every
//! header named as a credential holds a variable, and (static assets kept, so every request
//! to the page's origin is) no credential is left: a token-like value (8 or more of
//! `A-Za-z0-9._~+/=-`) of an `Authorization`, `Cookie` or `X-Api-Key` header, given once in
//! its request, is in no request's path, headers, body or name (taken out where named, and
//! wherever else it was recorded, a Referer).
#![no_main]

use headroom::fuzzing::scenario_file_reads;
use headroom::plan::import::{har, render, Imported};
use headroom::plan::secret_names::is_secret_name;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&options, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let options = har::Options {
        keep_static: options & 1 == 1,
        host: None,
    };
    match har::from_text(text, "fuzz.har", &options) {
        Ok(imported) => {
            let rendered = render(&imported).expect("an import renders");
            if let Err(e) = scenario_file_reads(&rendered) {
                panic!("the written scenario does not read back: {e}\n{rendered}");
            }
            assert_credentials_are_variables(&imported);
            // The requests kept are the first page's (all of them, with static assets kept).
            if options.keep_static {
                for secret in secrets(text) {
                    assert_absent(&imported, &secret);
                }
            }
        }
        Err(e) => assert!(!e.to_string().contains('\n'), "{e}"),
    }
});

/// The credentials the input gives in a way the importer must take out wherever they are.
fn secrets(text: &str) -> Vec<String> {
    let Ok(doc) = serde_json::from_str::<serde_json::Value>(text) else {
        return Vec::new();
    };
    let token_like = |v: &str| {
        v.len() >= 8
            && v.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._~+/=-".contains(&b))
    };
    let entries = doc["log"]["entries"].as_array();
    let http = |e: &&serde_json::Value| {
        let url = e["request"]["url"].as_str().unwrap_or("");
        (url.starts_with("http://") || url.starts_with("https://"))
            && e["_resourceType"].as_str() != Some("websocket")
    };
    let origin = |e: &serde_json::Value| {
        let url = e["request"]["url"].as_str()?;
        headroom::fuzzing::import_origin(url)
    };
    let Some(page) = entries.into_iter().flatten().find(http).and_then(origin) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries
        .into_iter()
        .flatten()
        .filter(http)
        .filter(|e| origin(e).as_ref() == Some(&page))
    {
        let headers = entry["request"]["headers"].as_array();
        let headers: Vec<(&str, &str)> = headers
            .into_iter()
            .flatten()
            .filter_map(|h| Some((h["name"].as_str()?, h["value"].as_str()?)))
            .collect();
        for (name, value) in &headers {
            let once = headers
                .iter()
                .filter(|(n, _)| n.eq_ignore_ascii_case(name))
                .count()
                == 1;
            let credential = match name.to_ascii_lowercase().as_str() {
                // A scheme (`Bearer`) stays; the credential after it is taken out.
                "authorization" => match value.trim().split_once(' ') {
                    Some((scheme, c))
                        if !scheme.is_empty()
                            && scheme
                                .bytes()
                                .all(|b| b.is_ascii_alphanumeric() || b == b'-') =>
                    {
                        c.trim()
                    }
                    _ => value,
                },
                "cookie" | "x-api-key" => value,
                _ => continue,
            };
            if once && token_like(credential) {
                out.push(credential.to_string());
            }
        }
    }
    out
}

/// `text` with each reference to an import's variable (`${HEADROOM_X}`, and `{HEADROOM_X}`
/// in a name) made a NUL: a credential's value may be a piece of a variable's name.
fn without_references(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("{HEADROOM_") {
        let name_end = rest[i + 1..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .map(|j| i + 1 + j);
        match name_end.filter(|&e| rest[e..].starts_with('}')) {
            Some(e) => {
                let start = if rest[..i].ends_with('$') { i - 1 } else { i };
                out.push_str(&rest[..start]);
                out.push('\0');
                rest = &rest[e + 1..];
            }
            None => {
                out.push_str(&rest[..i + 1]);
                rest = &rest[i + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn assert_absent(imported: &Imported, secret: &str) {
    let s = &imported.scenario;
    let mut texts: Vec<&str> = vec![];
    texts.extend(s.target.headers.values().map(String::as_str));
    for r in &s.requests {
        texts.push(&r.name);
        texts.push(&r.path);
        texts.extend(r.headers.values().map(String::as_str));
        texts.extend(r.body.as_deref());
    }
    for t in texts {
        assert!(
            !without_references(t).contains(secret),
            "{secret:?} left in {t:?}"
        );
    }
    for (path, bytes) in &imported.bodies {
        assert!(
            !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
            "{secret:?} left in the body file {}",
            path.display()
        );
    }
}

/// Every header whose name says it holds a credential holds a variable instead, after its
/// scheme when it has one (`Bearer ${HEADROOM_BEARER_TOKEN}`).
fn assert_credentials_are_variables(imported: &Imported) {
    let s = &imported.scenario;
    let headers = s
        .target
        .headers
        .iter()
        .chain(s.requests.iter().flat_map(|r| r.headers.iter()));
    for (name, value) in headers {
        if !is_secret_name(name) {
            continue;
        }
        let credential = value.split_once(' ').map_or(value.as_str(), |(_, c)| c);
        let reference = credential.starts_with("${HEADROOM_")
            && credential.ends_with('}')
            && credential.matches('$').count() == 1;
        assert!(reference, "{name}: {value:?} is not a variable");
    }
}
