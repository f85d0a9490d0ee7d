//! HAR 1.2 files (a browser's recorded traffic). What a load test does not want is left out:
//! static assets (images, fonts, stylesheets, scripts, media) unless asked to keep them,
//! requests to other hosts than the page's (or the one asked for), and what is not HTTP
//! (`data:`, `blob:`, WebSockets). Each request keeps its method, path, query, headers (less
//! hop-by-hop and pseudo headers) and body (`postData`, kept as a file).

use super::draft::{is_conditional_header, is_dropped_header, split_url, Body, Draft, Origin};
use super::{assemble, read_input, ImportError, Imported};
use crate::plan::scenario::file::HttpChoice;
use serde::Deserialize;
use std::path::Path;

/// What to keep.
#[derive(Debug, Default, Clone)]
pub struct Options {
    /// Keep images, fonts, stylesheets, scripts and media.
    pub keep_static: bool,
    /// Keep this host's (`host` or `host:port`) requests, instead of the first page's.
    pub host: Option<String>,
}

#[derive(Deserialize)]
struct Har {
    log: Log,
}

#[derive(Deserialize)]
struct Log {
    entries: Vec<Entry>,
}

#[derive(Deserialize)]
struct Entry {
    request: Request,
    response: Option<Response>,
    /// Chromium's resource type: document, xhr, fetch, image, font, stylesheet, script….
    #[serde(rename = "_resourceType")]
    resource_type: Option<String>,
}

#[derive(Deserialize)]
struct Request {
    method: String,
    url: String,
    #[serde(default)]
    headers: Vec<NameValue>,
    #[serde(rename = "postData")]
    post_data: Option<PostData>,
}

#[derive(Deserialize)]
struct NameValue {
    name: String,
    value: String,
}

#[derive(Deserialize)]
struct PostData {
    #[serde(rename = "mimeType", default)]
    mime_type: String,
    text: Option<String>,
    /// Parsed fields: chrome-har writes these instead of `text` for form and JSON bodies.
    #[serde(default)]
    params: Vec<Param>,
}

#[derive(Deserialize)]
struct Param {
    name: String,
    #[serde(default)]
    value: serde_json::Value,
}

impl PostData {
    /// The body's bytes: `text`, else rebuilt from `params` as the content type writes them.
    fn bytes(&self) -> Option<Vec<u8>> {
        if let Some(text) = self.text.as_ref().filter(|t| !t.is_empty()) {
            return Some(text.as_bytes().to_vec());
        }
        if self.params.is_empty() {
            return None;
        }
        if self.mime_type.to_ascii_lowercase().contains("json") {
            let object: serde_json::Map<String, serde_json::Value> = self
                .params
                .iter()
                .map(|p| (p.name.clone(), p.value.clone()))
                .collect();
            return Some(serde_json::Value::Object(object).to_string().into_bytes());
        }
        let pairs: Vec<String> = self
            .params
            .iter()
            .map(|p| match &p.value {
                serde_json::Value::String(v) => format!("{}={v}", p.name),
                v => format!("{}={v}", p.name),
            })
            .collect();
        Some(pairs.join("&").into_bytes())
    }
}

#[derive(Deserialize)]
struct Response {
    content: Option<Content>,
}

#[derive(Deserialize)]
struct Content {
    #[serde(rename = "mimeType", default)]
    mime_type: String,
}

/// A scenario from the HAR file at `path`.
pub fn import(path: &Path, options: &Options) -> Result<Imported, ImportError> {
    let text = read_input(path)?;
    from_text(&text, &path.display().to_string(), options)
}

/// A scenario from HAR text read from `source`.
pub fn from_text(text: &str, source: &str, options: &Options) -> Result<Imported, ImportError> {
    let har: Har = serde_json::from_str(text).map_err(|e| {
        let message = e.to_string();
        let message = message
            .find(" at line ")
            .map_or(&*message, |i| &message[..i]);
        ImportError::Malformed {
            source_name: source.to_string(),
            at: (e.line() > 0).then(|| (e.line(), e.column())),
            message: format!("not a HAR file: {}", super::without_values(message)),
        }
    })?;
    let mut main: Option<(String, String)> = None;
    let mut drafts = Vec::new();
    let (mut assets, mut other_hosts, mut not_http) = (0usize, 0usize, 0usize);
    let mut validated = 0usize;
    let mut hosts_left = std::collections::BTreeSet::new();
    for (i, entry) in har.log.entries.iter().enumerate() {
        let url = &entry.request.url;
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            not_http += 1;
            continue;
        }
        let (scheme, authority, path, _user) = split_url(url, &format!("{source}: entries[{i}]"))?;
        if entry.resource_type.as_deref() == Some("websocket") {
            not_http += 1;
            continue;
        }
        let wanted = match (&options.host, &main) {
            (Some(h), _) => {
                authority.eq_ignore_ascii_case(h) || host_of(&authority).eq_ignore_ascii_case(h)
            }
            (None, Some((s, a))) => (s, a) == (&scheme, &authority),
            // The first request is the page's (a browser records the document first).
            (None, None) => true,
        };
        if !wanted {
            other_hosts += 1;
            hosts_left.insert(authority);
            continue;
        }
        if main.is_none() {
            main = Some((scheme.clone(), authority.clone()));
        } else if main
            .as_ref()
            .is_some_and(|(s, a)| (s, a) != (&scheme, &authority))
        {
            // --host matched one host over two schemes: keep the first.
            other_hosts += 1;
            continue;
        }
        if !options.keep_static && is_static(entry, &path) {
            assets += 1;
            continue;
        }
        if entry
            .request
            .headers
            .iter()
            .any(|h| is_conditional_header(&h.name))
        {
            validated += 1;
        }
        let headers = entry
            .request
            .headers
            .iter()
            .filter(|h| !is_dropped_header(&h.name) && !is_conditional_header(&h.name))
            .map(|h| (h.name.clone(), h.value.clone()))
            .collect();
        let body = entry.request.post_data.as_ref().and_then(|p| {
            p.bytes().map(|bytes| Body {
                bytes,
                content_type: (!p.mime_type.is_empty()).then(|| p.mime_type.clone()),
            })
        });
        drafts.push(Draft {
            name: None,
            method: entry.request.method.to_ascii_uppercase(),
            path,
            headers,
            body,
            expect: None,
        });
    }
    let Some((scheme, authority)) = main else {
        return Err(ImportError::Empty(match &options.host {
            Some(h) => format!("{source} has no request to {h}"),
            None => format!("{source} has no HTTP request"),
        }));
    };
    let mut notes = Vec::new();
    if assets > 0 {
        notes.push(format!(
            "left out {assets} static asset{} (images, fonts, stylesheets, scripts, media); --keep-static keeps them",
            if assets == 1 { "" } else { "s" }
        ));
    }
    if other_hosts > 0 {
        let hosts: Vec<&str> = hosts_left.iter().map(String::as_str).take(5).collect();
        notes.push(format!(
            "left out {other_hosts} request{} to other hosts ({}); --host HOST imports another host's",
            if other_hosts == 1 { "" } else { "s" },
            hosts.join(", ")
        ));
    }
    if validated > 0 {
        notes.push(format!(
            "left out the browser's cache validators (If-None-Match, If-Modified-Since, …) of {validated} request{}: a load test asks for the whole response, not a 304",
            if validated == 1 { "" } else { "s" }
        ));
    }
    if not_http > 0 {
        notes.push(format!(
            "left out {not_http} entries that are not HTTP requests (data:, blob:, WebSocket)"
        ));
    }
    if drafts.is_empty() {
        return Err(ImportError::Empty(format!(
            "every request of {source} to {authority} is a static asset; give --keep-static to keep them"
        )));
    }
    let origin = Origin {
        scheme,
        authority,
        base_path: String::new(),
        insecure: false,
        http: HttpChoice::Auto,
    };
    assemble(&origin, drafts, source, notes)
}

/// `host:port` → `host` (an IPv6 literal keeps its brackets).
fn host_of(authority: &str) -> &str {
    match authority.rsplit_once(':') {
        Some((host, port)) if !port.contains(']') => host,
        _ => authority,
    }
}

/// An image, font, stylesheet, script or media file: by the browser's resource type, else by
/// the response's content type, else by the path's extension.
fn is_static(entry: &Entry, path: &str) -> bool {
    match entry
        .resource_type
        .as_deref()
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("image" | "font" | "stylesheet" | "script" | "media" | "manifest" | "texttrack") => {
            return true
        }
        Some("document" | "xhr" | "fetch" | "eventsource") => return false,
        // "other" (a favicon, a beacon) or none: judged by what came back, then by the name.
        _ => {}
    }
    let mime = entry
        .response
        .as_ref()
        .and_then(|r| r.content.as_ref())
        .map(|c| c.mime_type.to_ascii_lowercase())
        .unwrap_or_default();
    if mime.starts_with("image/")
        || mime.starts_with("font/")
        || mime.starts_with("video/")
        || mime.starts_with("audio/")
        || mime.starts_with("text/css")
        || mime.contains("javascript")
    {
        return true;
    }
    let file = path
        .split(['?', '#'])
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    const EXTENSIONS: &[&str] = &[
        ".png", ".jpg", ".jpeg", ".gif", ".svg", ".ico", ".webp", ".avif", ".bmp", ".woff",
        ".woff2", ".ttf", ".otf", ".eot", ".css", ".js", ".mjs", ".map", ".mp4", ".webm", ".mp3",
    ];
    EXTENSIONS.iter().any(|e| file.ends_with(e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(method: &str, url: &str, extra: &str) -> String {
        format!(
            r#"{{"request": {{"method": "{method}", "url": "{url}", "headers": [{{"name": ":authority", "value": "h"}}, {{"name": "Accept", "value": "*/*"}}]{extra}}}}}"#
        )
    }

    fn har(entries: &[String]) -> String {
        format!(
            r#"{{"log": {{"version": "1.2", "entries": [{}]}}}}"#,
            entries.join(",")
        )
    }

    #[test]
    fn the_page_host_is_kept_and_assets_are_left_out() {
        let text = har(&[
            entry("GET", "https://shop.example/", ""),
            entry("GET", "https://cdn.example/lib.js", ""),
            entry("GET", "https://shop.example/img/a.PNG?v=2", ""),
            entry(
                "POST",
                "https://shop.example/api/cart?session_id=abc",
                r#", "postData": {"mimeType": "application/x-www-form-urlencoded", "text": "item=4&qty=1"}"#,
            ),
            entry("GET", "data:image/png;base64,AAAA", ""),
            entry("get", "https://shop.example/", ""),
        ]);
        let i = from_text(&text, "t.har", &Options::default()).unwrap();
        let r = &i.scenario.requests;
        assert_eq!(
            i.scenario.target.url.as_deref(),
            Some("https://shop.example")
        );
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!((r[0].name.as_str(), r[0].weight), ("GET /", 2));
        assert_eq!(r[1].path, "/api/cart?session_id=${HEADROOM_SESSION_ID}");
        assert_eq!(
            i.bodies[0],
            (
                std::path::PathBuf::from("bodies/post-api-cart.form"),
                b"item=4&qty=1".to_vec()
            )
        );
        assert!(!i.scenario.target.headers.contains_key(":authority"));
        let notes = i.notes.join("\n");
        assert!(
            notes.contains("1 static asset")
                && notes.contains("cdn.example")
                && notes.contains("not HTTP"),
            "{notes}"
        );

        let other = from_text(
            &text,
            "t.har",
            &Options {
                host: Some("cdn.example".into()),
                keep_static: true,
            },
        )
        .unwrap();
        assert_eq!(
            other.scenario.target.url.as_deref(),
            Some("https://cdn.example")
        );
        assert_eq!(other.scenario.requests[0].path, "/lib.js");
        let e = from_text(
            &text,
            "t.har",
            &Options {
                host: Some("nowhere".into()),
                keep_static: false,
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("no request to nowhere"), "{e}");
    }

    #[test]
    fn cache_validators_are_left_out_so_a_revisit_is_the_same_request() {
        let revisit = r#"{"request": {"method": "GET", "url": "https://shop.example/", "headers": [{"name": "Accept", "value": "*/*"}, {"name": "If-None-Match", "value": "\"abc\""}, {"name": "if-modified-since", "value": "Wed, 25 Nov 2026 10:00:00 GMT"}]}}"#;
        let text = har(&[entry("GET", "https://shop.example/", ""), revisit.into()]);
        let i = from_text(&text, "t.har", &Options::default()).unwrap();
        let r = &i.scenario.requests;
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].weight, 2);
        let all = format!("{:?}", i.scenario);
        assert!(!all.to_ascii_lowercase().contains("if-none-match"), "{all}");
        assert!(
            !all.to_ascii_lowercase().contains("if-modified-since"),
            "{all}"
        );
        assert!(
            i.notes.join("\n").contains("cache validators"),
            "{:?}",
            i.notes
        );
    }

    #[test]
    fn malformed_files_are_placed() {
        let e = from_text("{\"log\": {}}", "t.har", &Options::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("t.har:1:") && e.contains("missing field `entries`"),
            "{e}"
        );
        let e = from_text(&har(&[]), "t.har", &Options::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("no HTTP request"), "{e}");
    }
}
