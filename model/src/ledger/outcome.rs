//! What a ledger says about each delivery and each execution request.

use std::fmt;

use crate::message::vocabulary::vocabulary;

use crate::message::{MessageRef, ThreadId};
use crate::wire::{ErrorClass, Pointer, WireError};

vocabulary!(
    /// Every reason a frame can be rejected, stateless or stateful. The names are
    /// stable: reports, scenarios and other implementations use them.
    RejectClass, "a rejection class" {
        /// Not strict JSON (section 1).
        Parse = "parse",
        /// Unsupported `tern` version (section 1).
        Version = "version",
        /// Envelope schema (section 1).
        Envelope = "envelope",
        /// Body schema (sections 2-4).
        Body = "body",
        /// The thread has no identity context here.
        UnknownThread = "unknown_thread",
        /// `from` or a recipient is not a participant of the thread's context.
        UnknownParticipant = "unknown_participant",
        /// The transport's principal is not the one bound to `from`: a spoofed
        /// sender (section 1, section 8).
        Identity = "identity",
        /// This participant's receiver is neither the sender nor a recipient.
        NotAddressed = "not_addressed",
        /// The ID was already used with other content (section 1).
        IdConflict = "id_conflict",
        /// A reference resolves to the wrong act or thread, to a rejected or
        /// equivocated message, or to the message itself.
        Reference = "reference",
        /// A REPORT by someone other than the commitment's author (section 2).
        NotAuthor = "not_author",
        /// A REVISE of another sender's message (section 4, section 8).
        ForeignRevision = "foreign_revision",
        /// A REVISE of an act that cannot be revised, or of a revision (section 4).
        NotRevisable = "not_revisable",
        /// `previous` is neither the original nor a REVISE of the same chain, or
        /// continues a chain that ended with a withdrawal (section 4).
        RevisionChain = "revision_chain",
        /// `replacement` is not a valid body for the target's act, or changes
        /// what the target is about (section 4).
        Replacement = "replacement",
        /// A REQUEST with `replaces` from anyone but the original requester
        /// (section 4).
        ReplacesNotRequester = "replaces_not_requester",
    }
);

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

vocabulary!(
    /// Why an event was emitted. The names are those of reports and of the
    /// subprocess protocol's events.
    EventKind, "an event kind" {
        /// The outcome of the frame just delivered.
        Delivered = "delivered",
        /// An earlier pending message settled because of this delivery.
        Released = "released",
        /// An earlier settled message changed its standing because this delivery
        /// revealed a conflicting use of an ID (its own, or one it depends on):
        /// an acceptance lost, or a rejection whose reason is now the conflict.
        Invalidated = "invalidated",
    }
);

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

vocabulary!(
    /// Why an execution was refused (section 5 and section 8: "Missing references
    /// or grants block dependent execution").
    Refusal, "a refusal reason" {
        UnknownCommitment = "unknown_commitment",
        PendingCommitment = "pending_commitment",
        RejectedCommitment = "rejected_commitment",
        NotACommitment = "not_a_commitment",
        NotOwnCommitment = "not_own_commitment",
        AlreadyExecuted = "already_executed",
        IdConflict = "id_conflict",
        RevisionConflict = "revision_conflict",
        Withdrawn = "withdrawn",
        Superseded = "superseded",
        Disputed = "disputed",
        Terminal = "terminal",
        NoAuthority = "no_authority",
        UnknownGrant = "unknown_grant",
        GrantNotForExecutor = "grant_not_for_executor",
        OutOfScope = "out_of_scope",
        GrantExpired = "grant_expired",
        ApprovalRequired = "approval_required",
    }
);

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
