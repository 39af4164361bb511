//! Deciding the standing of stored messages.
//!
//! A message's standing is a function of the set of messages stored in its
//! context, never of the order they came in: that is what lets honest
//! receivers that saw the same messages in different orders agree (the
//! order-independence invariant). The rules are written so that this holds:
//!
//! * checks run in a fixed order, and the first one that cannot be decided yet
//!   (a reference not yet accepted) makes the message pending, so the verdict
//!   never depends on which references happened to arrive first;
//! * a decided check only ever looks at accepted messages, whose content never
//!   changes, or at rejected and equivocated ones, which never recover;
//! * the one event that changes an earlier verdict, a second content for an
//!   ID, re-settles what depends on that ID, with the answer that settling
//!   the whole context from scratch would give.
//!
//! Each delivery touches only what it concerns: the entries waiting for the
//! message it brings, and after an ID conflict the entries whose standing it
//! changes. [`Ledger::settling_from_scratch`] makes a ledger that re-settles
//! a whole context on each ID conflict instead, so that tests can check that
//! the two agree.

use std::collections::{BTreeMap, VecDeque};

use crate::message::{Act, Body, Message, MessageRef};
use crate::wire::{parse_body, Pointer};

use super::outcome::{RejectClass, Rejection};
use super::store::{CtxId, EntryId, Link, Status};
use super::Ledger;

/// The verdict of one evaluation.
pub(crate) enum Decision {
    Wait,
    Accept,
    Reject(Rejection),
}

fn reject(class: RejectClass, pointer: Pointer, message: impl Into<String>) -> Decision {
    Decision::Reject(Rejection::new(class, pointer, message))
}

/// Where a reference sits in its message, as the keys of its JSON pointer.
/// Static, so that listing references allocates nothing on the common path.
pub(crate) type Place = &'static [&'static str];

/// At most three references (the reply, and two body members for a
/// REVISE), held without an allocation: they are listed on every evaluation.
#[derive(Default)]
pub(crate) struct Deps<'a> {
    items: [Option<(&'a MessageRef, Place)>; 3],
    len: usize,
}

impl<'a> Deps<'a> {
    fn push(&mut self, item: (&'a MessageRef, Place)) {
        if let Some(slot) = self.items.get_mut(self.len) {
            *slot = Some(item);
            self.len += 1;
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (&'a MessageRef, Place)> + '_ {
        self.items.iter().flatten().copied()
    }
}

/// The references a message cannot be accepted without, with where they sit.
/// Impact references are informational (profile rule L-REF-4) and not listed.
pub(crate) fn dependencies(m: &Message) -> Deps<'_> {
    let mut deps = Deps::default();
    if let Some(r) = &m.reply {
        deps.push((r, &["reply"]));
    }
    match &m.body {
        Body::Propose(p) => {
            if let Some(r) = &p.request {
                deps.push((r, &["body", "request"]));
            }
        }
        Body::Request(q) => {
            if let Some(r) = &q.replaces {
                deps.push((r, &["body", "replaces"]));
            }
        }
        Body::Commit(c) => deps.push((&c.request, &["body", "request"])),
        Body::Report(r) => deps.push((&r.commitment, &["body", "commitment"])),
        Body::Revise(r) => {
            deps.push((&r.target, &["body", "target"]));
            if r.previous != r.target {
                deps.push((&r.previous, &["body", "previous"]));
            }
        }
        Body::Ack(a) => deps.push((&a.target, &["body", "target"])),
        Body::Challenge(c) => deps.push((&c.target, &["body", "target"])),
        Body::Ask(_) | Body::Tell(_) => {}
    }
    deps
}

/// The bits of the positions in [`dependencies`] that hold `r`.
pub(crate) fn dependency_mask(m: &Message, r: &MessageRef) -> u8 {
    dependencies(m)
        .iter()
        .enumerate()
        .filter(|(_, (d, _))| *d == r)
        .fold(0, |mask, (i, _)| mask | (1 << i))
}

/// The place of a body member that holds a reference.
fn body_place(key: &str) -> Place {
    match key {
        "request" => &["body", "request"],
        "replaces" => &["body", "replaces"],
        "commitment" => &["body", "commitment"],
        "previous" => &["body", "previous"],
        _ => &["body", "target"],
    }
}

impl Ledger {
    /// Settles `work` and everything that was waiting on what settles, and
    /// returns the entries whose status changed with their status before, in
    /// the order they settled.
    pub(crate) fn settle(&mut self, ctx: CtxId, work: Vec<EntryId>) -> Vec<(EntryId, Status)> {
        let mut queue: VecDeque<EntryId> = work.into();
        let mut changed = Vec::new();
        while let Some(eid) = queue.pop_front() {
            if self.entries[eid].status().is_final() {
                continue;
            }
            let Some(before) = self.reevaluate(ctx, eid) else {
                continue;
            };
            changed.push((eid, before));
            if self.entries[eid].status().is_final() {
                let id = self.entries[eid].id.clone();
                queue.extend(self.take_waiters(ctx, &id));
            }
        }
        changed
    }

    /// Evaluates `eid` again and, if its status changes, records the new one
    /// and keeps the index and the waiting lists in step. Returns the status
    /// before when it changed.
    fn reevaluate(&mut self, ctx: CtxId, eid: EntryId) -> Option<Status> {
        let (decision, missing) = self.evaluate(eid);
        let status = match decision {
            Decision::Wait => Status::Pending(missing),
            Decision::Accept => Status::Accepted,
            Decision::Reject(r) => Status::Rejected(r),
        };
        if *self.entries[eid].status() == status {
            return None;
        }
        let before = self.entries[eid].set_status(status);
        match self.entries[eid].status() {
            Status::Accepted if before != Status::Accepted => self.index_accepted(ctx, eid),
            Status::Pending(missing) => {
                let missing = missing.clone();
                self.register(ctx, eid, missing);
            }
            _ => {}
        }
        Some(before)
    }

    /// Puts `eid` in the waiting list of each reference it misses, unless it
    /// is there already.
    fn register(&mut self, ctx: CtxId, eid: EntryId, missing: Vec<MessageRef>) {
        let epoch = self.contexts[ctx].resettles;
        for r in missing {
            let mask = dependency_mask(self.entries[eid].message(), &r);
            if self.entries[eid].registered & mask != 0 {
                continue;
            }
            self.entries[eid].registered |= mask;
            self.contexts[ctx]
                .waiting
                .entry(r)
                .or_default()
                .push((eid, epoch));
        }
    }

    /// Empties the waiting list of `id`, in the order its members are woken:
    /// those that joined before the context was last re-settled in ID order
    /// (re-settling lists everything in ID order), then the others in the
    /// order they joined.
    fn take_waiters(&mut self, ctx: CtxId, id: &MessageRef) -> Vec<EntryId> {
        let Some(list) = self.contexts[ctx].waiting.remove(id) else {
            return Vec::new();
        };
        let epoch = self.contexts[ctx].resettles;
        // Members join with the current count, which never decreases.
        let older = list.partition_point(|&(_, joined)| joined < epoch);
        let mut waiters: Vec<EntryId> = list.into_iter().map(|(e, _)| e).collect();
        waiters[..older].sort_by(|a, b| self.entries[*a].id.cmp(&self.entries[*b].id));
        for &e in &waiters {
            let mask = dependency_mask(self.entries[e].message(), id);
            self.entries[e].registered &= !mask;
        }
        waiters
    }

    /// Re-settles what an ID conflict on `eid` changes, once its second
    /// content is stored. Returns the entries whose status differs from
    /// before, with their status before, in ID order: exactly what
    /// re-settling the whole context from scratch would return.
    ///
    /// Why touching only the dependents is enough: an entry's status is a
    /// function of its dependencies' statuses, so only entries that depend,
    /// directly or through others, on `eid` can change; an equivocated entry
    /// never changes, so nothing is followed through one. A settled entry
    /// stays settled (the references it was decided on stay settled), an
    /// acceptance can be lost but never regained, and the first failing check
    /// can only move earlier, so each entry changes a bounded number of times
    /// and propagating changes until nothing moves reaches the state that
    /// settling from scratch reaches.
    pub(crate) fn equivocate(&mut self, ctx: CtxId, eid: EntryId) -> Vec<(EntryId, Status)> {
        let mut before: BTreeMap<EntryId, Status> = BTreeMap::new();
        if *self.entries[eid].status() != Status::Equivocated {
            let old = self.entries[eid].set_status(Status::Equivocated);
            before.insert(eid, old);
            let id = self.entries[eid].id.clone();
            // Its waiters are among its dependents, re-evaluated below.
            self.take_waiters(ctx, &id);
            let mut queue: VecDeque<EntryId> = self.dependents_of(ctx, &id).into();
            while let Some(x) = queue.pop_front() {
                if *self.entries[x].status() == Status::Equivocated {
                    continue;
                }
                let Some(old) = self.reevaluate(ctx, x) else {
                    continue;
                };
                before.entry(x).or_insert(old);
                let xid = self.entries[x].id.clone();
                if self.entries[x].status().is_final() {
                    // Its waiters are among its dependents.
                    self.take_waiters(ctx, &xid);
                }
                queue.extend(self.dependents_of(ctx, &xid));
            }
        }
        // Whatever changed, re-settling lists every waiting entry in ID order.
        self.contexts[ctx].resettles += 1;
        let mut changed: Vec<(EntryId, Status)> = before
            .into_iter()
            .filter(|(e, old)| *self.entries[*e].status() != *old)
            .collect();
        changed.sort_by(|a, b| self.entries[a.0].id.cmp(&self.entries[b.0].id));
        changed
    }

    fn dependents_of(&self, ctx: CtxId, id: &MessageRef) -> Vec<EntryId> {
        self.contexts[ctx]
            .dependents
            .range((id.clone(), 0)..=(id.clone(), EntryId::MAX))
            .map(|(_, e)| *e)
            .collect()
    }

    /// Re-settles every entry of a context from scratch, as if all its
    /// messages had just arrived together. Returns the entries whose status
    /// differs from before, with their status before, in ID order. The
    /// reference that [`Ledger::equivocate`] must agree with; see
    /// [`Ledger::settling_from_scratch`].
    pub(crate) fn resettle_from_scratch(&mut self, ctx: CtxId) -> Vec<(EntryId, Status)> {
        let all: Vec<EntryId> = self.contexts[ctx].ids.values().copied().collect();
        let before: Vec<Status> = all
            .iter()
            .map(|&e| self.entries[e].status().clone())
            .collect();
        self.contexts[ctx].waiting.clear();
        // The index keeps entries that lose their acceptance; its readers
        // skip them, so it needs no rebuilding.
        for &eid in &all {
            let entry = &mut self.entries[eid];
            entry.registered = 0;
            let status = if entry.variants().len() > 1 {
                Status::Equivocated
            } else {
                Status::Unsettled
            };
            entry.set_status(status);
        }
        self.settle(ctx, all.clone());
        all.into_iter()
            .zip(before)
            .filter(|(eid, old)| *self.entries[*eid].status() != *old)
            .collect()
    }

    /// The outcome of every stored ID, in context and ID order, for
    /// comparing ledgers in tests.
    #[doc(hidden)]
    pub fn outcomes(&self) -> Vec<(MessageRef, super::Outcome)> {
        self.contexts
            .iter()
            .flat_map(|c| c.ids.iter())
            .map(|(id, &eid)| (id.clone(), self.outcome_of(eid)))
            .collect()
    }

    fn index_accepted(&mut self, ctx: CtxId, eid: EntryId) {
        let lookup = |r: &MessageRef| self.contexts[ctx].ids.get(r).copied();
        let message = self.entries[eid].message();
        let (link, key) = match &message.body {
            Body::Revise(r) => (Link::Revisions, lookup(&r.target)),
            Body::Report(r) => (Link::Reports, lookup(&r.commitment)),
            Body::Commit(c) => (Link::Commits, lookup(&c.request)),
            Body::Request(q) => (Link::Replacing, q.replaces.as_ref().and_then(lookup)),
            Body::Challenge(c) => (Link::Challenges, lookup(&c.target)),
            _ => return,
        };
        let Some(key) = key else { return };
        // Kept in ID order, once each, so that readers (views above all)
        // never sort: IDs are unique within a context, and every list
        // links one context's entries.
        let id = &self.entries[eid].id;
        let at = self.linked(key, link).map_or(Err(0), |list| {
            list.binary_search_by(|&x| self.entries[x].id.cmp(id))
        });
        if let Err(at) = at {
            self.entries[key].link(link, at, eid);
        }
    }

    /// The accepted message a reference names, or why there is none yet.
    fn need(
        &self,
        ctx: CtxId,
        from: &Message,
        r: &MessageRef,
        at: Place,
    ) -> Result<(EntryId, &Message), Decision> {
        let Some(&eid) = self.contexts[ctx].ids.get(r) else {
            return Err(Decision::Wait);
        };
        let entry = &self.entries[eid];
        match entry.status() {
            Status::Unsettled | Status::Pending(_) => Err(Decision::Wait),
            Status::Rejected(_) => Err(reject(
                RejectClass::Reference,
                Pointer::of(at),
                format!("references `{r}`, which was rejected"),
            )),
            Status::Equivocated => Err(reject(
                RejectClass::Reference,
                Pointer::of(at),
                format!("references `{r}`, whose ID was used for conflicting contents"),
            )),
            Status::Accepted => {
                let target = entry.message();
                if target.thread != from.thread {
                    return Err(reject(
                        RejectClass::Reference,
                        Pointer::of(at),
                        format!(
                            "references `{r}` of thread `{}`, not of this thread `{}`",
                            target.thread, from.thread
                        ),
                    ));
                }
                Ok((eid, target))
            }
        }
    }

    /// Decides one entry, and lists the references it is still missing.
    /// The list is made only when the entry must wait: a decided entry
    /// misses nothing that matters.
    fn evaluate(&self, eid: EntryId) -> (Decision, Vec<MessageRef>) {
        let entry = &self.entries[eid];
        let ctx = entry.ctx;
        let m = entry.message();
        let deps = dependencies(m);
        let decision = match self.decide(ctx, m, &deps) {
            Ok(()) => Decision::Accept,
            Err(d) => d,
        };
        let mut missing: Vec<MessageRef> = Vec::new();
        if !matches!(decision, Decision::Wait) {
            return (decision, missing);
        }
        for (r, _) in deps.iter() {
            let unsettled = self.contexts[ctx]
                .ids
                .get(r)
                .is_none_or(|&e| !self.entries[e].status().is_final());
            if unsettled && !missing.contains(r) {
                missing.push(r.clone());
            }
        }
        (decision, missing)
    }

    /// The checks, in their fixed order (profile rules L-*).
    fn decide(&self, ctx: CtxId, m: &Message, deps: &Deps) -> Result<(), Decision> {
        // 1. What the message says about itself.
        for (r, at) in deps.iter() {
            if *r == m.id {
                return Err(reject(
                    RejectClass::Reference,
                    Pointer::of(at),
                    "a message cannot reference itself",
                ));
            }
        }
        match &m.body {
            Body::Revise(rv) if rv.target.sender() != m.from.as_str() => {
                return Err(reject(
                    RejectClass::ForeignRevision,
                    Pointer::of(&["body", "target"]),
                    format!(
                        "`{}` may revise only its own messages, and `{}` is `{}`'s",
                        m.from,
                        rv.target,
                        rv.target.sender()
                    ),
                ));
            }
            Body::Revise(rv) if rv.previous.sender() != m.from.as_str() => {
                return Err(reject(
                    RejectClass::RevisionChain,
                    Pointer::of(&["body", "previous"]),
                    format!(
                        "`previous` must be the original or one of `{}`'s own revisions",
                        m.from
                    ),
                ));
            }
            Body::Report(rp) if rp.commitment.sender() != m.from.as_str() => {
                return Err(reject(
                    RejectClass::NotAuthor,
                    Pointer::of(&["body", "commitment"]),
                    format!(
                        "only the commitment's author `{}` may report its state; `{}` may use TELL or CHALLENGE",
                        rp.commitment.sender(),
                        m.from
                    ),
                ));
            }
            _ => {}
        }

        // 2. The reply, then the body's references, in field order.
        if let Some(r) = &m.reply {
            self.need(ctx, m, r, &["reply"])?;
        }
        let at = |k: &str| Pointer::of(&["body", k]);
        let expect = |target: &Message, act: Act, at: Pointer, r: &MessageRef| {
            if target.act() == act {
                Ok(())
            } else {
                Err(reject(
                    RejectClass::Reference,
                    at,
                    format!("`{r}` is a {}, not a {act}", target.act()),
                ))
            }
        };
        match &m.body {
            Body::Propose(p) => {
                if let Some(r) = &p.request {
                    let (_, q) = self.need(ctx, m, r, body_place("request"))?;
                    expect(q, Act::Request, at("request"), r)?;
                }
            }
            Body::Request(q) => {
                if let Some(r) = &q.replaces {
                    let (_, c) = self.need(ctx, m, r, body_place("replaces"))?;
                    expect(c, Act::Commit, at("replaces"), r)?;
                    if let Body::Commit(old) = &c.body {
                        let requester = old.request.sender();
                        if requester != m.from.as_str() {
                            return Err(reject(
                                RejectClass::ReplacesNotRequester,
                                at("replaces"),
                                format!(
                                    "only the original requester `{requester}` may ask to replace `{r}`"
                                ),
                            ));
                        }
                    }
                }
            }
            Body::Commit(c) => {
                let (_, q) = self.need(ctx, m, &c.request, body_place("request"))?;
                expect(q, Act::Request, at("request"), &c.request)?;
            }
            Body::Report(rp) => {
                let (_, c) = self.need(ctx, m, &rp.commitment, body_place("commitment"))?;
                expect(c, Act::Commit, at("commitment"), &rp.commitment)?;
            }
            Body::Revise(rv) => self.decide_revise(ctx, m, rv)?,
            Body::Ack(a) => {
                self.need(ctx, m, &a.target, body_place("target"))?;
            }
            Body::Challenge(c) => {
                self.need(ctx, m, &c.target, body_place("target"))?;
            }
            Body::Ask(_) | Body::Tell(_) => {}
        }
        Ok(())
    }

    fn decide_revise(
        &self,
        ctx: CtxId,
        m: &Message,
        rv: &crate::message::ReviseBody,
    ) -> Result<(), Decision> {
        let at = |k: &str| Pointer::of(&["body", k]);
        let (_, target) = self.need(ctx, m, &rv.target, body_place("target"))?;
        if !target.act().is_revisable() {
            return Err(reject(
                RejectClass::NotRevisable,
                at("target"),
                format!(
                    "`{}` is a {}: only TELL, PROPOSE, REQUEST, COMMIT and REPORT can be revised, and every revision targets the original",
                    rv.target,
                    target.act()
                ),
            ));
        }
        if rv.previous != rv.target {
            let (_, previous) = self.need(ctx, m, &rv.previous, body_place("previous"))?;
            let Body::Revise(prev) = &previous.body else {
                return Err(reject(
                    RejectClass::RevisionChain,
                    at("previous"),
                    format!(
                        "`previous` must be the original `{}` or a REVISE of it, and `{}` is a {}",
                        rv.target,
                        rv.previous,
                        previous.act()
                    ),
                ));
            };
            if prev.target != rv.target {
                return Err(reject(
                    RejectClass::RevisionChain,
                    at("previous"),
                    format!(
                        "`{}` revises `{}`, not `{}`: a chain has one original",
                        rv.previous, prev.target, rv.target
                    ),
                ));
            }
            if prev.mode == crate::message::ReviseMode::Withdraw {
                return Err(reject(
                    RejectClass::RevisionChain,
                    at("previous"),
                    format!(
                        "`{}` withdrew `{}`: the chain ended there",
                        rv.previous, rv.target
                    ),
                ));
            }
        }
        if let Some(replacement) = &rv.replacement {
            let body = parse_body(target.act(), replacement, &at("replacement")).map_err(|e| {
                reject(
                    RejectClass::Replacement,
                    e.pointer,
                    format!("not a valid {} body: {}", target.act(), e.message),
                )
            })?;
            let same_subject = match (&target.body, &body) {
                (Body::Report(a), Body::Report(b)) => a.commitment == b.commitment,
                (Body::Commit(a), Body::Commit(b)) => a.request == b.request,
                (Body::Request(a), Body::Request(b)) => a.replaces == b.replaces,
                (Body::Propose(a), Body::Propose(b)) => a.request == b.request,
                _ => true,
            };
            if !same_subject {
                return Err(reject(
                    RejectClass::Replacement,
                    at("replacement"),
                    "a replacement may change the terms, not which message the original is about",
                ));
            }
        }
        Ok(())
    }
}
