//! The canonical view of a thread: what receivers are compared on.
//!
//! Canonical means: objects with sorted keys, lists sorted by ID, and nothing
//! incidental (no arrival order, no delivery numbers, no local times), so two
//! receivers that derived the same state print the same bytes. The format is
//! documented in docs/ledger.md.

use serde_json::{json, Map, Value};

use crate::message::{Body, ThreadId};

use super::derive::ChainHead;
use super::store::{EntryId, Status};
use super::Ledger;

impl Ledger {
    /// The canonical view of `thread` (an empty view for an unknown thread).
    pub fn view(&self, thread: &ThreadId) -> Value {
        let mut ids: Vec<EntryId> = self
            .threads
            .get(thread)
            .map(|set| set.iter().copied().collect())
            .unwrap_or_default();
        ids.sort_by(|a, b| self.entries[*a].id.cmp(&self.entries[*b].id));

        let mut messages = Vec::new();
        let mut pending = Vec::new();
        let mut commitments = Vec::new();
        let mut revisions = Vec::new();
        for &eid in &ids {
            let entry = &self.entries[eid];
            let ctx = entry.ctx;
            let mut m = Map::new();
            m.insert("id".into(), json!(entry.id.as_str()));
            m.insert("from".into(), json!(entry.id.sender()));
            match &entry.status {
                Status::Equivocated => {
                    m.insert("status".into(), json!("equivocated"));
                    // Every content sent under the ID, in canonical order, so
                    // that no arrival order makes one of them "the" message.
                    let mut variants: Vec<Value> =
                        entry.variants.iter().map(|v| v.content()).collect();
                    variants.sort_by_cached_key(|v| v.to_string());
                    variants.dedup();
                    m.insert("variants".into(), Value::Array(variants));
                }
                status => {
                    m.insert("act".into(), json!(entry.message().act().as_str()));
                    // The content itself, so that receivers holding different
                    // contents under one ID never compare equal.
                    m.insert("content".into(), entry.variants[0].content());
                    match status {
                        Status::Accepted => {
                            m.insert("status".into(), json!("accepted"));
                        }
                        Status::Pending(missing) => {
                            m.insert("status".into(), json!("pending"));
                            let waiting: Vec<&str> = missing.iter().map(|r| r.as_str()).collect();
                            pending.push(json!({"id": entry.id.as_str(), "waiting_for": waiting}));
                        }
                        Status::Rejected(r) => {
                            m.insert("status".into(), json!("rejected"));
                            m.insert("class".into(), json!(r.class.as_str()));
                        }
                        Status::Unsettled | Status::Equivocated => {}
                    }
                }
            }
            messages.push(Value::Object(m));

            if entry.status != Status::Accepted {
                continue;
            }
            let message = entry.message();
            if let Body::Commit(commit) = &message.body {
                let state = self.commitment(ctx, eid);
                let mut c = Map::new();
                c.insert("id".into(), json!(entry.id.as_str()));
                c.insert("committer".into(), json!(message.from.as_str()));
                c.insert("request".into(), json!(commit.request.as_str()));
                c.insert("due".into(), json!(commit.due.as_ref().map(|d| d.as_str())));
                c.insert("progress".into(), json!(state.progress.as_str()));
                c.insert("annotations".into(), json!(state.annotations));
                c.insert("disputes".into(), json!(state.disputes));
                c.insert(
                    "superseded_by".into(),
                    json!(state
                        .superseded_by
                        .iter()
                        .map(|r| r.as_str())
                        .collect::<Vec<_>>()),
                );
                c.insert(
                    "reports".into(),
                    json!(state.reports.iter().map(|r| r.as_str()).collect::<Vec<_>>()),
                );
                commitments.push(Value::Object(c));
            }
            if message.act().is_revisable() && self.has_indexed(self.index.revisions.get(&eid)) {
                let (head, _) = self.chain(eid);
                let all: Vec<&str> = self
                    .sorted(self.index.revisions.get(&eid))
                    .into_iter()
                    .map(|r| self.entries[r].id.as_str())
                    .collect();
                let (state, head_id, conflict) = match &head {
                    ChainHead::Original => ("original", Value::Null, Value::Null),
                    ChainHead::Replaced(h) => ("replaced", json!(h.as_str()), Value::Null),
                    ChainHead::Withdrawn(h) => ("withdrawn", json!(h.as_str()), Value::Null),
                    ChainHead::Conflict { at, successors } => (
                        "conflict",
                        Value::Null,
                        json!({
                            "at": at.as_str(),
                            "successors": successors.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
                        }),
                    ),
                };
                revisions.push(json!({
                    "target": entry.id.as_str(),
                    "revisions": all,
                    "state": state,
                    "head": head_id,
                    "conflict": conflict,
                }));
            }
        }
        let effects: Vec<String> = self
            .executed
            .iter()
            .filter(|(ctx, id)| {
                self.contexts[*ctx]
                    .ids
                    .get(id)
                    .is_some_and(|&e| self.in_thread(thread, e))
            })
            .map(|(ctx, id)| self.effect_key(*ctx, id).0)
            .collect();
        // Built member by member: `json!` would copy every list once more.
        let mut view = Map::new();
        view.insert("thread".into(), Value::String(thread.as_str().to_owned()));
        view.insert("messages".into(), Value::Array(messages));
        view.insert("pending".into(), Value::Array(pending));
        view.insert("commitments".into(), Value::Array(commitments));
        view.insert("revisions".into(), Value::Array(revisions));
        view.insert(
            "effects".into(),
            Value::Array(effects.into_iter().map(Value::String).collect()),
        );
        Value::Object(view)
    }

    /// Every thread this ledger has stored a message for, sorted.
    pub fn threads(&self) -> Vec<ThreadId> {
        self.threads.keys().cloned().collect()
    }
}
