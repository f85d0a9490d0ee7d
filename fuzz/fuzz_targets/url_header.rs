//! URLs (`Target::parse`) and `Name: value` headers (`-H`, scenario headers).
//!
//! Input: byte 0 (mod 4) picks the mode, the rest is text:
//! - 0, a URL: accepted, it has a host, a port from 1 to 65535, no user info, and a path
//!   and query that can go in a request line as they are (starting with `/`, no space or
//!   line break), and its scheme is the one it was written with;
//! - 1, a header: accepted, its value has no line break; refused, the error never shows the
//!   value of a secret header (authorization, cookie, …);
//! - 2, a URL with a password: `SCHEME://user:PASSWORD@REST`, the text split at its first
//!   NUL into SCHEME and REST: always refused, and the password is never in the error;
//! - 3, a secret header: `authorization: VALUE` (and the other secret names of
//!   [`SECRET_HEADERS`], by the text's length), its value never in the error when refused.
#![no_main]

use headroom::fuzzing::parse_header;
use headroom::plan::secret_names::is_secret_name;
use headroom::plan::{Scheme, Target};
use libfuzzer_sys::fuzz_target;

const PASSWORD: &str = "pAsSw0rd9";
const SECRET: &str = "s3cReT7";
/// Header names headroom's rule calls secret, of every kind it knows.
const SECRET_HEADERS: &[&str] = &[
    "authorization",
    "Proxy-Authorization",
    "cookie",
    "X-Api-Key",
    "X-Goog-Api-Key",
    "X-Access-Key",
    "apikey",
    "X-Auth-Token",
    "X-CSRF-Token",
];

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    match mode % 4 {
        0 => url(text),
        1 => header(text),
        2 => url_with_password(text),
        _ => secret_header(text),
    }
});

fn url(text: &str) {
    let Ok(t) = Target::parse(text) else {
        return;
    };
    assert!(!t.host.is_empty());
    assert_ne!(t.port, 0);
    assert!(!t.authority.contains('@'), "user info in {:?}", t.authority);
    assert!(
        t.path_and_query.starts_with('/'),
        "a request line cannot carry {:?} (from {text:?})",
        t.path_and_query
    );
    assert!(!t
        .path_and_query
        .bytes()
        .any(|b| b.is_ascii_whitespace() || b.is_ascii_control()));
    assert!(!t
        .authority
        .bytes()
        .any(|b| b.is_ascii_whitespace() || b.is_ascii_control()));
    let scheme = text.split(':').next().unwrap_or_default();
    match t.scheme {
        Scheme::Http => assert!(scheme.eq_ignore_ascii_case("http")),
        Scheme::Https => assert!(scheme.eq_ignore_ascii_case("https")),
    }
}

fn header(text: &str) {
    match parse_header(text) {
        Ok((name, value)) => {
            assert!(!name.as_str().is_empty());
            assert!(!value.as_bytes().iter().any(|&b| b == b'\r' || b == b'\n'));
        }
        Err(e) => {
            let shown = e.to_string();
            let Some((name, value)) = text.split_once(':') else {
                return;
            };
            let value = value.trim();
            let secret = is_secret_name(name.trim());
            // Short values could be in the message for other reasons.
            if secret && value.len() >= 6 && !name.contains(value) {
                assert!(
                    !shown.contains(value),
                    "{shown:?} shows the secret {value:?}"
                );
            }
        }
    }
}

fn url_with_password(text: &str) {
    let (scheme, rest) = text.split_once('\0').unwrap_or(("http", text));
    if scheme.contains("://") || rest.contains(PASSWORD) || scheme.contains(PASSWORD) {
        return;
    }
    let url = format!("{scheme}://user:{PASSWORD}@{rest}");
    match Target::parse(&url) {
        Ok(t) => panic!("user info accepted: {t:?}"),
        Err(e) => {
            let shown = e.to_string();
            assert!(!shown.contains(PASSWORD), "{shown:?}");
        }
    }
}

fn secret_header(text: &str) {
    if text.contains(SECRET) {
        return;
    }
    let name = SECRET_HEADERS[text.len() % SECRET_HEADERS.len()];
    assert!(is_secret_name(name), "{name}");
    let raw = format!("{name}: {SECRET}{text}");
    if let Err(e) = parse_header(&raw) {
        let shown = e.to_string();
        assert!(!shown.contains(SECRET), "{shown:?}");
    }
}
