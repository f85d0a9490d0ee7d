//! The live outputs (`--push`) in words: what each delivered and what it dropped, and why.

use crate::summary::{DropReason, OutputKind, OutputRecord};

/// "Prometheus remote write: 61 samples sent, 12 dropped (connection refused)".
pub fn line(o: &OutputRecord) -> String {
    let (name, unit) = match o.kind {
        OutputKind::Prometheus => ("Prometheus remote write", "samples"),
        OutputKind::Influxdb => ("InfluxDB line protocol", "points"),
    };
    if o.damaged() {
        // Right or silent: counts no run could make are not shown as if they were real.
        return format!(
            "{name} to {}: what it sent and dropped is unknown (outputs.json is damaged: its counts are more than any run sends)",
            o.url
        );
    }
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
    // `last_status` is the last failed answer's, of either kind: it is said only beside the
    // reason it belongs to (a 4xx is a refusal, anything else a server error), so a run
    // with both never names one's status for the other.
    let answered = |refusal: bool, otherwise: &str| match status {
        Some(code) if (400..500).contains(&code) == refusal => match answer {
            Some(said) => format!("HTTP {code} from the backend: {said:?}"),
            None => format!("HTTP {code} from the backend"),
        },
        _ => otherwise.to_string(),
    };
    match reason {
        DropReason::Refused => "connection refused".into(),
        DropReason::Unreachable => "unreachable or connection broken".into(),
        DropReason::Timeout => "timed out".into(),
        DropReason::ServerError => answered(false, "error answers from the backend"),
        DropReason::Rejected => answered(true, "refusals from the backend (4xx, not retried)"),
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
        assert!(
            line(&o).ends_with("15 dropped (12 connection refused, 3 HTTP 500 from the backend)")
        );
        o.last_answer = Some("native histograms are disabled".into());
        assert!(
            line(&o).ends_with("3 HTTP 500 from the backend: \"native histograms are disabled\")")
        );
        // A 401 last: the 500s are not said to be 401s, nor the 401s 500s.
        o.dropped.insert(DropReason::Rejected, 2);
        o.last_status = Some(401);
        o.last_answer = None;
        assert!(line(&o).ends_with(
            "17 dropped (12 connection refused, 3 error answers from the backend, 2 HTTP 401 from the backend)"
        ), "{}", line(&o));
    }

    #[test]
    fn counts_no_run_could_make_are_called_damaged_never_added_up() {
        // Found trying a hand-edited outputs.json: drops of 2^64 - 1 under two reasons
        // overflowed the total (a panic in a debug build, a wrapped count in a release one).
        let mut o = OutputRecord {
            kind: OutputKind::Prometheus,
            url: "http://127.0.0.1:9/api/v1/write".into(),
            sent: 4,
            dropped: Default::default(),
            last_status: None,
            last_answer: None,
        };
        o.dropped.insert(DropReason::Refused, u64::MAX);
        o.dropped.insert(DropReason::Timeout, u64::MAX);
        assert_eq!(o.dropped_total(), u64::MAX);
        assert!(o.damaged());
        assert_eq!(
            line(&o),
            "Prometheus remote write to http://127.0.0.1:9/api/v1/write: what it sent and dropped is unknown (outputs.json is damaged: its counts are more than any run sends)"
        );
        // Each plausible, together past any run: damaged too.
        o.dropped.insert(DropReason::Refused, 1 << 59);
        o.dropped.insert(DropReason::Timeout, 1 << 59);
        o.sent = 1;
        assert!(o.damaged());
        o.sent = 0;
        assert!(!o.damaged());
        assert!(line(&o).ends_with("0 samples sent, 1152921504606846976 dropped (576460752303423488 connection refused, 576460752303423488 timed out)"), "{}", line(&o));
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
            "InfluxDB line protocol to http://127.0.0.1:8086/write?db=load: 4 points sent, 2 dropped (HTTP 401 from the backend)"
        );
    }
}
