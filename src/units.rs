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
    if us < 1_000.0 {
        format!("{us:.0}µs")
    } else if us < 1_000_000.0 {
        format!("{:.3}ms", us / 1e3)
    } else {
        format!("{:.3}s", us / 1e6)
    }
}

/// Seconds as a short human duration.
pub fn fmt_secs(secs: f64) -> String {
    fmt_us_f(secs * 1e6)
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
}
