//! The one rule for what is secret. A name says its value is a credential (a header, a query
//! or form parameter, a JSON field, a data column, a field on a scenario path), and a URL
//! carries one in its user info or in a query value named like one. Import turns what this
//! rule marks into `${VARIABLES}`, `kube` moves it to the Secret, and a stored run, a report,
//! an error or a live output shows `<redacted>` in its place. Nothing else decides.
//!
//! A name is split into words (at every character that is not a letter or digit, and where
//! camelCase changes case: `X-Goog-Api-Key`, `apiKey`, `XAuthToken`), and is secret when:
//! - its letters and digits, run together in lowercase, hold a part no harmless name does:
//!   `passw` (password, passwd), `passphrase`, `secret`, `credential`, `apikey`, `accesskey`,
//!   `privatekey`, `sessionid`, `sessid`, `signature`, `authorization`, `cookie`, `csrf`,
//!   `xsrf`;
//! - a word is `pwd`, `pin`, `otp`, `jwt`, `sid`, `sig` or `auth`, or ends with `token`
//!   (`token`, `access_token`, `csrfToken`, `accesstoken`);
//! - its last word is `session`;
//! - a word `key` or `keys` follows a word saying what kind (`api`, `access`, `private`,
//!   `secret`, `signing`, `client`, `master`, `auth`, `encryption`, `subscription`, `session`,
//!   `app`, `application`, `license`), or ends an `X-…-Key` header.
//!
//! Edge cases, decided: `key` alone is not secret (a key-value API's `key=user42`), nor is
//! `public_key` or `key_id`; `tokens`, `max_tokens` and `tokenizer` are not (a language
//! model's parameters), while `access_token` is; `author`, `authority`, `signal`, `sidebar`
//! and `pinned` are not (whole words, not parts). A harmless name marked secret costs a
//! `<redacted>` or a variable; a credential missed costs a leak, so doubtful parts lean to
//! secret (`X-Auth-User`, `cookie_consent`, `AWSAccessKeyId`).

use std::ops::Range;

/// Parts that make a name secret wherever they stand in it, letters and digits run together.
const SECRET_PARTS: &[&str] = &[
    "passw",
    "passphrase",
    "secret",
    "credential",
    "apikey",
    "accesskey",
    "privatekey",
    "sessionid",
    "sessid",
    "signature",
    "authorization",
    "cookie",
    "csrf",
    "xsrf",
];

/// Words that make a name secret when they are a whole word of it: as parts they would
/// catch `design`, `sidebar`, `author`, `spin`.
const SECRET_WORDS: &[&str] = &["pwd", "pin", "otp", "jwt", "sid", "sig", "auth"];

/// Words that make a following `key` a credential (`api_key`, `Ocp-Apim-Subscription-Key`).
const KEY_KINDS: &[&str] = &[
    "api",
    "access",
    "private",
    "secret",
    "signing",
    "client",
    "master",
    "auth",
    "encryption",
    "subscription",
    "session",
    "app",
    "application",
    "license",
];

/// True for a header, query or form parameter, JSON field or data column whose value is a
/// credential by its name (see the module's rule).
pub fn is_secret_name(name: &str) -> bool {
    let words = words(name);
    let flat: String = words.concat();
    if SECRET_PARTS.iter().any(|p| flat.contains(p)) {
        return true;
    }
    if words
        .iter()
        .any(|w| SECRET_WORDS.contains(&w.as_str()) || w.ends_with("token"))
    {
        return true;
    }
    if words.last().is_some_and(|w| w == "session") {
        return true;
    }
    let is_key = |w: &String| w == "key" || w == "keys";
    let kind_then_key = words
        .windows(2)
        .any(|pair| KEY_KINDS.contains(&pair[0].as_str()) && is_key(&pair[1]));
    let custom_key_header = words.len() > 2 && words[0] == "x" && words.last().is_some_and(is_key);
    kind_then_key || custom_key_header
}

/// The words of a name, lowercase: split at every character that is not a letter or digit,
/// and where camelCase starts a word (`XAuthToken` → x, auth, token).
fn words(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut word = String::new();
    let chars: Vec<char> = name.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            continue;
        }
        let prev = i.checked_sub(1).map(|j| chars[j]);
        let next = chars.get(i + 1);
        let starts_word = c.is_uppercase()
            && prev.is_some_and(|p| {
                p.is_lowercase()
                    || p.is_ascii_digit()
                    || (p.is_uppercase() && next.is_some_and(|n| n.is_lowercase()))
            });
        if starts_word && !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// True when a scenario path (`--set`, `--matrix`, a field `kube` writes; comma-separated
/// paths taking one value) leads to a value that is secret: a field named by the rule
/// anywhere on it (`target.headers.X-Api-Key`, `data.x.password`), or a body (`body`,
/// `json`, `form`: a body may hold anything).
pub fn is_secret_path(paths: &str) -> bool {
    paths.split(',').any(|path| {
        path.split(['.', '[', ']'])
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .any(|s| {
                is_secret_name(s)
                    || ["body", "json", "form"]
                        .iter()
                        .any(|b| s.eq_ignore_ascii_case(b))
            })
    })
}

/// `Name: value` with the value replaced by `<redacted>` when the name is secret; other
/// text (a request line, a line without a colon) as it is.
pub fn redact_header_line(line: &str) -> String {
    match line.split_once(':') {
        Some((name, _)) if is_secret_name(name.trim()) => {
            format!("{}: <redacted>", name.trim())
        }
        _ => line.to_string(),
    }
}

/// `%5F` → `_`, for matching a parameter's name (invalid escapes are left as written).
pub(crate) fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b'+', _, _) => {
                out.push(b' ');
                i += 1;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The byte ranges of `text` (a URL, a path, or text holding one) whose values are secret:
/// the value of every query parameter named by the rule (`access_token=abc` → `abc`). An
/// empty value is none, and so is a `${VARIABLE}` reference (a scenario's, or shown in its
/// value's place): it names where the secret comes from.
pub fn secret_query_values(text: &str) -> Vec<Range<usize>> {
    let Some(q) = text.find('?') else {
        return Vec::new();
    };
    let end = text[q..].find('#').map_or(text.len(), |i| q + i);
    let mut out = Vec::new();
    let mut at = q + 1;
    for pair in text[q + 1..end].split('&') {
        if let Some((name, value)) = pair.split_once('=') {
            if !value.is_empty() && !is_reference(value) && is_secret_name(&percent_decoded(name)) {
                let start = at + name.len() + 1;
                out.push(start..start + value.len());
            }
        }
        at += pair.len() + 1;
    }
    out
}

/// Whether `value` is one `${NAME}` reference and nothing else.
fn is_reference(value: &str) -> bool {
    value
        .strip_prefix("${")
        .and_then(|v| v.strip_suffix('}'))
        .is_some_and(|inner| !inner.is_empty() && !inner.contains(['$', '{', '}']))
}

/// The byte range of a URL's user info (`user:password` of `https://user:password@host/`),
/// when it has one.
pub fn user_info(url: &str) -> Option<Range<usize>> {
    let start = url.find("://")? + 3;
    let end = url[start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| start + i);
    url[start..end].rfind('@').map(|at| start..start + at)
}

/// `text` with every range of `ranges` (sorted, apart) replaced by `with`.
fn replace_ranges(text: &str, ranges: &[Range<usize>], with: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for r in ranges {
        out.push_str(&text[from..r.start]);
        out.push_str(with);
        from = r.end;
    }
    out.push_str(&text[from..]);
    out
}

/// `text` (a URL, a path, or a command-line argument holding one) with the value of every
/// query parameter named like a credential replaced by `<redacted>`:
/// `/items?limit=10&access_token=abc` becomes `/items?limit=10&access_token=<redacted>`.
/// The request still sends the value; only what is shown or stored loses it.
pub fn redact_query(text: &str) -> String {
    replace_ranges(text, &secret_query_values(text), "<redacted>")
}

/// `url` with its user info shown as `***` and its secret query values as `<redacted>`:
/// what an error, a report or a stored run shows of a URL.
pub fn redact_url(url: &str) -> String {
    let shown = match user_info(url) {
        Some(r) => replace_ranges(url, &[r], "***"),
        None => url.to_string(),
    };
    redact_query(&shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule's table: every name here is decided, and a change to the rule that moves one
    /// is a change to what headroom shows.
    #[test]
    fn the_rule_decides_these_names() {
        for n in [
            // Credential headers.
            "Authorization",
            "Proxy-Authorization",
            "Cookie",
            "Set-Cookie",
            "X-Api-Key",
            "X-Goog-Api-Key",
            "X-Access-Key",
            "apikey",
            "X-Auth-Token",
            "X-Vault-Token",
            "X-Amz-Security-Token",
            "X-Amz-Signature",
            "X-CSRF-Token",
            "X-Auth-User",
            "Ocp-Apim-Subscription-Key",
            "X-Functions-Key",
            "DD-APPLICATION-KEY",
            // Query and form parameters, JSON fields, data columns.
            "passwd",
            "pwd",
            "password",
            "new_password",
            "passphrase",
            "api_key",
            "apiKey",
            "APIKey",
            "api-key",
            "access_token",
            "accessToken",
            "accesstoken",
            "refresh_token",
            "id_token",
            "token",
            "client_secret",
            "clientSecret",
            "private_key",
            "secret_key",
            "credentials",
            "jwt",
            "sig",
            "sid",
            "session",
            "user_session",
            "session_id",
            "PHPSESSID",
            "JSESSIONID",
            "pin",
            "otp",
            "_csrf",
            "auth",
            "basic_auth",
        ] {
            assert!(is_secret_name(n), "{n} should be secret");
        }
        for n in [
            "author",
            "authority",
            "key",
            "keys",
            "key_id",
            "public_key",
            "keyboard",
            "monkey",
            "limit",
            "Accept",
            "Accept-Encoding",
            "User-Agent",
            "Content-Type",
            "Cache-Control",
            "X-Request-Id",
            "Host",
            "Referer",
            "tokenizer",
            "tokens",
            "max_tokens",
            "signal",
            "design",
            "sidebar",
            "pinned",
            "spin",
            "session_timeout",
            "compass",
            "user",
            "username",
            "email",
            "id",
            "",
        ] {
            assert!(!is_secret_name(n), "{n} should not be secret");
        }
    }

    #[test]
    fn paths_to_credentials_and_bodies_are_secret() {
        for path in [
            "target.headers.Authorization",
            "target.headers.X-Goog-Api-Key",
            "target.headers[apikey]",
            "requests[login].json.password",
            "requests.write.body",
            "requests.x.form",
            "load.rate, target.headers.X-Api-Key",
            "target.headers[Cookie]",
            "data.accounts.pwd",
        ] {
            assert!(is_secret_path(path), "{path}");
        }
        for path in [
            "load.rate",
            "requests.read.weight",
            "target.headers.X-Env",
            "target.tls.key",
        ] {
            assert!(!is_secret_path(path), "{path}");
        }
    }

    #[test]
    fn header_lines_lose_secret_values() {
        assert_eq!(
            redact_header_line("Authorization: Bearer s3cret"),
            "Authorization: <redacted>"
        );
        assert_eq!(
            redact_header_line("X-Goog-Api-Key: k"),
            "X-Goog-Api-Key: <redacted>"
        );
        assert_eq!(redact_header_line("Accept: */*"), "Accept: */*");
        assert_eq!(redact_header_line("GET /a:b HTTP/1.1"), "GET /a:b HTTP/1.1");
    }

    #[test]
    fn credential_query_values_are_taken_out_of_what_is_shown() {
        assert_eq!(
            redact_query("http://h/items?limit=10&access_token=abc#top"),
            "http://h/items?limit=10&access_token=<redacted>#top"
        );
        assert_eq!(
            redact_query("/x?api%5Fkey=k&q=a=b"),
            "/x?api%5Fkey=<redacted>&q=a=b"
        );
        assert_eq!(
            redact_query("/x?apikey=k&pwd=p"),
            "/x?apikey=<redacted>&pwd=<redacted>"
        );
        assert_eq!(redact_query("/plain/path"), "/plain/path");
        assert_eq!(redact_query("/x?token="), "/x?token=");
        assert_eq!(redact_query("/x?key=k1"), "/x?key=k1");
        assert_eq!(
            redact_query("/x?api_key=${KEY}&sig=${A}b"),
            "/x?api_key=${KEY}&sig=<redacted>"
        );
    }

    #[test]
    fn user_info_is_found_before_the_host_only() {
        assert_eq!(
            redact_url("https://u:p@h:1/a@b?sig=s"),
            "https://***@h:1/a@b?sig=<redacted>"
        );
        assert_eq!(user_info("https://h/a@b"), None);
        assert_eq!(user_info("not a url"), None);
        let url = "http://a:b@c@h/";
        assert_eq!(&url[user_info(url).unwrap()], "a:b@c");
    }
}
