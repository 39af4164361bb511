//! RFC 3339 timestamps (section 3: `collected_at`; the profile's COMMIT `due`).

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde::{Serialize, Serializer};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// A timestamp as written, with the instant it denotes.
///
/// Equality is on the text, because deduplication compares what was sent
/// (section 1: "structurally identical JSON"), while ordering and expiry use
/// the instant.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Timestamp {
    text: String,
    unix_nanos: i128,
}

impl Timestamp {
    /// Accepts RFC 3339 `date-time` (section 5.6 of that RFC): a full date, `T`,
    /// a full time with optional fraction, and `Z` or a numeric offset. `T`
    /// and `Z` may be lower case, as that section's note allows.
    pub fn parse(text: &str) -> Result<Timestamp, String> {
        // A space separator, which the RFC mentions only for readers, is
        // rejected: the grammar has `T`.
        if text.len() < 20 || !matches!(text.as_bytes().get(10), Some(b'T' | b't')) {
            return Err(format!(
                "`{text}` is not an RFC 3339 timestamp (expected YYYY-MM-DDTHH:MM:SS with Z or an offset)"
            ));
        }
        let instant = OffsetDateTime::parse(text, &Rfc3339)
            .map_err(|e| format!("`{text}` is not an RFC 3339 timestamp: {e}"))?;
        Ok(Timestamp {
            text: text.to_owned(),
            unix_nanos: instant.unix_timestamp_nanos(),
        })
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// A timestamp already read once, from its text and instant as a
    /// snapshot keeps them (crate::binary): the text is not parsed again.
    pub(crate) fn from_parts(text: String, unix_nanos: i128) -> Timestamp {
        Timestamp { text, unix_nanos }
    }

    /// Nanoseconds since the Unix epoch, for comparisons against local time.
    pub fn unix_nanos(&self) -> i128 {
        self.unix_nanos
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Timestamp, D::Error> {
        struct TimestampVisitor;
        impl Visitor<'_> for TimestampVisitor {
            type Value = Timestamp;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an RFC 3339 timestamp string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Timestamp, E> {
                Timestamp::parse(v).map_err(E::custom)
            }
        }
        deserializer.deserialize_str(TimestampVisitor)
    }
}
