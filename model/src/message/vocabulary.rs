//! The closed vocabularies of Tern 0.1: acts and the enumerated body fields.
//! Values are case-sensitive (section 1: "IDs and text are case-sensitive").

/// Declares a closed vocabulary read from a JSON string and nothing else:
/// the enum, its names, `Display`, and the serde impls. Also used for the
/// ledger's stable outcome names.
///
/// serde's derived enum readers also accept `{"ASK": null}` for a unit
/// variant, an implicit conversion that section 1 forbids; these read only a
/// string and match it exactly.
macro_rules! vocabulary {
    ($(#[$doc:meta])* $name:ident, $expecting:literal { $($(#[$vdoc:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $($(#[$vdoc])* $variant),+
        }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            const NAMES: &'static [&'static str] = &[$($text),+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            pub fn from_name(name: &str) -> Option<$name> {
                match name {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<$name, D::Error> {
                struct NameVisitor;
                impl ::serde::de::Visitor<'_> for NameVisitor {
                    type Value = $name;
                    fn expecting(&self, f: &mut ::std::fmt::Formatter) -> ::std::fmt::Result {
                        f.write_str($expecting)
                    }
                    fn visit_str<E: ::serde::de::Error>(self, v: &str) -> Result<$name, E> {
                        $name::from_name(v).ok_or_else(|| E::unknown_variant(v, $name::NAMES))
                    }
                }
                deserializer.deserialize_str(NameVisitor)
            }
        }
    };
}

pub(crate) use vocabulary;

vocabulary!(
    /// The nine speech acts (section 2: "Exactly one act per message").
    Act, "an act name (a string)" {
        Ask = "ASK",
        Tell = "TELL",
        Propose = "PROPOSE",
        Request = "REQUEST",
        Commit = "COMMIT",
        Report = "REPORT",
        Revise = "REVISE",
        Ack = "ACK",
        Challenge = "CHALLENGE",
    }
);

impl Act {
    /// Section 4: "REVISE may target only one's own TELL, PROPOSE, REQUEST,
    /// COMMIT, or REPORT."
    pub fn is_revisable(self) -> bool {
        matches!(
            self,
            Act::Tell | Act::Propose | Act::Request | Act::Commit | Act::Report
        )
    }
}

vocabulary!(
    /// REPORT.state (section 2). Progress only: lifecycle annotations such as
    /// withdrawn are derived from history and are deliberately not in this enum.
    ProgressState, "a progress state (a string)" {
        Active = "active",
        Blocked = "blocked",
        Fulfilled = "fulfilled",
        Failed = "failed",
    }
);

impl ProgressState {
    /// Section 4: "A reported terminal state (fulfilled or failed) cannot
    /// silently become active again".
    pub fn is_terminal(self) -> bool {
        matches!(self, ProgressState::Fulfilled | ProgressState::Failed)
    }
}

vocabulary!(
    /// CHALLENGE.kind (section 2).
    ChallengeKind, "a challenge kind (a string)" {
        Factual = "factual",
        Inference = "inference",
        Scope = "scope",
        Feasibility = "feasibility",
        Authority = "authority",
    }
);

vocabulary!(
    /// Claim.basis (section 3).
    Basis, "a basis (a string)" {
        Observed = "observed",
        Inferred = "inferred",
        Reported = "reported",
        Assumed = "assumed",
    }
);

vocabulary!(
    /// Claim.confidence (section 3): qualitative, never a permission level.
    Confidence, "a confidence (a string)" {
        Low = "low",
        Medium = "medium",
        High = "high",
        Unspecified = "unspecified",
    }
);

vocabulary!(
    /// REVISE.mode (section 4).
    ReviseMode, "a revision mode (a string)" {
        Replace = "replace",
        Withdraw = "withdraw",
    }
);

vocabulary!(
    /// REVISE impact assessment (section 4).
    Assessment, "an impact assessment (a string)" {
        Paused = "paused",
        Unaffected = "unaffected",
        AwaitingInstruction = "awaiting_instruction",
    }
);
