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

    /// Records one raw value, in whatever unit its owner keeps (`SendGaps`: thousandths
    /// of an expected arrival); 0 included.
    #[inline]
    pub(crate) fn record_value(&mut self, value: u64) {
        if self.0.record(value).is_err() {
            self.0.saturating_record(value);
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

    /// The `rank`-th smallest value (1 = the smallest) as the lowest and highest values of
    /// its bucket, µs; `None` past the last value. Confidence intervals read their bounds here.
    pub fn at_rank(&self, rank: u64) -> Option<(u64, u64)> {
        self.at_ranks(&[rank])[0]
    }

    /// [`Histogram::at_rank`] of each of `ranks`, in one pass over the counts.
    pub fn at_ranks(&self, ranks: &[u64]) -> Vec<Option<(u64, u64)>> {
        let mut order: Vec<usize> = (0..ranks.len()).collect();
        order.sort_by_key(|&i| ranks[i]);
        let mut out = vec![None; ranks.len()];
        let mut next = order.iter().peekable();
        let mut seen = 0;
        for v in self.0.iter_recorded() {
            seen += v.count_at_value();
            while let Some(&&i) = next.peek() {
                if ranks[i].max(1) > seen {
                    break;
                }
                let at = v.value_iterated_to();
                out[i] = Some((self.0.lowest_equivalent(at), self.0.highest_equivalent(at)));
                next.next();
            }
            if next.peek().is_none() {
                break;
            }
        }
        out
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

    /// Reads what [`Histogram::encode`] wrote (or its uncompressed V2 form).
    ///
    /// The text comes from disk, and the decoder sizes its buffers from the header's claims
    /// (a 4 GiB payload, 5 significant digits over the whole u64 range: 50 MB), so the
    /// header is checked against what this module writes before anything is decoded.
    pub fn decode(text: &str) -> Result<Histogram, String> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(|e| format!("histogram is not base64: {e}"))?;
        let v2 = match bytes
            .get(..4)
            .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
        {
            Some(V2_COOKIE) => std::borrow::Cow::Borrowed(&bytes[..]),
            Some(V2_DEFLATE_COOKIE) => {
                std::borrow::Cow::Owned(inflate(&bytes[8.min(bytes.len())..])?)
            }
            _ => return Err("histogram is not an HdrHistogram V2 encoding".into()),
        };
        check_header(&v2)?;
        let mut h: hdrhistogram::Histogram<u64> = Deserializer::new()
            .deserialize(&mut &v2[..])
            .map_err(|e| format!("histogram does not decode: {e:?}"))?;
        h.auto(true);
        Ok(Histogram(h))
    }
}

/// HdrHistogram's V2 encoding, and the same deflated (what [`Histogram::encode`] writes).
const V2_COOKIE: u32 = 0x1c84_9313;
const V2_DEFLATE_COOKIE: u32 = 0x1c84_9314;
/// Cookie, payload length, normalizing offset, significant digits, lowest and highest
/// trackable values, integer-to-double ratio.
const V2_HEADER: usize = 40;
/// The largest V2 encoding read: 3 significant digits over the whole u64 range are 56,320
/// counters of at most 9 bytes each (500 KB).
const MAX_V2: usize = 1 << 20;

/// Inflates a deflated V2 encoding, refusing one that expands past [`MAX_V2`].
fn inflate(deflated: &[u8]) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let mut out = Vec::new();
    flate2::read::ZlibDecoder::new(deflated)
        .take(MAX_V2 as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| format!("histogram does not inflate: {e}"))?;
    if out.len() > MAX_V2 {
        return Err(format!("histogram inflates past {MAX_V2} bytes"));
    }
    Ok(out)
}

/// Refuses a V2 header whose claims would size the decoder's buffers: a payload longer than
/// the bytes there are, or a histogram of another precision or floor than [`Histogram::new`]'s
/// (3 digits from 1 µs, whose counts over the whole u64 range take 450 KB).
fn check_header(v2: &[u8]) -> Result<(), String> {
    let field = |at: usize, len: usize| {
        v2.get(at..at + len)
            .map(|b| b.iter().fold(0u64, |n, &b| n << 8 | u64::from(b)))
            .ok_or_else(|| "histogram header is cut short".to_string())
    };
    let (payload, digits, lowest) = (field(4, 4)?, field(12, 4)?, field(16, 8)?);
    let there = (v2.len() - V2_HEADER.min(v2.len())) as u64;
    if payload > there {
        return Err(format!(
            "histogram claims {payload} bytes of counts but has {there}"
        ));
    }
    if (digits, lowest) != (3, 1) {
        return Err(format!(
            "histogram has {digits} significant digits from {lowest}; headroom writes 3 from 1"
        ));
    }
    Ok(())
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
    fn a_header_claiming_more_than_it_holds_is_refused_before_it_is_allocated() {
        // Found through the stored_run fuzz target (a stored run edited by hand): 56 bytes of
        // base64 claiming a 4 GiB payload made `headroom report` allocate 4 GiB; 5 digits over
        // the u64 range, 50 MB per histogram (a 11 KB line took 1.2 GB).
        let payload_4gib = "HISTE/////8AAAAAAAAAAwAAAAAAAAABAAAAAAAACAA/8AAAAAAAAA==";
        assert_eq!(
            Histogram::decode(payload_4gib).unwrap_err(),
            "histogram claims 4294967295 bytes of counts but has 0"
        );
        let deflated_4gib = "HISTFAAAABx4nJNpmSz8HwgYIIAZSjNCKA4G+w8QFgDD3wZ+";
        assert_eq!(
            Histogram::decode(deflated_4gib).unwrap_err(),
            "histogram claims 4294967295 bytes of counts but has 0"
        );
        let five_digits = "HISTEwAAAAAAAAAAAAAABQAAAAAAAAABgAAAAAAAAAA/8AAAAAAAAA==";
        assert_eq!(
            Histogram::decode(five_digits).unwrap_err(),
            "histogram has 5 significant digits from 1; headroom writes 3 from 1"
        );
        assert!(Histogram::decode("HISTEw==")
            .unwrap_err()
            .contains("cut short"));
    }

    #[test]
    fn a_deflated_histogram_expanding_past_its_bound_is_refused() {
        use std::io::Write;
        let mut v2 = Vec::new();
        for (n, len) in [
            (V2_COOKIE as u64, 4),
            (2 << 20, 4),
            (0, 4),
            (3, 4),
            (1, 8),
            (2048, 8),
        ] {
            v2.extend_from_slice(&u64::to_be_bytes(n)[8 - len..]);
        }
        v2.extend_from_slice(&1.0f64.to_be_bytes());
        v2.resize(V2_HEADER + (2 << 20), 0);
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(&v2).unwrap();
        let deflated = z.finish().unwrap();
        let mut bytes = V2_DEFLATE_COOKIE.to_be_bytes().to_vec();
        bytes.extend_from_slice(&(deflated.len() as u32).to_be_bytes());
        bytes.extend_from_slice(&deflated);
        let text = base64::engine::general_purpose::STANDARD.encode(bytes);
        assert!(text.len() < 4096, "{}", text.len());
        assert_eq!(
            Histogram::decode(&text).unwrap_err(),
            format!("histogram inflates past {MAX_V2} bytes")
        );
    }

    #[test]
    fn a_rank_reads_the_bucket_of_that_order_statistic() {
        let mut h = Histogram::new();
        for us in [5, 1, 12_345, 3, 3] {
            h.record(Duration::from_micros(us));
        }
        assert_eq!(h.at_rank(1), Some((1, 1)));
        assert_eq!(h.at_rank(2), Some((3, 3)));
        assert_eq!(h.at_rank(3), Some((3, 3)));
        assert_eq!(h.at_rank(4), Some((5, 5)));
        // 12,345 µs is in a bucket 8 µs wide at 3 significant digits.
        assert_eq!(h.at_rank(5), Some((12_344, 12_351)));
        assert_eq!(h.at_rank(6), None);
        assert_eq!(
            h.at_ranks(&[5, 1, 9, 3]),
            vec![Some((12_344, 12_351)), Some((1, 1)), None, Some((3, 3))]
        );
    }

    #[test]
    fn precision_is_three_digits_across_the_range() {
        let mut h = Histogram::new();
        h.record(Duration::from_micros(1_234_567));
        let got = h.quantile(1.0).as_micros() as f64;
        assert!((got - 1_234_567.0).abs() / 1_234_567.0 < 0.001, "{got}");
    }
}
