//! Credentials taken out of imported requests: each becomes a `${HEADROOM_…}` variable the
//! user sets before the run, so no token, password, cookie or key is ever written. The same
//! value in several requests is one variable.
//!
//! Credentials are found by name (a header, query parameter or body field whose name says it
//! holds one). The same value can be recorded elsewhere under no such name — a session id
//! taken out of a query is still in the next request's `Referer` — so once every request has
//! been read ([`Secrets::seal`]), the values found are also taken out of any text kept.
//!
//! Every value that stays is escaped for the scenario's own syntax (`${` becomes `$${`), so
//! text that only looks like a variable is sent as it was recorded.
//!
//! Lookups are by hash and the search for values elsewhere is one Aho-Corasick pass over
//! each text: a HAR of thousands of signed requests (each its own credential) is read in time
//! that grows with its size, where a search of every variable for each new one grew with its
//! cube.

use super::{Body, BodyOut, Variable};
use crate::plan::secret_names::{is_secret_name, percent_decoded};
use aho_corasick::{AhoCorasick, MatchKind};
use std::collections::{BTreeMap, HashMap, HashSet};

/// The shortest value also taken out where no credential name points at it: a shorter one
/// (`1`, `en`, an id) is too likely to be ordinary text of the request.
const MIN_ELSEWHERE: usize = 8;

/// The variables made so far, and the values they stand for (in memory only).
#[derive(Default)]
pub struct Secrets {
    /// Each credential's value and its variable (an index into `variables`).
    by_value: HashMap<String, usize>,
    variables: Vec<Var>,
    /// The variable names taken, and for each stem the next number to try.
    names: HashSet<String>,
    next_number: HashMap<String, u32>,
    /// After [`Secrets::seal`]: the values to find in any text, and each one's variable.
    elsewhere: Option<(AhoCorasick, Vec<usize>)>,
    /// Requests whose body held a credential but is not text (it cannot refer to a variable).
    dropped_bodies: Vec<String>,
}

/// A variable as it is being made: what it stands for, and the labels of the requests that
/// use it (the first few), told with the credentials in them taken out only once all are known.
#[derive(Debug, Clone)]
struct Var {
    name: String,
    what: String,
    labels: Vec<String>,
}

/// How many requests a variable's description names.
const LABELS_TOLD: usize = 4;

impl std::fmt::Debug for Secrets {
    // The values are the secrets themselves: a debug print shows only the names.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.variables.iter().map(|v| &v.name))
            .finish()
    }
}

/// `$` escaped where the scenario would read a variable.
fn escape(text: &str) -> String {
    text.replace("${", "$${")
}

impl Secrets {
    /// The variables made, in order of first use, each with what it stands for and where.
    pub fn variables(&self) -> Vec<Variable> {
        self.variables
            .iter()
            .map(|v| {
                let mut what = format!("{} ({})", v.what, self.label(&v.labels[0]));
                for label in &v.labels[1..] {
                    what.push_str(&format!("; also {}", self.label(label)));
                }
                Variable {
                    name: v.name.clone(),
                    what,
                }
            })
            .collect()
    }

    /// A request's label (`GET /sessions/7f3c…`) with each credential's value in it shown
    /// as the variable's name in braces (`GET /sessions/{HEADROOM_SESSION_ID}`): for the
    /// request's name, comments and notes, none of which refers to a variable.
    pub fn label(&self, label: &str) -> String {
        let Some((automaton, owners)) = &self.elsewhere else {
            return label.to_string();
        };
        let mut out = String::with_capacity(label.len());
        automaton.replace_all_with(label, &mut out, |m, _, out| {
            out.push_str(&format!("{{{}}}", self.variables[owners[m.pattern()]].name));
            true
        });
        out
    }

    /// Labels of the requests whose body was left out: it held a credential and is not text.
    pub fn dropped_bodies(&self) -> &[String] {
        &self.dropped_bodies
    }

    /// Every credential is known (each request was read once): from now on their values are
    /// also taken out of the text kept around them. False when they cannot be searched for
    /// (past the automaton's own limits, far beyond an input's 64 MiB).
    pub fn seal(&mut self) -> bool {
        let mut patterns: Vec<&str> = Vec::new();
        let mut owners = Vec::new();
        for (value, &i) in &self.by_value {
            if value.chars().count() >= MIN_ELSEWHERE {
                patterns.push(value);
                owners.push(i);
            }
        }
        if patterns.is_empty() {
            return true;
        }
        // Longest first where two start at one place: a value inside another is not half
        // replaced.
        match AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(&patterns)
        {
            Ok(automaton) => {
                self.elsewhere = Some((automaton, owners));
                true
            }
            Err(_) => false,
        }
    }

    /// `text` as it goes into the scenario: escaped, with any credential's value in it
    /// replaced by its variable.
    fn plain(&self, text: &str) -> String {
        let Some((automaton, owners)) = &self.elsewhere else {
            return escape(text);
        };
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for m in automaton.find_iter(text) {
            let before = &text[at..m.start()];
            // `$` then `${NAME}` would read as the escape `$${`: the scenario's syntax has no
            // way to write a `$` just before a variable, so such a value (one that starts
            // with `{` after a `$`) stays as it was.
            if before.ends_with('$') {
                continue;
            }
            out.push_str(&escape(before));
            out.push_str(&format!(
                "${{{}}}",
                self.variables[owners[m.pattern()]].name
            ));
            at = m.end();
        }
        out.push_str(&escape(&text[at..]));
        out
    }

    /// Whether `bytes` hold the value of a credential (after [`Secrets::seal`]).
    fn holds_value(&self, bytes: &[u8]) -> bool {
        self.elsewhere
            .as_ref()
            .is_some_and(|(automaton, _)| automaton.is_match(bytes))
    }

    /// The reference standing for `value`: an existing variable for a value seen before,
    /// else a new one named from `base`, described as `what` (in `label`).
    fn variable(&mut self, value: &str, base: &str, what: &str, label: &str) -> String {
        if let Some(&i) = self.by_value.get(value) {
            let var = &mut self.variables[i];
            // Say where else it is used, a few times at most.
            if var.labels.len() < LABELS_TOLD && !var.labels.iter().any(|l| l == label) {
                var.labels.push(label.to_string());
            }
            return format!("${{{}}}", var.name);
        }
        let stem: String = base
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_uppercase()
                } else {
                    '_'
                }
            })
            .collect();
        let stem = format!("HEADROOM_{}", stem.trim_matches('_'));
        let mut name = stem.clone();
        // Numbered from where this stem left off: thousands of credentials of one name (a
        // HAR of signed requests) are named in one step each, not a search from 2 each time.
        let next = self.next_number.entry(stem.clone()).or_insert(1);
        while self.names.contains(&name) {
            *next += 1;
            name = format!("{stem}_{next}");
        }
        self.names.insert(name.clone());
        self.by_value
            .insert(value.to_string(), self.variables.len());
        self.variables.push(Var {
            name: name.clone(),
            what: what.to_string(),
            labels: vec![label.to_string()],
        });
        format!("${{{name}}}")
    }

    /// A header's value with its credential taken out, when its name says it holds one.
    fn header(&mut self, name: &str, value: &str, label: &str) -> String {
        if !is_secret_name(name) {
            return self.plain(value);
        }
        if name.eq_ignore_ascii_case("authorization")
            || name.eq_ignore_ascii_case("proxy-authorization")
        {
            // Keep the scheme ("Bearer", "Basic"): the file then says what kind of credential
            // goes in the variable.
            if let Some((scheme, credential)) = value.trim().split_once(' ') {
                if !scheme.is_empty()
                    && scheme
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-')
                {
                    let (base, what) = match scheme.to_ascii_lowercase().as_str() {
                        "bearer" => (
                            "bearer_token".to_string(),
                            format!("the {name} header's Bearer token"),
                        ),
                        "basic" => (
                            "basic_auth".to_string(),
                            format!(
                                "the {name} header's Basic credential: the base64 of user:password"
                            ),
                        ),
                        other => (
                            name.to_string(),
                            format!("the {name} header's {other} credential"),
                        ),
                    };
                    let reference = self.variable(credential.trim(), &base, &what, label);
                    return format!("{scheme} {reference}");
                }
            }
        }
        self.variable(value, name, &format!("the {name} header"), label)
    }

    /// Path and query with the values of credential-named query parameters taken out.
    fn path(&mut self, path: &str, label: &str) -> String {
        let Some((base, query)) = path.split_once('?') else {
            return self.plain(path);
        };
        let mut out = self.plain(base);
        out.push('?');
        for (i, pair) in query.split('&').enumerate() {
            if i > 0 {
                out.push('&');
            }
            match pair.split_once('=') {
                Some((k, v)) if is_secret_name(&percent_decoded(k)) && !v.is_empty() => {
                    let what =
                        format!("the query parameter {k}, as it goes in the URL (percent-encoded)");
                    let reference = self.variable(v, k, &what, label);
                    out.push_str(&self.plain(k));
                    out.push('=');
                    out.push_str(&reference);
                }
                _ => out.push_str(&self.plain(pair)),
            }
        }
        out
    }

    /// A JSON or form body with credential-named fields taken out (then inline text), or
    /// the body as it was (a file); a body that holds a credential's value elsewhere is
    /// inline text with the value taken out, or, not being text, left out (`None`).
    fn body(&mut self, body: &Body, content_type: &str, label: &str) -> Option<BodyOut> {
        let ct = content_type.to_ascii_lowercase();
        if ct.contains("json") {
            if let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(&body.bytes) {
                let mut found = Vec::new();
                mark_json(&mut value, &mut found);
                if !found.is_empty() {
                    let references: Vec<String> = found
                        .into_iter()
                        .map(|(field, secret)| {
                            let what = format!("the body's {field:?} field");
                            self.variable(&secret, &field, &what, label)
                        })
                        .collect();
                    let text = self.plain(&value.to_string());
                    // One pass over the text for all markers (a replace per marker was a
                    // pass each).
                    let text = marker_pattern().replace_all(&text, |c: &regex::Captures| {
                        c[1].parse::<usize>()
                            .ok()
                            .and_then(|i| references.get(i))
                            .cloned()
                            .unwrap_or_default()
                    });
                    return Some(BodyOut::Inline(text.into_owned()));
                }
            }
        } else if ct.contains("x-www-form-urlencoded") {
            if let Ok(text) = std::str::from_utf8(&body.bytes) {
                let fields: Vec<&str> = text.split('&').collect();
                if fields.iter().any(|f| {
                    f.split_once('=')
                        .is_some_and(|(k, v)| is_secret_name(&percent_decoded(k)) && !v.is_empty())
                }) {
                    let mut out = Vec::new();
                    for f in fields {
                        match f.split_once('=') {
                            Some((k, v))
                                if is_secret_name(&percent_decoded(k)) && !v.is_empty() =>
                            {
                                let what = format!("the form field {k}, percent-encoded");
                                let reference = self.variable(v, k, &what, label);
                                out.push(format!("{}={reference}", self.plain(k)));
                            }
                            _ => out.push(self.plain(f)),
                        }
                    }
                    return Some(BodyOut::Inline(out.join("&")));
                }
            }
        }
        if self.holds_value(&body.bytes) {
            return match std::str::from_utf8(&body.bytes) {
                Ok(text) => Some(BodyOut::Inline(self.plain(text))),
                Err(_) => {
                    self.dropped_bodies.push(label.to_string());
                    None
                }
            };
        }
        Some(BodyOut::File(body.bytes.clone()))
    }

    /// One request's path, headers and body with every credential taken out.
    pub(super) fn take_out(
        &mut self,
        label: &str,
        path: String,
        headers: Vec<(String, String)>,
        body: Option<Body>,
    ) -> (String, BTreeMap<String, String>, Option<BodyOut>) {
        let path = self.path(&path, label);
        let mut out: BTreeMap<String, String> = BTreeMap::new();
        let mut raw: Vec<(String, String)> = Vec::new();
        for (name, value) in headers {
            // The same header twice is one with both values, as HTTP reads it; recorders
            // that merge two views of a request repeat a header with its same value.
            match raw.iter_mut().find(|(n, _)| n.eq_ignore_ascii_case(&name)) {
                Some((_, v)) if *v == value => {}
                Some((_, v)) => {
                    let sep = if name.eq_ignore_ascii_case("cookie") {
                        "; "
                    } else {
                        ", "
                    };
                    v.push_str(sep);
                    v.push_str(&value);
                }
                None => raw.push((name, value)),
            }
        }
        let mut content_type = raw
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("content-type"))
            .map(|(_, v)| v.clone());
        if let (
            None,
            Some(Body {
                content_type: Some(t),
                ..
            }),
        ) = (&content_type, &body)
        {
            raw.push(("Content-Type".into(), t.clone()));
            content_type = Some(t.clone());
        }
        for (name, value) in raw {
            let value = self.header(&name, &value, label);
            out.insert(name, value);
        }
        let body = body
            .filter(|b| !b.bytes.is_empty())
            .and_then(|b| self.body(&b, content_type.as_deref().unwrap_or(""), label));
        (path, out, body)
    }
}

/// The markers [`mark_json`] puts in place of values: `@@headroom-secret-N@@`, with only
/// characters JSON leaves as they are, so they are found again in the text.
fn marker_pattern() -> &'static regex::Regex {
    static MARKER: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    MARKER
        .get_or_init(|| regex::Regex::new("@@headroom-secret-([0-9]+)@@").expect("a valid pattern"))
}

/// Replaces the values of credential-named fields with markers numbered in order, collecting
/// (field, value as text).
fn mark_json(value: &mut serde_json::Value, found: &mut Vec<(String, String)>) {
    match value {
        serde_json::Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                let secret = match v {
                    serde_json::Value::String(s) if is_secret_name(k) && !s.is_empty() => {
                        Some(s.clone())
                    }
                    serde_json::Value::Number(n) if is_secret_name(k) => Some(n.to_string()),
                    _ => None,
                };
                match secret {
                    Some(s) => {
                        let marker = format!("@@headroom-secret-{}@@", found.len());
                        found.push((k.clone(), s));
                        *v = serde_json::Value::String(marker);
                    }
                    None => mark_json(v, found),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(|v| mark_json(v, found)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_become_variables_and_nothing_else_does() {
        let mut s = Secrets::default();
        let (path, headers, body) = s.take_out(
            "POST /login",
            "/login?api_key=K3Y&author=bob&x=${y}".into(),
            vec![
                ("Authorization".into(), "Bearer s3cret".into()),
                ("X-Api-Key".into(), "k3y-2".into()),
                ("Accept".into(), "*/*".into()),
                ("Cookie".into(), "a=1".into()),
                ("cookie".into(), "b=2".into()),
            ],
            Some(Body {
                bytes: br#"{"user":"u","password":"hunter2","n":{"client_secret":12}}"#.to_vec(),
                content_type: Some("application/json".into()),
            }),
        );
        assert_eq!(
            path,
            "/login?api_key=${HEADROOM_API_KEY}&author=bob&x=$${y}"
        );
        assert_eq!(headers["Authorization"], "Bearer ${HEADROOM_BEARER_TOKEN}");
        assert_eq!(headers["X-Api-Key"], "${HEADROOM_X_API_KEY}");
        assert_eq!(headers["Cookie"], "${HEADROOM_COOKIE}");
        assert_eq!(headers["Accept"], "*/*");
        assert_eq!(headers["Content-Type"], "application/json");
        let Some(BodyOut::Inline(text)) = body else {
            panic!("{body:?}")
        };
        assert_eq!(
            text,
            r#"{"n":{"client_secret":"${HEADROOM_CLIENT_SECRET}"},"password":"${HEADROOM_PASSWORD}","user":"u"}"#
        );
        // The same token again is the same variable.
        let (_, again, _) = s.take_out(
            "GET /me",
            "/me".into(),
            vec![("authorization".into(), "Bearer s3cret".into())],
            None,
        );
        assert_eq!(again["authorization"], "Bearer ${HEADROOM_BEARER_TOKEN}");
        let all = format!("{s:?} {:?}", s.variables());
        for secret in ["s3cret", "K3Y", "k3y-2", "hunter2", "a=1"] {
            assert!(!all.contains(secret), "{secret} in {all}");
        }
        assert_eq!(s.variables().len(), 6);
        assert!(
            s.variables()[0].what.contains("also GET /me")
                || s.variables()
                    .iter()
                    .any(|v| v.what.contains("also GET /me"))
        );
    }

    /// The names of the one rule's table that a recorded request carries: each secret one
    /// becomes a variable, and the harmless ones stay as they were.
    #[test]
    fn every_name_the_rule_marks_is_taken_out() {
        let mut s = Secrets::default();
        let (path, headers, body) = s.take_out(
            "POST /x",
            "/x?pwd=p-1&access_token=t-2&key=kv-keep&max_tokens=64".into(),
            vec![
                ("X-Goog-Api-Key".into(), "g-3".into()),
                ("X-Access-Key".into(), "a-4".into()),
                ("apikey".into(), "k-5".into()),
                ("User-Agent".into(), "ua-keep".into()),
            ],
            Some(Body {
                bytes: br#"{"passwd":"p-6","private_key":"pk-7","tokenizer":"tk-keep"}"#.to_vec(),
                content_type: Some("application/json".into()),
            }),
        );
        let Some(BodyOut::Inline(body)) = body else {
            panic!("{body:?}")
        };
        let all = format!("{path} {headers:?} {body}");
        for secret in ["p-1", "t-2", "g-3", "a-4", "k-5", "p-6", "pk-7"] {
            assert!(!all.contains(secret), "{secret} in {all}");
        }
        for kept in ["kv-keep", "max_tokens=64", "ua-keep", "tk-keep"] {
            assert!(all.contains(kept), "{kept} not in {all}");
        }
        assert_eq!(s.variables().len(), 7);
    }

    /// A session id taken out of one request's query is still in the next one's Referer,
    /// recorded under no credential's name: once sealed, its value is taken out there too,
    /// and from a text body, which then goes inline.
    #[test]
    fn a_value_found_by_name_is_taken_out_everywhere_else() {
        let mut s = Secrets::default();
        let referer = (
            "Referer".to_string(),
            "https://h/cart?session_id=7f3c9a1b2d&x=${y}".to_string(),
        );
        let requests = [
            (
                "GET /cart",
                "/cart?session_id=7f3c9a1b2d".to_string(),
                vec![],
            ),
            (
                "GET /next",
                "/next/7f3c9a1b2d".to_string(),
                vec![referer.clone()],
            ),
        ];
        let body = Body {
            bytes: b"note: session 7f3c9a1b2d; id 1".to_vec(),
            content_type: Some("text/plain".into()),
        };
        for (label, path, headers) in &requests {
            s.take_out(label, path.clone(), headers.clone(), Some(body.clone()));
        }
        assert!(s.seal());
        let (path, headers, body) = s.take_out(
            "GET /next",
            requests[1].1.clone(),
            vec![referer],
            Some(body),
        );
        assert_eq!(path, "/next/${HEADROOM_SESSION_ID}");
        assert_eq!(
            headers["Referer"],
            "https://h/cart?session_id=${HEADROOM_SESSION_ID}&x=$${y}"
        );
        assert_eq!(
            body,
            Some(BodyOut::Inline(
                "note: session ${HEADROOM_SESSION_ID}; id 1".into()
            ))
        );
        // Not text: it cannot refer to a variable, so it is left out (and said so).
        let binary = Body {
            bytes: [&[0xff, 0xfe][..], b"7f3c9a1b2d"].concat(),
            content_type: None,
        };
        let (_, _, body) = s.take_out("POST /blob", "/blob".into(), vec![], Some(binary));
        assert_eq!(body, None);
        assert_eq!(s.dropped_bodies(), ["POST /blob"]);
        // Short values are too likely to be ordinary text to be replaced elsewhere.
        let mut short = Secrets::default();
        short.take_out("GET /a", "/a?sid=42".into(), vec![], None);
        assert!(short.seal());
        let (path, _, _) = short.take_out("GET /b", "/b/42".into(), vec![], None);
        assert_eq!(path, "/b/42");
    }

    /// Thousands of credentials of one name (a HAR of signed requests, each its own
    /// signature): each is named and found in one step. A search of every variable for each
    /// new value and name grew with the cube of the count; 50,000 would take days.
    #[test]
    fn many_credentials_of_one_name_are_taken_out_in_linear_time() {
        let started = std::time::Instant::now();
        let mut s = Secrets::default();
        let n = 50_000;
        for i in 0..n {
            let header = (
                "Authorization".to_string(),
                format!("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/s3/aws4_request, Signature={i:064x}"),
            );
            let (_, headers, _) = s.take_out("GET /o", format!("/o/{i}"), vec![header], None);
            let want = match i {
                0 => "AWS4-HMAC-SHA256 ${HEADROOM_AUTHORIZATION}".to_string(),
                i => format!("AWS4-HMAC-SHA256 ${{HEADROOM_AUTHORIZATION_{}}}", i + 1),
            };
            assert_eq!(headers["Authorization"], want);
        }
        assert!(s.seal());
        let (path, _, _) = s.take_out("GET /o", "/o/1".into(), vec![], None);
        assert_eq!(path, "/o/1");
        assert_eq!(s.variables().len(), n);
        // Linear: about a second in a debug build; cubic: far past any test's patience.
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "{:?}",
            started.elapsed()
        );
    }
}
