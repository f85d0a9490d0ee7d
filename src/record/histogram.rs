//! A microsecond HDR histogram that grows with the values it sees and stores as text.

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use std::time::Duration;

/// Latencies in microseconds with 3 significant digits, sized by the largest value seen.
#[derive(Clone, Debug)]
pub struct Histogram(hdrhistogram::Histogram<u64>);

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl Histogram {
    /// An empty histogram (auto-resizing, so a 1 ms run never pays for a 1 h range).
    pub fn new() -> Self {
        let mut h = hdrhistogram::Histogram::new(3).expect("3 significant digits is valid");
        h.auto(true);
        Histogram(h)
    }

    /// Records one duration; values beyond the range saturate rather than fail.
    #[inline]
    pub fn record(&mut self, d: Duration) {
        let us = u64::try_from(d.as_micros()).unwrap_or(u64::MAX).max(1);
        // `record` grows an auto-resizing histogram; only a value beyond u64's range fails.
        if self.0.record(us).is_err() {
            self.0.saturating_record(us);
        }
    }

    /// Adds every value of `other`.
    pub fn add(&mut self, other: &Histogram) {
        self.0
            .add(&other.0)
            .expect("auto-resizing histograms always accept another's range");
    }

    /// Number of recorded values.
    pub fn len(&self) -> u64 {
        self.0.len()
    }

    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The underlying histogram, for statistics.
    pub fn inner(&self) -> &hdrhistogram::Histogram<u64> {
        &self.0
    }

    /// Value at `quantile` (0..=1) as a duration.
    pub fn quantile(&self, q: f64) -> Duration {
        Duration::from_micros(self.0.value_at_quantile(q))
    }

    /// Compressed, base64 HdrHistogram V2 encoding (the format HdrHistogram logs use).
    pub fn encode(&self) -> String {
        let mut buf = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&self.0, &mut buf)
            .expect("serializing into memory cannot fail");
        base64::engine::general_purpose::STANDARD.encode(buf)
    }

    /// Reads what [`Histogram::encode`] wrote.
    pub fn decode(text: &str) -> Result<Histogram, String> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(|e| format!("histogram is not base64: {e}"))?;
        let mut h: hdrhistogram::Histogram<u64> = Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .map_err(|e| format!("histogram does not decode: {e:?}"))?;
        h.auto(true);
        Ok(Histogram(h))
    }
}

impl serde::Serialize for Histogram {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.encode())
    }
}

impl<'de> serde::Deserialize<'de> for Histogram {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Histogram::decode(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_parts_equals_recording_everything_once() {
        let mut whole = Histogram::new();
        let mut parts = [Histogram::new(), Histogram::new(), Histogram::new()];
        for i in 0..30_000u64 {
            let d = Duration::from_micros(1 + (i * 7919) % 250_000);
            whole.record(d);
            parts[(i % 3) as usize].record(d);
        }
        let mut merged = Histogram::new();
        for p in &parts {
            merged.add(p);
        }
        assert_eq!(merged.len(), 30_000);
        for q in [0.0, 0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(merged.quantile(q), whole.quantile(q), "q={q}");
        }
        assert_eq!(merged.inner().mean(), whole.inner().mean());
    }

    #[test]
    fn encoding_round_trips() {
        let mut h = Histogram::new();
        for us in [1, 10, 100, 1_000, 30_000_000] {
            h.record(Duration::from_micros(us));
        }
        let back = Histogram::decode(&h.encode()).unwrap();
        assert_eq!(back.len(), 5);
        assert_eq!(back.quantile(1.0), h.quantile(1.0));
        assert!(Histogram::decode("not base64!").is_err());
    }

    #[test]
    fn precision_is_three_digits_across_the_range() {
        let mut h = Histogram::new();
        h.record(Duration::from_micros(1_234_567));
        let got = h.quantile(1.0).as_micros() as f64;
        assert!((got - 1_234_567.0).abs() / 1_234_567.0 < 0.001, "{got}");
    }
}
