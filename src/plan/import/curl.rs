//! curl command lines: each is split as a POSIX shell would (the `shlex` crate) and read as
//! curl reads its options: `-X`, `-H`, `-d`/`--data`/`--data-raw`/`--data-binary`/
//! `--data-urlencode`/`--json`, `-u`, `--url`, `-k`, `-G`, `-I`, `-A`, `-e`, `-b`,
//! `--oauth2-bearer`, `--http2`. Options that only change curl's own output are ignored;
//! anything else is refused by name, so nothing the command meant is silently dropped.

use super::draft::{is_dropped_header, split_url, Body, Draft, Origin};
use super::{assemble, ImportError, Imported};
use crate::plan::scenario::file::HttpChoice;
use base64::Engine;

/// Commands of a file: one per line, a line ending in `\` going on on the next; blank lines
/// and `#` comments skipped. Each with the line it starts on.
pub fn split_file(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if current.is_none() && (line.trim().is_empty() || line.trim_start().starts_with('#')) {
            continue;
        }
        let (start, mut text) = current.take().unwrap_or((i + 1, String::new()));
        // An odd number of trailing backslashes continues the line (an even one is escaped).
        let trailing = line.len() - line.trim_end_matches('\\').len();
        if trailing % 2 == 1 {
            text.push_str(&line[..line.len() - 1]);
            text.push(' ');
            current = Some((start, text));
        } else {
            text.push_str(line);
            out.push((start, text));
        }
    }
    if let Some(last) = current {
        out.push(last);
    }
    out
}

/// A scenario from curl commands, each named for the error messages (`curl line 3`).
pub fn import(commands: &[(String, String)]) -> Result<Imported, ImportError> {
    if commands.is_empty() {
        return Err(ImportError::Empty(
            "no curl command given; pass 'curl …' arguments or --file FILE".into(),
        ));
    }
    let mut origin: Option<Origin> = None;
    let mut drafts = Vec::new();
    let mut notes = Vec::new();
    for (name, command) in commands {
        let (o, draft, mut n) = parse(name, command)?;
        notes.append(&mut n);
        match &mut origin {
            None => origin = Some(o),
            Some(first) => {
                if (&first.scheme, &first.authority) != (&o.scheme, &o.authority) {
                    return Err(ImportError::Unsupported(format!(
                        "{name} goes to {}://{}, the lines before it to {}://{}; a scenario has one target: import each server's lines apart",
                        o.scheme, o.authority, first.scheme, first.authority
                    )));
                }
                first.insecure |= o.insecure;
            }
        }
        drafts.push(draft);
    }
    notes.sort();
    notes.dedup();
    let origin = origin.expect("one command at least");
    let source = if commands.len() == 1 {
        "a curl command".to_string()
    } else {
        format!("{} curl commands", commands.len())
    };
    assemble(&origin, drafts, &source, notes)
}

/// What a command says: the options that matter, in curl's terms.
#[derive(Default)]
struct Command {
    url: Option<String>,
    method: Option<String>,
    headers: Vec<(String, String)>,
    data: Vec<String>,
    json: bool,
    get: bool,
    head: bool,
    user: Option<String>,
    insecure: bool,
    http2: bool,
}

/// Options that take a value and change nothing a load test sends (curl's own output,
/// retries, its proxy settings are refused below).
const IGNORED_WITH_VALUE: &[&str] = &[
    "-o",
    "--output",
    "-w",
    "--write-out",
    "--retry",
    "--retry-delay",
    "--retry-max-time",
    "-m",
    "--max-time",
    "--connect-timeout",
    "--stderr",
    "--trace",
    "--trace-ascii",
];
const IGNORED: &[&str] = &[
    "-s",
    "--silent",
    "-S",
    "--show-error",
    "-v",
    "--verbose",
    "-i",
    "--include",
    "-L",
    "--location",
    "-f",
    "--fail",
    "--fail-with-body",
    "-N",
    "--no-buffer",
    "-#",
    "--progress-bar",
    "--no-progress-meter",
    "--http1.1",
    "--globoff",
    "-g",
];

fn parse(name: &str, line: &str) -> Result<(Origin, Draft, Vec<String>), ImportError> {
    let refuse = |message: String| ImportError::Malformed {
        source_name: name.to_string(),
        at: None,
        message,
    };
    if has_ansi_c_quote(line) {
        return Err(refuse(
            "bash's $'…' quoting is not read: write the value in plain single or double quotes"
                .into(),
        ));
    }
    let words = shlex::split(line).ok_or_else(|| {
        refuse("unbalanced quotes or a trailing backslash: quote it as a shell would".into())
    })?;
    let mut words = words.into_iter();
    match words.next() {
        Some(w) if w == "curl" || w.ends_with("/curl") => {}
        _ => {
            return Err(refuse(
                "not a curl command: it must start with `curl` (one command per line)".into(),
            ))
        }
    }
    let mut c = Command::default();
    let mut notes = Vec::new();
    let mut rest: Vec<String> = words.collect();
    rest.reverse();
    while let Some(word) = rest.pop() {
        let (option, inline) = split_option(&word);
        let Some(option) = option else {
            c.set_url(word, &refuse)?;
            continue;
        };
        let takes_value = matches!(
            option.as_str(),
            "-X" | "--request"
                | "-H"
                | "--header"
                | "-d"
                | "--data"
                | "--data-raw"
                | "--data-ascii"
                | "--data-binary"
                | "--data-urlencode"
                | "--json"
                | "-u"
                | "--user"
                | "--url"
                | "-A"
                | "--user-agent"
                | "-e"
                | "--referer"
                | "-b"
                | "--cookie"
                | "--oauth2-bearer"
        ) || IGNORED_WITH_VALUE.contains(&option.as_str());
        let value = if takes_value {
            match inline {
                Some(v) => v,
                None => rest
                    .pop()
                    .ok_or_else(|| refuse(format!("{option} needs a value")))?,
            }
        } else {
            if let Some(more) = inline {
                // A cluster of short flags, `-sSk`: go on with the rest as its own word.
                rest.push(format!("-{more}"));
            }
            String::new()
        };
        match option.as_str() {
            "-X" | "--request" => c.method = Some(value.to_ascii_uppercase()),
            "-H" | "--header" => {
                if let Some((n, v)) = value.split_once(':') {
                    let (n, v) = (n.trim(), v.trim());
                    // `-H 'Name:'` removes a header curl would send: there is none to keep.
                    if !v.is_empty() && !is_dropped_header(n) {
                        c.headers.push((n.to_string(), v.to_string()));
                    }
                } else if !value.trim_end().ends_with(';') {
                    return Err(refuse(format!(
                        "-H takes \"Name: value\"; a header of {} characters has no colon",
                        value.chars().count()
                    )));
                }
            }
            "-d" | "--data" | "--data-ascii" => c.data.push(read_data(&value, true, &refuse)?),
            "--data-binary" => c.data.push(read_data(&value, false, &refuse)?),
            "--data-raw" => c.data.push(value),
            "--data-urlencode" => c.data.push(urlencoded(&value)),
            "--json" => {
                c.data.push(read_data(&value, false, &refuse)?);
                c.json = true;
            }
            "-u" | "--user" => c.user = Some(value),
            "--oauth2-bearer" => c.headers.push(("Authorization".into(), format!("Bearer {value}"))),
            "--url" => c.set_url(value, &refuse)?,
            "-A" | "--user-agent" => c.headers.push(("User-Agent".into(), value)),
            "-e" | "--referer" => c.headers.push(("Referer".into(), value)),
            "-b" | "--cookie" if value.contains('=') => c.headers.push(("Cookie".into(), value)),
            "-b" | "--cookie" => {
                notes.push("curl's cookie files (-b FILE) were not read: add a Cookie header if the requests need one".into())
            }
            "-k" | "--insecure" => c.insecure = true,
            "-G" | "--get" => c.get = true,
            "-I" | "--head" => c.head = true,
            "--http2" | "--http2-prior-knowledge" => c.http2 = true,
            "--compressed" => c.headers.push(("Accept-Encoding".into(), "deflate, gzip, br".into())),
            o if IGNORED.contains(&o) || IGNORED_WITH_VALUE.contains(&o) => {
                if matches!(o, "-m" | "--max-time" | "--connect-timeout") {
                    notes.push("curl's timeouts (-m, --connect-timeout) were not carried over: set target.timeout and target.connect_timeout".into());
                }
                if o.starts_with("--retry") {
                    notes.push("curl's retries (--retry, --retry-delay, --retry-max-time) were not carried over: a load test counts a failed request instead of retrying it".into());
                }
            }
            o => {
                return Err(refuse(format!(
                    "curl's option {o} cannot be imported; remove it (or import without it and edit the scenario)"
                )))
            }
        }
    }
    c.into_draft(name, notes)
}

/// Whether `line` uses bash's ANSI-C quoting (`$'…'`) outside other quotes: POSIX splitting
/// would keep the `$` and read the escapes literally (a header named `$X-A`).
fn has_ansi_c_quote(line: &str) -> bool {
    let (mut single, mut double, mut escaped) = (false, false, false);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' if !single => escaped = true,
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '$' if !single && !double && chars.peek() == Some(&'\'') => return true,
            _ => {}
        }
    }
    false
}

/// `--name=value` → (`--name`, value); `-Xvalue` → (`-X`, `value`); `-sSk` → (`-s`, `Sk`);
/// a word that is no option → (None, None).
fn split_option(word: &str) -> (Option<String>, Option<String>) {
    if let Some(long) = word.strip_prefix("--") {
        if long.is_empty() {
            return (None, None);
        }
        return match long.split_once('=') {
            Some((n, v)) => (Some(format!("--{n}")), Some(v.to_string())),
            None => (Some(word.to_string()), None),
        };
    }
    let Some(short) = word.strip_prefix('-') else {
        return (None, None);
    };
    let mut chars = short.chars();
    let Some(first) = chars.next() else {
        return (None, None);
    };
    let rest: String = chars.collect();
    let option = format!("-{first}");
    // The rest is the option's value (`-XPOST`) or more flags (`-sSk`): the caller knows
    // which options take a value.
    (Some(option), (!rest.is_empty()).then_some(rest))
}

/// `-d @file` reads the file (without its line breaks, as curl does for `-d`); other values
/// are taken as written.
fn read_data(
    value: &str,
    strip_newlines: bool,
    refuse: &dyn Fn(String) -> ImportError,
) -> Result<String, ImportError> {
    let Some(file) = value.strip_prefix('@') else {
        return Ok(value.to_string());
    };
    if file == "-" {
        return Err(refuse(
            "data from standard input (@-) cannot be imported; save it to a file and give @FILE"
                .into(),
        ));
    }
    let text = super::read_input(std::path::Path::new(file))?;
    Ok(if strip_newlines {
        text.replace(['\r', '\n'], "")
    } else {
        text
    })
}

/// `--data-urlencode` as curl encodes it: `name=content` → `name=` + encoded content.
fn urlencoded(value: &str) -> String {
    let encode = |s: &str| {
        let mut out = String::new();
        for b in s.bytes() {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                out.push(b as char);
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
        out
    };
    match value.split_once('=') {
        Some((name, content)) if !name.is_empty() => format!("{name}={}", encode(content)),
        Some((_, content)) => encode(content),
        None => encode(value),
    }
}

impl Command {
    fn set_url(
        &mut self,
        url: String,
        refuse: &dyn Fn(String) -> ImportError,
    ) -> Result<(), ImportError> {
        if self.url.is_some() {
            return Err(refuse(
                "more than one URL in one curl command; write one command per URL".into(),
            ));
        }
        self.url = Some(url);
        Ok(())
    }

    fn into_draft(
        mut self,
        name: &str,
        notes: Vec<String>,
    ) -> Result<(Origin, Draft, Vec<String>), ImportError> {
        let url = self.url.take().ok_or_else(|| ImportError::Malformed {
            source_name: name.to_string(),
            at: None,
            message: "no URL: give it as an argument or with --url".into(),
        })?;
        // curl takes a URL without a scheme as http.
        let url = if url.contains("://") {
            url
        } else {
            format!("http://{url}")
        };
        let (scheme, authority, mut path, user_info) = split_url(&url, name)?;
        let user = self.user.take().or(user_info);
        if let Some(user) = user {
            let credential = base64::engine::general_purpose::STANDARD.encode(user.as_bytes());
            self.headers
                .push(("Authorization".into(), format!("Basic {credential}")));
        }
        let has = |headers: &[(String, String)], n: &str| {
            headers.iter().any(|(h, _)| h.eq_ignore_ascii_case(n))
        };
        let mut body = None;
        if !self.data.is_empty() {
            let joined = self.data.join("&");
            if self.get {
                path.push(if path.contains('?') { '&' } else { '?' });
                path.push_str(&joined);
            } else {
                if self.json && !has(&self.headers, "accept") {
                    self.headers
                        .push(("Accept".into(), "application/json".into()));
                }
                let content_type = if self.json {
                    "application/json"
                } else {
                    "application/x-www-form-urlencoded"
                };
                body = Some(Body {
                    bytes: joined.into_bytes(),
                    content_type: (!has(&self.headers, "content-type"))
                        .then(|| content_type.to_string()),
                });
            }
        }
        let method = match (self.method, self.head, &body) {
            (Some(m), _, _) => m,
            (None, true, _) => "HEAD".into(),
            (None, false, Some(_)) => "POST".into(),
            (None, false, None) => "GET".into(),
        };
        let origin = Origin {
            scheme,
            authority,
            base_path: String::new(),
            insecure: self.insecure,
            http: if self.http2 {
                HttpChoice::Http2
            } else {
                HttpChoice::Auto
            },
        };
        Ok((
            origin,
            Draft {
                name: None,
                method,
                path,
                headers: self.headers,
                body,
                expect: None,
            },
            notes,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(line: &str) -> Imported {
        import(&[("curl line 1".into(), line.into())]).unwrap()
    }

    #[test]
    fn a_file_of_commands_with_continuations() {
        let text = "# comment\ncurl -X POST \\\n  -H 'A: b' \\\n  http://h/x\n\ncurl http://h/y \\\\\ncurl http://h/z\\";
        let cmds = split_file(text);
        assert_eq!(cmds.len(), 3, "{cmds:?}");
        assert_eq!(
            cmds[0],
            (2, "curl -X POST    -H 'A: b'    http://h/x".into())
        );
        assert_eq!(cmds[1].0, 6);
        assert_eq!(cmds[2], (7, "curl http://h/z ".into()));
    }

    #[test]
    fn options_become_the_request() {
        let i = one(
            r#"curl -sSk -XPUT --url 'https://127.0.0.1:8443/v1/k?x=1' -H 'X-Trace: 7' --data-raw '{"a":1}' -H "Content-Type: application/json""#,
        );
        let r = &i.scenario.requests[0];
        assert_eq!(
            (r.name.as_str(), r.method.as_str(), r.path.as_str()),
            ("PUT /v1/k", "PUT", "/v1/k?x=1")
        );
        assert_eq!(r.headers["X-Trace"], "7");
        assert!(i.scenario.target.tls.insecure);
        assert_eq!(
            i.scenario.target.url.as_deref(),
            Some("https://127.0.0.1:8443")
        );
        assert_eq!(i.bodies[0].1, br#"{"a":1}"#);
        let j = one("curl --json '{\"b\":2}' -u alice:pa55word http://h:8080/j");
        let r = &j.scenario.requests[0];
        assert_eq!(r.method, "POST");
        assert_eq!(r.headers["Content-Type"], "application/json");
        assert_eq!(r.headers["Authorization"], "Basic ${HEADROOM_BASIC_AUTH}");
        let g = one("curl -G -d q=1 -d r=2 http://h/s");
        assert_eq!(g.scenario.requests[0].path, "/s?q=1&r=2");
        assert_eq!(g.scenario.requests[0].method, "GET");
    }

    #[test]
    fn mistakes_are_one_line_and_keep_values_out() {
        let cases = [
            ("wget http://h/", "must start with `curl`"),
            ("curl 'http://h/", "unbalanced quotes"),
            ("curl -F a=@s3cret http://h/", "option -F"),
            ("curl -H 's3cret-no-colon' http://h/", "no colon"),
            ("curl http://h/a http://h/b", "more than one URL"),
            ("curl -X", "-X needs a value"),
            ("curl ftp://u:s3cret@h/", "only http and https"),
            (
                "curl -H $'X-A: s3cret' http://h/",
                "$'…' quoting is not read",
            ),
        ];
        for (line, want) in cases {
            let e = import(&[("curl line 4".into(), line.into())])
                .unwrap_err()
                .to_string();
            assert!(
                e.contains(want) && e.starts_with("curl line 4"),
                "{line}: {e}"
            );
            assert!(!e.contains("s3cret") && !e.contains('\n'), "{e}");
        }
        let e = import(&[
            ("curl line 1".into(), "curl http://a/".into()),
            ("curl line 2".into(), "curl http://b/".into()),
        ])
        .unwrap_err();
        assert!(e.to_string().contains("one target"), "{e}");
    }

    #[test]
    fn ansi_c_quoting_is_refused_only_outside_other_quotes() {
        assert!(has_ansi_c_quote("curl -H $'X-A: 1' http://h/"));
        assert!(!has_ansi_c_quote("curl -d '$'\"'\"' http://h/"));
        assert!(!has_ansi_c_quote("curl -d \"price: $'\" http://h/"));
        assert!(!has_ansi_c_quote("curl -d \\$'a' http://h/"));
        let got = one("curl -d \"cost=$'5\" http://h/");
        assert!(
            !got.notes.iter().any(|n| n.contains("$'")),
            "{:?}",
            got.notes
        );
    }

    #[test]
    fn retries_are_ignored_with_a_note() {
        let got = one("curl --retry 3 --retry-delay 1 http://h/");
        assert!(
            got.notes.iter().any(|n| n.contains("--retry")),
            "{:?}",
            got.notes
        );
    }
}
