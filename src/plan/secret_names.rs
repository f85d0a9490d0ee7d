//! Names that say their value is a credential (a header, a query parameter, a body field),
//! and text with such query values taken out: what import turns into variables and what a
//! stored run, a report or an error never shows.

/// True for a header, query parameter or body field whose value is a credential by its
/// name: `Authorization`, `Cookie`, `X-Api-Key`, `access_token`, `password`, `client_secret`….
pub fn is_secret_name(name: &str) -> bool {
    if crate::plan::request::is_sensitive(name) {
        return true;
    }
    let n: String = name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    const PARTS: &[&str] = &[
        "token",
        "secret",
        "passw",
        "apikey",
        "accesskey",
        "privatekey",
        "signature",
        "credential",
        "sessionid",
        "xauth",
    ];
    const WHOLE: &[&str] = &[
        "auth",
        "authorization",
        "sig",
        "session",
        "sid",
        "jwt",
        "pwd",
    ];
    PARTS.iter().any(|p| n.contains(p)) || WHOLE.contains(&n.as_str())
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

/// `text` (a URL, a path, or a command-line argument holding one) with the value of every
/// query parameter named like a credential replaced by `<redacted>`:
/// `/items?limit=10&access_token=abc` becomes `/items?limit=10&access_token=<redacted>`.
/// The request still sends the value; only what is shown or stored loses it.
pub fn redact_query(text: &str) -> String {
    let Some(q) = text.find('?') else {
        return text.to_string();
    };
    let (head, rest) = text.split_at(q + 1);
    let (query, fragment) = rest.split_at(rest.find('#').unwrap_or(rest.len()));
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, value)) if !value.is_empty() && is_secret_name(&percent_decoded(name)) => {
                format!("{name}=<redacted>")
            }
            _ => pair.to_string(),
        })
        .collect();
    format!("{head}{}{fragment}", pairs.join("&"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_hold_credentials() {
        for n in [
            "Authorization",
            "X-Api-Key",
            "access_token",
            "apiKey",
            "X-Auth-User",
            "password",
            "sig",
            "X-CSRF-Token",
        ] {
            assert!(is_secret_name(n), "{n}");
        }
        for n in [
            "author",
            "Accept",
            "limit",
            "key",
            "User-Agent",
            "Content-Type",
        ] {
            assert!(!is_secret_name(n), "{n}");
        }
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
        assert_eq!(redact_query("/plain/path"), "/plain/path");
        assert_eq!(redact_query("/x?token="), "/x?token=");
    }
}
