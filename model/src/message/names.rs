//! Newtypes for the strings of Tern that carry structure: participant names,
//! message references, evidence IDs, grant references, threads and text.
//!
//! Each checks its rule once, while being read, so that code holding one never
//! has to ask again whether it is empty or has a colon in the wrong place.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde::{Serialize, Serializer};

/// Reads a string and hands it to `check`, which names the rule it breaks.
fn read_checked<'de, D, T>(
    deserializer: D,
    expecting: &'static str,
    check: fn(String) -> Result<T, String>,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
{
    struct StringVisitor(&'static str);
    impl Visitor<'_> for StringVisitor {
        type Value = String;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str(self.0)
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
            Ok(v.to_owned())
        }
        fn visit_string<E: de::Error>(self, v: String) -> Result<String, E> {
            Ok(v)
        }
    }
    let raw = deserializer.deserialize_string(StringVisitor(expecting))?;
    check(raw).map_err(de::Error::custom)
}

macro_rules! string_newtype {
    ($(#[$doc:meta])* $name:ident, $expecting:literal, $check:path) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            /// Builds the value if the string obeys the rule, naming the rule otherwise.
            pub fn new(raw: impl Into<String>) -> Result<$name, String> {
                $check(raw.into()).map($name)
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.0)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<$name, D::Error> {
                read_checked(deserializer, $expecting, |raw| $check(raw).map($name))
            }
        }
    };
}

fn nonempty(raw: String) -> Result<String, String> {
    if raw.is_empty() {
        Err("must be a nonempty string".to_owned())
    } else {
        Ok(raw)
    }
}

fn participant(raw: String) -> Result<String, String> {
    let raw = nonempty(raw).map_err(|_| "participant name must be nonempty".to_owned())?;
    if raw.contains(':') {
        Err(format!("participant name `{raw}` must not contain a colon"))
    } else {
        Ok(raw)
    }
}

fn message_ref(raw: String) -> Result<String, String> {
    match raw.split_once(':') {
        Some((sender, suffix)) if !sender.is_empty() && !suffix.is_empty() => Ok(raw),
        _ => Err(format!(
            "`{raw}` is not a message reference: expected sender:suffix with a nonempty sender and suffix"
        )),
    }
}

fn evidence_id(raw: String) -> Result<String, String> {
    match raw.strip_prefix("ev:") {
        Some(suffix) if !suffix.is_empty() => Ok(raw),
        _ => Err(format!(
            "`{raw}` is not an evidence ID: expected ev: followed by a nonempty suffix"
        )),
    }
}

string_newtype!(
    /// Nonempty text (section 2: "Nonempty text is required").
    Text,
    "a nonempty string",
    nonempty
);

string_newtype!(
    /// A participant name: nonempty, and without a colon because a colon
    /// separates the sender from the suffix in every message reference (section 1).
    Participant,
    "a participant name",
    participant
);

string_newtype!(
    /// A thread name (section 1: a nonempty string).
    ThreadId,
    "a nonempty thread name",
    nonempty
);

string_newtype!(
    /// A reference to a grant in the executor's registry (section 5:
    /// `authority_ref`). Its shape is opaque: only the registry gives it meaning.
    GrantRef,
    "a grant reference",
    nonempty
);

string_newtype!(
    /// An evidence ID: `ev:` and a nonempty suffix, in a namespace of its own
    /// (section 1).
    EvidenceId,
    "an evidence ID",
    evidence_id
);

string_newtype!(
    /// A full message reference `sender:suffix`, which is also the message ID
    /// (section 1). The sender is everything before the first colon.
    MessageRef,
    "a message reference",
    message_ref
);

impl MessageRef {
    /// The sender's namespace this ID lives in.
    pub fn sender(&self) -> &str {
        self.0.split_once(':').map_or("", |(s, _)| s)
    }

    pub fn suffix(&self) -> &str {
        self.0.split_once(':').map_or("", |(_, s)| s)
    }
}
