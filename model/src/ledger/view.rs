//! The canonical view of a thread: what receivers are compared on.
//!
//! Canonical means: objects with sorted keys, lists sorted by ID, and nothing
//! incidental (no arrival order, no delivery numbers, no local times), so two
//! receivers that derived the same state print the same bytes. The format is
//! documented in docs/ledger.md.
//!
//! A view is written straight as text, from each stored content's cached
//! canonical JSON: the simulator compares views after almost every step, so
//! building a `serde_json::Value` tree of every message each time cost far
//! more than the deliveries themselves. Equal views are equal bytes, so a
//! comparison is one `memcmp`; the tree is built only to explain a
//! difference.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::message::{Body, MessageRef, ThreadId};

use super::derive::ChainHead;
use super::digest::Digester;
pub use super::digest::ViewDigest;
use super::store::{CtxId, Entry, EntryId, Link, Shown, Status};
use super::Ledger;

/// A thread's view as canonical JSON text: the form receivers are compared
/// in. Two views are equal exactly when their canonical texts are.
/// Shared text: a view asked again unchanged is handed out again, not
/// copied.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct View(Arc<String>);

impl View {
    /// The canonical form of any JSON view (an implementation's answer):
    /// `serde_json`'s maps keep keys sorted and its compact printer adds no
    /// spaces, so printing the value is canonicalising it.
    pub fn from_value(value: &Value) -> View {
        // Printed into a byte buffer: `Value`'s `Display` writes the same
        // bytes through the formatting machinery, several times slower.
        let text = serde_json::to_string(value).unwrap_or_default();
        View(Arc::new(text))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The view as a JSON tree, to explain a difference or to edit it.
    /// Every `View` holds JSON this crate printed, so it always parses.
    pub fn to_value(&self) -> Value {
        serde_json::from_str(&self.0).unwrap_or(Value::Null)
    }
}

impl fmt::Display for View {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// How many views a ledger keeps ready: those of the threads under way.
/// A view is kept until a newer one of another thread takes its place.
const CACHED_VIEWS: usize = 16;

/// The latest views built, and the latest view digests, each with the
/// version of its context it shows.
#[derive(Debug, Default)]
pub(crate) struct ViewCache {
    texts: Recent<View>,
    digests: Recent<ViewDigest>,
}

/// The latest answers of one kind, by thread.
#[derive(Debug)]
struct Recent<T>(Mutex<Vec<(ThreadId, u64, T)>>);

impl<T> Default for Recent<T> {
    fn default() -> Self {
        Recent(Mutex::new(Vec::new()))
    }
}

impl<T: Clone> Recent<T> {
    fn get(&self, thread: &ThreadId, version: u64) -> Option<T> {
        let mut views = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let at = views.iter().position(|(t, _, _)| t == thread)?;
        // Most recently asked last, so the oldest is the one replaced.
        let kept = views.remove(at);
        let hit = (kept.1 == version).then(|| kept.2.clone());
        if hit.is_some() {
            views.push(kept);
        }
        hit
    }

    fn keep(&self, thread: &ThreadId, version: u64, view: &T) {
        let mut views = self.0.lock().unwrap_or_else(|e| e.into_inner());
        views.retain(|(t, _, _)| t != thread);
        if views.len() >= CACHED_VIEWS {
            views.remove(0);
        }
        views.push((thread.clone(), version, view.clone()));
    }
}

/// A copy of a ledger starts with no views ready: it is about to diverge
/// (a restarted receiver, a checkpoint), and a view costs less to build
/// again than every copy costs to carry. (Its derivations are shared:
/// [`super::memo`].)
impl Clone for ViewCache {
    fn clone(&self) -> ViewCache {
        ViewCache::default()
    }
}

/// A JSON string, escaped as `serde_json` prints it.
fn string(out: &mut String, s: &str) {
    // Names and references rarely hold a character JSON escapes: those
    // are written as they are.
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.reserve(s.len() + 2);
        out.push('"');
        out.push_str(s);
        out.push('"');
        return;
    }
    // Printing a string cannot fail.
    out.push_str(&serde_json::to_string(s).unwrap_or_default());
}

/// A JSON list of strings.
fn strings<'s>(out: &mut String, items: impl IntoIterator<Item = &'s str>) {
    list(out, items, string);
}

/// `"key":` (keys are written in sorted order by the callers).
fn key(out: &mut String, k: &str) {
    out.push('"');
    out.push_str(k);
    out.push_str("\":");
}

/// A list of items written by `each`, comma-separated.
fn list<T>(
    out: &mut String,
    items: impl IntoIterator<Item = T>,
    mut each: impl FnMut(&mut String, T),
) {
    out.push('[');
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        each(out, item);
    }
    out.push(']');
}

/// The lists of a view derived from its messages, item by item.
struct Derived {
    pending: Vec<Item>,
    /// The derived items of the view's accepted entries that have any, in
    /// ID order.
    items: Vec<Arc<DerivedItems>>,
    effects: Vec<String>,
}

impl Derived {
    fn commitments(&self) -> impl Iterator<Item = &Item> {
        self.items.iter().filter_map(|i| i.commitment.as_ref())
    }

    fn revisions(&self) -> impl Iterator<Item = &Item> {
        self.items.iter().filter_map(|i| i.revision.as_ref())
    }
}

/// One item of a derived list, as text, with its digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Item {
    text: String,
    digest: u128,
}

impl Item {
    fn new(text: String) -> Item {
        let mut d = Digester::new();
        d.write(text.as_bytes());
        Item {
            digest: d.finish(),
            text,
        }
    }
}

/// What one accepted entry adds to its view's lists of commitments and
/// revisions: the part of a view that is derived across messages, kept
/// while nothing it read changes ([`super::memo`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct DerivedItems {
    commitment: Option<Item>,
    revision: Option<Item>,
}

/// A derived list's items, comma-separated.
fn joined<'i>(items: impl Iterator<Item = &'i Item>) -> String {
    let mut out = String::new();
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&item.text);
    }
    out
}

/// Digests a derived list as its length and the sum of its items'
/// digests: its items are in ID order and each holds its ID, so the same
/// items are the same text, as for the list of messages.
fn digest_list<'i>(d: &mut Digester, items: impl Iterator<Item = &'i Item>) {
    let (count, sum) = items.fold((0u64, 0u128), |(n, sum), item| {
        (n + 1, sum.wrapping_add(item.digest))
    });
    d.write(&count.to_le_bytes());
    d.write_u128(sum);
}

/// How the messages list of a view shows `entry`: everything but its
/// content, which stays with its shared message.
fn shown(entry: &Entry) -> Shown {
    let mut m = String::with_capacity(128);
    m.push('{');
    match entry.status() {
        Status::Equivocated => {
            key(&mut m, "from");
            string(&mut m, entry.id.sender());
            m.push(',');
            key(&mut m, "id");
            string(&mut m, entry.id.as_str());
            m.push_str(",\"status\":\"equivocated\",");
            // Every content sent under the ID, in canonical order, so
            // that no arrival order makes one of them "the" message.
            let mut variants: Vec<&str> =
                entry.variants().iter().map(|v| v.content_text()).collect();
            variants.sort_unstable();
            variants.dedup();
            key(&mut m, "variants");
            list(&mut m, variants, |out, v| out.push_str(v));
            m.push('}');
            Shown::new(m, None)
        }
        status => {
            key(&mut m, "act");
            string(&mut m, entry.message().act().as_str());
            m.push(',');
            if let Status::Rejected(r) = status {
                key(&mut m, "class");
                string(&mut m, r.class.as_str());
                m.push(',');
            }
            // The content itself, so that receivers holding different
            // contents under one ID never compare equal.
            key(&mut m, "content");
            let content_at = m.len();
            m.push(',');
            key(&mut m, "from");
            string(&mut m, entry.id.sender());
            m.push(',');
            key(&mut m, "id");
            string(&mut m, entry.id.as_str());
            let status = match status {
                Status::Accepted => Some("accepted"),
                Status::Pending(_) => Some("pending"),
                Status::Rejected(_) => Some("rejected"),
                Status::Unsettled | Status::Equivocated => None,
            };
            if let Some(status) = status {
                m.push(',');
                key(&mut m, "status");
                string(&mut m, status);
            }
            m.push('}');
            Shown::new(m, Some((content_at, entry.variants()[0].content_digest())))
        }
    }
}

impl Ledger {
    /// The canonical view of `thread` as a JSON tree (an empty view for an
    /// unknown thread). Tests and reports read it; comparisons use
    /// [`Ledger::view_text`].
    pub fn view(&self, thread: &ThreadId) -> Value {
        self.view_text(thread).to_value()
    }

    /// The canonical view of `thread`, as text.
    pub fn view_text(&self, thread: &ThreadId) -> View {
        self.cached(thread, &self.views.texts, Ledger::build_view)
    }

    /// The canonical view of `thread`, as its digest: what the view's text
    /// would digest to ([`ViewDigest`]), made without writing the text.
    pub fn view_digest(&self, thread: &ThreadId) -> ViewDigest {
        self.cached(thread, &self.views.digests, Ledger::build_digest)
    }

    /// The answer `build` gives for `thread`, kept in `cache` against the
    /// version of the thread's context.
    fn cached<T: Clone + PartialEq + fmt::Debug>(
        &self,
        thread: &ThreadId,
        cache: &Recent<T>,
        build: fn(&Ledger, &ThreadId, Option<CtxId>) -> T,
    ) -> T {
        let ctx = self.existing_context(thread);
        let Some(known) = ctx else {
            return build(self, thread, ctx);
        };
        let version = self.contexts[known].version;
        if let Some(kept) = cache.get(thread, version) {
            // Tests run in debug builds: there, every answer served again is
            // checked against a fresh one, so a change that forgot to count
            // itself in the context's version cannot hide.
            debug_assert_eq!(kept, build(self, thread, ctx), "stale view of {thread}");
            return kept;
        }
        let made = build(self, thread, ctx);
        cache.keep(thread, version, &made);
        made
    }

    /// How the view lists entry `eid`, made once and kept with it. Debug
    /// builds (the tests) check every item served again against a fresh
    /// one, so a change to an entry that forgot to drop its item cannot
    /// hide.
    fn item(&self, eid: EntryId) -> &Shown {
        let entry = &self.entries[eid];
        let item = entry.shown(shown);
        debug_assert_eq!(*item, shown(entry), "stale view item of {}", entry.id);
        item
    }

    /// The IDs of `thread`'s view, in ID order.
    fn view_ids(&self, thread: &ThreadId, ctx: Option<CtxId>) -> Vec<EntryId> {
        ctx.and_then(|ctx| self.contexts[ctx].threads.get(thread))
            .map(|ids| ids.values().copied().collect())
            .unwrap_or_default()
    }

    /// The lists of `thread`'s view that are derived rather than stored
    /// (`ids` are its entries): small beside its messages.
    fn derived_lists(&self, thread: &ThreadId, ctx: Option<CtxId>, ids: &[EntryId]) -> Derived {
        let mut pending = Vec::new();
        let mut items = Vec::new();
        for &eid in ids {
            let entry = &self.entries[eid];
            match entry.status() {
                Status::Pending(missing) => {
                    let mut p = String::new();
                    p.push('{');
                    key(&mut p, "id");
                    string(&mut p, entry.id.as_str());
                    p.push(',');
                    key(&mut p, "waiting_for");
                    strings(&mut p, missing.iter().map(|r| r.as_str()));
                    p.push('}');
                    pending.push(Item::new(p));
                }
                Status::Accepted => {
                    let message = entry.message();
                    let derives = matches!(message.body, Body::Commit(_))
                        || (message.act().is_revisable()
                            && entry
                                .links()
                                .is_some_and(|l| !l[Link::Revisions as usize].is_empty()));
                    if derives {
                        let derive = || self.derived_items(entry.ctx, eid);
                        items.push(self.derived.view_items.get(self, entry.ctx, eid, derive));
                    }
                }
                _ => {}
            }
        }
        let effects = ctx.map_or_else(Vec::new, |ctx| self.effects_in(thread, ctx));
        Derived {
            pending,
            items,
            effects,
        }
    }

    /// What the accepted entry `eid` adds to its view's lists of
    /// commitments and revisions, derived afresh.
    fn derived_items(&self, ctx: CtxId, eid: EntryId) -> DerivedItems {
        let entry = &self.entries[eid];
        let message = entry.message();
        let commitment = match &message.body {
            Body::Commit(commit) => {
                let state = self.commitment(ctx, eid);
                let mut c = String::with_capacity(256);
                c.push('{');
                key(&mut c, "annotations");
                strings(&mut c, state.annotations.iter().copied());
                c.push(',');
                key(&mut c, "committer");
                string(&mut c, message.from.as_str());
                c.push(',');
                key(&mut c, "disputes");
                strings(&mut c, state.disputes.iter().copied());
                c.push(',');
                key(&mut c, "due");
                match &commit.due {
                    Some(d) => string(&mut c, d.as_str()),
                    None => c.push_str("null"),
                }
                c.push(',');
                key(&mut c, "id");
                string(&mut c, entry.id.as_str());
                c.push(',');
                key(&mut c, "progress");
                string(&mut c, state.progress.as_str());
                c.push(',');
                key(&mut c, "reports");
                strings(&mut c, state.reports.iter().map(|r| r.as_str()));
                c.push(',');
                key(&mut c, "request");
                string(&mut c, commit.request.as_str());
                c.push(',');
                key(&mut c, "superseded_by");
                strings(&mut c, state.superseded_by.iter().map(|r| r.as_str()));
                c.push('}');
                Some(Item::new(c))
            }
            _ => None,
        };
        let revision = (message.act().is_revisable()
            && self.has_indexed(self.linked(eid, Link::Revisions)))
        .then(|| {
            let (head, _) = self.chain(eid);
            let all = self.sorted(self.linked(eid, Link::Revisions));
            let mut r = String::new();
            r.push('{');
            key(&mut r, "conflict");
            match &head {
                ChainHead::Conflict { at, successors } => {
                    r.push('{');
                    key(&mut r, "at");
                    string(&mut r, at.as_str());
                    r.push(',');
                    key(&mut r, "successors");
                    strings(&mut r, successors.iter().map(|s| s.as_str()));
                    r.push('}');
                }
                _ => r.push_str("null"),
            }
            r.push(',');
            key(&mut r, "head");
            match &head {
                ChainHead::Replaced(h) | ChainHead::Withdrawn(h) => string(&mut r, h.as_str()),
                ChainHead::Original | ChainHead::Conflict { .. } => r.push_str("null"),
            }
            r.push(',');
            key(&mut r, "revisions");
            strings(&mut r, all.iter().map(|&e| self.entries[e].id.as_str()));
            r.push(',');
            key(&mut r, "state");
            string(
                &mut r,
                match &head {
                    ChainHead::Original => "original",
                    ChainHead::Replaced(_) => "replaced",
                    ChainHead::Withdrawn(_) => "withdrawn",
                    ChainHead::Conflict { .. } => "conflict",
                },
            );
            r.push(',');
            key(&mut r, "target");
            string(&mut r, entry.id.as_str());
            r.push('}');
            Item::new(r)
        });
        DerivedItems {
            commitment,
            revision,
        }
    }

    /// The digest of `thread`'s view, whose context the caller has looked
    /// up: each list by its length and its items' digests, in the order of
    /// the view's keys.
    fn build_digest(&self, thread: &ThreadId, ctx: Option<CtxId>) -> ViewDigest {
        let ids = self.view_ids(thread, ctx);
        let lists = self.derived_lists(thread, ctx, &ids);
        let mut messages: u128 = 0;
        for &eid in &ids {
            messages = messages.wrapping_add(self.item(eid).digest());
        }
        let mut d = Digester::new();
        digest_list(&mut d, lists.commitments());
        d.write(&(lists.effects.len() as u64).to_le_bytes());
        for effect in &lists.effects {
            d.write_piece(effect.as_bytes());
        }
        d.write(&(ids.len() as u64).to_le_bytes());
        d.write_u128(messages);
        digest_list(&mut d, lists.pending.iter());
        digest_list(&mut d, lists.revisions());
        d.write_piece(thread.as_str().as_bytes());
        ViewDigest(d.finish())
    }

    /// The view of `thread`, whose context (`None`: none yet) the caller
    /// has looked up.
    ///
    /// The lists before `messages` in key order (commitments, effects) are
    /// written first into buffers of their own, small beside the messages,
    /// which are then written once, straight into the view.
    fn build_view(&self, thread: &ThreadId, ctx: Option<CtxId>) -> View {
        let ids = self.view_ids(thread, ctx);
        let lists = self.derived_lists(thread, ctx, &ids);
        let commitments = joined(lists.commitments());
        let pending = joined(lists.pending.iter());
        let revisions = joined(lists.revisions());
        let effects = &lists.effects;
        // Room for each item: its content and, beside it, about 160 bytes
        // of act, IDs and standing.
        let size: usize = ids
            .iter()
            .map(|&eid| 160 + self.entries[eid].variants()[0].content_text().len())
            .sum();
        let mut out =
            String::with_capacity(size + pending.len() + commitments.len() + revisions.len() + 128);
        // `"name":[items],` for a list whose items are already written.
        let section = |out: &mut String, name: &str, items: &str| {
            key(out, name);
            out.push('[');
            out.push_str(items);
            out.push_str("],");
        };
        out.push('{');
        section(&mut out, "commitments", &commitments);
        key(&mut out, "effects");
        strings(&mut out, effects.iter().map(String::as_str));
        out.push(',');
        key(&mut out, "messages");
        out.push('[');
        for (i, &eid) in ids.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let content = self.entries[eid].variants()[0].content_text();
            self.item(eid).write(&mut out, content);
        }
        out.push_str("],");
        section(&mut out, "pending", &pending);
        section(&mut out, "revisions", &revisions);
        key(&mut out, "thread");
        string(&mut out, thread.as_str());
        out.push('}');
        // An `Arc<String>`, not an `Arc<str>`: the text is kept where it
        // was written, not copied once more.
        View(Arc::new(out))
    }

    /// The effect keys of `thread` in its context `ctx`: the performed
    /// commitments among the thread's own IDs, in ID order (the order of
    /// effect keys within one context). Walking the thread, not the
    /// context's effects, keeps the cost to the view's own size.
    fn effects_in(&self, thread: &ThreadId, ctx: CtxId) -> Vec<String> {
        let store = &self.contexts[ctx];
        let mine: Vec<&MessageRef> = store
            .threads
            .get(thread)
            .into_iter()
            .flatten()
            .filter(|(id, eid)| store.executed.contains(*id) && store.ids.get(*id) == Some(eid))
            .map(|(id, _)| id)
            .collect();
        // Debug builds (the tests) check the walk against its definition:
        // every performed commitment stored in the thread.
        debug_assert_eq!(
            mine,
            store
                .executed
                .iter()
                .filter(|id| store
                    .ids
                    .get(*id)
                    .is_some_and(|&e| self.in_thread(thread, e)))
                .collect::<Vec<_>>(),
            "effects of {thread}"
        );
        mine.into_iter()
            .map(|id| self.effect_key(ctx, id).0)
            .collect()
    }

    /// Every thread this ledger has stored a message for, sorted.
    pub fn threads(&self) -> Vec<ThreadId> {
        let all: BTreeSet<&ThreadId> = self
            .contexts
            .iter()
            .flat_map(|c| c.threads.keys())
            .collect();
        all.into_iter().cloned().collect()
    }
}
