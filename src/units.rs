//! Human-readable units: durations in µs and seconds, byte counts.
//!
//! A leaf (it imports nothing from the crate) so that the summary, the renderers and the CLI
//! word numbers the same way without depending on one another.

/// A microsecond count as a short human duration ("850µs", "12.3ms", "1.204s").
pub fn fmt_us(us: u64) -> String {
    fmt_us_f(us as f64)
}

/// A fractional microsecond count as a short human duration.
pub fn fmt_us_f(us: f64) -> String {
    let (number, unit) = us_parts(us);
    format!("{number}{unit}")
}

/// A fractional microsecond count as a short human duration's number and unit apart
/// ("12.345", "ms"), for a range that says its unit once.
pub fn us_parts(us: f64) -> (String, &'static str) {
    if us < 1_000.0 {
        (format!("{us:.0}"), "µs")
    } else if us < 1_000_000.0 {
        (format!("{:.3}", us / 1e3), "ms")
    } else {
        (format!("{:.3}", us / 1e6), "s")
    }
}

/// Seconds as a short human duration.
pub fn fmt_secs(secs: f64) -> String {
    fmt_us_f(secs * 1e6)
}

/// Seconds for a sentence: "60 s", "2.5 s", and past a minute and a half "5m 30s".
pub fn fmt_span(secs: f64) -> String {
    if secs >= 90.0 {
        humantime::format_duration(std::time::Duration::from_secs(secs.round() as u64)).to_string()
    } else if secs.fract() == 0.0 {
        format!("{secs:.0} s")
    } else {
        format!("{secs:.1} s")
    }
}

/// A whole count with thousands separated: "2,666".
pub fn fmt_count(n: u64) -> String {
    group(&n.to_string())
}

/// A number with `decimals` decimals and thousands separated: "2,666.67".
pub fn fmt_num(x: f64, decimals: usize) -> String {
    let text = format!("{x:.decimals$}");
    let (sign, digits) = match text.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", text.as_str()),
    };
    match digits.split_once('.') {
        Some((whole, frac)) => format!("{sign}{}.{frac}", group(whole)),
        None => format!("{sign}{}", group(digits)),
    }
}

/// A rate per second for people: "2,666.67/s".
pub fn fmt_rate(per_sec: f64) -> String {
    format!("{}/s", fmt_num(per_sec, 2))
}

/// "1 user", "10 users": a count and its noun, plural when it is not one.
pub fn plural(n: impl std::fmt::Display, noun: &str) -> String {
    let text = n.to_string();
    if text == "1" {
        format!("1 {noun}")
    } else {
        format!("{text} {noun}s")
    }
}

/// Shards by index, in a line however many there are: "shard 3", "shards 1, 4", or the
/// first ten and "and 90 more" (a merge of thousands may miss thousands).
pub fn shard_list(indices: &[u32]) -> String {
    const SHOWN: usize = 10;
    let list: Vec<String> = indices.iter().take(SHOWN).map(u32::to_string).collect();
    let more = match indices.len().saturating_sub(SHOWN) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    match indices.len() {
        1 => format!("shard {}", list[0]),
        _ => format!("shards {}{more}", list.join(", ")),
    }
}

/// Digits grouped by three from the right.
fn group(digits: &str) -> String {
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A byte count with a binary unit.
pub fn fmt_bytes(b: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{v:.0} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// The longest duration headroom takes anywhere (a run, a stage, a timeout): a year. Longer
/// ones are refused when read, so no deadline computed from one can overflow the clock.
pub const MAX_DURATION: std::time::Duration = std::time::Duration::from_secs(365 * 24 * 3600);

/// Reads a duration such as `10s`, `1m30s` or `250ms`, at most [`MAX_DURATION`].
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let d = humantime::parse_duration(text.trim())
        .map_err(|e| format!("{e}; write a duration such as 10s, 1m30s or 250ms"))?;
    if d > MAX_DURATION {
        return Err(format!(
            "{:?} is longer than a year, the longest duration headroom takes",
            text.trim()
        ));
    }
    Ok(d)
}

/// Reads a rate in requests per second: `100`, or per a span as vegeta writes it, `100/s`,
/// `100/1s`, `6000/1m`, `5/500ms`. Whether it is positive and in range is the caller's check.
pub fn parse_rate(text: &str) -> Result<f64, String> {
    let text = text.trim();
    let bad = || {
        format!(
            "{text:?} is not a rate; write requests per second as 100, 100/s, 100/1s or 6000/1m"
        )
    };
    let (count, per) = match text.split_once('/') {
        Some((count, per)) => (count.trim(), Some(per.trim())),
        None => (text, None),
    };
    let count: f64 = count.replace('_', "").parse().map_err(|_| bad())?;
    if !count.is_finite() {
        return Err(bad());
    }
    let Some(per) = per else {
        return Ok(count);
    };
    // "/s", "/m": a unit without a number is one of it.
    let span = if per.starts_with(|c: char| c.is_ascii_digit()) {
        per.to_string()
    } else {
        format!("1{per}")
    };
    let span = humantime::parse_duration(&span).map_err(|_| bad())?;
    if span.is_zero() {
        return Err(format!(
            "{text:?}: the span after / must be longer than zero"
        ));
    }
    Ok(count / span.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_sizes_read_naturally() {
        assert_eq!(fmt_us(850), "850µs");
        assert_eq!(fmt_us(12_345), "12.345ms");
        assert_eq!(fmt_us(1_204_000), "1.204s");
        assert_eq!(fmt_bytes(512.0), "512 B");
        assert_eq!(fmt_bytes(33.0 * 1024.0 * 1024.0), "33.0 MiB");
    }

    #[test]
    fn counts_and_rates_are_grouped_by_thousands() {
        assert_eq!(fmt_count(0), "0");
        assert_eq!(fmt_count(999), "999");
        assert_eq!(fmt_count(1_000), "1,000");
        assert_eq!(fmt_count(1_234_567), "1,234,567");
        assert_eq!(fmt_rate(2666.666), "2,666.67/s");
        assert_eq!(fmt_num(-1234.5, 1), "-1,234.5");
        assert_eq!(fmt_num(100.0, 0), "100");
        assert_eq!(plural(1, "user"), "1 user");
        assert_eq!(plural(1.0, "user"), "1 user");
        assert_eq!(plural(10, "user"), "10 users");
        assert_eq!(shard_list(&[3]), "shard 3");
        assert_eq!(shard_list(&[1, 4]), "shards 1, 4");
        let many: Vec<u32> = (0..100).collect();
        assert_eq!(
            shard_list(&many),
            "shards 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 and 90 more"
        );
    }

    #[test]
    fn rates_read_as_vegeta_writes_them() {
        for (text, want) in [
            ("100", 100.0),
            ("100/s", 100.0),
            ("100/1s", 100.0),
            ("6000/1m", 100.0),
            ("6000/m", 100.0),
            ("5/500ms", 10.0),
            (" 1_000 / 2s ", 500.0),
            ("0.5", 0.5),
            ("-3", -3.0),
        ] {
            assert_eq!(parse_rate(text), Ok(want), "{text}");
        }
        for text in [
            "", "fast", "100/", "100/0s", "100/x", "/s", "inf", "NaN/s", "1/2/3",
        ] {
            let e = parse_rate(text).unwrap_err();
            assert!(e.contains(text.trim()), "{text}: {e}");
        }
    }
}
