//! The reference state machine: one Tern receiver's ledger.
//!
//! tern-sim judges other implementations against this model, so it decides
//! every rule of the seed's sections 1, 3, 4, 5 and 8 deterministically, from
//! its inputs alone. The rules it applies, and why, are in docs/profile.md
//! (section "The ledger") and docs/ledger.md (its interface and view format).
//!
//! * [`Ledger::deliver`] takes a frame, the transport's authenticated
//!   principal and the local time, and answers with events: the frame's
//!   outcome, and the outcomes of earlier messages it settled.
//! * [`Ledger::execute`] decides whether the receiver may perform its own
//!   commitment now, and records the effect so it is never performed twice.
//! * [`Ledger::view`] is the canonical JSON of a thread, on which receivers
//!   are compared.
//!
//! The ledger never emits messages: it cannot reply to an invalid message or
//! ACK an ACK (sections 1 and 2).

mod config;
mod derive;
mod digest;
mod execute;
mod frames;
mod memo;
mod outcome;
mod settle;
mod shared_vec;
mod snapshot;
mod store;
mod view;

use imbl::OrdMap;

pub use config::{
    ConfigError, Contexts, Grant, IdentityContext, LedgerConfig, LocalTime, Policy, Viewer,
};
pub use derive::{ChainHead, CommitmentState, Progress};
pub use outcome::{
    EffectKey, Event, EventKind, Execution, Outcome, Refusal, RejectClass, Rejection,
};
pub use view::{View, ViewDigest};

use crate::message::{ContextName, Message, MessageRef, Principal, ThreadId};
use crate::wire::{Pointer, WireError};
pub use frames::parse_shared;
use shared_vec::SharedVec;
pub use store::SharedMessage;
use store::{ContextStore, CtxId, Entry, EntryId, Status, Variant};

use std::sync::Arc;

/// One receiver's ledger.
#[derive(Debug, Clone)]
pub struct Ledger {
    /// Shared: a run's configuration lists every thread and grant it will
    /// ever use, and a restart copies the ledger.
    config: Arc<LedgerConfig>,
    deliveries: u64,
    /// Shared with copies of this ledger until written, in small chunks:
    /// a write copies the stores of its chunk whole.
    contexts: SharedVec<ContextStore, 8>,
    context_ids: OrdMap<ContextName, CtxId>,
    /// thread → its context, once looked up (bindings never change).
    /// Persistent, as every map that grows with the history.
    thread_contexts: OrdMap<ThreadId, CtxId>,
    /// Every stored ID, shared with copies of this ledger until written.
    entries: SharedVec<Entry, 32>,
    /// How many contents are stored, over all IDs.
    stored: usize,
    /// Re-settle a whole context on each ID conflict (the reference for
    /// tests) rather than only what the conflict touches.
    from_scratch: bool,
    /// The latest views asked for, with the version of their context
    /// they show: a view asked again before its context changed is not
    /// built again.
    views: view::ViewCache,
    /// Derived answers kept while what they read holds, shared with
    /// copies of this ledger.
    derived: memo::Derivations,
}

impl Ledger {
    /// A ledger over `config`, which a `LedgerConfig` or a shared one gives.
    pub fn new(config: impl Into<Arc<LedgerConfig>>) -> Ledger {
        Ledger {
            config: config.into(),
            deliveries: 0,
            contexts: SharedVec::default(),
            context_ids: OrdMap::new(),
            thread_contexts: OrdMap::new(),
            entries: SharedVec::default(),
            stored: 0,
            from_scratch: false,
            views: view::ViewCache::default(),
            derived: memo::Derivations::default(),
        }
    }

    /// A ledger that re-settles the whole context from scratch on every ID
    /// conflict: slow, and simple enough to serve as the reference that the
    /// incremental settling of [`Ledger::new`] is compared with in tests.
    /// Both give the same events, views and executions for every input.
    #[doc(hidden)]
    pub fn settling_from_scratch(config: impl Into<Arc<LedgerConfig>>) -> Ledger {
        Ledger {
            from_scratch: true,
            ..Ledger::new(config)
        }
    }

    pub fn config(&self) -> &LedgerConfig {
        &self.config
    }

    /// How many frames have been delivered.
    pub fn deliveries(&self) -> u64 {
        self.deliveries
    }

    /// How many contents the ledger stores, over all IDs: what passed the
    /// identity checks and was neither a duplicate nor refused before that.
    pub fn stored_messages(&self) -> usize {
        self.stored
    }

    /// How many stored messages are still pending, over all threads.
    pub fn pending_messages(&self) -> usize {
        self.entries
            .iter()
            .filter(|e| matches!(e.status(), Status::Pending(_)))
            .count()
    }

    /// The number of items held in all of the ledger's collections: stored
    /// contents, contexts and thread links, waiting-list members, dependency
    /// and index links. It grows only with what is stored, never with frames
    /// that are rejected before storage or dropped as duplicates, which is
    /// what tests check through it.
    pub fn footprint(&self) -> usize {
        let contexts: usize = self
            .contexts
            .iter()
            .map(|c| {
                1 + c.ids.len()
                    + c.waiting.values().map(Vec::len).sum::<usize>()
                    + c.dependents.len()
            })
            .sum();
        let index: usize = self
            .entries
            .iter()
            .filter_map(|e| e.links())
            .flat_map(|lists| lists.iter().map(Vec::len))
            .sum();
        self.stored
            + self.entries.len()
            + contexts
            + index
            + self.context_ids.len()
            + self.thread_contexts.len()
            + self
                .contexts
                .iter()
                .map(|c| c.threads.values().map(OrdMap::len).sum::<usize>() + c.executed.len())
                .sum::<usize>()
    }

    /// The identity context of a thread, creating its store on first use.
    fn context_of(&mut self, thread: &ThreadId) -> Option<CtxId> {
        if let Some(&ctx) = self.thread_contexts.get(thread) {
            return Some(ctx);
        }
        let name = match &self.config.contexts {
            Contexts::Open => ContextName::new(thread.as_str()).ok()?,
            Contexts::Fixed { threads, .. } => threads.get(thread)?.clone(),
        };
        let ctx = self.context_id(name);
        self.thread_contexts.insert(thread.clone(), ctx);
        Some(ctx)
    }

    /// The context store of a thread, if one was ever created.
    fn existing_context(&self, thread: &ThreadId) -> Option<CtxId> {
        if let Some(&ctx) = self.thread_contexts.get(thread) {
            return Some(ctx);
        }
        let name = match &self.config.contexts {
            Contexts::Open => ContextName::new(thread.as_str()).ok()?,
            Contexts::Fixed { threads, .. } => threads.get(thread)?.clone(),
        };
        self.context_ids.get(&name).copied()
    }

    fn context_id(&mut self, name: ContextName) -> CtxId {
        if let Some(&id) = self.context_ids.get(&name) {
            return id;
        }
        let id = self.contexts.len();
        self.contexts.push(ContextStore::new(name.clone()));
        self.context_ids.insert(name, id);
        id
    }

    /// The bindings of the thread's identity context, looked up once for
    /// all the participants a frame names; `None` when the thread has no
    /// context here.
    fn bindings(&self, thread: &ThreadId) -> Option<Bindings<'_>> {
        match &self.config.contexts {
            Contexts::Open => ContextName::new(thread.as_str())
                .is_ok()
                .then_some(Bindings::Open),
            Contexts::Fixed { contexts, threads } => Some(Bindings::Fixed(
                contexts.get(threads.get(thread)?).map(|c| &c.bindings),
            )),
        }
    }

    /// Delivers one frame as received from an authenticated transport.
    ///
    /// `now` is the receiver's local time. It is part of the interface so
    /// that every input a receiver could depend on is explicit; no delivery
    /// rule of this profile reads it (expiry is checked at execution).
    pub fn deliver(&mut self, frame: &[u8], principal: &Principal, now: LocalTime) -> Vec<Event> {
        self.deliver_shared(parse_shared(frame), principal, now)
    }

    /// Counts a delivery whose frame did not parse, as [`Ledger::deliver`]
    /// counts it, without the frame: for replaying a log that keeps no
    /// bytes of such frames (nothing else in the ledger changes).
    pub fn count_invalid_delivery(&mut self) {
        self.deliveries += 1;
    }

    /// Delivers a frame that the caller already read with
    /// [`crate::parse_frame`],
    /// for callers that needed the message before delivering it (to find
    /// its principal, say): the answer is the one [`Ledger::deliver`] gives
    /// for the same frame.
    pub fn deliver_parsed(
        &mut self,
        parsed: Result<Message, WireError>,
        principal: &Principal,
        now: LocalTime,
    ) -> Vec<Event> {
        self.deliver_shared(parsed.map(SharedMessage::new), principal, now)
    }

    /// Delivers a parse that other ledgers may hold too: the simulator
    /// parses each frame once and gives the same message to every oracle
    /// that receives it. The answer is the one [`Ledger::deliver`] gives
    /// for the same frame.
    pub fn deliver_shared(
        &mut self,
        parsed: Result<Arc<SharedMessage>, WireError>,
        principal: &Principal,
        now: LocalTime,
    ) -> Vec<Event> {
        let _ = now;
        let origin = self.deliveries;
        self.deliveries += 1;
        let shared = match parsed {
            Ok(m) => m,
            Err(e) => {
                return vec![Event {
                    kind: EventKind::Delivered,
                    origin,
                    id: None,
                    thread: None,
                    outcome: Outcome::Rejected(e.into()),
                }]
            }
        };
        let message = shared.message();
        let delivered = |outcome: Outcome, m: &Message| Event {
            kind: EventKind::Delivered,
            origin,
            id: Some(m.id.clone()),
            thread: Some(m.thread.clone()),
            outcome,
        };
        if let Err(rejection) = self.admit(message, principal) {
            return vec![delivered(Outcome::Rejected(rejection), message)];
        }

        // Deduplication, keyed by context and ID (section 1).
        let existing = self.existing_context(&message.thread);
        let known = existing.and_then(|ctx| Some((ctx, *self.contexts[ctx].ids.get(&message.id)?)));
        if let Some((ctx, eid)) = known {
            if self.entries[eid].holds(message) {
                return vec![delivered(Outcome::Duplicate, message)];
            }
            let event = delivered(
                Outcome::Rejected(Rejection::new(
                    RejectClass::IdConflict,
                    Pointer::of(&["id"]),
                    format!(
                        "`{}` was already used for other content: the ID is now equivocated and neither content is interpreted",
                        message.id
                    ),
                )),
                message,
            );
            self.note_thread(ctx, &message.thread, &message.id, eid);
            self.entries[eid].add_variant(Variant::new(shared.clone(), origin));
            self.stored += 1;
            self.contexts[ctx].version += 1;
            let changed = if self.from_scratch {
                self.resettle_from_scratch(ctx)
            } else {
                self.equivocate(ctx, eid)
            };
            let mut events = vec![event];
            events.extend(self.events_for(&changed));
            return events;
        }

        let Some(ctx) = existing.or_else(|| self.context_of(&message.thread)) else {
            unreachable!("admit checked the thread")
        };
        let eid = self.entries.len();
        self.contexts[ctx].ids.insert(message.id.clone(), eid);
        self.contexts[ctx].version += 1;
        self.note_thread(ctx, &message.thread, &message.id, eid);
        self.note_dependencies(ctx, eid, message);
        self.entries.push(Entry::new(
            ctx,
            message.id.clone(),
            Variant::new(shared.clone(), origin),
        ));
        self.stored += 1;
        let changed = self.settle(ctx, vec![eid]);
        let primary = Event {
            kind: EventKind::Delivered,
            origin,
            id: Some(self.entries[eid].id.clone()),
            thread: Some(self.entries[eid].message().thread.clone()),
            outcome: self.outcome_of(eid),
        };
        let mut events = vec![primary];
        let others: Vec<(EntryId, Status)> =
            changed.into_iter().filter(|(e, _)| *e != eid).collect();
        events.extend(self.events_for(&others));
        events
    }

    /// Records `eid` as a dependent of every reference its message names,
    /// once per reference.
    fn note_dependencies(&mut self, ctx: CtxId, eid: EntryId, message: &Message) {
        let deps = settle::dependencies(message);
        for (i, (r, _)) in deps.iter().enumerate() {
            if deps.iter().take(i).any(|(earlier, _)| earlier == r) {
                continue;
            }
            self.contexts[ctx].dependents.insert((r.clone(), eid));
        }
    }

    /// Identity and addressing (sections 1 and 5): who may put a message
    /// into this ledger at all. Nothing that fails here is stored.
    fn admit(&self, m: &Message, principal: &Principal) -> Result<(), Rejection> {
        let Some(bindings) = self.bindings(&m.thread) else {
            return Err(Rejection::new(
                RejectClass::UnknownThread,
                Pointer::of(&["thread"]),
                format!("thread `{}` has no identity context here", m.thread),
            ));
        };
        let Some(bound) = bindings.principal(&m.from) else {
            return Err(Rejection::new(
                RejectClass::UnknownParticipant,
                Pointer::of(&["from"]),
                format!("`{}` is not a participant of thread `{}`", m.from, m.thread),
            ));
        };
        for (i, to) in m.to.iter().enumerate() {
            if bindings.principal(to).is_none() {
                return Err(Rejection::new(
                    RejectClass::UnknownParticipant,
                    Pointer::of(&["to"]).index(i),
                    format!(
                        "recipient `{to}` is not a participant of thread `{}`",
                        m.thread
                    ),
                ));
            }
        }
        if bound != *principal {
            return Err(Rejection::new(
                RejectClass::Identity,
                Pointer::of(&["from"]),
                format!(
                    "spoofed sender: the transport authenticated `{principal}`, but `{}` is bound to `{bound}` in this thread",
                    m.from
                ),
            ));
        }
        if let Viewer::Participant(me) = &self.config.viewer {
            if m.from != *me && !m.to.contains(me) {
                return Err(Rejection::new(
                    RejectClass::NotAddressed,
                    Pointer::of(&["to"]),
                    format!("`{me}` is neither the sender nor a recipient"),
                ));
            }
        }
        Ok(())
    }

    fn note_thread(&mut self, ctx: CtxId, thread: &ThreadId, id: &MessageRef, eid: EntryId) {
        let threads = &mut self.contexts[ctx].threads;
        if let Some(ids) = threads.get_mut(thread) {
            ids.insert(id.clone(), eid);
        } else {
            threads.insert(thread.clone(), OrdMap::unit(id.clone(), eid));
        }
    }

    /// Whether the view of `thread` lists the message `id`: what a caller
    /// that compares views by their text needs to know of one message
    /// without building the view.
    pub fn shows(&self, thread: &ThreadId, id: &MessageRef) -> bool {
        self.existing_context(thread)
            .and_then(|ctx| self.contexts[ctx].ids.get(id))
            .is_some_and(|&eid| self.in_thread(thread, eid))
    }

    /// Whether some content stored under `eid` is in `thread`.
    pub(crate) fn in_thread(&self, thread: &ThreadId, eid: EntryId) -> bool {
        let ctx = self.entries[eid].ctx;
        self.contexts[ctx]
            .threads
            .get(thread)
            .and_then(|ids| ids.get(&self.entries[eid].id))
            == Some(&eid)
    }

    fn outcome_of(&self, eid: EntryId) -> Outcome {
        match self.entries[eid].status() {
            Status::Accepted => Outcome::Accepted,
            Status::Pending(missing) => Outcome::Pending {
                missing: missing.clone(),
            },
            Status::Rejected(r) => Outcome::Rejected(r.clone()),
            Status::Equivocated => Outcome::Rejected(Rejection::new(
                RejectClass::IdConflict,
                Pointer::of(&["id"]),
                format!(
                    "`{}` was used for conflicting contents: neither is interpreted",
                    self.entries[eid].id
                ),
            )),
            Status::Unsettled => Outcome::Pending { missing: vec![] },
        }
    }

    /// Events for earlier messages whose standing changed: released when
    /// they settle for the first time, invalidated when they lose an
    /// acceptance.
    fn events_for(&self, changed: &[(EntryId, Status)]) -> Vec<Event> {
        // An entry can change several times while settling (its missing list
        // shrinks, then it settles): one event, against its first status.
        let mut seen = std::collections::BTreeSet::new();
        changed
            .iter()
            .filter(|(eid, _)| seen.insert(*eid))
            .filter_map(|(eid, before)| {
                let eid = *eid;
                let entry = &self.entries[eid];
                if !entry.status().is_final() {
                    return None;
                }
                let kind = if matches!(before, Status::Accepted) {
                    EventKind::Invalidated
                } else if before.is_final() {
                    // Rejected before, equivocated now: the ID itself is void.
                    EventKind::Invalidated
                } else {
                    EventKind::Released
                };
                Some(Event {
                    kind,
                    origin: entry.variants()[0].origin,
                    id: Some(entry.id.clone()),
                    thread: Some(entry.message().thread.clone()),
                    outcome: self.outcome_of(eid),
                })
            })
            .collect()
    }
}

/// Who a thread's participants are bound to: in an open configuration
/// each participant is the principal of its own name; in a fixed one the
/// thread's identity context says (`None`: a context the configuration
/// names but does not define, which binds no one).
enum Bindings<'a> {
    Open,
    Fixed(Option<&'a std::collections::BTreeMap<crate::message::Participant, Principal>>),
}

impl Bindings<'_> {
    /// The principal bound to `participant`.
    fn principal(&self, participant: &crate::message::Participant) -> Option<Principal> {
        match self {
            Bindings::Open => Principal::new(participant.as_str()).ok(),
            Bindings::Fixed(bindings) => (*bindings)?.get(participant).cloned(),
        }
    }
}
