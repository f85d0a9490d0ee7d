//! Targets in vegeta's http format (`attack -` reads them from standard input): a
//! `METHOD URL` line, then any `Name: value` header lines and an `@body-file` line, blank
//! lines between targets; `#` starts a comment line.
//!
//! Every target must be on the first one's origin (scheme, host, port): a run has one
//! target server, and its requests differ by method, path, headers and body. They are sent
//! in turn, each an equal share of the load, as vegeta's round-robin does.

use super::{read_body_file, NamedRequest, RequestSpec, Target};
use std::path::Path;

/// Most targets one list may hold: each is a row of the report.
pub const MAX_TARGETS: usize = 10_000;

/// A target list that cannot be used, by line (counted from 1).
#[derive(Debug, thiserror::Error)]
pub enum TargetsError {
    /// Nothing but blank lines and comments.
    #[error("no targets: give lines such as `GET http://127.0.0.1:8080/` (vegeta's http format)")]
    Empty,
    /// More than [`MAX_TARGETS`].
    #[error("more than {MAX_TARGETS} targets; a run reports each as a row: split the list")]
    TooMany,
    /// A line that is not what its place asks for. The line itself is never shown: it may
    /// hold a credential (a header's value, a URL's password).
    #[error("line {line}: {reason}")]
    Line {
        /// The line's number, from 1.
        line: usize,
        /// What is wrong, and what to write instead.
        reason: String,
    },
}

/// The requests of `text`, the target server (the first target's) and each request's
/// share; body files are read relative to the working directory.
pub fn parse(text: &str) -> Result<(Target, Vec<NamedRequest>), TargetsError> {
    let mut first: Option<Target> = None;
    let mut requests: Vec<NamedRequest> = Vec::new();
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l)).peekable();
    loop {
        // Blank lines and comments between targets.
        while lines
            .peek()
            .is_some_and(|(_, l)| l.trim().is_empty() || l.trim_start().starts_with('#'))
        {
            lines.next();
        }
        let Some((n, line)) = lines.next() else { break };
        let at = |reason: String| TargetsError::Line { line: n, reason };
        let (method, url) = line.trim().split_once(char::is_whitespace).ok_or_else(|| {
            at("expected `METHOD URL`, e.g. `GET http://127.0.0.1:8080/path`".into())
        })?;
        let target = Target::parse(url.trim()).map_err(|e| at(e.to_string()))?;
        let origin = first.get_or_insert_with(|| target.clone());
        if (&target.scheme, &target.host, target.port)
            != (&origin.scheme, &origin.host, origin.port)
        {
            return Err(at(format!(
                "every target must be on the first one's server ({}); run one attack per server",
                origin.authority
            )));
        }
        let mut headers = Vec::new();
        let mut body = bytes::Bytes::new();
        while let Some(&(m, line)) = lines.peek() {
            let at = |reason: String| TargetsError::Line { line: m, reason };
            let line = line.trim();
            if line.is_empty() {
                break;
            }
            lines.next();
            if line.starts_with('#') {
                continue;
            }
            if let Some(path) = line.strip_prefix('@') {
                if !body.is_empty() {
                    return Err(at("a second @body-file for one target".into()));
                }
                body = read_body_file(Path::new(path.trim()))
                    .map(bytes::Bytes::from)
                    .map_err(|e| at(e.to_string()))?;
            } else if line.contains(':') {
                // Checked here for the line's number; the error names the header, never
                // its value.
                super::request::parse_header(line).map_err(|e| at(e.to_string()))?;
                headers.push(line.to_string());
            } else {
                return Err(at(
                    "expected a `Name: value` header, an `@body-file` or a blank line before the next target".into(),
                ));
            }
        }
        let mut spec = RequestSpec::parse(method, &headers, body).map_err(|e| at(e.to_string()))?;
        spec.path = Some(target.path_and_query.clone());
        if requests.len() == MAX_TARGETS {
            return Err(TargetsError::TooMany);
        }
        let mut request = NamedRequest::single(spec, &target);
        // Two targets alike but for headers or body are two rows of the report.
        let alike = requests
            .iter()
            .filter(|r| {
                r.name == request.name || r.name.starts_with(&format!("{} #", request.name))
            })
            .count();
        if alike > 0 {
            request.name = format!("{} #{}", request.name, alike + 1);
        }
        requests.push(request);
    }
    match first {
        Some(target) => Ok((target, requests)),
        None => Err(TargetsError::Empty),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_with_headers_and_bodies_are_read_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let body = dir.path().join("body.json");
        std::fs::write(&body, "{\"a\":1}").unwrap();
        let text = format!(
            "# smoke\nGET http://127.0.0.1:8080/a?x=1\nX-Env: test\n\nPOST http://127.0.0.1:8080/b\nContent-Type: application/json\n@{}\n\n\nGET http://127.0.0.1:8080/a?x=1\n",
            body.display()
        );
        let (target, requests) = parse(&text).unwrap();
        assert_eq!(target.authority, "127.0.0.1:8080");
        let names: Vec<&str> = requests.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["GET /a?x=1", "POST /b", "GET /a?x=1 #2"]);
        assert_eq!(requests[0].spec.headers[0].0, "x-env");
        assert_eq!(requests[1].spec.path.as_deref(), Some("/b"));
        assert_eq!(&requests[1].spec.body[..], b"{\"a\":1}");
        assert!(requests.iter().all(|r| r.weight == 1));
    }

    #[test]
    fn a_bad_line_is_named_by_number_and_never_shown() {
        let cases = [
            ("GET http://h:1/\nAuthorization Bearer s3cr3t-value\n", 2),
            (
                "GET http://h:1/\nAuthorization: Bearer s3cr3t-value\u{7f}\n",
                2,
            ),
            ("\n\nGET\n", 3),
            ("GET http://h:1/\n\nGET http://other:1/s3cr3t-value\n", 3),
            ("GET http://h:1/\nX-A: 1\n@/nonexistent/body\n", 3),
            ("G:ET http://h:1/\n", 1),
        ];
        for (text, line) in cases {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.starts_with(&format!("line {line}: ")), "{text:?}: {e}");
            assert!(!e.contains("s3cr3t"), "{text:?}: {e}");
        }
        assert!(matches!(parse("# only\n\n"), Err(TargetsError::Empty)));
    }
}
