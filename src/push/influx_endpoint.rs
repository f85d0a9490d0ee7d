//! Which InfluxDB write API a `--push influxdb=URL` names, checked when the run starts, and
//! its credentials, read from the environment.
//!
//! The API is decided by the URL's path: `…/write?db=DB` is InfluxDB 1.x (credentials, when
//! the database wants them, as HTTP Basic auth from [`USER_VAR`] and [`PASSWORD_VAR`]);
//! `…/api/v2/write?org=ORG&bucket=BUCKET` is InfluxDB 2 (an API token from [`TOKEN_VAR`],
//! sent as `Authorization: Token …`). Credentials are never taken from the URL: the command
//! line is stored with the run and shown in errors, so a URL carrying `p=`, `u=`, a token or
//! user info is refused, naming the variable to set instead.

use crate::plan::secret_names::{is_secret_name, percent_decoded, user_info};
use base64::Engine as _;

/// The InfluxDB 1.x user name, when the database requires authentication.
pub const USER_VAR: &str = "HEADROOM_INFLUXDB_USER";
/// The InfluxDB 1.x password, with [`USER_VAR`].
pub const PASSWORD_VAR: &str = "HEADROOM_INFLUXDB_PASSWORD";
/// The InfluxDB 2 API token (write access to the bucket).
pub const TOKEN_VAR: &str = "HEADROOM_INFLUXDB_TOKEN";

/// InfluxDB 1.x's own names for its credentials in a query, which headroom's rule for what is
/// secret cannot know (elsewhere a `p` is a page): with the parameters that rule marks, they
/// are refused in a URL and hidden when one is shown.
const INFLUX_CREDENTIAL_PARAMS: [&str; 2] = ["u", "p"];

/// Whether a query parameter, by its decoded name, carries a credential.
fn is_credential(name: &str) -> bool {
    INFLUX_CREDENTIAL_PARAMS.contains(&name.to_ascii_lowercase().as_str()) || is_secret_name(name)
}

/// The InfluxDB HTTP write API a URL names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// InfluxDB 1.x: `/write?db=DB`.
    V1,
    /// InfluxDB 2: `/api/v2/write?org=ORG&bucket=BUCKET`.
    V2,
}

/// An `Authorization` header value; its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Authorization(String);

impl Authorization {
    /// The header's value, for the request only.
    pub fn value(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Authorization {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Authorization(***)")
    }
}

/// A checked InfluxDB write URL and how to authenticate to it.
#[derive(Debug, Clone, PartialEq)]
pub struct InfluxWrite {
    /// Which API.
    pub api: Api,
    /// The URL to POST to: as given, with `precision=ms` added when it was left out.
    pub write_url: String,
    /// The `Authorization` header, when credentials were set in the environment.
    pub authorization: Option<Authorization>,
}

/// Checks `url` (user info and query credentials refused) and reads its credentials with
/// `env` (the process environment, in use). The error says what to give instead and never
/// holds a credential.
pub fn check(url: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<InfluxWrite, String> {
    if user_info(url).is_some() {
        return Err(format!(
            "credentials are not taken from the URL (it is stored with the run): leave out user:password@ and set {USER_VAR} and {PASSWORD_VAR} (InfluxDB 1.x) or {TOKEN_VAR} (InfluxDB 2)"
        ));
    }
    let (path, query) = match url.split_once('?') {
        Some((p, q)) => (p, q.split_once('#').map_or(q, |(q, _)| q)),
        None => (url.split_once('#').map_or(url, |(p, _)| p), ""),
    };
    let params: Vec<(String, &str)> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (percent_decoded(k), v)
        })
        .collect();
    let has = |key: &str| {
        params
            .iter()
            .any(|(k, v)| k.eq_ignore_ascii_case(key) && !v.is_empty())
    };
    if let Some((key, _)) = params.iter().find(|(k, _)| is_credential(k)) {
        return Err(format!(
            "credentials are not taken from the URL (it is stored with the run): leave out {key}= and set {USER_VAR} and {PASSWORD_VAR} (InfluxDB 1.x) or {TOKEN_VAR} (InfluxDB 2)"
        ));
    }
    let path = path.trim_end_matches('/');
    let api = if path.ends_with("/api/v2/write") {
        Api::V2
    } else if path.ends_with("/write") {
        Api::V1
    } else {
        return Err(
            "the path must be /write?db=DB (InfluxDB 1.x) or /api/v2/write?org=ORG&bucket=BUCKET (InfluxDB 2)"
                .into(),
        );
    };
    match api {
        Api::V1 if !has("db") => {
            return Err("InfluxDB 1.x needs the database: /write?db=DB".into());
        }
        Api::V2 if !has("bucket") || !(has("org") || has("orgid")) => {
            return Err(
                "InfluxDB 2 needs the organization and the bucket: /api/v2/write?org=ORG&bucket=BUCKET"
                    .into(),
            );
        }
        _ => {}
    }
    // Timestamps are written in milliseconds; another precision would misplace every point.
    let write_url = match params
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("precision"))
    {
        Some((_, "ms")) => url.to_string(),
        Some(_) => return Err(
            "leave out precision= (headroom writes millisecond timestamps and sets precision=ms)"
                .into(),
        ),
        None if query.is_empty() => format!("{url}?precision=ms"),
        None => format!("{path}?{query}&precision=ms"),
    };
    let set = |name: &str| env(name).filter(|v| !v.is_empty());
    let authorization = match api {
        Api::V1 => match (set(USER_VAR), set(PASSWORD_VAR)) {
            (Some(user), Some(password)) => Some(Authorization(format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
            ))),
            (None, None) => None,
            (Some(_), None) => return Err(format!("{USER_VAR} is set: set {PASSWORD_VAR} too")),
            (None, Some(_)) => return Err(format!("{PASSWORD_VAR} is set: set {USER_VAR} too")),
        },
        Api::V2 => match set(TOKEN_VAR) {
            Some(token) => Some(Authorization(format!("Token {token}"))),
            None => {
                return Err(format!(
                    "InfluxDB 2 takes an API token: set {TOKEN_VAR} to a token with write access to the bucket"
                ))
            }
        },
    };
    Ok(InfluxWrite {
        api,
        write_url,
        authorization,
    })
}

/// `url` with the values of credential parameters replaced by `<redacted>`, for showing.
pub fn without_secret_params(url: &str) -> String {
    let Some((base, query)) = url.split_once('?') else {
        return url.to_string();
    };
    let params: Vec<String> = query
        .split('&')
        .map(|p| match p.split_once('=') {
            Some((k, _)) if is_credential(&percent_decoded(k)) => format!("{k}=<redacted>"),
            _ => p.to_string(),
        })
        .collect();
    format!("{base}?{}", params.join("&"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn the_path_decides_the_api_and_precision_ms_is_added() {
        let v1 = check("http://127.0.0.1:8086/write?db=load", &env(&[])).unwrap();
        assert_eq!(v1.api, Api::V1);
        assert_eq!(
            v1.write_url,
            "http://127.0.0.1:8086/write?db=load&precision=ms"
        );
        assert_eq!(v1.authorization, None);
        let v2 = check(
            "http://127.0.0.1:8086/api/v2/write?org=o&bucket=b",
            &env(&[(TOKEN_VAR, "t0k")]),
        )
        .unwrap();
        assert_eq!(v2.api, Api::V2);
        assert_eq!(
            v2.write_url,
            "http://127.0.0.1:8086/api/v2/write?org=o&bucket=b&precision=ms"
        );
        assert_eq!(v2.authorization.unwrap().value(), "Token t0k");
        let given = check("http://h:8086/write?db=x&precision=ms", &env(&[])).unwrap();
        assert_eq!(given.write_url, "http://h:8086/write?db=x&precision=ms");
    }

    #[test]
    fn v1_credentials_come_from_the_environment_as_basic_auth() {
        let w = check(
            "http://h:8086/write?db=x",
            &env(&[(USER_VAR, "alice"), (PASSWORD_VAR, "s3cret")]),
        )
        .unwrap();
        // base64("alice:s3cret")
        assert_eq!(
            w.authorization.clone().unwrap().value(),
            "Basic YWxpY2U6czNjcmV0"
        );
        assert!(!format!("{w:?}").contains("YWxpY2U6czNjcmV0"));
        let one = check("http://h:8086/write?db=x", &env(&[(USER_VAR, "alice")])).unwrap_err();
        assert!(one.contains(PASSWORD_VAR), "{one}");
    }

    #[test]
    fn credentials_in_the_url_and_wrong_urls_are_refused_without_showing_them() {
        for (url, says) in [
            ("http://h:8086/write?db=x&p=s3cret", "leave out p="),
            ("http://h:8086/write?db=x&u=bob&p=s3cret", "leave out u="),
            ("http://h:8086/write?db=x&%70=s3cret", "leave out p="),
            ("http://bob:s3cret@h:8086/write?db=x", "user:password@"),
            (
                "http://h:8086/api/v2/write?org=o&bucket=b&token=s3cret",
                "token=",
            ),
            (
                "http://h:8086/write?db=x&access_token=s3cret",
                "access_token=",
            ),
            ("http://h:8086/write?db=x&pwd=s3cret", "pwd="),
            ("http://h:8086/write", "/write?db=DB"),
            ("http://h:8086/api/v2/write?bucket=b", "org=ORG"),
            ("http://h:8086/query?db=x", "the path must be"),
            (
                "http://h:8086/write?db=x&precision=s",
                "leave out precision=",
            ),
            ("http://h:8086/api/v2/write?org=o&bucket=b", TOKEN_VAR),
        ] {
            let e = check(url, &env(&[])).unwrap_err();
            assert!(e.contains(says), "{url}: {e}");
            assert!(!e.contains("s3cret"), "{e}");
        }
    }

    #[test]
    fn shown_urls_hide_credential_parameters() {
        assert_eq!(
            without_secret_params("http://h/write?db=x&p=s3cret&%75=bob&apikey=k"),
            "http://h/write?db=x&p=<redacted>&%75=<redacted>&apikey=<redacted>"
        );
        assert_eq!(without_secret_params("http://h/write"), "http://h/write");
    }
}
