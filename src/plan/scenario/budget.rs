//! A scenario's size as YAML expands it, counted before anything is built from it.
//!
//! YAML aliases repeat the node they point at: a 1 MiB string aliased a thousand times is a
//! gigabyte once deserialized. This walks the document without keeping anything, summing
//! the length of every scalar as often as aliases repeat it, and stops at the limit.
//! Written here because the YAML crate's own guard counts parser events, not bytes.

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use std::cell::Cell;
use std::fmt;

/// The most a scenario may expand to, in bytes of scalars.
pub const MAX_EXPANDED_BYTES: u64 = 16 * 1024 * 1024;
/// The largest scenario file read.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// Counts the scalars' bytes of a YAML document, failing past `limit`.
#[derive(Clone, Copy)]
pub struct Budget<'a> {
    used: &'a Cell<u64>,
    limit: u64,
}

impl<'a> Budget<'a> {
    /// A budget of `limit` bytes, counted into `used`.
    pub fn new(used: &'a Cell<u64>, limit: u64) -> Budget<'a> {
        Budget { used, limit }
    }

    fn spend<E: de::Error>(self, bytes: usize) -> Result<(), E> {
        let used = self.used.get().saturating_add(bytes as u64 + 1);
        self.used.set(used);
        if used > self.limit {
            return Err(E::custom(format!(
                "the scenario expands to more than {} MiB (YAML aliases repeat what they point at); keep it under that",
                self.limit / (1024 * 1024)
            )));
        }
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for Budget<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Budget<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.spend(1)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        self.spend(8)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        self.spend(8)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.spend(8)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.spend(v.len())
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<(), E> {
        self.spend(v.len())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.spend(0)
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.spend(0)
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        self.deserialize(d)
    }
    fn visit_newtype_struct<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        self.deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(self)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_key_seed(self)?.is_some() {
            map.next_value_seed(self)?;
        }
        Ok(())
    }
    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<(), A::Error> {
        use de::VariantAccess;
        let ((), variant) = data.variant_seed(self)?;
        variant.newtype_variant_seed(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expanded(source: &str, limit: u64) -> Result<u64, String> {
        let used = Cell::new(0);
        Budget::new(&used, limit)
            .deserialize(yaml_serde::Deserializer::from_str(source))
            .map_err(|e| e.to_string())?;
        Ok(used.get())
    }

    #[test]
    fn aliases_count_as_often_as_they_repeat() {
        let once = expanded("a: &x 'abcdefghij'\n", 1000).unwrap();
        let thrice = expanded("a: &x 'abcdefghij'\nb: *x\nc: *x\n", 1000).unwrap();
        // Each alias brings its key and the ten bytes it points at again.
        assert_eq!(thrice, once + 2 * (2 + 11), "{once} {thrice}");
        let bomb = format!(
            "a: &x '{}'\nb: [{}]\n",
            "x".repeat(1000),
            vec!["*x"; 100].join(", ")
        );
        let e = expanded(&bomb, 50_000).unwrap_err();
        assert!(e.contains("expands to more than"), "{e}");
    }

    #[test]
    fn tagged_values_are_counted_too() {
        assert!(expanded("a: !tag 'hello'\n", 1000).unwrap() >= 5);
    }
}
