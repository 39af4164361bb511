//! The body of each act, as the profile (`docs/profile.md`) defines it.
//!
//! Field order in each struct follows the seed's worked exchange (section 6)
//! where it shows the act, so that serialising a parsed message reproduces the
//! seed's own text.

use serde::{Deserialize, Serialize};

use super::claim::Claim;
use super::fields::{nullable, object_only, present, Extensions, NonEmptyVec};
use super::names::{GrantRef, MessageRef, Text};
use super::timestamp::Timestamp;
use super::vocabulary::{Act, Assessment, ChallengeKind, ProgressState, ReviseMode};
use crate::json::Json;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, remote = "Self")]
pub struct AskBody {
    pub question: Text,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub extensions: Option<Extensions>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, remote = "Self")]
pub struct TellBody {
    /// A TELL exists to state beliefs, so it states at least one.
    pub claims: NonEmptyVec<Claim>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub extensions: Option<Extensions>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, remote = "Self")]
pub struct ProposeBody {
    pub proposal: Text,
    /// The REQUEST whose terms this negotiates (section 4), or null.
    #[serde(deserialize_with = "nullable")]
    pub request: Option<MessageRef>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub extensions: Option<Extensions>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, remote = "Self")]
pub struct RequestBody {
    pub action: Text,
    pub done_when: Text,
    pub constraints: Vec<Text>,
    #[serde(deserialize_with = "nullable")]
    pub authority_ref: Option<GrantRef>,
    /// Section 4: the COMMIT this request renegotiates; only its original
    /// requester may send it (a stateful rule).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub replaces: Option<MessageRef>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub extensions: Option<Extensions>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, remote = "Self")]
pub struct CommitBody {
    pub request: MessageRef,
    pub action: Text,
    pub deliverable: Text,
    pub done_when: Text,
    /// "due: null means no promised deadline" (section 4).
    #[serde(deserialize_with = "nullable")]
    pub due: Option<Timestamp>,
    pub conditions: Vec<Text>,
    #[serde(deserialize_with = "nullable")]
    pub authority_ref: Option<GrantRef>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub extensions: Option<Extensions>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, remote = "Self")]
pub struct ReportBody {
    pub commitment: MessageRef,
    pub state: ProgressState,
    pub claims: Vec<Claim>,
    /// "can give a next step" (section 4).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub next: Option<Text>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub extensions: Option<Extensions>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, remote = "Self")]
pub struct Impact {
    pub commitment: MessageRef,
    pub assessment: Assessment,
    pub reason: Text,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, remote = "Self")]
pub struct ReviseBody {
    /// Always the original message (section 4).
    pub target: MessageRef,
    /// The original for a first revision, the preceding REVISE thereafter.
    pub previous: MessageRef,
    pub mode: ReviseMode,
    /// A complete body for the target's act when replacing, null when
    /// withdrawing. Kept as JSON here: which schema applies depends on the
    /// target's act, which only the ledger knows.
    #[serde(deserialize_with = "nullable")]
    pub replacement: Option<Json>,
    /// May be empty: the sender knows of no affected commitments.
    pub impact: Vec<Impact>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub extensions: Option<Extensions>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, remote = "Self")]
pub struct AckBody {
    pub target: MessageRef,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub extensions: Option<Extensions>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, remote = "Self")]
pub struct ChallengeBody {
    pub target: MessageRef,
    pub kind: ChallengeKind,
    pub reason: Text,
    /// May be empty: the reason alone can carry the challenge.
    pub claims: Vec<Claim>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub extensions: Option<Extensions>,
}

object_only!(
    AskBody,
    TellBody,
    ProposeBody,
    RequestBody,
    CommitBody,
    ReportBody,
    Impact,
    ReviseBody,
    AckBody,
    ChallengeBody,
);

/// A body tagged by its act, so that an act and a body of another act cannot
/// be paired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    Ask(AskBody),
    Tell(TellBody),
    Propose(ProposeBody),
    Request(RequestBody),
    Commit(CommitBody),
    Report(ReportBody),
    Revise(ReviseBody),
    Ack(AckBody),
    Challenge(ChallengeBody),
}

impl Body {
    pub fn act(&self) -> Act {
        match self {
            Body::Ask(_) => Act::Ask,
            Body::Tell(_) => Act::Tell,
            Body::Propose(_) => Act::Propose,
            Body::Request(_) => Act::Request,
            Body::Commit(_) => Act::Commit,
            Body::Report(_) => Act::Report,
            Body::Revise(_) => Act::Revise,
            Body::Ack(_) => Act::Ack,
            Body::Challenge(_) => Act::Challenge,
        }
    }

    /// Reads the body of `act` from any deserializer: the one place where an
    /// act selects its schema.
    pub fn deserialize_for<'de, D: serde::Deserializer<'de>>(
        act: Act,
        deserializer: D,
    ) -> Result<Body, D::Error> {
        Ok(match act {
            Act::Ask => Body::Ask(Deserialize::deserialize(deserializer)?),
            Act::Tell => Body::Tell(Deserialize::deserialize(deserializer)?),
            Act::Propose => Body::Propose(Deserialize::deserialize(deserializer)?),
            Act::Request => Body::Request(Deserialize::deserialize(deserializer)?),
            Act::Commit => Body::Commit(Deserialize::deserialize(deserializer)?),
            Act::Report => Body::Report(Deserialize::deserialize(deserializer)?),
            Act::Revise => Body::Revise(Deserialize::deserialize(deserializer)?),
            Act::Ack => Body::Ack(Deserialize::deserialize(deserializer)?),
            Act::Challenge => Body::Challenge(Deserialize::deserialize(deserializer)?),
        })
    }
}

impl Serialize for Body {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Body::Ask(b) => b.serialize(serializer),
            Body::Tell(b) => b.serialize(serializer),
            Body::Propose(b) => b.serialize(serializer),
            Body::Request(b) => b.serialize(serializer),
            Body::Commit(b) => b.serialize(serializer),
            Body::Report(b) => b.serialize(serializer),
            Body::Revise(b) => b.serialize(serializer),
            Body::Ack(b) => b.serialize(serializer),
            Body::Challenge(b) => b.serialize(serializer),
        }
    }
}

/// Selects the body schema by act inside a larger deserialisation.
pub(crate) struct BodySeed(pub Act);

impl<'de> serde::de::DeserializeSeed<'de> for BodySeed {
    type Value = Body;
    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Body, D::Error> {
        Body::deserialize_for(self.0, deserializer)
    }
}
