//! What a ledger keeps: every message that passed identity checks, keyed by
//! its identity context and ID, with its current standing.
//!
//! Only what a later delivery, view or execution needs is kept, once: the
//! typed message (its canonical JSON is made when a view shows it), and the
//! few links that let a delivery touch only what it concerns.

use std::collections::hash_map::DefaultHasher;
use std::collections::BTreeMap;
use std::hash::Hasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use imbl::{OrdMap, OrdSet};

use crate::message::{Body, Claim, ContextName, Message, MessageRef, ThreadId};

use super::outcome::Rejection;

pub(crate) type EntryId = usize;
pub(crate) type CtxId = usize;

/// A parsed message as ledgers keep it, shareable between them: every copy
/// of a ledger (a restarted receiver resuming from a checkpoint) and every
/// ledger that is given the same parse (the simulator's oracles, which
/// receive each frame the harness parsed once) holds the one message and
/// its one canonical text.
#[derive(Debug)]
pub struct SharedMessage {
    message: Message,
    /// The content's canonical JSON, made the first time a view shows it
    /// and kept: a stored message never changes, and views are asked far
    /// more often than messages arrive. A ledger that is never asked for a
    /// view (`check` without `--views`) never pays for it.
    text: OnceLock<Box<str>>,
    /// The content's digest ([`super::digest::of_message`]), made the
    /// first time a view's digest shows the content.
    digest: OnceLock<u128>,
    /// How a view lists the message while it is accepted, which depends
    /// on the message alone: the receiver and the oracle that share the
    /// message, and a replay after a crash, make it once.
    accepted: OnceLock<Shown>,
}

impl SharedMessage {
    pub fn new(mut message: Message) -> Arc<SharedMessage> {
        compact(&mut message);
        Arc::new(SharedMessage {
            message,
            text: OnceLock::new(),
            digest: OnceLock::new(),
            accepted: OnceLock::new(),
        })
    }

    pub fn message(&self) -> &Message {
        &self.message
    }

    /// The message as canonical JSON (sorted keys, no spaces), as views
    /// show it.
    pub fn content_text(&self) -> &str {
        self.text.get_or_init(|| {
            // A parsed message always serialises: its map keys are strings
            // and its numbers finite.
            crate::canonical::to_canonical_string(&self.message)
                .unwrap_or_else(|_| "null".into())
                .into_boxed_str()
        })
    }

    /// A digest of the content: equal digests, equal
    /// [`SharedMessage::content_text`]s.
    pub fn content_digest(&self) -> u128 {
        *self
            .digest
            .get_or_init(|| super::digest::of_message(&self.message))
    }
}

/// One content seen under an ID, with the delivery that brought it.
#[derive(Debug, Clone)]
pub(crate) struct Variant {
    pub shared: Arc<SharedMessage>,
    pub origin: u64,
}

impl Variant {
    pub fn new(shared: Arc<SharedMessage>, origin: u64) -> Variant {
        Variant { shared, origin }
    }

    pub fn message(&self) -> &Message {
        &self.shared.message
    }

    pub fn content_text(&self) -> &str {
        self.shared.content_text()
    }

    pub fn content_digest(&self) -> u128 {
        self.shared.content_digest()
    }
}

/// Gives back the room that a message's lists grew into while it was read
/// (a list read from JSON doubles its capacity as it goes, so a list of one
/// item holds room for four): a stored message is kept for the ledger's
/// life, so it keeps only what it holds.
pub(crate) fn compact(message: &mut Message) {
    fn claims(list: &mut [Claim]) {
        for c in list {
            c.evidence.shrink_to_fit();
            c.alternatives.shrink_to_fit();
        }
    }
    message.to.shrink_to_fit();
    if let Some(evidence) = &mut message.evidence {
        evidence.shrink_to_fit();
    }
    match &mut message.body {
        Body::Tell(b) => {
            b.claims.shrink_to_fit();
            claims(b.claims.items_mut());
        }
        Body::Request(b) => b.constraints.shrink_to_fit(),
        Body::Commit(b) => b.conditions.shrink_to_fit(),
        Body::Report(b) => {
            b.claims.shrink_to_fit();
            claims(&mut b.claims);
        }
        Body::Revise(b) => b.impact.shrink_to_fit(),
        Body::Challenge(b) => {
            b.claims.shrink_to_fit();
            claims(&mut b.claims);
        }
        Body::Ask(_) | Body::Propose(_) | Body::Ack(_) => {}
    }
}

/// A digest of a message's canonical JSON. Structurally equal messages have
/// equal canonical JSON (objects sorted, numbers printed from their value),
/// so equal messages have equal digests; equal digests are confirmed by
/// comparing the messages. The hasher has fixed keys: no randomness.
pub(crate) fn digest(message: &Message) -> u64 {
    struct Sink<'a>(&'a mut DefaultHasher);
    impl std::io::Write for Sink<'_> {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.write(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut hasher = DefaultHasher::new();
    // Serialising a parsed message cannot fail, and a sink never does.
    let _ = serde_json::to_writer(Sink(&mut hasher), message);
    hasher.finish()
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
    /// overwritten (history is append-only). Private with `status`: every
    /// change to either goes through a method that drops `shown`.
    variants: Vec<Variant>,
    status: Status,
    /// Bit `i` is set while this entry is in the waiting list of its `i`-th
    /// dependency (see [`super::settle::dependencies`]), so that joining a
    /// list never scans it.
    pub registered: u8,
    /// Once an ID holds several contents: digest → the variants with it, so
    /// that recognising a duplicate never scans every content. Empty (and
    /// unallocated) while the ID holds one content.
    pub digests: BTreeMap<u64, Vec<usize>>,
    /// Private with `variants` and `status`: every change to the three
    /// takes a new stamp.
    links: Links,
    /// The stamp of this entry's latest change to its standing or its
    /// contents: what was derived from them under another stamp may no
    /// longer hold.
    changed: Stamp,
    /// The stamp of the latest change to each of its lists, apart from the
    /// standing: a request's list of commitments grows without touching
    /// what was derived from its revisions. Each starts as the entry's
    /// first stamp, which no other entry has.
    listed: [Stamp; LINKS],
    /// How a view lists this entry, made when a view first shows it and
    /// dropped when its standing or its contents change: most deliveries
    /// change one entry of a thread, and its view is asked again at once.
    shown: OnceLock<Shown>,
}

/// An entry's item in a view's list of messages, without the content
/// (which its shared message keeps once for every ledger holding it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shown {
    text: Arc<str>,
    /// Where the content goes in `text`; `None` when the item shows no
    /// single content (an equivocated ID lists them all in `text`).
    content_at: Option<usize>,
    /// The item's digest, content included: equal items, equal digests.
    /// The text before the content ends at its `"content":` key and the
    /// content is one JSON value, so an item's text says where its
    /// content lies, and digesting the three pieces is as exact as
    /// digesting the whole.
    digest: u128,
}

impl Shown {
    /// The item `text`, with the content whose digest is `content` in it
    /// at `content_at`, or showing no single content (`None`).
    pub fn new(text: String, content: Option<(usize, u128)>) -> Shown {
        let mut d = super::digest::Digester::new();
        match content {
            Some((at, digest)) => {
                d.write(&[1]);
                d.write_piece(&text.as_bytes()[..at]);
                d.write_u128(digest);
                d.write_piece(&text.as_bytes()[at..]);
            }
            None => {
                d.write(&[0]);
                d.write_piece(text.as_bytes());
            }
        }
        Shown {
            text: text.into(),
            content_at: content.map(|(at, _)| at),
            digest: d.finish(),
        }
    }

    pub fn digest(&self) -> u128 {
        self.digest
    }

    /// Writes the item, with `content` in its place.
    pub fn write(&self, out: &mut String, content: &str) {
        match self.content_at {
            Some(at) => {
                out.push_str(&self.text[..at]);
                out.push_str(content);
                out.push_str(&self.text[at..]);
            }
            None => out.push_str(&self.text),
        }
    }
}

impl Entry {
    pub fn new(ctx: CtxId, id: MessageRef, variant: Variant) -> Entry {
        let first = Stamp::next();
        Entry {
            ctx,
            id,
            variants: vec![variant],
            status: Status::Unsettled,
            registered: 0,
            digests: BTreeMap::new(),
            links: None,
            changed: first,
            listed: [first; LINKS],
            shown: OnceLock::new(),
        }
    }

    /// An entry as a snapshot keeps it ([`super::snapshot`]); its view
    /// item is made again when a view first shows it.
    pub fn restored(
        ctx: CtxId,
        id: MessageRef,
        variants: Vec<Variant>,
        status: Status,
        registered: u8,
        digests: BTreeMap<u64, Vec<usize>>,
        links: Links,
    ) -> Entry {
        let first = Stamp::next();
        Entry {
            ctx,
            id,
            variants,
            status,
            registered,
            digests,
            links,
            changed: first,
            listed: [first; LINKS],
            shown: OnceLock::new(),
        }
    }

    pub fn status(&self) -> &Status {
        &self.status
    }

    /// Every content stored under this ID, in order of arrival.
    pub fn variants(&self) -> &[Variant] {
        &self.variants
    }

    /// Sets the standing, and returns the one before.
    pub fn set_status(&mut self, status: Status) -> Status {
        self.shown = OnceLock::new();
        self.changed = Stamp::next();
        std::mem::replace(&mut self.status, status)
    }

    /// When this entry's standing or contents (`None`), or its list
    /// `Some(link)`, last changed.
    pub fn changed(&self, part: Option<Link>) -> Stamp {
        match part {
            None => self.changed,
            Some(link) => self.listed[link as usize],
        }
    }

    /// The entry's lists, one per [`Link`], if it has any.
    pub fn links(&self) -> Option<&[Vec<EntryId>; LINKS]> {
        self.links.as_deref()
    }

    /// Puts `member` at `at` in this entry's `link` list.
    pub fn link(&mut self, link: Link, at: usize, member: EntryId) {
        let lists = self.links.get_or_insert_with(Default::default);
        lists[link as usize].insert(at, member);
        self.listed[link as usize] = Stamp::next();
    }

    /// How a view lists this entry, made by `make` unless already made:
    /// kept with the message while the entry is accepted (its only
    /// content), else with the entry.
    pub fn shown(&self, make: impl FnOnce(&Entry) -> Shown) -> &Shown {
        match (&self.status, &self.variants[..]) {
            (Status::Accepted, [only]) => only.shared.accepted.get_or_init(|| make(self)),
            _ => self.shown.get_or_init(|| make(self)),
        }
    }

    /// The content interpreted for this ID. Only meaningful while the entry
    /// is not equivocated.
    pub fn message(&self) -> &Message {
        self.variants[0].message()
    }

    /// Whether `message` is structurally identical to a content already
    /// stored under this ID (section 1: a duplicate).
    pub fn holds(&self, message: &Message) -> bool {
        if self.digests.is_empty() {
            return self.variants.iter().any(|v| *v.message() == *message);
        }
        self.digests
            .get(&digest(message))
            .is_some_and(|candidates| {
                candidates
                    .iter()
                    .any(|&i| *self.variants[i].message() == *message)
            })
    }

    /// Stores another content under this ID.
    pub fn add_variant(&mut self, variant: Variant) {
        if self.digests.is_empty() {
            for (i, v) in self.variants.iter().enumerate() {
                self.digests.entry(digest(v.message())).or_default().push(i);
            }
        }
        self.digests
            .entry(digest(variant.message()))
            .or_default()
            .push(self.variants.len());
        self.variants.push(variant);
        self.shown = OnceLock::new();
        self.changed = Stamp::next();
    }
}

/// One change made to an entry, told apart from every other change to
/// any entry of any ledger in this process: stamps come from one counter.
/// An entry copied into another ledger keeps its stamp until it changes
/// there, so an equal stamp means the same entry as it was, in whichever
/// copy. Stamps only tell changes apart; no output depends on their
/// values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp(u64);

static CHANGES: AtomicU64 = AtomicU64::new(0);

impl Stamp {
    /// A stamp for a change made now.
    fn next() -> Stamp {
        Stamp(CHANGES.fetch_add(1, Ordering::Relaxed))
    }
}

/// How one accepted message is linked to those about it: who depends on
/// whom, for derived state. A list gains a member when that member is
/// accepted, and never loses one: readers keep only the members that are
/// still accepted (an acceptance is lost only to an ID conflict), which is
/// what rebuilding the lists would give. Kept with the entry it is about,
/// so that copies of a ledger share it as they share the entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Link {
    /// target → REVISEs of it.
    Revisions,
    /// COMMIT → REPORTs about it.
    Reports,
    /// REQUEST → COMMITs to it.
    Commits,
    /// COMMIT → REQUESTs whose `replaces` names it.
    Replacing,
    /// any message → CHALLENGEs of it.
    Challenges,
}

/// An entry's lists, one per [`Link`], each in ID order; boxed and absent
/// until the first link, which most messages never get.
pub(crate) type Links = Option<Box<[Vec<EntryId>; LINKS]>>;

/// How many kinds of [`Link`] there are.
pub(crate) const LINKS: usize = 5;

/// So that [`Link`] keeps as many kinds as an entry's lists hold.
const _: () = assert!(Link::Challenges as usize + 1 == LINKS);

/// One member of a waiting list: the entry, and how many ID conflicts its
/// context had seen when it joined.
pub(crate) type Waiter = (EntryId, u32);

/// One identity context's namespace: dedup keys and stored references are
/// qualified by it (section 1).
///
/// Its maps grow with the history of every thread bound to the context, so
/// they are persistent maps: a copy of the ledger (a restarted receiver,
/// a checkpoint) shares them, and a write copies only the path it changes.
#[derive(Debug, Clone)]
pub(crate) struct ContextStore {
    pub name: ContextName,
    pub ids: OrdMap<MessageRef, EntryId>,
    /// A missing or unsettled reference → the entries waiting for it, in the
    /// order they joined.
    pub waiting: OrdMap<MessageRef, Vec<Waiter>>,
    /// How many times an ID conflict re-settled this context. Re-settling
    /// puts every waiting list in ID order, as if all its members had just
    /// arrived together; instead of sorting every list then, the members
    /// that joined before the latest re-settling are put in ID order when
    /// their list is next used.
    pub resettles: u32,
    /// (a reference, a stored entry whose message depends on it), for
    /// finding what an ID conflict touches. Pairs rather than lists, so that
    /// noting a dependency allocates nothing of its own.
    pub dependents: OrdSet<(MessageRef, EntryId)>,
    /// Counts the changes to what the context's views show: a new
    /// content, a settled standing, an effect. A view built at one version
    /// is the view for as long as the version stays.
    pub version: u64,
    /// thread → the entries with a variant in it, by ID: views list them
    /// in ID order, so the order is kept as they arrive rather than sorted
    /// at every view.
    pub threads: OrdMap<ThreadId, OrdMap<MessageRef, EntryId>>,
    /// The commitments whose effect was performed. Facts about the world:
    /// they survive every re-settling.
    pub executed: OrdSet<MessageRef>,
}

impl ContextStore {
    pub fn new(name: ContextName) -> ContextStore {
        ContextStore {
            name,
            ids: OrdMap::new(),
            waiting: OrdMap::new(),
            resettles: 0,
            dependents: OrdSet::new(),
            version: 0,
            threads: OrdMap::new(),
            executed: OrdSet::new(),
        }
    }
}
