//! InfluxDB line protocol: each second, one point per request (per stage, in a staged run)
//! with that second's counts and latency percentiles, all in one write.
//!
//! One point per second per request, not one per request: an output that writes a line per
//! request (k6 writes four) overloads InfluxDB at load-test rates (k6 issue #4167), and the
//! percentiles of a second come from its HDR histogram, which a point per request would
//! throw away.
//!
//! A point (measurement [`MEASUREMENT`], tags sorted by key as InfluxDB prefers):
//! `http_client_requests,method=GET,request=GET\ /,run_id=R[,shard=N][,stage_name=NAME,stage=N] count=250i,
//! ok=250i,failed=0i,status_1xx=0i,status_2xx=250i,…,errors=0i,p50_us=…i,…,max_us=…i,
//! mean_us=… TIMESTAMP`, stamped in milliseconds at the end of the second it covers (the
//! run's start plus the interval's index and one), as the Prometheus samples are. The
//! latency fields (from the intended send, of the answers the request expects: headroom's
//! own percentiles) are left out of a second that had none.

use super::deliver::Batch;
use super::RunLabels;
use crate::record::{Histogram, RequestStats, StatusClass};
use crate::store::IntervalLine;
use std::fmt::Write as _;

/// The measurement every point is written to.
pub const MEASUREMENT: &str = "http_client_requests";

/// The HTTP headers of a write, with its `Authorization` when there is one.
pub fn headers(authorization: Option<&str>) -> Vec<(&'static str, String)> {
    let mut headers = vec![("Content-Type", "text/plain; charset=utf-8".to_string())];
    if let Some(a) = authorization {
        headers.push(("Authorization", a.to_string()));
    }
    headers
}

/// Turns each second into its points; the tags are escaped once, when the run starts.
#[derive(Debug)]
pub struct LineProtocol {
    /// Per request of the plan: `method=…,request=…`.
    request_tags: Vec<String>,
    /// `run_id=…` and, in a sharded run, `,shard=N`.
    run_tags: String,
    started_ms: i64,
    /// Each stage's name by index, for the `stage_name` tag.
    stage_names: Vec<String>,
    /// What a request without completions in a second met.
    empty: RequestStats,
}

impl LineProtocol {
    /// The points of the run `labels` describe.
    pub fn new(labels: &RunLabels) -> LineProtocol {
        let request_tags = labels
            .requests
            .iter()
            .map(|(name, method)| {
                let mut tags = String::new();
                tag(&mut tags, "method", method);
                tag(&mut tags, "request", name);
                tags
            })
            .collect();
        let mut run_tags = String::new();
        tag(&mut run_tags, "run_id", &labels.run_id);
        if let Some(shard) = labels.shard {
            tag(&mut run_tags, "shard", &shard.to_string());
        }
        LineProtocol {
            request_tags,
            run_tags,
            started_ms: labels.started_ms,
            stage_names: labels.stages.clone(),
            empty: RequestStats::default(),
        }
    }

    /// The write of one second: a point per request (per stage the second's answers were
    /// sent for, in a staged run), as one body. A request without completions that second
    /// gets its zeros (the record leaves it out).
    pub fn batch(&self, line: &IntervalLine) -> Batch {
        let record = &line.record;
        let seconds = i64::try_from(record.index.saturating_add(1)).unwrap_or(i64::MAX);
        let at_ms = self.started_ms.saturating_add(seconds.saturating_mul(1000));
        // A stage whose requests only left this second (no answer yet) has no point.
        let answered: Vec<(Option<u16>, &[RequestStats])> = record
            .steps
            .iter()
            .filter(|(_, step)| !step.requests.is_empty())
            .map(|(stage, step)| (Some(*stage), step.requests.as_slice()))
            .collect();
        let parts = if answered.is_empty() {
            vec![(None, record.requests.as_slice())]
        } else {
            answered
        };
        let mut body = String::with_capacity(512 * parts.len() * self.request_tags.len());
        let mut points = 0;
        for (stage, requests) in parts {
            for (i, tags) in self.request_tags.iter().enumerate() {
                let stats = requests.get(i).unwrap_or(&self.empty);
                self.point(&mut body, tags, stage, stats, at_ms);
                points += 1;
            }
        }
        Batch {
            body: body.into_bytes(),
            samples: points,
        }
    }

    /// Appends the point of the request tagged `request_tags`.
    fn point(
        &self,
        out: &mut String,
        request_tags: &str,
        stage: Option<u16>,
        stats: &RequestStats,
        at_ms: i64,
    ) {
        out.push_str(MEASUREMENT);
        out.push_str(request_tags);
        out.push_str(&self.run_tags);
        if let Some(stage) = stage {
            // The name first: the index stays the last tag, as before the name was added.
            if let Some(name) = self.stage_names.get(usize::from(stage)) {
                tag(out, "stage_name", name);
            }
            let _ = write!(out, ",stage={stage}");
        }
        let by_class = stats.count_by_class();
        let n = |class| by_class.get(&class).copied().unwrap_or(0);
        let _ = write!(
            out,
            " count={}i,ok={}i,failed={}i,status_1xx={}i,status_2xx={}i,status_3xx={}i,status_4xx={}i,status_5xx={}i,errors={}i",
            stats.count,
            stats.count - stats.failures.min(stats.count),
            stats.failures,
            n(StatusClass::Informational),
            n(StatusClass::Success),
            n(StatusClass::Redirect),
            n(StatusClass::ClientError),
            n(StatusClass::ServerError),
            n(StatusClass::Failed),
        );
        latency_fields(out, &stats.latency);
        let _ = writeln!(out, " {at_ms}");
    }
}

/// `,p50_us=…i,…,max_us=…i,mean_us=…` from `h`, when it holds any value.
fn latency_fields(out: &mut String, h: &Histogram) {
    if h.is_empty() {
        return;
    }
    for (name, q) in [
        ("p50_us", 0.5),
        ("p90_us", 0.9),
        ("p95_us", 0.95),
        ("p99_us", 0.99),
        ("p999_us", 0.999),
    ] {
        let _ = write!(out, ",{name}={}i", h.inner().value_at_quantile(q));
    }
    let _ = write!(
        out,
        ",max_us={}i,mean_us={:.1}",
        h.inner().max(),
        h.inner().mean()
    );
}

/// Appends `,key=value`, both escaped; an empty value is left out (line protocol has no
/// empty tag value, and InfluxQL's `tag = ''` matches a point without the tag).
fn tag(out: &mut String, key: &str, value: &str) {
    if value.is_empty() {
        return;
    }
    out.push(',');
    escape(out, key);
    out.push('=');
    escape(out, value);
}

/// Escapes a tag key or value: a comma, an equals sign or a space gets a backslash; a line
/// break (which no escape can carry) becomes a space. A backslash right before one of those
/// or at the end would escape the next character, so it is doubled (InfluxDB 2 reads `\\`
/// as one backslash; 1.x keeps both, which still parses).
fn escape(out: &mut String, s: &str) {
    let special = |c: char| matches!(c, ',' | '=' | ' ' | '\n' | '\r');
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ',' | '=' | ' ' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push_str("\\ "),
            '\\' if chars.peek().is_none_or(|&n| special(n)) => out.push_str("\\\\"),
            _ => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::IntervalRecord;
    use crate::store::IntervalLine;
    use std::time::Duration;

    fn labels(shard: Option<u32>, started_ms: i64) -> RunLabels {
        RunLabels {
            run_id: "run 1".into(),
            shard,
            requests: vec![
                ("GET /a,b=c".into(), "GET".into()),
                ("post".into(), "POST".into()),
            ],
            stages: vec!["ramp".into(), "hold 1".into()],
            started_ms,
        }
    }

    fn stats(latencies_ms: &[u64], status: &[(u16, u64)]) -> RequestStats {
        let mut s = RequestStats::default();
        for ms in latencies_ms {
            s.count += 1;
            s.latency.record(Duration::from_millis(*ms));
        }
        for (code, n) in status {
            s.status.insert(*code, *n);
        }
        s
    }

    fn line(record: IntervalRecord) -> IntervalLine {
        IntervalLine {
            record,
            health: Default::default(),
            stage: None,
            server: None,
            shards: Vec::new(),
        }
    }

    #[test]
    fn a_second_is_one_point_per_request_with_escaped_tags_and_the_hdr_percentiles() {
        let lp = LineProtocol::new(&labels(Some(2), 1_700_000_000_000));
        let mut record = IntervalRecord {
            index: 4,
            requests: vec![stats(&[1, 2, 3, 4], &[(200, 3), (503, 1)]), stats(&[], &[])],
            ..Default::default()
        };
        record.requests[0].failures = 1;
        let batch = lp.batch(&line(record.clone()));
        assert_eq!(batch.samples, 2);
        let text = String::from_utf8(batch.body).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let h = &record.requests[0].latency;
        assert_eq!(
            lines[0],
            format!(
                "http_client_requests,method=GET,request=GET\\ /a\\,b\\=c,run_id=run\\ 1,shard=2 count=4i,ok=3i,failed=1i,status_1xx=0i,status_2xx=3i,status_3xx=0i,status_4xx=0i,status_5xx=1i,errors=0i,p50_us={}i,p90_us={}i,p95_us={}i,p99_us={}i,p999_us={}i,max_us={}i,mean_us={:.1} 1700000005000",
                h.inner().value_at_quantile(0.5),
                h.inner().value_at_quantile(0.9),
                h.inner().value_at_quantile(0.95),
                h.inner().value_at_quantile(0.99),
                h.inner().value_at_quantile(0.999),
                h.inner().max(),
                h.inner().mean(),
            )
        );
        // A second without answers still says so (a zero, not a gap), without latency.
        assert_eq!(
            lines[1],
            "http_client_requests,method=POST,request=post,run_id=run\\ 1,shard=2 count=0i,ok=0i,failed=0i,status_1xx=0i,status_2xx=0i,status_3xx=0i,status_4xx=0i,status_5xx=0i,errors=0i 1700000005000"
        );
    }

    #[test]
    fn a_second_without_completions_has_a_zero_point_per_request() {
        let lp = LineProtocol::new(&labels(None, 0));
        let text = String::from_utf8(lp.batch(&line(IntervalRecord::new(2))).body).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(lines[1].starts_with(
            "http_client_requests,method=POST,request=post,run_id=run\\ 1 count=0i,ok=0i,failed=0i,"
        ));
        assert!(lines
            .iter()
            .all(|l| !l.contains("p99_us") && l.ends_with(" 3000")));
    }

    #[test]
    fn a_staged_second_has_a_point_per_stage_its_answers_were_sent_for() {
        let lp = LineProtocol::new(&labels(None, 0));
        let mut record = IntervalRecord {
            requests: vec![stats(&[1, 1], &[(200, 2)]), stats(&[], &[])],
            ..Default::default()
        };
        for stage in [0u16, 1] {
            let step = record.steps.entry(stage).or_default();
            step.requests = vec![stats(&[1], &[(200, 1)]), stats(&[], &[])];
        }
        let text = String::from_utf8(lp.batch(&line(record)).body).unwrap();
        let stages: Vec<&str> = text
            .lines()
            .map(|l| {
                l.split(" count=")
                    .next()
                    .unwrap()
                    .rsplit(',')
                    .next()
                    .unwrap()
            })
            .collect();
        assert_eq!(stages, ["stage=0", "stage=0", "stage=1", "stage=1"]);
        assert!(text.contains(",stage_name=ramp,stage=0 "), "{text}");
        assert!(text.contains(",stage_name=hold\\ 1,stage=1 "), "{text}");
        assert!(text.lines().all(|l| l.ends_with(" 1000")), "{text}");
    }

    #[test]
    fn escaping_keeps_every_tag_parseable() {
        let mut out = String::new();
        escape(&mut out, "a b,c=d\ne\\");
        assert_eq!(out, "a\\ b\\,c\\=d\\ e\\\\");
        let mut out = String::new();
        escape(&mut out, "C:\\dir\\,x");
        assert_eq!(out, "C:\\dir\\\\\\,x");
        let mut out = String::new();
        tag(&mut out, "request", "");
        assert_eq!(out, "");
    }
}
