//! Breaking an honest message, one wire rule at a time.
//!
//! Every rule of the profile's wire layer (P-JSON, P-ENV, P-BODY) has a way
//! of breaking a frame that breaks it; a test reads the rule list from
//! `docs/profile.md` and fails when a rule has none. Each way names the
//! rules it breaks and whether the seed itself states them. At
//! `--level core` only the seed's rules are broken, so that a receiver that
//! reads the profile's silent spots another way is never failed for it.
//!
//! A way of breaking is applied where the message has something to break
//! (its text fields, lists, enumerations, references), and the step's
//! `how` number also picks *which* of them (its variant), so over a run a
//! rule is broken at many places of many acts, not in one fixed shape.
//!
//! Kinds 0 to 20 keep the numbers they had in trace format 3 (0 to 5 those
//! of format 2), and variant 0 is the shape those formats sent, so recorded
//! traces replay the same frames.

mod surgery;
#[cfg(test)]
mod tests;

use serde_json::Value;

macro_rules! malformations {
    ($($id:ident = $name:literal, [$($rule:literal),*], [$($clause:literal),*], $seed:literal;)*) => {
        /// One way of breaking a message on the wire.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Malformation { $($id),* }

        impl Malformation {
            /// In the order of the step's `how` number.
            pub const ALL: &'static [Malformation] = &[$(Malformation::$id),*];

            /// The situation's name.
            pub fn name(self) -> &'static str {
                match self { $(Malformation::$id => $name),* }
            }

            /// The profile rules the broken frame breaks.
            pub fn rules(self) -> &'static [&'static str] {
                match self { $(Malformation::$id => &[$($rule),*]),* }
            }

            /// The seed clauses the broken frame breaks.
            pub fn clauses(self) -> &'static [&'static str] {
                match self { $(Malformation::$id => &[$($clause),*]),* }
            }

            /// Whether the seed states the rule broken (rather than the
            /// profile reading a silent spot); a kind that is not sent at
            /// `--level core`. Some kinds have a seed variant and a profile
            /// variant: they count as the seed's, and [`apply`](Self::apply)
            /// keeps to the seed variant at core.
            pub fn seed_rule(self) -> bool {
                match self { $(Malformation::$id => $seed),* }
            }
        }
    };
}

malformations! {
    DuplicateEnvelopeKey = "duplicate key in the envelope", ["P-JSON-9"], ["S1.5", "S8.2", "S1.1"], true;
    NonFinite = "non-finite number", ["P-JSON-5"], ["S1.5", "S8.2", "S1.1"], true;
    InvalidUtf8 = "invalid UTF-8 byte", ["P-JSON-1"], ["S1.5", "S8.2", "S1.1"], true;
    Truncated = "truncated frame", ["P-JSON-5"], ["S1.5", "S8.2", "S1.1"], true;
    OtherVersion = "another version (0.2)", ["P-ENV-2"], ["S1.16", "S8.4"], true;
    UnknownBodyField = "unknown body field", ["P-BODY-5"], ["S1.14", "S8.5"], true;
    DuplicateBodyKey = "duplicate key in the body", ["P-JSON-9"], ["S1.5", "S8.2", "S1.1"], true;
    DuplicateClaimKey = "duplicate key in a claim", ["P-JSON-9"], ["S1.5", "S8.2", "S1.1"], true;
    DuplicateEvidenceKey = "duplicate key in evidence", ["P-JSON-9"], ["S1.5", "S8.2", "S1.1"], true;
    DuplicateExtensionsKey = "duplicate key in extensions", ["P-JSON-9"], ["S1.5", "S8.2", "S1.1"], true;
    DuplicateNestedKey = "duplicate key deep in extensions", ["P-JSON-9"], ["S1.5", "S8.2", "S1.1"], true;
    DuplicateAfterUnescape = "keys equal only after unescaping", ["P-JSON-9", "P-JSON-10"], ["S1.5", "S8.2", "S1.1"], false;
    LoneSurrogate = "lone surrogate escape", ["P-JSON-2"], ["S1.5", "S8.2", "S1.1"], false;
    OverlongUtf8 = "overlong UTF-8 encoding", ["P-JSON-1"], ["S1.5", "S8.2", "S1.1"], true;
    VersionNotString = "version as a number", ["P-ENV-2"], ["S1.16", "S8.4"], true;
    VersionThreeParts = "version 0.1.0", ["P-ENV-2"], ["S1.16", "S8.4"], true;
    VersionMissing = "no version member", ["P-ENV-2"], ["S1.16", "S8.4"], true;
    UnknownEnvelopeField = "unknown envelope field", ["P-ENV-1"], ["S1.14", "S8.5"], true;
    TrailingValue = "a second value after the object", ["P-JSON-4"], ["S1.5", "S8.2", "S1.1"], true;
    ByteOrderMark = "byte order mark", ["P-JSON-3"], ["S1.5", "S8.2", "S1.1"], false;
    NumberOverflow = "number overflowing binary64", ["P-JSON-8"], ["S1.5", "S8.2", "S1.1"], false;
    NestingTooDeep = "nesting one level too deep", ["P-JSON-6"], ["S1.5"], false;
    Oversized = "frame one byte over the size limit", ["P-JSON-7"], ["S1.3", "S1.5"], false;
    BadParticipant = "bad participant name in to", ["P-ENV-3"], ["S1.11", "S1.19"], true;
    BadReference = "reply not a message reference", ["P-ENV-4"], ["S1.18", "S1.19"], true;
    ForeignId = "ID of another sender", ["P-ENV-5"], ["S1.21", "S8.1"], true;
    BadRecipients = "to empty or repeating a name", ["P-ENV-6"], ["S1.11"], true;
    EmptyThread = "empty thread", ["P-ENV-7"], ["S1.10"], true;
    ReplyMissing = "no reply member", ["P-ENV-8"], ["S1.9", "S1.12"], true;
    UnknownAct = "unknown act", ["P-ENV-9"], ["S1.10", "S8.4"], true;
    BodyNotObject = "body not an object", ["P-ENV-10"], ["S1.13"], true;
    EvidenceIdRepeated = "evidence ID repeated in one message", ["P-ENV-11"], ["S1.26", "S3.8"], false;
    ExtensionsNotObject = "extensions not an object", ["P-ENV-12"], ["S1.14"], true;
    EmptyText = "empty text field", ["P-BODY-1"], ["S2.4"], true;
    NullOptional = "null for an optional field", ["P-BODY-2"], ["S2.2"], false;
    BadListElement = "list element of the wrong kind", ["P-BODY-3"], ["S2.3", "S2.4"], true;
    MiscasedEnumeration = "enumeration value in the wrong case", ["P-BODY-4"], ["S1.7"], true;
    MissingBodyField = "required body field missing", ["P-BODY-5", "P-BODY-6", "P-BODY-7", "P-BODY-8", "P-BODY-9", "P-BODY-10", "P-BODY-11", "P-BODY-12", "P-BODY-13", "P-BODY-14"], ["S2.2"], true;
    ExtraObjectMember = "extra member in a claim or evidence", ["P-BODY-15"], ["S3.1", "S1.14"], true;
    BadTimestampOrEvidenceId = "bad timestamp or evidence ID", ["P-BODY-16"], ["S3.9", "S1.26"], true;
    EmptyAuthority = "empty authority_ref", ["P-BODY-17"], ["S5.3"], false;
    TypeConverted = "value of the wrong JSON type", ["P-BODY-18"], ["S1.8", "S2.3"], true;
}

/// How many variants a step's `how` number can pick within a kind: the
/// workload draws `how` below `ALL.len() * VARIANTS`.
pub const VARIANTS: usize = 6;

impl Malformation {
    /// The kind a step's `how` number draws.
    pub fn of(how: u8) -> Malformation {
        Malformation::ALL[how as usize % Malformation::ALL.len()]
    }

    /// The variant a step's `how` number draws within its kind.
    pub fn variant_of(how: u8) -> usize {
        how as usize / Malformation::ALL.len()
    }

    /// Whether `m` has what this way breaks (a claim, a text field, a list,
    /// an enumeration, an `authority_ref`).
    pub fn fits(self, m: &Value) -> bool {
        surgery::fits(self, m)
    }

    /// The frame of `m` broken this way, in the given variant, or `None`
    /// when `m` has nothing to break this way, or when only the profile
    /// states the rule and `profile` says its readings may not be relied on.
    pub fn apply(self, m: &Value, profile: bool, variant: usize) -> Option<Vec<u8>> {
        surgery::apply(self, m, profile, variant)
    }
}
