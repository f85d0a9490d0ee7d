//! Flows: steps a virtual user runs in order, with values captured from one response and
//! used in the requests after it (create a key, read it, patch it, delete it).

use std::time::Duration;

/// The longest value a capture can hold: captures read an answer's head and the first MiB
/// of its body (the rest is counted and dropped), so a template knows what it may fill to.
pub const MAX_CAPTURED: u64 = 1024 * 1024;

/// Where a captured value is found in a response.
#[derive(Debug, Clone)]
pub enum CaptureFrom {
    /// A JSON path into the body: `id`, `data.items[0].id`.
    Json(Vec<JsonStep>),
    /// A response header, by name.
    Header(http::HeaderName),
    /// The first group (or the whole match) of a regular expression over the body.
    Regex(regex::bytes::Regex),
}

/// One step of a JSON path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JsonStep {
    /// An object member.
    Key(String),
    /// An array element.
    Index(usize),
}

/// One value a request captures for the steps after it.
#[derive(Debug, Clone)]
pub struct Capture {
    /// The variable's name, as templates use it.
    pub name: String,
    /// Its slot among the scenario's variables.
    pub slot: usize,
    /// Where it is found.
    pub from: CaptureFrom,
}

/// A login each connection runs before its first request, whose captured values (a token)
/// the requests after it use, refreshed after a while or when a request is refused.
#[derive(Debug, Clone)]
pub struct Login {
    /// The login request, by index in the plan (its own row in the report).
    pub request: u16,
    /// Log in again after this long.
    pub refresh_after: Option<Duration>,
    /// Log in again after a request gets one of these statuses.
    pub refresh_on: Vec<u16>,
}

/// A sequence of requests a virtual user repeats.
#[derive(Debug, Clone)]
pub struct Flow {
    /// Its name in the report.
    pub name: String,
    /// Its share of the iterations, relative to the other flows.
    pub weight: u32,
    /// Pause between one step's answer and the next step.
    pub think: Duration,
    /// The requests, by index in the plan, in order.
    pub steps: Vec<u16>,
}

/// Parses `a.b[2].c` into steps; `None` when it is not a path.
pub fn json_path(text: &str) -> Option<Vec<JsonStep>> {
    let text = text.trim().trim_start_matches("$.").trim_start_matches('$');
    let mut steps = Vec::new();
    for part in text.split('.') {
        let (key, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if key.contains(']') {
            return None;
        }
        if !key.is_empty() {
            steps.push(JsonStep::Key(key.to_string()));
        } else if rest.is_empty() {
            return None;
        }
        while let Some(after) = rest.strip_prefix('[') {
            let close = after.find(']')?;
            steps.push(JsonStep::Index(after[..close].trim().parse().ok()?));
            rest = &after[close + 1..];
        }
        if !rest.is_empty() {
            return None;
        }
    }
    (!steps.is_empty()).then_some(steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_paths_read_keys_and_indexes() {
        assert_eq!(json_path("id"), Some(vec![JsonStep::Key("id".into())]));
        assert_eq!(
            json_path("$.data.items[2].id"),
            Some(vec![
                JsonStep::Key("data".into()),
                JsonStep::Key("items".into()),
                JsonStep::Index(2),
                JsonStep::Key("id".into())
            ])
        );
        assert_eq!(json_path("[0]"), Some(vec![JsonStep::Index(0)]));
        for bad in ["", "a..b", "a[x]", "a[1", "a]"] {
            assert_eq!(json_path(bad), None, "{bad}");
        }
    }
}
