//! The typed vocabulary of Tern 0.1.

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

use serde::ser::{Serialize, SerializeMap, Serializer};

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
        let mut map = serializer.serialize_map(Some(len))?;
        map.serialize_entry("tern", VERSION)?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("from", &self.from)?;
        map.serialize_entry("to", &self.to)?;
        map.serialize_entry("thread", &self.thread)?;
        map.serialize_entry("reply", &self.reply)?;
        map.serialize_entry("act", &self.act())?;
        map.serialize_entry("body", &self.body)?;
        if let Some(evidence) = &self.evidence {
            map.serialize_entry("evidence", evidence)?;
        }
        if let Some(extensions) = &self.extensions {
            map.serialize_entry("extensions", extensions)?;
        }
        map.end()
    }
}
