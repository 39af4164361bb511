//! Derived answers kept with what they read, so that a view asked after a
//! delivery derives again only what the delivery touched.
//!
//! A commitment's state reads its reports, their challenges and revisions,
//! its request and the reply chains between them: a handful of entries
//! out of the whole context. Views are compared after nearly every
//! delivery, and deriving every commitment of a thread each time cost more
//! than the deliveries. So a derivation runs while its reads are noted
//! (the entries whose standing it looked at, the lists it walked, and the
//! IDs it looked up and did not find), and its answer is kept with the
//! [`Stamp`] of each part read. The answer still holds while every part
//! it read has the same stamp and no ID it missed has arrived: the only
//! ways a ledger's derived state moves are a change to an entry (each
//! change takes a stamp no other change has) and a new ID. An entry's
//! standing and each of its lists are stamped apart, so that a list
//! growing leaves alone what never walked it.
//!
//! Because stamps are unique, "the same stamp" means "the same entry as
//! it was", in this ledger or in any copy of it. So copies share their
//! answers: a receiver restarted from a checkpoint finds what was derived
//! before the crash, for whatever its history still has in common.
//!
//! Debug builds (the tests) check every answer served again against a
//! fresh derivation, so a read that escaped the notes cannot hide.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex};

use crate::message::MessageRef;

use super::derive::CommitmentState;
use super::store::{CtxId, EntryId, Link, Stamp};
use super::view::DerivedItems;
use super::Ledger;

/// A part of an entry a derivation read: its standing and contents
/// (`None`), or one of its lists.
type Part = (EntryId, Option<Link>);

/// What one derivation read.
#[derive(Debug, Default)]
struct Reads {
    entries: Vec<Part>,
    missing: Vec<MessageRef>,
}

thread_local! {
    /// The reads of the derivation running on this thread, if one is
    /// being noted. Derivations take `&Ledger` and run to the end on the
    /// thread that started them, so a thread-local sees exactly their
    /// reads, without threading a recorder through every derivation.
    static NOTING: RefCell<Option<Reads>> = const { RefCell::new(None) };
}

/// Notes that the derivation running now read `eid`'s standing or
/// contents.
pub(crate) fn read(eid: EntryId) {
    note((eid, None));
}

/// Notes that the derivation running now walked `eid`'s `link` list.
pub(crate) fn read_list(eid: EntryId, link: Link) {
    note((eid, Some(link)));
}

fn note(part: Part) {
    NOTING.with_borrow_mut(|n| {
        if let Some(reads) = n {
            reads.entries.push(part);
        }
    });
}

/// Notes that the derivation running now looked `id` up and found nothing.
pub(crate) fn missed(id: &MessageRef) {
    NOTING.with_borrow_mut(|n| {
        if let Some(reads) = n {
            reads.missing.push(id.clone());
        }
    });
}

/// `derive`'s answer, with what it read. A derivation may serve another
/// (a view's item reads its commitment): what the inner one read, the
/// outer one read too.
fn noting<T>(derive: impl FnOnce() -> T) -> (T, Reads) {
    let outer = Outer(Some(NOTING.replace(Some(Reads::default()))));
    let answer = derive();
    let mut reads = NOTING.replace(None).unwrap_or_default();
    reads.entries.sort_unstable();
    reads.entries.dedup();
    if let Some(mut outer) = outer.resume() {
        outer.entries.extend_from_slice(&reads.entries);
        outer.missing.extend_from_slice(&reads.missing);
        NOTING.set(Some(outer));
    }
    (answer, reads)
}

/// The noting a derivation interrupted, put back if the derivation
/// unwinds instead of returning: otherwise the thread would go on noting
/// every later read into a derivation that is gone.
struct Outer(Option<Option<Reads>>);

impl Outer {
    fn resume(mut self) -> Option<Reads> {
        self.0.take().flatten()
    }
}

impl Drop for Outer {
    fn drop(&mut self) {
        if let Some(outer) = self.0.take() {
            NOTING.set(outer);
        }
    }
}

/// What a ledger keeps of its derivations, shared with its copies.
#[derive(Debug, Clone, Default)]
pub(crate) struct Derivations {
    pub commitments: Memos<CommitmentState>,
    /// What each accepted entry adds to its view's derived lists.
    pub view_items: Memos<DerivedItems>,
}

/// `derive`'s answer, with nothing it reads noted.
fn unnoted<T>(derive: impl FnOnce() -> T) -> T {
    let outer = Outer(Some(NOTING.take()));
    let answer = derive();
    NOTING.set(outer.resume());
    answer
}

/// An answer, with the entries it read as they were, and the IDs it
/// missed in its context.
#[derive(Debug)]
struct Kept<T> {
    ctx: CtxId,
    read: Vec<(Part, Stamp)>,
    missing: Vec<MessageRef>,
    answer: Arc<T>,
}

impl<T> Kept<T> {
    fn holds(&self, ledger: &Ledger, ctx: CtxId) -> bool {
        self.ctx == ctx
            && self.read.iter().all(|&((e, part), stamp)| {
                e < ledger.entries.len() && ledger.entries[e].changed(part) == stamp
            })
            && self
                .missing
                .iter()
                .all(|id| !ledger.contexts[ctx].ids.contains_key(id))
    }
}

/// Answers derived about entries, kept while they hold, and shared by
/// every copy of the ledger that keeps them.
#[derive(Debug)]
pub(crate) struct Memos<T>(Arc<Mutex<HashMap<EntryId, Kept<T>>>>);

impl<T> Default for Memos<T> {
    fn default() -> Self {
        Memos(Arc::new(Mutex::new(HashMap::new())))
    }
}

impl<T> Clone for Memos<T> {
    fn clone(&self) -> Self {
        Memos(self.0.clone())
    }
}

impl<T: PartialEq + Debug> Memos<T> {
    /// What `derive` says about `eid` (an entry of context `ctx`): kept from
    /// an earlier call if nothing it read has changed since.
    pub fn get(&self, ledger: &Ledger, ctx: CtxId, eid: EntryId, derive: impl Fn() -> T) -> Arc<T> {
        // Served inside another derivation, an answer's reads are that
        // one's too.
        let nested = NOTING.with_borrow(Option::is_some);
        let served = {
            let kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
            kept.get(&eid).filter(|k| k.holds(ledger, ctx)).map(|k| {
                if nested {
                    k.read.iter().for_each(|&(part, _)| note(part));
                    k.missing.iter().for_each(missed);
                }
                k.answer.clone()
            })
        };
        if let Some(answer) = served {
            // The check derives outside any noting, so that debug builds
            // note what release builds note.
            debug_assert_eq!(
                *answer,
                unnoted(&derive),
                "stale derivation for {}",
                ledger.entries[eid].id
            );
            return answer;
        }
        let (answer, reads) = noting(&derive);
        let answer = Arc::new(answer);
        // A derivation changes nothing: the stamps now are those it read.
        let read = reads
            .entries
            .iter()
            .map(|&(e, part)| ((e, part), ledger.entries[e].changed(part)))
            .collect();
        let made = Kept {
            ctx,
            read,
            missing: reads.missing,
            answer: answer.clone(),
        };
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(eid, made);
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_noted_only_while_noting() {
        read(7);
        let ((), reads) = noting(|| {
            read(3);
            read(1);
            read(3);
            missed(&MessageRef::new("a:9").unwrap());
        });
        assert_eq!(reads.entries, vec![(1, None), (3, None)]);
        assert_eq!(reads.missing.len(), 1);
        // An inner derivation's reads are the outer one's too.
        let ((_, inner), outer) = noting(|| {
            read(2);
            noting(|| {
                read(8);
                read_list(8, Link::Reports);
            })
        });
        assert_eq!(inner.entries, vec![(8, None), (8, Some(Link::Reports))]);
        assert_eq!(
            outer.entries,
            vec![(2, None), (8, None), (8, Some(Link::Reports))]
        );
        // A derivation that unwinds leaves the noting it interrupted.
        let unwound = std::panic::catch_unwind(|| {
            noting(|| {
                read(4);
                panic!("a derivation that fails");
            })
        });
        assert!(unwound.is_err());
        assert!(NOTING.with_borrow(Option::is_none));
        // Nothing is noted once the derivation is over.
        read(5);
        let ((), after) = noting(|| ());
        assert!(after.entries.is_empty() && after.missing.is_empty());
    }
}
