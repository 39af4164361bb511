//! Newtypes for the strings of Tern that carry structure: participant names,
//! message references, evidence IDs, grant references, threads and text.
//!
//! Each checks its rule once, while being read, so that code holding one never
//! has to ask again whether it is empty or has a colon in the wrong place.

use std::fmt;

use compact_str::CompactString;
use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde::{Serialize, Serializer};

/// Reads a string, checks it against `check` (which names the rule it
/// breaks) and keeps it. Short strings, which most names and references are,
/// are stored inline without an allocation.
fn read_checked<'de, D>(
    deserializer: D,
    expecting: &'static str,
    check: fn(&str) -> Result<(), String>,
) -> Result<CompactString, D::Error>
where
    D: Deserializer<'de>,
{
    struct CheckedVisitor {
        expecting: &'static str,
        check: fn(&str) -> Result<(), String>,
    }
    impl Visitor<'_> for CheckedVisitor {
        type Value = CompactString;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str(self.expecting)
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<CompactString, E> {
            (self.check)(v).map_err(E::custom)?;
            Ok(CompactString::from(v))
        }
    }
    deserializer.deserialize_str(CheckedVisitor { expecting, check })
}

macro_rules! string_newtype {
    ($(#[$doc:meta])* $name:ident, $expecting:literal, $check:path) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(CompactString);

        impl $name {
            /// Builds the value if the string obeys the rule, naming the rule otherwise.
            pub fn new(raw: impl AsRef<str>) -> Result<$name, String> {
                let raw = raw.as_ref();
                $check(raw).map(|()| $name(CompactString::from(raw)))
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
                read_checked(deserializer, $expecting, $check).map($name)
            }
        }
    };
}

fn nonempty(raw: &str) -> Result<(), String> {
    if raw.is_empty() {
        Err("must be a nonempty string".to_owned())
    } else {
        Ok(())
    }
}

fn participant(raw: &str) -> Result<(), String> {
    if raw.is_empty() {
        Err("participant name must be nonempty".to_owned())
    } else if raw.contains(':') {
        Err(format!("participant name `{raw}` must not contain a colon"))
    } else {
        Ok(())
    }
}

fn message_ref(raw: &str) -> Result<(), String> {
    match raw.split_once(':') {
        Some((sender, suffix)) if !sender.is_empty() && !suffix.is_empty() => Ok(()),
        _ => Err(format!(
            "`{raw}` is not a message reference: expected sender:suffix with a nonempty sender and suffix"
        )),
    }
}

fn evidence_id(raw: &str) -> Result<(), String> {
    match raw.strip_prefix("ev:") {
        Some(suffix) if !suffix.is_empty() => Ok(()),
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

string_newtype!(
    /// An authenticated principal: who the transport or a trusted registry
    /// says is speaking (section 1). Opaque to Tern; only compared.
    Principal,
    "a principal",
    nonempty
);

fn context_name(raw: &str) -> Result<(), String> {
    nonempty(raw)?;
    if raw.contains('/') {
        return Err(format!(
            "context name `{raw}` must not contain `/`, which separates it from the ID in effect keys"
        ));
    }
    Ok(())
}

string_newtype!(
    /// The name of an identity context: one fixed mapping of participant
    /// names to principals, shared by the threads bound to it (section 1).
    ContextName,
    "an identity context name",
    context_name
);
