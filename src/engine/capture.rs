//! Taking values out of a kept response for the flow steps after it.

use super::reply::Kept;
use crate::plan::{Capture, CaptureFrom, JsonStep};

/// The value `capture` finds in `kept`, or `None` when it is not there.
pub fn extract(capture: &Capture, kept: &Kept) -> Option<Vec<u8>> {
    match &capture.from {
        CaptureFrom::Header(name) => kept
            .headers
            .get(name)
            .map(|v| v.as_bytes().trim_ascii().to_vec()),
        CaptureFrom::Regex(re) => {
            let found = re.captures(&kept.body)?;
            let m = found.get(1).or_else(|| found.get(0))?;
            Some(m.as_bytes().to_vec())
        }
        CaptureFrom::Json(path) => {
            let value: serde_json::Value = serde_json::from_slice(&kept.body).ok()?;
            let mut at = &value;
            for step in path {
                at = match step {
                    JsonStep::Key(k) => at.get(k)?,
                    JsonStep::Index(i) => at.get(i)?,
                };
            }
            match at {
                serde_json::Value::String(s) => Some(s.clone().into_bytes()),
                serde_json::Value::Null => None,
                other => Some(other.to_string().into_bytes()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(body: &str) -> Kept {
        let mut headers = http::HeaderMap::new();
        headers.insert(http::header::ETAG, http::HeaderValue::from_static("\"v7\""));
        Kept {
            headers,
            body: body.as_bytes().to_vec(),
            truncated: false,
        }
    }

    fn capture(from: CaptureFrom) -> Capture {
        Capture {
            name: "x".into(),
            slot: 0,
            from,
        }
    }

    #[test]
    fn values_come_from_json_paths_headers_and_regexes() {
        let k = kept(r#"{"data": {"items": [{"id": "k-1", "n": 7}]}, "token": "t=abc;"}"#);
        let json = |p: &str| {
            extract(
                &capture(CaptureFrom::Json(crate::plan::json_path(p).unwrap())),
                &k,
            )
        };
        assert_eq!(json("data.items[0].id"), Some(b"k-1".to_vec()));
        assert_eq!(json("data.items[0].n"), Some(b"7".to_vec()));
        assert_eq!(json("data.items[1].id"), None);
        assert_eq!(json("missing"), None);
        let etag = capture(CaptureFrom::Header(http::HeaderName::from_static("etag")));
        assert_eq!(extract(&etag, &k), Some(b"\"v7\"".to_vec()));
        let re = capture(CaptureFrom::Regex(
            regex::bytes::Regex::new("t=(\\w+)").unwrap(),
        ));
        assert_eq!(extract(&re, &k), Some(b"abc".to_vec()));
        assert_eq!(
            extract(
                &capture(CaptureFrom::Json(vec![JsonStep::Key("a".into())])),
                &kept("not json")
            ),
            None
        );
    }
}
