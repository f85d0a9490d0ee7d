//! The live outputs (`--push`) in words: what each delivered and what it dropped, and why.

use crate::store::{DropReason, OutputKind, OutputRecord};

/// "Prometheus remote write: 61 samples sent, 12 dropped (connection refused)".
pub fn line(o: &OutputRecord) -> String {
    let (name, unit) = match o.kind {
        OutputKind::Prometheus => ("Prometheus remote write", "samples"),
        OutputKind::Influxdb => ("InfluxDB line protocol", "points"),
    };
    let mut text = format!("{name} to {}: {} {unit} sent", o.url, o.sent);
    let dropped = o.dropped_total();
    if dropped == 0 {
        text.push_str(", none dropped");
        return text;
    }
    let why: Vec<String> = o
        .dropped
        .iter()
        .map(|(reason, n)| {
            let words = reason_words(*reason, o.last_status, o.last_answer.as_deref());
            if o.dropped.len() == 1 {
                words
            } else {
                format!("{n} {words}")
            }
        })
        .collect();
    text.push_str(&format!(", {dropped} dropped ({})", why.join(", ")));
    text
}

fn reason_words(reason: DropReason, status: Option<u16>, answer: Option<&str>) -> String {
    let status = |what: &str| match (status, answer) {
        (Some(code), Some(said)) => format!("{what}: HTTP {code}: {said:?}"),
        (Some(code), None) => format!("{what}: HTTP {code}"),
        (None, _) => what.to_string(),
    };
    match reason {
        DropReason::Refused => "connection refused".into(),
        DropReason::Unreachable => "unreachable or connection broken".into(),
        DropReason::Timeout => "timed out".into(),
        DropReason::ServerError => status("server error"),
        DropReason::Rejected => status("refused by the backend"),
        DropReason::QueueFull => "queue full: the backend was slower than a batch a second".into(),
        DropReason::FlushDeadline => "not sent by the flush deadline at the end".into(),
        DropReason::SeriesLimit => "past the series limit".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn says_what_was_sent_and_why_the_rest_was_dropped() {
        let mut o = OutputRecord {
            kind: OutputKind::Prometheus,
            url: "http://127.0.0.1:9/api/v1/write".into(),
            sent: 61,
            dropped: Default::default(),
            last_status: None,
            last_answer: None,
        };
        assert_eq!(
            line(&o),
            "Prometheus remote write to http://127.0.0.1:9/api/v1/write: 61 samples sent, none dropped"
        );
        o.dropped.insert(DropReason::Refused, 12);
        assert!(line(&o).ends_with("61 samples sent, 12 dropped (connection refused)"));
        o.dropped.insert(DropReason::ServerError, 3);
        o.last_status = Some(500);
        assert!(line(&o).ends_with("15 dropped (12 connection refused, 3 server error: HTTP 500)"));
        o.last_answer = Some("native histograms are disabled".into());
        assert!(line(&o).ends_with("3 server error: HTTP 500: \"native histograms are disabled\")"));
    }

    #[test]
    fn an_influxdb_output_counts_points() {
        let mut o = OutputRecord {
            kind: OutputKind::Influxdb,
            url: "http://127.0.0.1:8086/write?db=load".into(),
            sent: 4,
            dropped: Default::default(),
            last_status: None,
            last_answer: None,
        };
        o.dropped.insert(DropReason::Rejected, 2);
        o.last_status = Some(401);
        assert_eq!(
            line(&o),
            "InfluxDB line protocol to http://127.0.0.1:8086/write?db=load: 4 points sent, 2 dropped (refused by the backend: HTTP 401)"
        );
    }
}
