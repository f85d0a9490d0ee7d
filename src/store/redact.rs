//! Removes secrets from a command line before it is stored or shown.

use crate::plan::request::is_sensitive;

/// The arguments with the values of secret headers replaced by `<redacted>`.
pub fn redact_args(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut header_next = false;
    for arg in args {
        if header_next {
            out.push(redact_header(arg));
            header_next = false;
            continue;
        }
        if arg == "-H" || arg == "--header" {
            header_next = true;
            out.push(arg.clone());
        } else if let Some(h) = arg.strip_prefix("--header=") {
            out.push(format!("--header={}", redact_header(h)));
        } else if let Some(h) = arg.strip_prefix("-H").filter(|h| !h.is_empty()) {
            out.push(format!("-H{}", redact_header(h)));
        } else {
            out.push(arg.clone());
        }
    }
    out
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
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let joined = redact_args(&args).join(" ");
        for secret in ["Bearer abc", "s=1", ": k"] {
            assert!(!joined.contains(secret), "{joined}");
        }
        assert!(joined.contains("Accept: */*"));
    }
}
