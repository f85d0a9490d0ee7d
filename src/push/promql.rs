//! The PromQL that reads one run back from Prometheus, printed when a run pushed to it.
//!
//! Series are cumulative since the run's start, so their sample at the run's end is the
//! whole run. That end must be the exact instant (`end.json`'s `ended_unix`, milliseconds
//! included): the last sample is stamped within the last second, and an `@` rounded down to
//! a whole second reads the sample before it, one second short of the run.

use crate::store::{OutputKind, StoredRun};

/// The queries for the run stored as `stored` in a directory named `dir_name`: its request
/// count and its p99 over the whole run; `None` unless it pushed to Prometheus and ended.
pub fn for_run(stored: &StoredRun, dir_name: &str) -> Option<Vec<String>> {
    if !stored
        .outputs
        .iter()
        .any(|o| o.kind == OutputKind::Prometheus)
    {
        return None;
    }
    let end = stored.end.as_ref()?.unix_secs()?;
    let run_id = super::RunLabels::of(&stored.meta, dir_name).run_id;
    Some(queries(&run_id, end))
}

/// The run's request count and p99 at `end` (Unix seconds) for the series of `run_id`.
pub fn queries(run_id: &str, end: f64) -> Vec<String> {
    let run = format!("run_id=\"{}\"", quote(run_id));
    // Milliseconds: the precision of the samples' stamps and of `ended_unix`.
    let at = format!("@ {end:.3}");
    vec![
        format!("sum(headroom_requests_total{{{run}}} {at})"),
        format!(
            "histogram_quantile(0.99, sum(http_client_request_duration_seconds{{{run}, outcome=\"expected\"}} {at}))"
        ),
    ]
}

/// A PromQL string literal's content: backslashes, quotes and line breaks escaped.
fn quote(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_queries_name_the_run_quoted_and_its_end_to_the_millisecond() {
        let q = queries("a\"b\\c", 1_764_151_200.5);
        assert_eq!(
            q[0],
            r#"sum(headroom_requests_total{run_id="a\"b\\c"} @ 1764151200.500)"#
        );
        assert!(
            q[1].contains(r#"outcome="expected"} @ 1764151200.500))"#),
            "{}",
            q[1]
        );
    }
}
