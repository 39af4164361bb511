//! Duplicate keys in a line, for `--strict-protocol`.
//!
//! `serde_json::Value` keeps the last of two equal keys, and JSON Schema
//! cannot see them at all (its data model has none), so neither the typed
//! reading nor the schema would notice `{"seq":7,"seq":2,...}`. Tern refuses
//! such JSON in a frame, and strict mode refuses it in a line, wherever it
//! is (inside a `log` or a view too), naming the repeated key as Tern does.

use std::collections::BTreeSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use tern_model::json::DuplicateKey;

/// Any JSON value, read for nothing but the keys of its objects. Read
/// through `serde_path_to_error`, an error carries the pointer of the
/// repeated key.
pub struct UniqueKeys;

impl<'de> Deserialize<'de> for UniqueKeys {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<UniqueKeys, D::Error> {
        deserializer.deserialize_any(UniqueKeysVisitor)
    }
}

struct UniqueKeysVisitor;

impl<'de> Visitor<'de> for UniqueKeysVisitor {
    type Value = UniqueKeys;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<UniqueKeys, A::Error> {
        while seq.next_element::<UniqueKeys>()?.is_some() {}
        Ok(UniqueKeys)
    }

    // (A number read with `arbitrary_precision` comes as an object of one
    // member, its text, and so passes.)
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<UniqueKeys, A::Error> {
        let mut seen = BTreeSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if seen.contains(&key) {
                // Refused as the member's value, so that the error's path
                // ends at the repeated key.
                map.next_value_seed(Repeated(&key))?;
            } else {
                map.next_value::<UniqueKeys>()?;
                seen.insert(key);
            }
        }
        Ok(UniqueKeys)
    }
}

/// The value of a key its object already has: refused unread.
struct Repeated<'k>(&'k str);

impl<'de> DeserializeSeed<'de> for Repeated<'_> {
    type Value = UniqueKeys;

    fn deserialize<D: Deserializer<'de>>(self, _: D) -> Result<UniqueKeys, D::Error> {
        Err(de::Error::custom(DuplicateKey(self.0)))
    }
}
