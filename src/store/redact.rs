//! Removes secrets from a command line before it is stored or shown.

use crate::plan::secret_names::{is_secret_name, is_secret_path, redact_header_line, redact_url};

/// The arguments with the values of secret headers, and of `--set`/`--matrix` paths to
/// credentials or bodies, replaced by `<redacted>`.
pub fn redact_args(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut next: Option<fn(&str) -> String> = None;
    for arg in args {
        if let Some(redact) = next.take() {
            out.push(redact(arg));
            continue;
        }
        let flagged = |flag: &str| arg.strip_prefix(flag).and_then(|a| a.strip_prefix('='));
        if arg == "-H" || arg == "--header" {
            next = Some(redact_header_line);
            out.push(arg.clone());
        } else if arg == "--set" || arg == "--matrix" {
            next = Some(redact_setting);
            out.push(arg.clone());
        } else if let Some(h) = flagged("--header") {
            out.push(format!("--header={}", redact_header_line(h)));
        } else if let Some(h) = arg.strip_prefix("-H").filter(|h| !h.is_empty()) {
            out.push(format!("-H{}", redact_header_line(h)));
        } else if let Some(flag) = ["--set", "--matrix"]
            .into_iter()
            .find(|f| flagged(f).is_some())
        {
            out.push(format!(
                "{flag}={}",
                redact_setting(flagged(flag).unwrap_or(""))
            ));
        } else {
            // A URL may carry a password before its host, or a token in its query.
            out.push(redact_url(arg));
        }
    }
    out
}

/// `path=value` with the value hidden when the path leads to a secret, or when the value is
/// YAML holding a field named like one (`--set 'target.headers={Authorization: …}'`).
fn redact_setting(setting: &str) -> String {
    match setting.split_once('=') {
        Some((path, value)) if is_secret_path(path) || holds_secret_field(value) => {
            format!("{path}=<redacted>")
        }
        Some(_) => redact_url(setting),
        // Not `path=value`: refused before anything runs, and nothing of it is known to be
        // harmless.
        None => "<redacted>".to_string(),
    }
}

/// Whether `value`, read as YAML, is a mapping (or holds one) with a key named like a secret.
fn holds_secret_field(value: &str) -> bool {
    fn walk(v: &yaml_serde::Value) -> bool {
        match v {
            yaml_serde::Value::Mapping(m) => m
                .iter()
                .any(|(k, v)| k.as_str().is_some_and(is_secret_name) || walk(v)),
            yaml_serde::Value::Sequence(items) => items.iter().any(walk),
            yaml_serde::Value::Tagged(t) => walk(&t.value),
            _ => false,
        }
    }
    yaml_serde::from_str::<yaml_serde::Value>(value).is_ok_and(|v| walk(&v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_header_values_never_survive() {
        let args: Vec<String> = [
            "headroom",
            "attack",
            "-H",
            "Authorization: Bearer abc",
            "--header=Cookie: s=1",
            "-HX-Api-Key: k",
            "-H",
            "Accept: */*",
            "--set",
            "target.headers.Authorization=Bearer set-tok",
            "--matrix=requests[login].json.password=pw1,pw2",
            "--set",
            "load.rate=50",
            "-H",
            "X-Goog-Api-Key: goog-k",
            "--header=apikey: plain-k",
            "--set",
            "target.headers={X-Access-Key: access-k, X-Env: a}",
            "--set=requests[0].path=/x?api_key=query-k&pwd=pwd-k",
            "--matrix",
            "data.users.passwd=pw-a,pw-b",
            "https://user:url-pw@host/?access_token=tok-q",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let joined = redact_args(&args).join(" ");
        for secret in [
            "Bearer abc",
            "s=1",
            ": k",
            "set-tok",
            "pw1",
            "goog-k",
            "plain-k",
            "access-k",
            "query-k",
            "pwd-k",
            "pw-a",
            "url-pw",
            "tok-q",
        ] {
            assert!(!joined.contains(secret), "{joined}");
        }
        assert!(joined.contains("Accept: */*") && joined.contains("load.rate=50"));
    }
}
