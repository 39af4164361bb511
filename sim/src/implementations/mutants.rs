//! The mutant zoo: deliberately broken implementations, at least one for
//! every invariant an implementation can break (order independence is
//! enforced through `views-agree` against an order-independent model, which
//! the ledger's property tests prove). Each is the reference implementation with one defect a real
//! implementation could plausibly have. `tern-sim selftest` shows that the
//! simulator catches every one, and names the invariant that does.

mod answers;
mod body_keys;
mod recovered;
mod skipped;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};
use tern_model::ledger::{
    Contexts, EffectKey, Event, EventKind, Execution, LocalTime, Outcome, Refusal, RejectClass,
};
use tern_model::message::{MessageRef, Principal, ThreadId};

use crate::catalogue::boast::{Answers, Carrier, Named, Place, Shape};
use crate::catalogue::malformed::Malformation;
use crate::catalogue::situations::{Moment, Situation};
use crate::contract::plugin::{
    Delivered, Identity, ImplError, Implementation, InitParams, Receiver, View, ViewDigest,
};
use crate::contract::storage::{Durable, Storage};
use crate::contract::world::{AgentWorld, Effects};
use crate::implementations::reference::{Record, Recording, ReferenceReceiver};
use crate::judge::invariants::{self as inv, Invariant};

macro_rules! zoo {
    ($($id:ident = $name:literal, $invariant:ident, $what:literal, $needs:literal, $kin:ident, $family:ident($situation:expr);)*) => {
        /// Every mutant of the zoo.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
        pub enum Mutant { $($id),* }

        impl Mutant {
            pub const ALL: &'static [Mutant] = &[$(Mutant::$id),*];

            pub fn name(self) -> &'static str {
                match self { $(Mutant::$id => $name),* }
            }

            /// The invariant meant to catch it.
            pub fn target(self) -> Invariant {
                match self { $(Mutant::$id => inv::$invariant),* }
            }

            pub fn defect(self) -> &'static str {
                match self { $(Mutant::$id => $what),* }
            }

            /// What a run must do before the defect shows, in words: what
            /// a workload that fails to kill the mutant is missing.
            pub fn needs(self) -> &'static str {
                match self { $(Mutant::$id => $needs),* }
            }

            /// The catalogue's situation in which the defect shows (the
            /// mutant is wrong only there), so that a budget that never
            /// reaches it is known not to test it.
            pub fn situation(self) -> Situation {
                match self { $(Mutant::$id => Situation::$family($situation)),* }
            }

            /// How the defect is made: its own code, or one of the
            /// families that are wrong in one situation each.
            pub fn kin(self) -> Kin {
                match self { $(Mutant::$id => Kin::$kin),* }
            }

            pub fn by_name(name: &str) -> Option<Mutant> {
                Mutant::ALL.iter().copied().find(|m| m.name() == name)
            }
        }
    };
}

zoo! {
    DuplicateKeys = "accepts-duplicate-keys", STRICT_PARSING, "reads frames with repeated keys, keeping the last value", "a frame with a repeated key", Own, Malformed(Malformation::DuplicateEnvelopeKey);
    NonFinite = "accepts-non-finite-numbers", STRICT_PARSING, "reads numbers out of range as zero", "a frame with a number out of range", Own, Malformed(Malformation::NonFinite);
    LossyUtf8 = "accepts-invalid-utf8", STRICT_PARSING, "repairs invalid UTF-8 instead of rejecting it", "a frame with invalid UTF-8", Own, Malformed(Malformation::InvalidUtf8);
    AnyVersion = "accepts-any-version", VERSION, "treats every `tern` version as 0.1", "a frame of another `tern` version", Own, Malformed(Malformation::OtherVersion);
    TrustsFrom = "trusts-from", IDENTITY, "believes `from` without the transport's principal", "a frame whose `from` is not its principal", Own, Rejected(RejectClass::Identity);
    FirstWins = "first-content-wins", ID_CONFLICT, "keeps the first content of a reused ID and calls the second a duplicate", "an ID reused with other content", Own, Rejected(RejectClass::IdConflict);
    InfersPending = "infers-pending", PENDING, "accepts messages whose references are still missing", "a message whose reference has not arrived", Own, Moment(Moment::Pending);
    AnyoneReports = "anyone-reports", ONLY_AUTHOR, "accepts REPORTs from anyone", "a REPORT by someone other than the committer", Own, Rejected(RejectClass::NotAuthor);
    RevisesOthers = "revises-others", OWN_REVISIONS, "accepts REVISEs of other senders' messages", "a REVISE of another sender's message", Own, Rejected(RejectClass::ForeignRevision);
    LastRevisionWins = "last-revision-wins", NO_SILENT_BRANCH, "resolves competing revisions by taking the last one", "two competing REVISEs of one message", Own, Moment(Moment::PreviousSkipsLink);
    MemoryDedup = "memory-dedup", AT_MOST_ONCE, "keeps executed effects in memory only, so a restart executes again", "an execution, then a crash and an ask to execute again", Own, Moment(Moment::CrashIdle);
    EffectBeforeIntent = "effect-before-intent", AT_MOST_ONCE, "performs an effect before its record is durable", "a crash right after an effect", Own, Moment(Moment::CrashAfterEffect);
    IntentAsDone = "intent-as-done", EXECUTIONS, "after a restart, counts a durable intent as executed without asking the world whether its effect happened", "a crash between a durable intent and its effect", Own, Moment(Moment::CrashBeforeEffect);
    ResumesAtStart = "resumes-at-start", AUTHORITY, "performs at start-up the effects whose intents a crash cut, without an ask to execute", "a crash between a durable intent and its effect, then the restart", Own, Moment(Moment::CrashBeforeEffect);
    AcksAcks = "acks-acks", NO_ACK_OF_ACK, "acknowledges every ACK it accepts", "an ACK accepted", Own, Moment(Moment::Accepted);
    AcksAcksLater = "acks-acks-later", NO_ACK_OF_ACK, "acknowledges each ACK it accepts one delivery later, in a batch with its next answer", "an ACK accepted, then another accepted message", Own, Moment(Moment::Accepted);
    RepliesToInvalid = "replies-to-invalid", NO_REPLY_TO_INVALID, "answers rejected frames with a message", "a rejected frame", Own, Rejected(RejectClass::Parse);
    ReopensTerminal = "reopens-terminal", TERMINAL, "lets a report after a terminal one make the commitment active", "a REPORT after a terminal REPORT", Own, Refused(Refusal::Terminal);
    BlockedIsDone = "blocked-is-done", BLOCKED, "shows blocked commitments as fulfilled", "a blocked REPORT", Own, Moment(Moment::Accepted);
    IgnoresExpiry = "ignores-expiry", AUTHORITY, "never lets a grant expire", "an execution after its grant's expiry", Own, Moment(Moment::ExpiryOneAfter);
    ClaimsAuthorise = "claims-authorise", AUTHORITY, "takes a thread's evidence-backed claims as authority", "evidence-backed claims in a thread without authority", Own, Refused(Refusal::NoAuthority);
    ExecutesOthers = "executes-others", BINDS_SENDER, "executes other participants' commitments", "an execution of another participant's COMMIT", Own, Refused(Refusal::NotOwnCommitment);
    ReExecutes = "re-executes", AT_MOST_ONCE, "performs an effect again when asked again", "a second ask to execute one commitment", Own, Refused(Refusal::AlreadyExecuted);
    ErasesHistory = "erases-history", HISTORY, "drops revised messages from its view", "a revised message", Own, Moment(Moment::Accepted);
    ProposeCommits = "propose-commits", NO_COMMITMENT_FROM_TALK, "records a PROPOSE as a commitment", "an accepted PROPOSE", Own, Refused(Refusal::NotACommitment);
    ExecutesWithdrawn = "executes-withdrawn", LIFECYCLE, "executes withdrawn, superseded and disputed commitments", "an execution of a withdrawn, superseded or disputed COMMIT", Own, Refused(Refusal::Withdrawn);
    IgnoresConflict = "ignores-revision-conflict", CONFLICT_BLOCKS, "executes while a revision conflict is known", "an execution under a known revision conflict", Own, Refused(Refusal::RevisionConflict);
    ExecutesPending = "executes-pending", PENDING, "executes commitments whose references are missing", "an execution of a COMMIT whose references are missing", Own, Refused(Refusal::PendingCommitment);
    AcceptsUnknownFields = "accepts-malformed-bodies", SCHEMA, "accepts envelopes and bodies that break the schema", "a frame with an unknown or mistyped member", Own, Malformed(Malformation::UnknownBodyField);
    AcceptsMisrouted = "accepts-misrouted", ADDRESSING, "records messages addressed to someone else", "a frame not addressed to the receiver", Own, Rejected(RejectClass::NotAddressed);
    NoDedup = "no-dedup", DEDUP, "treats a repeated delivery as new", "a repeated delivery", Own, Moment(Moment::Duplicate);
    LooseReferences = "loose-references", REFERENCES, "accepts references to the wrong act or thread", "a reference to the wrong act or thread", Own, Rejected(RejectClass::Reference);
    LooseChains = "loose-revision-chains", REVISION_CHAIN, "accepts a `previous` outside the revision chain", "a REVISE whose `previous` is outside the chain", Own, Rejected(RejectClass::RevisionChain);
    AnyReplacement = "any-replacement", REPLACEMENT, "accepts replacements that are not a valid body of the target's act", "a replacing REVISE with an invalid body", Own, Rejected(RejectClass::Replacement);
    AnyoneRenews = "anyone-renews", RENEWAL, "lets anyone ask to replace a commitment", "a renewal asked by someone other than the requester", Own, Rejected(RejectClass::ReplacesNotRequester);
    RejectsChallenges = "rejects-challenges", VALID_ACCEPTED, "rejects every CHALLENGE", "a valid CHALLENGE", Own, Moment(Moment::Accepted);
    SilentReleases = "silent-releases", OUTCOMES, "never reports the release of a pending message", "a pending message released", Own, Moment(Moment::Released);
    MisreportsExecution = "misreports-execution", EXECUTIONS, "performs an effect and then reports it as refused", "an execution performed", Own, Moment(Moment::Executed);
    HidesPending = "hides-pending", VIEWS, "leaves pending messages out of its view", "a pending message in a view", Own, Moment(Moment::Pending);
    CrashesOnChallenge = "crashes-on-challenge", ALIVE, "fails with an internal error on any CHALLENGE", "a CHALLENGE", Own, Moment(Moment::Accepted);
    EffectInView = "effect-in-view", AUTHORITY, "performs an effect while answering a view (a status probe with a side effect)", "a view asked", Own, Moment(Moment::Accepted);
    ExpiryAtArrival = "expiry-at-commit-arrival", AUTHORITY, "judges a grant's expiry at the time the COMMIT arrived, not at the time it is executed", "a COMMIT that arrives before its grant expires and is executed after", Own, Moment(Moment::ExpiredSinceArrival);
    ValidAtExpiry = "valid-at-expiry-instant", AUTHORITY, "still honours a grant at exactly its expiry instant", "an execution at exactly its grant's expiry instant", Own, Moment(Moment::ExpiryExactly);
    DedupAfterAnswer = "dedup-after-answer", DEDUP, "writes its dedup record after it answers, so a crash loses the record and a redelivery counts as new", "a crash right after a delivery, then a redelivery of that frame", Own, Moment(Moment::RedeliveredAfterAnswer);
    PendingInMemory = "pending-in-memory", HISTORY, "holds pending messages in memory only, so a restart loses them", "a crash while a message is pending", Own, Moment(Moment::ReleasedAfterRestart);
    RevisesRevisions = "revises-revisions", OWN_REVISIONS, "accepts a REVISE whose target is an earlier REVISE instead of the original", "a REVISE that targets a REVISE", Own, Moment(Moment::ReviseOfRevise);
    BodyDuplicateKeys = "accepts-duplicate-keys-in-body", STRICT_PARSING, "reads repeated keys inside `body`, keeping the last value (the envelope stays strict)", "a frame with a repeated key inside its body", Own, Malformed(Malformation::DuplicateBodyKey);
    NeverInvalidates = "never-invalidates", ID_CONFLICT, "never reports that a later delivery changed an earlier verdict", "an ID conflict that changes an earlier verdict", Own, Moment(Moment::Invalidated);
    ExpiresEarly = "expires-early", EXECUTIONS, "lets a grant expire one millisecond before its instant", "an execution 1 ms before its grant's expiry", Own, Moment(Moment::ExpiryOneBefore);
    ContextBlindIds = "context-blind-ids", VALID_ACCEPTED, "keys its ID records by ID alone, so an ID used in one identity context is a reuse in another", "one ID used in two identity contexts", Own, Moment(Moment::SameIdTwoContexts);
    RedeliveryResets = "redelivery-resets-execution", AT_MOST_ONCE, "forgets that a commitment was executed when its COMMIT is delivered again, so its view no longer lists the effect", "a COMMIT redelivered after its effect", Own, Moment(Moment::EffectThenRedelivered);
    GroupCommit = "group-commit", HISTORY, "answers a delivery before its record is durable and syncs it when the next delivery begins or a view is asked, so a crash at that next delivery loses a message it already answered", "a crash at a delivery before it is durable, right after another answered delivery", Own, Moment(Moment::CrashBeforeDurable);
    IndexBeforeData = "index-before-data", HISTORY, "makes a frame's dedup key durable before the frame, so a crash between the two makes the redelivery a duplicate of a message it never kept", "a crash at a delivery once its first write is durable, then the redelivery", Own, Moment(Moment::CrashAfterDurable);
    StoresTwice = "stores-cut-delivery-twice", VIEWS, "makes a frame durable before its dedup key, so a frame whose delivery a crash cut is stored again when it comes back, and its view lists it twice", "a redelivery of a frame made durable by a delivery a crash cut", Own, Moment(Moment::RedeliveredDurable);
    DistrustsTail = "distrusts-tail-after-failed-start", HISTORY, "after a start-up that crashed once it had written something, takes its log's last delivery for a torn write and drops it, although it had answered it", "a crash during recovery once durable, then the restart", Own, Moment(Moment::CrashInRecoveryDurable);
    ForgetsEquivocatedEffects = "forgets-equivocated-effects", AT_MOST_ONCE, "drops from its view the effect of a commitment whose ID is reused after the effect, as if the conflict undid it", "an ID conflict on a COMMIT revealed after its effect", Own, Moment(Moment::IdConflictAfterEffect);
    ForgetsConflictedEffects = "forgets-conflicted-effects", AT_MOST_ONCE, "drops from its view the effect of a commitment whose revisions conflict after the effect, as if the conflict undid it", "competing REVISEs of a COMMIT known after its effect", Own, Moment(Moment::RevisionConflictAfterEffect);
    ExtensionGrantAuthorises = "extension-grant-authorises", AUTHORITY, "takes a grant named in the extensions of a message that replies to its COMMIT as the commitment's authority, checked against its registry", "its own grant named in the extensions of an accepted reply to its COMMIT, then an execution refused for authority", Own, Boast(Shape::new(Place::Extensions, Carrier::Tell, Answers::Commit, Named::Real));
    SkipsTruncationCheck = "skips-truncation-check", STRICT_PARSING, "reads a truncated frame as far as it goes", "a truncated frame", SkipsCheck, Malformed(Malformation::Truncated);
    SkipsClaimDuplicateKeys = "skips-claim-duplicate-keys", STRICT_PARSING, "lets a repeated key inside a claim through", "a frame with a repeated key in a claim", SkipsCheck, Malformed(Malformation::DuplicateClaimKey);
    SkipsEvidenceDuplicateKeys = "skips-evidence-duplicate-keys", STRICT_PARSING, "lets a repeated key inside an evidence object through", "a frame with a repeated key in evidence", SkipsCheck, Malformed(Malformation::DuplicateEvidenceKey);
    SkipsExtensionsDuplicateKeys = "skips-extensions-duplicate-keys", STRICT_PARSING, "lets a repeated key in `extensions` through", "a frame with a repeated key in extensions", SkipsCheck, Malformed(Malformation::DuplicateExtensionsKey);
    SkipsDeepDuplicateKeys = "skips-deep-duplicate-keys", STRICT_PARSING, "checks repeated keys only near the top, not deep inside `extensions`", "a frame with a repeated key deep in extensions", SkipsCheck, Malformed(Malformation::DuplicateNestedKey);
    SkipsEscapedDuplicateKeys = "skips-escaped-duplicate-keys", STRICT_PARSING, "compares keys before unescaping, so two spellings of one key pass", "a frame whose keys are equal only after unescaping", SkipsCheck, Malformed(Malformation::DuplicateAfterUnescape);
    SkipsSurrogateCheck = "skips-surrogate-check", STRICT_PARSING, "takes a lone surrogate escape as text", "a frame with a lone surrogate escape", SkipsCheck, Malformed(Malformation::LoneSurrogate);
    SkipsOverlongUtf8Check = "skips-overlong-utf8-check", STRICT_PARSING, "decodes overlong UTF-8 sequences", "a frame with an overlong UTF-8 encoding", SkipsCheck, Malformed(Malformation::OverlongUtf8);
    AcceptsNumericVersion = "accepts-numeric-version", SCHEMA, "reads a numeric `tern` as its string", "a frame whose version is a number", SkipsCheck, Malformed(Malformation::VersionNotString);
    AcceptsPatchVersions = "accepts-patch-versions", VERSION, "takes `0.1.0` as version 0.1", "a frame of version 0.1.0", SkipsCheck, Malformed(Malformation::VersionThreeParts);
    AcceptsVersionlessFrames = "accepts-versionless-frames", SCHEMA, "takes a frame without `tern` as version 0.1", "a frame with no version member", SkipsCheck, Malformed(Malformation::VersionMissing);
    SkipsEnvelopeFieldCheck = "skips-envelope-field-check", SCHEMA, "ignores unknown envelope members", "a frame with an unknown envelope member", SkipsCheck, Malformed(Malformation::UnknownEnvelopeField);
    SkipsTrailingDataCheck = "skips-trailing-data-check", STRICT_PARSING, "reads the first value of a frame and ignores what follows", "a frame with a second value after the object", SkipsCheck, Malformed(Malformation::TrailingValue);
    SkipsBomCheck = "skips-bom-check", STRICT_PARSING, "skips a byte order mark", "a frame that starts with a byte order mark", SkipsCheck, Malformed(Malformation::ByteOrderMark);
    SkipsOverflowCheck = "skips-overflow-check", STRICT_PARSING, "reads a number that overflows binary64", "a frame with a number overflowing binary64", SkipsCheck, Malformed(Malformation::NumberOverflow);
    SkipsDepthLimit = "skips-depth-limit", STRICT_PARSING, "reads frames nested deeper than the limit", "a frame nested one level too deep", SkipsCheck, Malformed(Malformation::NestingTooDeep);
    SkipsSizeLimit = "skips-size-limit", STRICT_PARSING, "reads frames larger than the limit", "a frame one byte over the size limit", SkipsCheck, Malformed(Malformation::Oversized);
    SkipsParticipantNameCheck = "skips-participant-name-check", SCHEMA, "takes any string as a recipient's name", "a frame with a bad participant name in `to`", SkipsCheck, Malformed(Malformation::BadParticipant);
    SkipsReferenceSyntaxCheck = "skips-reference-syntax-check", SCHEMA, "takes any string as a message reference", "a frame whose `reply` is not a message reference", SkipsCheck, Malformed(Malformation::BadReference);
    SkipsIdNamespaceCheck = "skips-id-namespace-check", SCHEMA, "does not check that an ID belongs to its sender", "a frame whose ID has another sender's prefix", SkipsCheck, Malformed(Malformation::ForeignId);
    SkipsRecipientListCheck = "skips-recipient-list-check", SCHEMA, "takes an empty `to`, or one that repeats a name", "a frame whose `to` is empty or repeats a name", SkipsCheck, Malformed(Malformation::BadRecipients);
    SkipsThreadCheck = "skips-thread-check", SCHEMA, "takes an empty thread", "a frame with an empty thread", SkipsCheck, Malformed(Malformation::EmptyThread);
    SkipsReplyPresenceCheck = "skips-reply-presence-check", SCHEMA, "reads a missing `reply` as null", "a frame without `reply`", SkipsCheck, Malformed(Malformation::ReplyMissing);
    SkipsActCheck = "skips-act-check", SCHEMA, "takes an unknown act (or one in the wrong case) as a message", "a frame with an unknown act", SkipsCheck, Malformed(Malformation::UnknownAct);
    SkipsBodyTypeCheck = "skips-body-type-check", SCHEMA, "takes a body that is not an object", "a frame whose body is not an object", SkipsCheck, Malformed(Malformation::BodyNotObject);
    SkipsEvidenceIdCheck = "skips-evidence-id-check", SCHEMA, "lets one message define an evidence ID twice", "a frame that defines an evidence ID twice", SkipsCheck, Malformed(Malformation::EvidenceIdRepeated);
    SkipsExtensionsTypeCheck = "skips-extensions-type-check", SCHEMA, "takes `extensions` that is not an object", "a frame whose extensions is not an object", SkipsCheck, Malformed(Malformation::ExtensionsNotObject);
    SkipsNonemptyTextCheck = "skips-nonempty-text-check", SCHEMA, "takes empty text", "a frame with an empty text field", SkipsCheck, Malformed(Malformation::EmptyText);
    SkipsNeverNullCheck = "skips-never-null-check", SCHEMA, "reads `null` for an optional field as its absence", "a frame with null for an optional field", SkipsCheck, Malformed(Malformation::NullOptional);
    SkipsListElementCheck = "skips-list-element-check", SCHEMA, "checks that lists are arrays but not what they hold", "a frame with a list element of the wrong kind", SkipsCheck, Malformed(Malformation::BadListElement);
    SkipsEnumerationCase = "skips-enumeration-case", SCHEMA, "compares enumeration values without case", "a frame with an enumeration value in the wrong case", SkipsCheck, Malformed(Malformation::MiscasedEnumeration);
    SkipsRequiredFields = "skips-required-fields", SCHEMA, "takes a body with a required field missing", "a frame whose body lacks a required field", SkipsCheck, Malformed(Malformation::MissingBodyField);
    SkipsClaimFieldCheck = "skips-claim-field-check", SCHEMA, "ignores extra members of claims and evidence objects", "a frame with an extra member in a claim or evidence", SkipsCheck, Malformed(Malformation::ExtraObjectMember);
    SkipsTimestampCheck = "skips-timestamp-check", SCHEMA, "takes any string as a timestamp or evidence ID", "a frame with a bad timestamp or evidence ID", SkipsCheck, Malformed(Malformation::BadTimestampOrEvidenceId);
    SkipsAuthoritySyntaxCheck = "skips-authority-syntax-check", SCHEMA, "takes an empty `authority_ref`", "a frame with an empty authority_ref", SkipsCheck, Malformed(Malformation::EmptyAuthority);
    ConvertsTypes = "converts-types", SCHEMA, "converts values of the wrong JSON type", "a frame with a value of the wrong JSON type", SkipsCheck, Malformed(Malformation::TypeConverted);
    AcceptsVersionErrors = "accepts-version-errors", VERSION, "takes frames of unsupported versions as valid", "a frame of an unsupported version", AcceptsRejected, Rejected(RejectClass::Version);
    AcceptsEnvelopeErrors = "accepts-envelope-errors", SCHEMA, "takes frames whose envelope breaks the schema as valid", "a frame with a broken envelope", AcceptsRejected, Rejected(RejectClass::Envelope);
    AcceptsBodyErrors = "accepts-body-errors", SCHEMA, "takes frames whose body breaks the schema as valid", "a frame with a broken body", AcceptsRejected, Rejected(RejectClass::Body);
    AcceptsUnknownThreads = "accepts-unknown-threads", IDENTITY, "accepts messages in threads no identity context knows", "a message in a thread no context knows", AcceptsRejected, Rejected(RejectClass::UnknownThread);
    AcceptsUnknownParticipants = "accepts-unknown-participants", IDENTITY, "accepts messages from participants no context binds", "a message from a participant no context binds", AcceptsRejected, Rejected(RejectClass::UnknownParticipant);
    RevisesUnrevisable = "revises-unrevisable", OWN_REVISIONS, "accepts REVISEs of ASK, ACK, CHALLENGE and REVISE", "a REVISE of an act that cannot be revised", AcceptsRejected, Rejected(RejectClass::NotRevisable);
    ExecutesUnknown = "executes-unknown", PENDING, "performs the effect of a commitment it never stored", "an execution of a commitment never received", IgnoresRefusal, Refused(Refusal::UnknownCommitment);
    ExecutesRejected = "executes-rejected", PENDING, "performs the effect of a COMMIT it rejected", "an execution of a rejected COMMIT", IgnoresRefusal, Refused(Refusal::RejectedCommitment);
    ExecutesIdConflicted = "executes-id-conflicted", ID_CONFLICT, "executes a commitment whose ID is in conflict", "an execution of a COMMIT whose ID was reused", IgnoresRefusal, Refused(Refusal::IdConflict);
    ExecutesSuperseded = "executes-superseded", LIFECYCLE, "executes a superseded commitment", "an execution of a superseded COMMIT", IgnoresRefusal, Refused(Refusal::Superseded);
    ExecutesDisputed = "executes-disputed", LIFECYCLE, "executes a disputed commitment", "an execution of a disputed COMMIT", IgnoresRefusal, Refused(Refusal::Disputed);
    IgnoresUnknownGrants = "ignores-unknown-grants", AUTHORITY, "executes under a grant its registry does not hold", "an execution under an unknown grant", IgnoresRefusal, Refused(Refusal::UnknownGrant);
    IgnoresGrantee = "ignores-grantee", AUTHORITY, "executes under a grant given to someone else", "an execution under another participant's grant", IgnoresRefusal, Refused(Refusal::GrantNotForExecutor);
    IgnoresGrantScope = "ignores-grant-scope", AUTHORITY, "executes under a grant outside its threads", "an execution under a grant outside its scope", IgnoresRefusal, Refused(Refusal::OutOfScope);
    ExecutesExpired = "executes-expired", AUTHORITY, "executes under an expired grant", "an execution under an expired grant", IgnoresRefusal, Refused(Refusal::GrantExpired);
    IgnoresApproval = "ignores-approval", AUTHORITY, "executes without the human approval its grant requires", "an execution under a grant that needs an approval not given", IgnoresRefusal, Refused(Refusal::ApprovalRequired);
}

/// How a mutant's defect is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kin {
    /// A defect of its own, written for it.
    Own,
    /// The wire layer lacks the check its broken frame's kind breaks
    /// (`Mutant::situation` names the kind), and accepts that frame.
    SkipsCheck,
    /// Every frame the reference rejects with its situation's class is
    /// accepted instead.
    AcceptsRejected,
    /// Every execution the reference refuses for its situation's refusal
    /// (as the first reason) is performed instead.
    IgnoresRefusal,
}

/// A mutant as an implementation.
#[derive(Debug, Clone, Copy)]
pub struct MutantImpl(pub Mutant);

impl Implementation for MutantImpl {
    fn name(&self) -> String {
        format!("mutant {}", self.0.name())
    }

    fn start(
        &self,
        init: &InitParams,
        storage: Storage,
        world: AgentWorld,
    ) -> Result<Box<dyn Receiver>, ImplError> {
        start_mutant(self.0, init, storage, world)
    }
}

/// Starts a mutant over any storage and world (the simulator's, or the
/// files and protocol of `tern-sim agent --mutant`).
pub fn start_mutant<S, W>(
    mutant: Mutant,
    init: &InitParams,
    storage: S,
    world: W,
) -> Result<Box<dyn Receiver>, ImplError>
where
    S: Durable + 'static,
    W: Effects + Clone + 'static,
{
    let recording = match mutant {
        Mutant::MemoryDedup => Recording::DeliveriesOnly,
        Mutant::EffectBeforeIntent => Recording::EffectFirst,
        Mutant::IntentAsDone => Recording::IntentsAsDone,
        Mutant::PendingInMemory => Recording::PendingInMemory,
        Mutant::GroupCommit => Recording::WriteBehind,
        _ => Recording::Full,
    };
    let log = match mutant {
        Mutant::ExpiryAtArrival
        | Mutant::DedupAfterAnswer
        | Mutant::StoresTwice
        | Mutant::IndexBeforeData
        | Mutant::DistrustsTail => recovered::Log::read(&storage)?,
        _ => recovered::Log::none(),
    };
    let storage = recovered::Hiding::new(storage, log.torn_tails());
    if mutant == Mutant::DistrustsTail {
        // The start-up's first durable write: a crash after it leaves a
        // start that never ended, which the next start blames on the log.
        storage.append(Record::Started.encode())?;
        storage.sync()?;
    }
    let inner = ReferenceReceiver::recover_with(init, storage, world.clone(), recording)?;
    if mutant == Mutant::ResumesAtStart {
        // The defect: the interrupted work is finished on the spot, with
        // no ask to execute and no authority checked again.
        for effect in inner.dropped_at_recovery() {
            world.perform(effect)?;
        }
    }
    if mutant == Mutant::DistrustsTail {
        inner.storage().append(Record::Ready.encode())?;
        inner.storage().sync()?;
    }
    Ok(Box::new(MutantReceiver {
        mutant,
        arrived: log.commit_arrivals(),
        forgotten: log.answered_unseen(),
        orphaned: log.seen_unstored(),
        hidden: BTreeSet::new(),
        twice: BTreeSet::new(),
        inner,
        init: init.clone(),
        world,
        seen: BTreeMap::new(),
        owed_ack: None,
        id_contexts: BTreeMap::new(),
        redelivered: BTreeSet::new(),
    }))
}

struct MutantReceiver<S, W> {
    mutant: Mutant,
    inner: ReferenceReceiver<recovered::Hiding<S>, W>,
    init: InitParams,
    world: W,
    /// ID → first frame, for `first-content-wins`.
    seen: BTreeMap<String, Vec<u8>>,
    /// An accepted ACK not yet acknowledged, for `acks-acks-later`.
    owed_ack: Option<tern_model::Message>,
    /// Thread/ID of each COMMIT → the local time it first arrived, for
    /// `expiry-at-commit-arrival` (kept with the message, so it survives a
    /// restart like the message does).
    arrived: BTreeMap<String, LocalTime>,
    /// Thread/ID of stored messages whose dedup record a crash lost, for
    /// `dedup-after-answer`.
    forgotten: BTreeSet<String>,
    /// ID → the identity context it was first stored in, for
    /// `context-blind-ids` (in memory: a restart forgets it).
    id_contexts: BTreeMap<String, String>,
    /// The effect keys of COMMITs delivered again as duplicates, for
    /// `redelivery-resets-execution`.
    redelivered: BTreeSet<String>,
    /// Thread/ID of frames whose dedup key is durable and whose record is
    /// not, for `index-before-data`.
    orphaned: BTreeSet<String>,
    /// Thread/ID of messages `index-before-data` called duplicates of
    /// what it never kept: its view leaves them out.
    hidden: BTreeSet<String>,
    /// Thread/ID of messages `stores-cut-delivery-twice` stored again.
    twice: BTreeSet<String>,
}

/// A frame's thread and ID, the key of the per-message notes above.
fn key_of(m: &tern_model::Message) -> String {
    format!("{}/{}", m.thread, m.id)
}

/// Whether the view entry `m` of `thread` is among the `notes` (keyed as
/// [`key_of`] keys them).
fn noted(notes: &BTreeSet<String>, thread: &ThreadId, m: &Value) -> bool {
    m["id"]
        .as_str()
        .is_some_and(|id| notes.contains(&format!("{thread}/{id}")))
}

/// The ACK `me` sends of message `m`.
fn ack_of(me: &str, m: &tern_model::Message) -> Vec<u8> {
    serde_json::to_vec(
        &json!({"tern": "0.1", "id": format!("{me}:ack-{}", m.id), "from": me,
        "to": [m.from.as_str()], "thread": m.thread.as_str(), "reply": m.id.as_str(),
        "act": "ACK", "body": {"target": m.id.as_str()}}),
    )
    .unwrap_or_default()
}

fn accepted_instead(mut d: Delivered, class: RejectClass) -> Delivered {
    if let Some(first) = d.events.first_mut() {
        if matches!(&first.outcome, Outcome::Rejected(r) if r.class == class) {
            first.outcome = Outcome::Accepted;
        }
    }
    d
}

impl<S: Durable + 'static, W: Effects + 'static> MutantReceiver<S, W> {
    fn context_of(&self, thread: &ThreadId) -> String {
        match &self.init.config.contexts {
            Contexts::Fixed { threads, .. } => threads
                .get(thread)
                .map_or_else(|| thread.to_string(), |c| c.to_string()),
            Contexts::Open => thread.to_string(),
        }
    }

    /// The effect key of a commitment, as the reference forms it.
    fn effect_of(&self, thread: &ThreadId, commitment: &MessageRef) -> EffectKey {
        EffectKey(format!("{}/{}", self.context_of(thread), commitment))
    }

    /// Performs an effect the reference refused: the defect itself.
    fn force(
        &mut self,
        thread: &ThreadId,
        commitment: &MessageRef,
    ) -> Result<Execution, ImplError> {
        let effect = self.effect_of(thread, commitment);
        self.world.perform(&effect)?;
        Ok(Execution::Executed { effect })
    }

    /// Whether `frame` is a REVISE whose target this receiver holds as a
    /// REVISE, for `revises-revisions`.
    fn targets_a_revise(&mut self, frame: &[u8]) -> bool {
        let Ok(m) = tern_model::parse_frame(frame) else {
            return false;
        };
        let tern_model::message::Body::Revise(rv) = &m.body else {
            return false;
        };
        let target = rv.target.as_str();
        self.inner.view(&m.thread).is_ok_and(|v| {
            v.to_value()["messages"]
                .as_array()
                .is_some_and(|ms| ms.iter().any(|x| x["id"] == target && x["act"] == "REVISE"))
        })
    }

    /// The status this receiver's view gives message `m`.
    fn status_of(&mut self, m: &tern_model::Message) -> Option<&'static str> {
        let v = self.inner.view(&m.thread).ok()?.to_value();
        let status = v["messages"]
            .as_array()?
            .iter()
            .find(|x| x["id"] == m.id.as_str())?["status"]
            .as_str()?
            .to_owned();
        ["accepted", "pending", "rejected"]
            .into_iter()
            .find(|s| *s == status)
    }

    /// The frame's record first, its dedup note (`Seen`) after the
    /// answer is decided; a message whose note a crash lost is taken as
    /// new when it comes again. `dedup-after-answer` leaves the note to be
    /// synced with the next delivery, so a crash between operations loses
    /// it; `stores-cut-delivery-twice` syncs it at once, so only a crash
    /// between the two writes does, and it stores that frame again.
    fn deliver_then_note(
        &mut self,
        frame: &[u8],
        principal: &Principal,
        now: LocalTime,
    ) -> Result<Delivered, ImplError> {
        let mut d = self.inner.deliver(frame, principal, now)?;
        let Ok(m) = tern_model::parse_frame(frame) else {
            return Ok(d);
        };
        let key = key_of(&m);
        // Taken as new, an accepted message is accepted again (a rejected
        // one would be rejected again, which the reference does for us).
        if self.forgotten.remove(&key) && self.status_of(&m) == Some("accepted") {
            if let Some(first) = d.events.first_mut() {
                if first.outcome == Outcome::Duplicate {
                    first.outcome = Outcome::Accepted;
                    if self.mutant == Mutant::StoresTwice {
                        self.twice.insert(key.clone());
                    }
                }
            }
        }
        let stored = !matches!(
            d.events.first().map(|e| &e.outcome),
            Some(Outcome::Rejected(_)) | None
        );
        if stored {
            self.inner.storage().append(Record::Seen { key }.encode())?;
            if self.mutant == Mutant::StoresTwice {
                self.inner.storage().sync()?;
            }
        }
        Ok(d)
    }

    /// `index-before-data`: the dedup note is made durable before the
    /// frame's record. A frame whose note survived a crash without its
    /// record is called a duplicate when it comes again, and is missing
    /// from the view (kept by the reference part, hidden here: the
    /// observable defect of a receiver that never stored it).
    fn note_then_deliver(
        &mut self,
        frame: &[u8],
        principal: &Principal,
        now: LocalTime,
    ) -> Result<Delivered, ImplError> {
        let Ok(m) = tern_model::parse_frame(frame) else {
            return self.inner.deliver(frame, principal, now);
        };
        let key = key_of(&m);
        if self.orphaned.remove(&key) {
            let mut d = self.inner.deliver(frame, principal, now)?;
            if let Some(first) = d.events.first_mut() {
                if matches!(first.outcome, Outcome::Accepted | Outcome::Pending { .. }) {
                    first.outcome = Outcome::Duplicate;
                    d.events.truncate(1);
                    self.hidden.insert(key);
                }
            }
            return Ok(d);
        }
        self.inner.storage().append(Record::Seen { key }.encode())?;
        self.inner.storage().sync()?;
        self.inner.deliver(frame, principal, now)
    }

    /// `extension-grant-authorises`: whether an accepted message replying
    /// to the commitment names, in its envelope's or its body's
    /// extensions, a grant that would authorise it, were it the COMMIT's
    /// `authority_ref`. The grant itself is checked as the reference checks
    /// one (registry, grantee, scope, expiry, approval); only where it was
    /// read from is wrong, so a forged grant, or one named anywhere else,
    /// changes nothing.
    fn grant_named_in_a_reply(
        &mut self,
        thread: &ThreadId,
        commitment: &MessageRef,
        now: LocalTime,
    ) -> bool {
        let Ok(view) = self.inner.view(thread) else {
            return false;
        };
        let v = view.to_value();
        let config = &self.init.config;
        let holds = |named: &Value| {
            let Some(grant) = named
                .as_str()
                .and_then(|g| tern_model::message::GrantRef::new(g).ok())
                .and_then(|g| config.grants.get(&g))
            else {
                return false;
            };
            let needs_approval =
                grant.requires_approval || config.policy.approval_required.contains(thread);
            grant.grantee == self.init.participant
                && grant.threads.contains(thread)
                && grant.expires_at.is_none_or(|t| now < t)
                && (!needs_approval
                    || config
                        .policy
                        .approvals
                        .contains(&(thread.clone(), commitment.clone())))
        };
        v["messages"].as_array().is_some_and(|ms| {
            ms.iter()
                .filter(|m| m["status"] == "accepted")
                .map(|m| &m["content"])
                .filter(|c| c["reply"] == commitment.as_str())
                .any(|c| {
                    holds(&c["extensions"]["authority_ref"])
                        || holds(&c["body"]["extensions"]["authority_ref"])
                })
        })
    }

    fn thread_has_evidence(&mut self, thread: &ThreadId) -> bool {
        self.inner
            .view(thread)
            .map(|v| v.as_str().contains("\"evidence\":[{"))
            .unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The situations of the catalogue that no mutant of the zoo is wrong
    /// in yet. The list is kept exact, so that a new mutant or situation
    /// updates it, and the gap is always visible (docs/simulator.md names
    /// the same list, with the reasons).
    const WITHOUT_A_MUTANT: &[&str] = &[
        // None can have one, by construction. A crash before anything of
        // a start-up is durable leaves storage as it was before that
        // start, and a frame redelivered after a crash before its record
        // was durable is, to the receiver, a first delivery: a receiver
        // that is a function of its durable storage cannot tell either
        // apart from a plain restart or a first delivery (in process it is
        // dropped; over the protocol it is killed). Their defects are
        // those of the neighbouring situations (`group-commit` loses an
        // earlier answer at the same crash point).
        "crash during recovery before it is durable",
        "redelivery after a crash before durability",
        // A receiver sees only its local time: no defect can show under
        // skew alone; the situation checks the harness's own arithmetic.
        "execution under clock skew",
    ];

    /// The boast shapes a mutant is wrong in. A defect reading a grant from
    /// another place, act, position or registry would be a mutant of its
    /// own for each; the zoo has the one an independent implementation
    /// was found with, `extension-grant-authorises`, which is wrong in the
    /// extensions of every act replying to the COMMIT with a real grant
    /// and names its TELL as its situation. The other shapes are reached
    /// so that a receiver wrong there is met, not yet proved to be caught.
    const BOASTS_WITH_A_MUTANT: usize = 1;

    #[test]
    fn every_mutant_names_a_situation_and_the_gap_is_known() {
        let needed: BTreeSet<Situation> = Mutant::ALL.iter().map(|m| m.situation()).collect();
        // The situations only a power loss reaches are the ground of the
        // agent's log-flaw mutants (`tern-sim agent --mutant skips-fsync`
        // and the others), which only a process can be: tests/power_loss.rs
        // shows each caught over the protocol.
        let missing: Vec<String> = Situation::all()
            .filter(|s| {
                !needed.contains(s) && !matches!(s, Situation::Boast(_)) && !s.needs_power_loss()
            })
            .map(Situation::name)
            .collect();
        assert_eq!(missing, WITHOUT_A_MUTANT, "situations without a mutant");
        let boasts = needed
            .iter()
            .filter(|s| matches!(s, Situation::Boast(_)))
            .count();
        assert_eq!(boasts, BOASTS_WITH_A_MUTANT, "boast shapes with a mutant");
    }
}
