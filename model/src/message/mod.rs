//! The typed vocabulary of Tern 0.1.

pub(crate) mod binary;
mod body;
mod claim;
mod fields;
mod names;
mod timestamp;
pub(crate) mod vocabulary;

pub(crate) use body::BodySeed;
pub use body::{
    AckBody, AskBody, Body, ChallengeBody, CommitBody, Impact, ProposeBody, ReportBody,
    RequestBody, ReviseBody, TellBody,
};
pub use claim::{Claim, Evidence};
pub(crate) use fields::JsonKind;
pub use fields::{Extensions, NonEmptyVec};
pub use names::{
    ContextName, EvidenceId, GrantRef, MessageRef, Participant, Principal, Text, ThreadId,
};
pub use timestamp::Timestamp;
pub use vocabulary::{
    Act, Assessment, Basis, ChallengeKind, Confidence, ProgressState, ReviseMode,
};

use serde::ser::{Serialize, SerializeStruct, Serializer};

/// The only version this profile accepts (section 1: "Unsupported versions are
/// rejected without executing their contents").
pub const VERSION: &str = "0.1";

/// A message that passed every stateless check of the profile.
///
/// Whether it is *accepted* (identity, references, history) is the ledger's
/// question, not this type's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub id: MessageRef,
    pub from: Participant,
    /// Nonempty and without repeats; recipients are explicit individuals.
    pub to: NonEmptyVec<Participant>,
    pub thread: ThreadId,
    pub reply: Option<MessageRef>,
    pub body: Body,
    pub evidence: Option<Vec<Evidence>>,
    pub extensions: Option<Extensions>,
}

impl Message {
    pub fn act(&self) -> Act {
        self.body.act()
    }

    /// The message in canonical wire form: one line, no insignificant
    /// whitespace, envelope keys in the seed's order.
    pub fn to_json_line(&self) -> String {
        // Serialising owned strings, enums and finite numbers cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }
}

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let len = 8 + usize::from(self.evidence.is_some()) + usize::from(self.extensions.is_some());
        // A struct rather than a map: its keys are static, which writers of
        // canonical text need not copy.
        let mut map = serializer.serialize_struct("Message", len)?;
        map.serialize_field("tern", VERSION)?;
        map.serialize_field("id", &self.id)?;
        map.serialize_field("from", &self.from)?;
        map.serialize_field("to", &self.to)?;
        map.serialize_field("thread", &self.thread)?;
        map.serialize_field("reply", &self.reply)?;
        map.serialize_field("act", &self.act())?;
        map.serialize_field("body", &self.body)?;
        if let Some(evidence) = &self.evidence {
            map.serialize_field("evidence", evidence)?;
        }
        if let Some(extensions) = &self.extensions {
            map.serialize_field("extensions", extensions)?;
        }
        map.end()
    }
}
