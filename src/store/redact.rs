//! Removes secrets from a command line before it is stored or shown.

use crate::plan::request::{is_sensitive, is_sensitive_path};

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
            next = Some(redact_header);
            out.push(arg.clone());
        } else if arg == "--set" || arg == "--matrix" {
            next = Some(redact_setting);
            out.push(arg.clone());
        } else if let Some(h) = flagged("--header") {
            out.push(format!("--header={}", redact_header(h)));
        } else if let Some(h) = arg.strip_prefix("-H").filter(|h| !h.is_empty()) {
            out.push(format!("-H{}", redact_header(h)));
        } else if let Some(flag) = ["--set", "--matrix"]
            .into_iter()
            .find(|f| flagged(f).is_some())
        {
            out.push(format!(
                "{flag}={}",
                redact_setting(flagged(flag).unwrap_or(""))
            ));
        } else {
            // A URL (or a `--set` of a path) may carry a token in its query.
            out.push(crate::plan::secret_names::redact_query(arg));
        }
    }
    out
}

/// `path=value` with the value hidden when the path leads to a secret.
fn redact_setting(setting: &str) -> String {
    match setting.split_once('=') {
        Some((path, _)) if is_sensitive_path(path) => format!("{path}=<redacted>"),
        _ => crate::plan::secret_names::redact_query(setting),
    }
}

fn redact_header(h: &str) -> String {
    match h.split_once(':') {
        Some((name, _)) if is_sensitive(name) => format!("{}: <redacted>", name.trim()),
        _ => h.to_string(),
    }
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
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let joined = redact_args(&args).join(" ");
        for secret in ["Bearer abc", "s=1", ": k", "set-tok", "pw1"] {
            assert!(!joined.contains(secret), "{joined}");
        }
        assert!(joined.contains("Accept: */*") && joined.contains("load.rate=50"));
    }
}
