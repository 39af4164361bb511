//! What a ledger keeps: every message that passed identity checks, keyed by
//! its identity context and ID, with its current standing.

use std::collections::BTreeMap;

use crate::message::{ContextName, Message, MessageRef};

use super::outcome::Rejection;

pub(crate) type EntryId = usize;
pub(crate) type CtxId = usize;

/// One content seen under an ID, with the delivery that brought it.
#[derive(Debug, Clone)]
pub(crate) struct Variant {
    pub message: Message,
    pub origin: u64,
    /// The message as canonical JSON, made the first time a view shows it
    /// and kept: views show it often, deliveries never need it.
    content: std::cell::OnceCell<serde_json::Value>,
}

impl Variant {
    pub fn new(message: Message, origin: u64) -> Variant {
        Variant {
            message,
            origin,
            content: std::cell::OnceCell::new(),
        }
    }

    pub fn content(&self) -> &serde_json::Value {
        self.content
            .get_or_init(|| serde_json::to_value(&self.message).unwrap_or(serde_json::Value::Null))
    }
}

/// The standing of an ID. Everything but `Unsettled` is a possible final
/// answer; `Unsettled` exists only while the ledger is settling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Status {
    Unsettled,
    Pending(Vec<MessageRef>),
    Accepted,
    Rejected(Rejection),
    /// Two or more contents were sent under this ID (section 1: "Reusing an
    /// ID with different content is a protocol error"). None is interpreted.
    Equivocated,
}

impl Status {
    pub fn is_final(&self) -> bool {
        matches!(
            self,
            Status::Accepted | Status::Rejected(_) | Status::Equivocated
        )
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub ctx: CtxId,
    pub id: MessageRef,
    /// In order of arrival; the first is the original, which is never
    /// overwritten (history is append-only).
    pub variants: Vec<Variant>,
    pub status: Status,
}

impl Entry {
    /// The content interpreted for this ID. Only meaningful while the entry
    /// is not equivocated.
    pub fn message(&self) -> &Message {
        &self.variants[0].message
    }
}

/// Who depends on whom, among accepted messages of one context. Rebuilt from
/// scratch whenever the context is re-settled, so it never holds a message
/// that has lost its standing.
#[derive(Debug, Clone, Default)]
pub(crate) struct Index {
    /// target → REVISEs of it.
    pub revisions: BTreeMap<EntryId, Vec<EntryId>>,
    /// COMMIT → REPORTs about it.
    pub reports: BTreeMap<EntryId, Vec<EntryId>>,
    /// REQUEST → COMMITs to it.
    pub commits: BTreeMap<EntryId, Vec<EntryId>>,
    /// COMMIT → REQUESTs whose `replaces` names it.
    pub replacing: BTreeMap<EntryId, Vec<EntryId>>,
    /// any message → CHALLENGEs of it.
    pub challenges: BTreeMap<EntryId, Vec<EntryId>>,
}

/// One identity context's namespace: dedup keys and stored references are
/// qualified by it (section 1).
#[derive(Debug, Clone)]
pub(crate) struct ContextStore {
    pub name: ContextName,
    pub ids: BTreeMap<MessageRef, EntryId>,
    /// A missing or unsettled reference → the entries waiting for it.
    pub waiting: BTreeMap<MessageRef, Vec<EntryId>>,
    pub index: Index,
}

impl ContextStore {
    pub fn new(name: ContextName) -> ContextStore {
        ContextStore {
            name,
            ids: BTreeMap::new(),
            waiting: BTreeMap::new(),
            index: Index::default(),
        }
    }
}
