//! The mutant zoo: deliberately broken implementations, at least one for
//! every invariant an implementation can break (order independence is
//! enforced through `views-agree` against an order-independent model, which
//! the ledger's property tests prove). Each is the reference implementation with one defect a real
//! implementation could plausibly have. `tern-sim selftest` shows that the
//! simulator catches every one, and names the invariant that does.

mod body_keys;
mod recovered;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};
use tern_model::ledger::{
    Contexts, EffectKey, Event, EventKind, Execution, LocalTime, Outcome, Refusal, RejectClass,
};
use tern_model::message::{MessageRef, Principal, ThreadId};

use crate::plugin::{Delivered, Identity, ImplError, Implementation, InitParams, Receiver};
use crate::reference::{Record, Recording, ReferenceReceiver};
use crate::sim::invariants::{self as inv, Invariant};
use crate::storage::{Durable, Storage};
use crate::world::{AgentWorld, Effects};

macro_rules! zoo {
    ($($id:ident = $name:literal, $invariant:ident, $what:literal, $needs:literal;)*) => {
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

            /// The situation a run must reach before the defect shows: what
            /// a workload that fails to kill the mutant is missing.
            pub fn needs(self) -> &'static str {
                match self { $(Mutant::$id => $needs),* }
            }

            pub fn by_name(name: &str) -> Option<Mutant> {
                Mutant::ALL.iter().copied().find(|m| m.name() == name)
            }
        }
    };
}

zoo! {
    DuplicateKeys = "accepts-duplicate-keys", STRICT_PARSING, "reads frames with repeated keys, keeping the last value", "a frame with a repeated key";
    NonFinite = "accepts-non-finite-numbers", STRICT_PARSING, "reads numbers out of range as zero", "a frame with a number out of range";
    LossyUtf8 = "accepts-invalid-utf8", STRICT_PARSING, "repairs invalid UTF-8 instead of rejecting it", "a frame with invalid UTF-8";
    AnyVersion = "accepts-any-version", VERSION, "treats every `tern` version as 0.1", "a frame of another `tern` version";
    TrustsFrom = "trusts-from", IDENTITY, "believes `from` without the transport's principal", "a frame whose `from` is not its principal";
    FirstWins = "first-content-wins", ID_CONFLICT, "keeps the first content of a reused ID and calls the second a duplicate", "an ID reused with other content";
    InfersPending = "infers-pending", PENDING, "accepts messages whose references are still missing", "a message whose reference has not arrived";
    AnyoneReports = "anyone-reports", ONLY_AUTHOR, "accepts REPORTs from anyone", "a REPORT by someone other than the committer";
    RevisesOthers = "revises-others", OWN_REVISIONS, "accepts REVISEs of other senders' messages", "a REVISE of another sender's message";
    LastRevisionWins = "last-revision-wins", NO_SILENT_BRANCH, "resolves competing revisions by taking the last one", "two competing REVISEs of one message";
    MemoryDedup = "memory-dedup", AT_MOST_ONCE, "keeps executed effects in memory only, so a restart executes again", "an execution, then a crash and an ask to execute again";
    EffectBeforeIntent = "effect-before-intent", AT_MOST_ONCE, "performs an effect before its record is durable", "a crash right after an effect";
    IntentAsDone = "intent-as-done", EXECUTIONS, "after a restart, counts a durable intent as executed without asking the world whether its effect happened", "a crash between a durable intent and its effect";
    AcksAcks = "acks-acks", NO_ACK_OF_ACK, "acknowledges every ACK it accepts", "an ACK accepted";
    AcksAcksLater = "acks-acks-later", NO_ACK_OF_ACK, "acknowledges each ACK it accepts one delivery later, in a batch with its next answer", "an ACK accepted, then another accepted message";
    RepliesToInvalid = "replies-to-invalid", NO_REPLY_TO_INVALID, "answers rejected frames with a message", "a rejected frame";
    ReopensTerminal = "reopens-terminal", TERMINAL, "lets a report after a terminal one make the commitment active", "a REPORT after a terminal REPORT";
    BlockedIsDone = "blocked-is-done", BLOCKED, "shows blocked commitments as fulfilled", "a blocked REPORT";
    IgnoresExpiry = "ignores-expiry", AUTHORITY, "never lets a grant expire", "an execution after its grant's expiry";
    ClaimsAuthorise = "claims-authorise", AUTHORITY, "takes a thread's evidence-backed claims as authority", "evidence-backed claims in a thread without authority";
    ExecutesOthers = "executes-others", BINDS_SENDER, "executes other participants' commitments", "an execution of another participant's COMMIT";
    ReExecutes = "re-executes", AT_MOST_ONCE, "performs an effect again when asked again", "a second ask to execute one commitment";
    ErasesHistory = "erases-history", HISTORY, "drops revised messages from its view", "a revised message";
    ProposeCommits = "propose-commits", NO_COMMITMENT_FROM_TALK, "records a PROPOSE as a commitment", "an accepted PROPOSE";
    ExecutesWithdrawn = "executes-withdrawn", LIFECYCLE, "executes withdrawn, superseded and disputed commitments", "an execution of a withdrawn, superseded or disputed COMMIT";
    IgnoresConflict = "ignores-revision-conflict", CONFLICT_BLOCKS, "executes while a revision conflict is known", "an execution under a known revision conflict";
    ExecutesPending = "executes-pending", PENDING, "executes commitments whose references are missing", "an execution of a COMMIT whose references are missing";
    AcceptsUnknownFields = "accepts-malformed-bodies", SCHEMA, "accepts envelopes and bodies that break the schema", "a frame with an unknown or mistyped member";
    AcceptsMisrouted = "accepts-misrouted", ADDRESSING, "records messages addressed to someone else", "a frame not addressed to the receiver";
    NoDedup = "no-dedup", DEDUP, "treats a repeated delivery as new", "a repeated delivery";
    LooseReferences = "loose-references", REFERENCES, "accepts references to the wrong act or thread", "a reference to the wrong act or thread";
    LooseChains = "loose-revision-chains", REVISION_CHAIN, "accepts a `previous` outside the revision chain", "a REVISE whose `previous` is outside the chain";
    AnyReplacement = "any-replacement", REPLACEMENT, "accepts replacements that are not a valid body of the target's act", "a replacing REVISE with an invalid body";
    AnyoneRenews = "anyone-renews", RENEWAL, "lets anyone ask to replace a commitment", "a renewal asked by someone other than the requester";
    RejectsChallenges = "rejects-challenges", VALID_ACCEPTED, "rejects every CHALLENGE", "a valid CHALLENGE";
    SilentReleases = "silent-releases", OUTCOMES, "never reports the release of a pending message", "a pending message released";
    MisreportsExecution = "misreports-execution", EXECUTIONS, "performs an effect and then reports it as refused", "an execution performed";
    HidesPending = "hides-pending", VIEWS, "leaves pending messages out of its view", "a pending message in a view";
    CrashesOnChallenge = "crashes-on-challenge", ALIVE, "fails with an internal error on any CHALLENGE", "a CHALLENGE";
    EffectInView = "effect-in-view", AUTHORITY, "performs an effect while answering a view (a status probe with a side effect)", "a view asked";
    ExpiryAtArrival = "expiry-at-commit-arrival", AUTHORITY, "judges a grant's expiry at the time the COMMIT arrived, not at the time it is executed", "a COMMIT that arrives before its grant expires and is executed after";
    ValidAtExpiry = "valid-at-expiry-instant", AUTHORITY, "still honours a grant at exactly its expiry instant", "an execution at exactly its grant's expiry instant";
    DedupAfterAnswer = "dedup-after-answer", DEDUP, "writes its dedup record after it answers, so a crash loses the record and a redelivery counts as new", "a crash right after a delivery, then a redelivery of that frame";
    PendingInMemory = "pending-in-memory", HISTORY, "holds pending messages in memory only, so a restart loses them", "a crash while a message is pending";
    RevisesRevisions = "revises-revisions", OWN_REVISIONS, "accepts a REVISE whose target is an earlier REVISE instead of the original", "a REVISE that targets a REVISE";
    BodyDuplicateKeys = "accepts-duplicate-keys-in-body", STRICT_PARSING, "reads repeated keys inside `body`, keeping the last value (the envelope stays strict)", "a frame with a repeated key inside its body";
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
        _ => Recording::Full,
    };
    let inner = ReferenceReceiver::recover_with(init, storage, world.clone(), recording)?;
    let log = match mutant {
        Mutant::ExpiryAtArrival | Mutant::DedupAfterAnswer => {
            recovered::Log::read(inner.storage())?
        }
        _ => recovered::Log::none(),
    };
    Ok(Box::new(MutantReceiver {
        mutant,
        arrived: log.commit_arrivals(),
        forgotten: log.answered_unseen(),
        inner,
        init: init.clone(),
        world,
        seen: BTreeMap::new(),
        owed_ack: None,
    }))
}

struct MutantReceiver<S, W> {
    mutant: Mutant,
    inner: ReferenceReceiver<S, W>,
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
}

/// A frame's thread and ID, the key of the per-message notes above.
fn key_of(m: &tern_model::Message) -> String {
    format!("{}/{}", m.thread, m.id)
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

impl<S: Durable, W: Effects> MutantReceiver<S, W> {
    fn context_of(&self, thread: &ThreadId) -> String {
        match &self.init.config.contexts {
            Contexts::Fixed { threads, .. } => threads
                .get(thread)
                .map_or_else(|| thread.to_string(), |c| c.to_string()),
            Contexts::Open => thread.to_string(),
        }
    }

    /// Performs an effect the reference refused: the defect itself.
    fn force(
        &mut self,
        thread: &ThreadId,
        commitment: &MessageRef,
    ) -> Result<Execution, ImplError> {
        let effect = EffectKey(format!("{}/{}", self.context_of(thread), commitment));
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
            v["messages"]
                .as_array()
                .is_some_and(|ms| ms.iter().any(|x| x["id"] == target && x["act"] == "REVISE"))
        })
    }

    /// The status this receiver's view gives message `m`.
    fn status_of(&mut self, m: &tern_model::Message) -> Option<&'static str> {
        let v = self.inner.view(&m.thread).ok()?;
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

    /// `dedup-after-answer`: the dedup record is appended once the answer
    /// is decided and synced only with the next delivery, so a crash in
    /// between loses it; a message whose record was lost is taken as new
    /// when it comes again.
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
                }
            }
        }
        let stored = !matches!(
            d.events.first().map(|e| &e.outcome),
            Some(Outcome::Rejected(_)) | None
        );
        if stored {
            self.inner.storage().append(Record::Seen { key }.encode())?;
        }
        Ok(d)
    }

    fn thread_has_evidence(&mut self, thread: &ThreadId) -> bool {
        self.inner
            .view(thread)
            .map(|v| v["messages"].to_string().contains("\"evidence\":[{"))
            .unwrap_or(false)
    }
}

impl<S: Durable, W: Effects> Receiver for MutantReceiver<S, W> {
    fn identity(&self) -> Identity {
        Identity::builtin(format!("tern-sim mutant {}", self.mutant.name()))
    }

    fn deliver(
        &mut self,
        frame: &[u8],
        principal: &Principal,
        now: LocalTime,
    ) -> Result<Delivered, ImplError> {
        let text = String::from_utf8_lossy(frame).into_owned();
        let d = match self.mutant {
            Mutant::DuplicateKeys => match serde_json::from_slice::<Value>(frame) {
                Ok(v)
                    if tern_model::parse_frame(frame)
                        .is_err_and(|e| e.message.contains("duplicate key")) =>
                {
                    self.inner.deliver(
                        &serde_json::to_vec(&v).unwrap_or_default(),
                        principal,
                        now,
                    )?
                }
                _ => self.inner.deliver(frame, principal, now)?,
            },
            // These two repair only what their defect is about, and pass
            // every other frame on untouched.
            Mutant::NonFinite => match std::str::from_utf8(frame) {
                Ok(t) if t.contains("1e999") => {
                    self.inner
                        .deliver(t.replace("1e999", "0").as_bytes(), principal, now)?
                }
                _ => self.inner.deliver(frame, principal, now)?,
            },
            Mutant::LossyUtf8 => self.inner.deliver(text.as_bytes(), principal, now)?,
            Mutant::AnyVersion => match std::str::from_utf8(frame) {
                Ok(t) if t.contains("\"tern\":\"0.2\"") => {
                    let patched = t.replacen("\"tern\":\"0.2\"", "\"tern\":\"0.1\"", 1);
                    self.inner.deliver(patched.as_bytes(), principal, now)?
                }
                _ => self.inner.deliver(frame, principal, now)?,
            },
            Mutant::TrustsFrom => {
                let claimed = tern_model::parse_frame(frame).ok().and_then(|m| {
                    match &self.init.config.contexts {
                        Contexts::Fixed { contexts, threads } => threads
                            .get(&m.thread)
                            .and_then(|c| contexts.get(c))
                            .and_then(|c| c.bindings.get(&m.from).cloned()),
                        Contexts::Open => Principal::new(m.from.as_str()).ok(),
                    }
                });
                self.inner
                    .deliver(frame, claimed.as_ref().unwrap_or(principal), now)?
            }
            Mutant::FirstWins => {
                let id = tern_model::parse_frame(frame)
                    .ok()
                    .map(|m| format!("{}/{}", m.thread, m.id));
                match id {
                    Some(id) => match self.seen.get(&id) {
                        Some(first) if first.as_slice() != frame => {
                            let m = tern_model::parse_frame(frame).ok();
                            return Ok(Delivered {
                                events: vec![Event {
                                    kind: EventKind::Delivered,
                                    origin: 0,
                                    id: m.as_ref().map(|m| m.id.clone()),
                                    thread: m.map(|m| m.thread),
                                    outcome: Outcome::Duplicate,
                                }],
                                outgoing: Vec::new(),
                            });
                        }
                        _ => {
                            let d = self.inner.deliver(frame, principal, now)?;
                            if !matches!(
                                d.events.first().map(|e| &e.outcome),
                                Some(Outcome::Rejected(_))
                            ) {
                                self.seen.entry(id).or_insert_with(|| frame.to_vec());
                            }
                            d
                        }
                    },
                    None => self.inner.deliver(frame, principal, now)?,
                }
            }
            Mutant::InfersPending => {
                let mut d = self.inner.deliver(frame, principal, now)?;
                if let Some(first) = d.events.first_mut() {
                    if matches!(first.outcome, Outcome::Pending { .. }) {
                        first.outcome = Outcome::Accepted;
                    }
                }
                d
            }
            Mutant::AcceptsUnknownFields => {
                let d = self.inner.deliver(frame, principal, now)?;
                let d = accepted_instead(d, RejectClass::Body);
                accepted_instead(d, RejectClass::Envelope)
            }
            Mutant::AcceptsMisrouted => accepted_instead(
                self.inner.deliver(frame, principal, now)?,
                RejectClass::NotAddressed,
            ),
            Mutant::LooseReferences => accepted_instead(
                self.inner.deliver(frame, principal, now)?,
                RejectClass::Reference,
            ),
            Mutant::LooseChains => accepted_instead(
                self.inner.deliver(frame, principal, now)?,
                RejectClass::RevisionChain,
            ),
            Mutant::AnyReplacement => accepted_instead(
                self.inner.deliver(frame, principal, now)?,
                RejectClass::Replacement,
            ),
            Mutant::AnyoneRenews => accepted_instead(
                self.inner.deliver(frame, principal, now)?,
                RejectClass::ReplacesNotRequester,
            ),
            Mutant::NoDedup => {
                let mut d = self.inner.deliver(frame, principal, now)?;
                if let Some(first) = d.events.first_mut() {
                    if first.outcome == Outcome::Duplicate {
                        first.outcome = Outcome::Accepted;
                    }
                }
                d
            }
            Mutant::RejectsChallenges => {
                let mut d = self.inner.deliver(frame, principal, now)?;
                let challenge = tern_model::parse_frame(frame)
                    .is_ok_and(|m| m.act() == tern_model::Act::Challenge);
                if let Some(first) = d.events.first_mut() {
                    if challenge && first.outcome == Outcome::Accepted {
                        first.outcome = Outcome::Rejected(tern_model::ledger::Rejection::new(
                            RejectClass::Body,
                            tern_model::wire::Pointer::of(&["act"]),
                            "CHALLENGE is not supported",
                        ));
                    }
                }
                d
            }
            Mutant::SilentReleases => {
                let mut d = self.inner.deliver(frame, principal, now)?;
                d.events.truncate(1);
                d
            }
            Mutant::CrashesOnChallenge => {
                if tern_model::parse_frame(frame)
                    .is_ok_and(|m| m.act() == tern_model::Act::Challenge)
                {
                    return Err(ImplError::Misbehaved(
                        "internal error: unsupported act CHALLENGE".into(),
                    ));
                }
                self.inner.deliver(frame, principal, now)?
            }
            Mutant::AnyoneReports => accepted_instead(
                self.inner.deliver(frame, principal, now)?,
                RejectClass::NotAuthor,
            ),
            Mutant::RevisesOthers => accepted_instead(
                self.inner.deliver(frame, principal, now)?,
                RejectClass::ForeignRevision,
            ),
            Mutant::AcksAcks => {
                let mut d = self.inner.deliver(frame, principal, now)?;
                if let (Ok(m), Some(Outcome::Accepted)) = (
                    tern_model::parse_frame(frame),
                    d.events.first().map(|e| &e.outcome),
                ) {
                    if m.act() == tern_model::Act::Ack {
                        d.outgoing.push(ack_of(self.init.participant.as_str(), &m));
                    }
                }
                d
            }
            Mutant::AcksAcksLater => {
                let mut d = self.inner.deliver(frame, principal, now)?;
                if matches!(
                    d.events.first().map(|e| &e.outcome),
                    Some(Outcome::Accepted)
                ) {
                    if let Some(owed) = self.owed_ack.take() {
                        d.outgoing
                            .push(ack_of(self.init.participant.as_str(), &owed));
                    }
                    match tern_model::parse_frame(frame) {
                        Ok(m) if m.act() == tern_model::Act::Ack => self.owed_ack = Some(m),
                        _ => {}
                    }
                }
                d
            }
            Mutant::RepliesToInvalid => {
                let mut d = self.inner.deliver(frame, principal, now)?;
                if matches!(
                    d.events.first().map(|e| &e.outcome),
                    Some(Outcome::Rejected(_))
                ) {
                    d.outgoing
                        .push(b"{\"error\":\"I could not read your message\"}".to_vec());
                }
                d
            }
            Mutant::BodyDuplicateKeys => {
                let forgiven = tern_model::parse_frame(frame)
                    .is_err_and(|e| e.message.contains("duplicate key"))
                    .then(|| body_keys::body_forgiven(frame))
                    .flatten();
                self.inner
                    .deliver(forgiven.as_deref().unwrap_or(frame), principal, now)?
            }
            Mutant::RevisesRevisions => {
                let d = self.inner.deliver(frame, principal, now)?;
                if self.targets_a_revise(frame) {
                    accepted_instead(d, RejectClass::NotRevisable)
                } else {
                    d
                }
            }
            Mutant::DedupAfterAnswer => self.deliver_then_note(frame, principal, now)?,
            Mutant::ExpiryAtArrival => {
                let d = self.inner.deliver(frame, principal, now)?;
                if let Ok(m) = tern_model::parse_frame(frame) {
                    let stored = !matches!(
                        d.events.first().map(|e| &e.outcome),
                        Some(Outcome::Rejected(_)) | None
                    );
                    if stored && m.act() == tern_model::Act::Commit {
                        self.arrived.entry(key_of(&m)).or_insert(now);
                    }
                }
                d
            }
            _ => self.inner.deliver(frame, principal, now)?,
        };
        Ok(d)
    }

    fn execute(
        &mut self,
        thread: &ThreadId,
        commitment: &MessageRef,
        now: LocalTime,
    ) -> Result<Execution, ImplError> {
        // Local time matters to an execution only through grant expiry.
        let when = match self.mutant {
            Mutant::IgnoresExpiry => LocalTime(0),
            // Expired when `now > expires_at`: one millisecond earlier
            // gives exactly that under the reference's `now >= expires_at`.
            Mutant::ValidAtExpiry => LocalTime(now.0.saturating_sub(1)),
            Mutant::ExpiryAtArrival => self
                .arrived
                .get(&format!("{thread}/{commitment}"))
                .copied()
                .unwrap_or(now),
            _ => now,
        };
        let decision = self.inner.execute(thread, commitment, when)?;
        let Execution::Refused(refusal) = decision else {
            if self.mutant == Mutant::MisreportsExecution {
                return Ok(Execution::Refused(Refusal::NoAuthority));
            }
            return Ok(decision);
        };
        let forced = match (self.mutant, refusal) {
            (Mutant::ClaimsAuthorise, Refusal::NoAuthority | Refusal::UnknownGrant) => {
                self.thread_has_evidence(thread)
            }
            (Mutant::ExecutesOthers, Refusal::NotOwnCommitment) => true,
            (Mutant::ReExecutes, Refusal::AlreadyExecuted) => true,
            (
                Mutant::ExecutesWithdrawn,
                Refusal::Withdrawn | Refusal::Superseded | Refusal::Disputed,
            ) => true,
            (Mutant::IgnoresConflict, Refusal::RevisionConflict) => true,
            (Mutant::ExecutesPending, Refusal::PendingCommitment) => true,
            _ => false,
        };
        if forced {
            self.force(thread, commitment)
        } else {
            Ok(decision)
        }
    }

    fn view(&mut self, thread: &ThreadId) -> Result<Value, ImplError> {
        if self.mutant == Mutant::EffectInView {
            let probe = EffectKey(format!("{}/view-probe", self.context_of(thread)));
            self.world.perform(&probe)?;
        }
        let mut v = self.inner.view(thread)?;
        match self.mutant {
            Mutant::LastRevisionWins => {
                if let Some(revisions) = v["revisions"].as_array_mut() {
                    for r in revisions {
                        if r["state"] == "conflict" {
                            let last = r["conflict"]["successors"]
                                .as_array()
                                .and_then(|s| s.last().cloned())
                                .unwrap_or(Value::Null);
                            r["state"] = json!("replaced");
                            r["head"] = last;
                            r["conflict"] = Value::Null;
                        }
                    }
                }
            }
            Mutant::ReopensTerminal => {
                if let Some(cs) = v["commitments"].as_array_mut() {
                    for c in cs {
                        if c["annotations"]
                            .as_array()
                            .is_some_and(|a| a.iter().any(|x| x == "reopen_ignored"))
                        {
                            c["progress"] = json!("active");
                        }
                    }
                }
            }
            Mutant::BlockedIsDone => {
                if let Some(cs) = v["commitments"].as_array_mut() {
                    for c in cs {
                        if c["progress"] == "blocked" {
                            c["progress"] = json!("fulfilled");
                        }
                    }
                }
            }
            Mutant::HidesPending => {
                v["pending"] = json!([]);
            }
            Mutant::ErasesHistory => {
                let revised: Vec<Value> = v["revisions"]
                    .as_array()
                    .map(|rs| {
                        rs.iter()
                            .filter(|r| r["state"] != "original")
                            .map(|r| r["target"].clone())
                            .collect()
                    })
                    .unwrap_or_default();
                if let Some(ms) = v["messages"].as_array_mut() {
                    ms.retain(|m| !revised.contains(&m["id"]));
                }
            }
            Mutant::ProposeCommits => {
                let proposals: Vec<Value> = v["messages"]
                    .as_array()
                    .map(|ms| {
                        ms.iter()
                            .filter(|m| m["act"] == "PROPOSE" && m["status"] == "accepted")
                            .cloned()
                            .collect()
                    })
                    .unwrap_or_default();
                if let Some(cs) = v["commitments"].as_array_mut() {
                    for p in proposals {
                        cs.push(json!({"id": p["id"], "committer": p["from"], "request": p["content"]["body"]["request"],
                                       "due": null, "progress": "unreported", "annotations": [], "disputes": [],
                                       "superseded_by": [], "reports": []}));
                    }
                }
            }
            _ => {}
        }
        Ok(v)
    }
}
