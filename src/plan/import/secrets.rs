//! Credentials taken out of imported requests: each becomes a `${HEADROOM_…}` variable the
//! user sets before the run, so no token, password, cookie or key is ever written. The same
//! value in several requests is one variable.
//!
//! Every value that stays is escaped for the scenario's own syntax (`${` becomes `$${`), so
//! text that only looks like a variable is sent as it was recorded.

use super::{Body, BodyOut, Variable};
use crate::plan::secret_names::{is_secret_name, percent_decoded};
use std::collections::BTreeMap;

/// The variables made so far, and the values they stand for (in memory only).
#[derive(Default)]
pub struct Secrets {
    /// (value, variable name) of each credential taken out.
    values: Vec<(String, String)>,
    variables: Vec<Variable>,
}

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
    /// The variables made, in order of first use.
    pub fn variables(&self) -> Vec<Variable> {
        self.variables.clone()
    }

    /// The reference standing for `value`: an existing variable for a value seen before,
    /// else a new one named from `base`, described as `what` (in `label`).
    fn variable(&mut self, value: &str, base: &str, what: &str, label: &str) -> String {
        if let Some((_, name)) = self.values.iter().find(|(v, _)| v == value) {
            let name = name.clone();
            let var = self
                .variables
                .iter_mut()
                .find(|v| v.name == name)
                .expect("every value has its variable");
            // Say where else it is used, a few times at most.
            if var.what.matches("; ").count() < 3 && !var.what.contains(label) {
                var.what.push_str(&format!("; also {label}"));
            }
            return format!("${{{name}}}");
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
        let mut n = 1;
        while self.variables.iter().any(|v| v.name == name) {
            n += 1;
            name = format!("{stem}_{n}");
        }
        self.values.push((value.to_string(), name.clone()));
        self.variables.push(Variable {
            name: name.clone(),
            what: format!("{what} ({label})"),
        });
        format!("${{{name}}}")
    }

    /// A header's value with its credential taken out, when its name says it holds one.
    fn header(&mut self, name: &str, value: &str, label: &str) -> String {
        if !is_secret_name(name) {
            return escape(value);
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
            return escape(path);
        };
        let mut out = escape(base);
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
                    out.push_str(&escape(k));
                    out.push('=');
                    out.push_str(&reference);
                }
                _ => out.push_str(&escape(pair)),
            }
        }
        out
    }

    /// A JSON or form body with credential-named fields taken out (then inline text), or
    /// the body as it was (a file).
    fn body(&mut self, body: &Body, content_type: &str, label: &str) -> BodyOut {
        let ct = content_type.to_ascii_lowercase();
        if ct.contains("json") {
            if let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(&body.bytes) {
                let mut found = Vec::new();
                mark_json(&mut value, &mut found);
                if !found.is_empty() {
                    let mut text = escape(&value.to_string());
                    for (marker, field, secret) in found {
                        let what = format!("the body's {field:?} field");
                        let reference = self.variable(&secret, &field, &what, label);
                        text = text.replace(&marker, &reference);
                    }
                    return BodyOut::Inline(text);
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
                                out.push(format!("{}={reference}", escape(k)));
                            }
                            _ => out.push(escape(f)),
                        }
                    }
                    return BodyOut::Inline(out.join("&"));
                }
            }
        }
        BodyOut::File(body.bytes.clone())
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
            .map(|b| self.body(&b, content_type.as_deref().unwrap_or(""), label));
        (path, out, body)
    }
}

/// Replaces the values of credential-named fields with markers, collecting (marker, field,
/// value as text).
fn mark_json(value: &mut serde_json::Value, found: &mut Vec<(String, String, String)>) {
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
                        // Only characters JSON leaves as they are, so the marker is found again in the text.
                        let marker = format!("@@headroom-secret-{}@@", found.len());
                        found.push((marker.clone(), k.clone(), s));
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
}
