//! A ledger's whole state as bytes, and back: what a receiver keeps as a
//! snapshot so that a restart reads its state instead of delivering every
//! frame of its history again (`tern-sim agent`'s snapshot file,
//! docs/protocol.md section 7).
//!
//! Every field of the ledger is written as it is, in the binary form of
//! [`crate::binary`]. Only the caches are left out (each message's
//! canonical text, view items, whole views), which are made again when a
//! view first asks for them: a restarted receiver is asked for the views
//! of the threads under way, seldom for the whole history, and the texts
//! would more than double the bytes to read at every start. So a ledger
//! read back answers every delivery, execution and view exactly as the
//! ledger that was written would.

use std::collections::BTreeMap;
use std::sync::Arc;

use imbl::{OrdMap, OrdSet};

use crate::binary::{In, Out, StateError};
use crate::message::binary::{message, read_message};
use crate::message::{ContextName, MessageRef, ThreadId};
use crate::wire::Pointer;

use super::config::LedgerConfig;
use super::outcome::{RejectClass, Rejection};
use super::shared_vec::SharedVec;
use super::store::{ContextStore, Entry, Links, SharedMessage, Status, Variant, LINKS};
use super::{view, Ledger};

/// The first byte of a ledger's state: its format. A state written in
/// another format is refused, not misread.
const FORMAT: u8 = 1;

fn name<T>(r: &mut In, make: fn(&str) -> Result<T, String>) -> Result<T, StateError> {
    make(r.str()?).map_err(StateError::new)
}

fn read_ref(r: &mut In) -> Result<MessageRef, StateError> {
    name(r, |s| MessageRef::new(s))
}

fn read_thread(r: &mut In) -> Result<ThreadId, StateError> {
    name(r, |s| ThreadId::new(s))
}

fn status(o: &mut Out, s: &Status) {
    match s {
        Status::Unsettled => o.u8(0),
        Status::Pending(missing) => {
            o.u8(1);
            o.list(missing.iter(), |o, m| o.str(m.as_str()));
        }
        Status::Accepted => o.u8(2),
        Status::Rejected(r) => {
            o.u8(3);
            o.u8(RejectClass::ALL
                .iter()
                .position(|c| *c == r.class)
                .unwrap_or(0) as u8);
            o.str(r.pointer.as_str());
            o.str(&r.message);
        }
        Status::Equivocated => o.u8(4),
    }
}

fn read_status(r: &mut In) -> Result<Status, StateError> {
    Ok(match r.u8()? {
        0 => Status::Unsettled,
        1 => Status::Pending(r.list(read_ref)?),
        2 => Status::Accepted,
        3 => {
            let i = usize::from(r.u8()?);
            let class = *RejectClass::ALL
                .get(i)
                .ok_or_else(|| StateError::new(format!("{i} is not a rejection class")))?;
            let pointer = Pointer::from_written(r.str()?);
            Status::Rejected(Rejection::new(class, pointer, r.str()?))
        }
        4 => Status::Equivocated,
        t => return Err(StateError::new(format!("{t} is not a standing"))),
    })
}

fn entry(o: &mut Out, e: &Entry) {
    o.usize(e.ctx);
    o.str(e.id.as_str());
    o.u8(e.registered);
    status(o, e.status());
    o.list(e.variants().iter(), |o, v| {
        o.uint(v.origin);
        message(o, v.message());
    });
    o.usize(e.digests.len());
    for (digest, at) in &e.digests {
        o.uint(*digest);
        o.list(at.iter(), |o, i| o.usize(*i));
    }
    o.option(e.links(), |o, lists| {
        for list in lists {
            o.list(list.iter(), |o, eid| o.usize(*eid));
        }
    });
}

fn read_entry(r: &mut In, contexts: usize, entries: usize) -> Result<Entry, StateError> {
    let ctx = r.index(contexts, "context")?;
    let id = read_ref(r)?;
    let registered = r.u8()?;
    let status = read_status(r)?;
    let variants = r.list(|r| {
        let origin = r.uint()?;
        let m = read_message(r)?;
        Ok(Variant::new(SharedMessage::new(m), origin))
    })?;
    if variants.is_empty() {
        return Err(StateError::new(format!("entry {id} holds no content")));
    }
    let mut digests = BTreeMap::new();
    for _ in 0..r.count()? {
        let digest = r.uint()?;
        digests.insert(digest, r.list(|r| r.index(variants.len(), "variant"))?);
    }
    let links: Links = r.option(|r| {
        let mut lists: [Vec<usize>; LINKS] = Default::default();
        for list in &mut lists {
            *list = r.list(|r| r.index(entries, "entry"))?;
        }
        Ok(Box::new(lists))
    })?;
    Ok(Entry::restored(
        ctx, id, variants, status, registered, digests, links,
    ))
}

fn context(o: &mut Out, c: &ContextStore) {
    let ContextStore {
        name,
        ids,
        waiting,
        resettles,
        dependents,
        version,
        threads,
        executed,
    } = c;
    o.str(name.as_str());
    o.uint(u64::from(*resettles));
    o.uint(*version);
    o.list(ids.iter(), |o, (id, eid)| {
        o.str(id.as_str());
        o.usize(*eid);
    });
    o.list(waiting.iter(), |o, (id, list)| {
        o.str(id.as_str());
        o.list(list.iter(), |o, (eid, epoch)| {
            o.usize(*eid);
            o.uint(u64::from(*epoch));
        });
    });
    o.list(dependents.iter(), |o, (id, eid)| {
        o.str(id.as_str());
        o.usize(*eid);
    });
    o.list(threads.iter(), |o, (thread, ids)| {
        o.str(thread.as_str());
        o.list(ids.iter(), |o, (id, eid)| {
            o.str(id.as_str());
            o.usize(*eid);
        });
    });
    o.list(executed.iter(), |o, id| o.str(id.as_str()));
}

/// `(id, entry)` pairs into a map.
fn read_ids(r: &mut In, entries: usize) -> Result<OrdMap<MessageRef, usize>, StateError> {
    let mut map = OrdMap::new();
    for _ in 0..r.count()? {
        let id = read_ref(r)?;
        map.insert(id, r.index(entries, "entry")?);
    }
    Ok(map)
}

fn read_context(r: &mut In, entries: usize) -> Result<ContextStore, StateError> {
    let mut c = ContextStore::new(name(r, |s| ContextName::new(s))?);
    c.resettles = r.u32()?;
    c.version = r.uint()?;
    c.ids = read_ids(r, entries)?;
    for _ in 0..r.count()? {
        let id = read_ref(r)?;
        let list = r.list(|r| Ok((r.index(entries, "entry")?, r.u32()?)))?;
        c.waiting.insert(id, list);
    }
    let mut dependents = OrdSet::new();
    for _ in 0..r.count()? {
        let id = read_ref(r)?;
        dependents.insert((id, r.index(entries, "entry")?));
    }
    c.dependents = dependents;
    for _ in 0..r.count()? {
        let thread = read_thread(r)?;
        c.threads.insert(thread, read_ids(r, entries)?);
    }
    c.executed = r.list(read_ref)?.into_iter().collect();
    Ok(c)
}

impl Ledger {
    /// Appends the ledger's whole state to `out`, for
    /// [`Ledger::read_state`] to read back over the same configuration.
    pub fn write_state(&self, out: &mut Vec<u8>) {
        // Every field, so that adding one without writing it is a compile
        // error here.
        let Ledger {
            config: _,
            deliveries,
            contexts,
            context_ids,
            thread_contexts,
            entries,
            stored,
            from_scratch,
            views: _,
            derived: _,
        } = self;
        let o = &mut Out(out);
        o.u8(FORMAT);
        o.uint(*deliveries);
        o.usize(*stored);
        o.bool(*from_scratch);
        o.usize(contexts.len());
        o.usize(entries.len());
        o.list(context_ids.iter(), |o, (name, ctx)| {
            o.str(name.as_str());
            o.usize(*ctx);
        });
        o.list(thread_contexts.iter(), |o, (thread, ctx)| {
            o.str(thread.as_str());
            o.usize(*ctx);
        });
        for c in contexts.iter() {
            context(o, c);
        }
        for e in entries.iter() {
            entry(o, e);
        }
    }

    /// The ledger whose state [`Ledger::write_state`] wrote into `bytes`,
    /// over `config`, which must be the configuration it had: a ledger
    /// that answers as that one did. Bytes that are not such a state are
    /// an error, whatever they hold.
    pub fn read_state(
        config: impl Into<Arc<LedgerConfig>>,
        bytes: &[u8],
    ) -> Result<Ledger, StateError> {
        let r = &mut In::new(bytes);
        let format = r.u8()?;
        if format != FORMAT {
            return Err(StateError::new(format!(
                "a ledger state of format {format}; this one reads format {FORMAT}"
            )));
        }
        let deliveries = r.uint()?;
        let stored = r.usize()?;
        let from_scratch = r.bool()?;
        let n_contexts = r.count()?;
        let n_entries = r.count()?;
        let mut context_ids = OrdMap::new();
        for _ in 0..r.count()? {
            let name = name(r, |s| ContextName::new(s))?;
            context_ids.insert(name, r.index(n_contexts, "context")?);
        }
        let mut thread_contexts = OrdMap::new();
        for _ in 0..r.count()? {
            let thread = read_thread(r)?;
            thread_contexts.insert(thread, r.index(n_contexts, "context")?);
        }
        let mut contexts = SharedVec::default();
        for _ in 0..n_contexts {
            contexts.push(read_context(r, n_entries)?);
        }
        let mut entries = SharedVec::default();
        for _ in 0..n_entries {
            entries.push(read_entry(r, n_contexts, n_entries)?);
        }
        if !r.is_empty() {
            return Err(StateError::new("bytes after the ledger's state"));
        }
        Ok(Ledger {
            config: config.into(),
            deliveries,
            contexts,
            context_ids,
            thread_contexts,
            entries,
            stored,
            from_scratch,
            views: view::ViewCache::default(),
            derived: Default::default(),
        })
    }
}
