//! What a ledger says about each delivery and each execution request.

use std::fmt;

use crate::message::{MessageRef, ThreadId};
use crate::wire::{ErrorClass, Pointer, WireError};

/// Every reason a frame can be rejected, stateless or stateful. The names are
/// stable: reports, scenarios and other implementations use them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RejectClass {
    /// Not strict JSON (section 1).
    Parse,
    /// Unsupported `tern` version (section 1).
    Version,
    /// Envelope schema (section 1).
    Envelope,
    /// Body schema (sections 2-4).
    Body,
    /// The thread has no identity context here.
    UnknownThread,
    /// `from` or a recipient is not a participant of the thread's context.
    UnknownParticipant,
    /// The transport's principal is not the one bound to `from`: a spoofed
    /// sender (section 1, section 8).
    Identity,
    /// This participant's receiver is neither the sender nor a recipient.
    NotAddressed,
    /// The ID was already used with other content (section 1).
    IdConflict,
    /// A reference resolves to the wrong act or thread, to a rejected or
    /// equivocated message, or to the message itself.
    Reference,
    /// A REPORT by someone other than the commitment's author (section 2).
    NotAuthor,
    /// A REVISE of another sender's message (section 4, section 8).
    ForeignRevision,
    /// A REVISE of an act that cannot be revised, or of a revision (section 4).
    NotRevisable,
    /// `previous` is neither the original nor a REVISE of the same chain, or
    /// continues a chain that ended with a withdrawal (section 4).
    RevisionChain,
    /// `replacement` is not a valid body for the target's act, or changes
    /// what the target is about (section 4).
    Replacement,
    /// A REQUEST with `replaces` from anyone but the original requester
    /// (section 4).
    ReplacesNotRequester,
}

impl RejectClass {
    pub const ALL: [RejectClass; 16] = [
        RejectClass::Parse,
        RejectClass::Version,
        RejectClass::Envelope,
        RejectClass::Body,
        RejectClass::UnknownThread,
        RejectClass::UnknownParticipant,
        RejectClass::Identity,
        RejectClass::NotAddressed,
        RejectClass::IdConflict,
        RejectClass::Reference,
        RejectClass::NotAuthor,
        RejectClass::ForeignRevision,
        RejectClass::NotRevisable,
        RejectClass::RevisionChain,
        RejectClass::Replacement,
        RejectClass::ReplacesNotRequester,
    ];

    pub fn from_name(name: &str) -> Option<RejectClass> {
        RejectClass::ALL.into_iter().find(|c| c.as_str() == name)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            RejectClass::Parse => "parse",
            RejectClass::Version => "version",
            RejectClass::Envelope => "envelope",
            RejectClass::Body => "body",
            RejectClass::UnknownThread => "unknown_thread",
            RejectClass::UnknownParticipant => "unknown_participant",
            RejectClass::Identity => "identity",
            RejectClass::NotAddressed => "not_addressed",
            RejectClass::IdConflict => "id_conflict",
            RejectClass::Reference => "reference",
            RejectClass::NotAuthor => "not_author",
            RejectClass::ForeignRevision => "foreign_revision",
            RejectClass::NotRevisable => "not_revisable",
            RejectClass::RevisionChain => "revision_chain",
            RejectClass::Replacement => "replacement",
            RejectClass::ReplacesNotRequester => "replaces_not_requester",
        }
    }
}

impl fmt::Display for RejectClass {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<ErrorClass> for RejectClass {
    fn from(class: ErrorClass) -> RejectClass {
        match class {
            ErrorClass::Parse => RejectClass::Parse,
            ErrorClass::Version => RejectClass::Version,
            ErrorClass::Envelope => RejectClass::Envelope,
            ErrorClass::Body => RejectClass::Body,
        }
    }
}

/// A rejection: class, the member it concerns, and a sentence for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    pub class: RejectClass,
    pub pointer: Pointer,
    pub message: String,
}

impl Rejection {
    pub fn new(class: RejectClass, pointer: Pointer, message: impl Into<String>) -> Rejection {
        Rejection {
            class,
            pointer,
            message: message.into(),
        }
    }
}

impl From<WireError> for Rejection {
    fn from(e: WireError) -> Rejection {
        Rejection {
            class: e.class.into(),
            pointer: e.pointer,
            message: e.message,
        }
    }
}

/// The outcome of one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Locally validated (section 4: "accepted means locally validated, not
    /// recipient agreement").
    Accepted,
    /// The same ID with structurally identical content: no new effect.
    Duplicate,
    /// Valid so far, waiting for these references (section 1: "Unresolved
    /// references are pending, not inferred").
    Pending {
        missing: Vec<MessageRef>,
    },
    Rejected(Rejection),
}

/// Why an event was emitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// The outcome of the frame just delivered.
    Delivered,
    /// An earlier pending message settled because of this delivery.
    Released,
    /// An earlier settled message changed its standing because this delivery
    /// revealed a conflicting use of an ID (its own, or one it depends on):
    /// an acceptance lost, or a rejection whose reason is now the conflict.
    Invalidated,
}

/// One outcome, and which message it concerns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub kind: EventKind,
    /// The number of the delivery (counting from 0) that brought the message
    /// this event concerns, so a caller can map it back to its input.
    pub origin: u64,
    pub id: Option<MessageRef>,
    pub thread: Option<ThreadId>,
    pub outcome: Outcome,
}

/// Why an execution was refused (section 5 and section 8: "Missing references
/// or grants block dependent execution").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Refusal {
    UnknownCommitment,
    PendingCommitment,
    RejectedCommitment,
    NotACommitment,
    NotOwnCommitment,
    AlreadyExecuted,
    IdConflict,
    RevisionConflict,
    Withdrawn,
    Superseded,
    Disputed,
    Terminal,
    NoAuthority,
    UnknownGrant,
    GrantNotForExecutor,
    OutOfScope,
    GrantExpired,
    ApprovalRequired,
}

impl Refusal {
    pub const ALL: [Refusal; 18] = [
        Refusal::UnknownCommitment,
        Refusal::PendingCommitment,
        Refusal::RejectedCommitment,
        Refusal::NotACommitment,
        Refusal::NotOwnCommitment,
        Refusal::AlreadyExecuted,
        Refusal::IdConflict,
        Refusal::RevisionConflict,
        Refusal::Withdrawn,
        Refusal::Superseded,
        Refusal::Disputed,
        Refusal::Terminal,
        Refusal::NoAuthority,
        Refusal::UnknownGrant,
        Refusal::GrantNotForExecutor,
        Refusal::OutOfScope,
        Refusal::GrantExpired,
        Refusal::ApprovalRequired,
    ];

    pub fn from_name(name: &str) -> Option<Refusal> {
        Refusal::ALL.into_iter().find(|r| r.as_str() == name)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::UnknownCommitment => "unknown_commitment",
            Refusal::PendingCommitment => "pending_commitment",
            Refusal::RejectedCommitment => "rejected_commitment",
            Refusal::NotACommitment => "not_a_commitment",
            Refusal::NotOwnCommitment => "not_own_commitment",
            Refusal::AlreadyExecuted => "already_executed",
            Refusal::IdConflict => "id_conflict",
            Refusal::RevisionConflict => "revision_conflict",
            Refusal::Withdrawn => "withdrawn",
            Refusal::Superseded => "superseded",
            Refusal::Disputed => "disputed",
            Refusal::Terminal => "terminal",
            Refusal::NoAuthority => "no_authority",
            Refusal::UnknownGrant => "unknown_grant",
            Refusal::GrantNotForExecutor => "grant_not_for_executor",
            Refusal::OutOfScope => "out_of_scope",
            Refusal::GrantExpired => "grant_expired",
            Refusal::ApprovalRequired => "approval_required",
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The idempotency key of an effect: one per commitment, qualified by its
/// identity context, so a second execution can be recognised as the same one.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EffectKey(pub String);

impl fmt::Display for EffectKey {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Execution {
    Executed { effect: EffectKey },
    Refused(Refusal),
}
