//! What the accepted messages of a context mean together: revision chains,
//! and each commitment's progress and lifecycle.
//!
//! Everything here is computed on demand from the sets of accepted messages
//! in the index, sorted by ID wherever order could leak in, so that it is a
//! function of the message set alone (the order-independence invariant).

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::json::Json;
use crate::message::{
    Body, Message, MessageRef, ProgressState, ReportBody, RequestBody, ReviseMode,
};
use crate::wire::{parse_body, Pointer};

use super::store::{CtxId, EntryId, Link, Status};
use super::{memo, Ledger};

/// Where a revision chain stands (section 4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChainHead {
    /// No accepted revision.
    Original,
    /// The unique chain ends with this replacing REVISE.
    Replaced(MessageRef),
    /// The unique chain ends with this withdrawing REVISE.
    Withdrawn(MessageRef),
    /// Two or more revisions claim the same predecessor: an unresolved
    /// conflict that no arrival order settles (section 4: "neither wins").
    Conflict {
        at: MessageRef,
        successors: Vec<MessageRef>,
    },
}

/// A commitment's progress, from its author's REPORTs only (section 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// No report yet.
    Unreported,
    Reported(ProgressState),
    /// The reports do not determine one state: concurrent reports disagree,
    /// a report's own revisions conflict, terminal reports disagree, or a
    /// terminal assessment was invalidated and no later report says more.
    Unresolved,
}

impl Progress {
    pub fn as_str(self) -> &'static str {
        match self {
            Progress::Unreported => "unreported",
            Progress::Reported(s) => s.as_str(),
            Progress::Unresolved => "unresolved",
        }
    }
}

/// Everything derived about one COMMIT.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitmentState {
    pub id: MessageRef,
    pub request: MessageRef,
    pub progress: Progress,
    /// For a fulfilled commitment: some fulfilled report's claims cite
    /// evidence embedded in the same message (profile rule L-COM-5).
    pub verified: bool,
    /// Reported terminal at some point (fulfilled or failed), even if that
    /// assessment was later invalidated: execution stays closed (section 4).
    pub ever_terminal: bool,
    /// Sorted, deduplicated lifecycle and progress annotations.
    pub annotations: BTreeSet<&'static str>,
    /// Why the commitment is disputed, if it is.
    pub disputes: BTreeSet<&'static str>,
    pub superseded_by: Vec<MessageRef>,
    pub reports: Vec<MessageRef>,
    pub chain: ChainHead,
}

/// A REQUEST as one COMMIT read it ([`Ledger::request_as_seen`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RequestSeen<'a> {
    /// The request body in force for this COMMIT: the stored REQUEST's own,
    /// borrowed, or one a replacing REVISE carries.
    Body(Cow<'a, RequestBody>),
    /// The COMMIT replies, directly or not, to the request's withdrawal.
    Withdrawn,
    /// The message under the reference is not a REQUEST.
    Unknown,
}

impl CommitmentState {
    pub fn is_disputed(&self) -> bool {
        !self.disputes.is_empty()
    }
}

impl Ledger {
    /// The entries of an index list that are still accepted, sorted by ID
    /// (index lists are kept in ID order, once each).
    pub(crate) fn sorted(&self, ids: Option<&Vec<EntryId>>) -> Vec<EntryId> {
        debug_assert!(ids.is_none_or(|l| l
            .windows(2)
            .all(|w| self.entries[w[0]].id < self.entries[w[1]].id)));
        ids.into_iter()
            .flatten()
            .copied()
            .filter(|&e| *self.entries[e].status() == Status::Accepted)
            .collect()
    }

    /// The `link` list of `eid`, if it has one. It is noted as read with
    /// `eid`'s standing and its members' standing: every caller looks at
    /// those. The entry's other lists are not: one grows apart from the
    /// others.
    pub(crate) fn linked(&self, eid: EntryId, link: Link) -> Option<&Vec<EntryId>> {
        memo::read(eid);
        memo::read_list(eid, link);
        let list = self.entries[eid].links().map(|lists| &lists[link as usize]);
        for &member in list.into_iter().flatten() {
            memo::read(member);
        }
        list
    }

    /// The entry stored under `id` in context `ctx`, noted as read (or the
    /// ID as missed).
    fn lookup(&self, ctx: CtxId, id: &MessageRef) -> Option<EntryId> {
        let found = self.contexts[ctx].ids.get(id).copied();
        match found {
            Some(eid) => memo::read(eid),
            None => memo::missed(id),
        }
        found
    }

    /// Whether an index list holds an entry that is still accepted.
    pub(crate) fn has_indexed(&self, ids: Option<&Vec<EntryId>>) -> bool {
        ids.into_iter()
            .flatten()
            .any(|&e| *self.entries[e].status() == Status::Accepted)
    }

    /// The chain of revisions of an accepted original.
    pub(crate) fn chain(&self, target: EntryId) -> (ChainHead, Option<EntryId>) {
        let revisions = self.sorted(self.linked(target, Link::Revisions));
        if revisions.is_empty() {
            return (ChainHead::Original, None);
        }
        // predecessor → the revisions claiming it, in ID order.
        let mut successors_of: BTreeMap<&MessageRef, Vec<EntryId>> = BTreeMap::new();
        for &r in &revisions {
            if let Body::Revise(rv) = &self.entries[r].message().body {
                successors_of.entry(&rv.previous).or_default().push(r);
            }
        }
        let mut node_id = self.entries[target].id.clone();
        let mut node: Option<EntryId> = None;
        // Each step moves to a revision accepted later in the chain; the
        // bound guards against any cycle the acceptance rules might allow.
        for _ in 0..=revisions.len() {
            let successors = successors_of.get(&node_id).map_or(&[][..], Vec::as_slice);
            match successors {
                [] => break,
                [only] => {
                    node = Some(*only);
                    node_id = self.entries[*only].id.clone();
                }
                many => {
                    return (
                        ChainHead::Conflict {
                            at: node_id,
                            successors: many.iter().map(|&e| self.entries[e].id.clone()).collect(),
                        },
                        None,
                    )
                }
            }
        }
        match node {
            None => (ChainHead::Original, None),
            Some(head) => match &self.entries[head].message().body {
                Body::Revise(r) if r.mode == ReviseMode::Withdraw => (
                    ChainHead::Withdrawn(self.entries[head].id.clone()),
                    Some(head),
                ),
                _ => (
                    ChainHead::Replaced(self.entries[head].id.clone()),
                    Some(head),
                ),
            },
        }
    }

    /// The REQUEST `req_eid` as the COMMIT `commit_eid` read it (L-REV-9):
    /// its content as of the latest revision in the request's chain that the
    /// COMMIT's reply chain reaches, or as first sent if it reaches none.
    /// The reply chain is the only order the committer itself states, so an
    /// existing commitment (one that names no revision) keeps the terms it
    /// was made under (L-REV-8), whatever arrived first.
    pub(crate) fn request_as_seen(
        &self,
        ctx: CtxId,
        commit_eid: EntryId,
        req_eid: EntryId,
    ) -> RequestSeen<'_> {
        let revisions = self.sorted(self.linked(req_eid, Link::Revisions));
        let mut latest: Option<EntryId> = None;
        // A request never revised is seen as sent: its COMMIT's reply chain
        // (a walk through the ID index) need not be followed.
        let seen_by_commit = if revisions.is_empty() {
            BTreeSet::new()
        } else {
            self.reply_ancestors(ctx, commit_eid)
        };
        let mut node_id = self.entries[req_eid].id.clone();
        // Along the unique chain; at a conflict the walk stops, and the
        // conflict blocks execution anyway (L-REV-6).
        for _ in 0..=revisions.len() {
            let next: Vec<EntryId> = revisions
                .iter()
                .copied()
                .filter(|&r| {
                    matches!(&self.entries[r].message().body, Body::Revise(rv) if rv.previous == node_id)
                })
                .collect();
            let [only] = next[..] else { break };
            if seen_by_commit.contains(&only) {
                latest = Some(only);
            }
            node_id = self.entries[only].id.clone();
        }
        let message = match latest {
            None => self.entries[req_eid].message(),
            Some(r) => self.entries[r].message(),
        };
        match &message.body {
            Body::Request(request) => RequestSeen::Body(Cow::Borrowed(request)),
            Body::Revise(rv) if rv.mode == ReviseMode::Withdraw => RequestSeen::Withdrawn,
            Body::Revise(rv) => rv
                .replacement
                .as_ref()
                .and_then(|j| parse_body(crate::message::Act::Request, j, &Pointer::root()).ok())
                .and_then(|b| match b {
                    Body::Request(request) => Some(RequestSeen::Body(Cow::Owned(request))),
                    _ => None,
                })
                .unwrap_or(RequestSeen::Unknown),
            _ => RequestSeen::Unknown,
        }
    }

    /// The entries reachable from `eid` by following `reply` links.
    fn reply_ancestors(&self, ctx: CtxId, eid: EntryId) -> BTreeSet<EntryId> {
        let mut seen = BTreeSet::new();
        let mut current = self.entries[eid].message().reply.clone();
        while let Some(r) = current {
            let Some(next) = self.lookup(ctx, &r) else {
                break;
            };
            if !seen.insert(next) || self.entries[next].variants().len() > 1 {
                break;
            }
            current = self.entries[next].message().reply.clone();
        }
        seen
    }

    /// Everything derived about the accepted COMMIT `eid`: kept while
    /// nothing it read changes, since views and every execution choice
    /// ask for it again and again.
    pub(crate) fn commitment(&self, ctx: CtxId, eid: EntryId) -> Arc<CommitmentState> {
        self.derived
            .commitments
            .get(self, ctx, eid, || self.derive_commitment(ctx, eid))
    }

    fn derive_commitment(&self, ctx: CtxId, eid: EntryId) -> CommitmentState {
        memo::read(eid);
        let commit_msg = self.entries[eid].message();
        let Body::Commit(commit) = &commit_msg.body else {
            unreachable!("commitment() is called on COMMITs only")
        };
        let mut annotations = BTreeSet::new();
        let mut disputes = BTreeSet::new();

        // Lifecycle from the COMMIT's own revisions.
        let (chain, _) = self.chain(eid);
        match &chain {
            ChainHead::Original => {}
            ChainHead::Replaced(_) => {
                annotations.insert("renegotiation_offered");
            }
            ChainHead::Withdrawn(_) => {
                annotations.insert("withdrawn");
            }
            ChainHead::Conflict { .. } => {
                annotations.insert("revision_conflict");
            }
        }

        // Detectable mismatches with the REQUEST (section 4: "an ambiguous
        // mismatch is disputed, never silently accepted").
        let request_eid = self.lookup(ctx, &commit.request);
        if let Some(req_eid) = request_eid {
            let request_msg = self.entries[req_eid].message();
            if !request_msg.to.contains(&commit_msg.from) {
                disputes.insert("committer_not_addressed");
            }
            match self.request_as_seen(ctx, eid, req_eid) {
                // Committing to a request its sender had withdrawn, as the
                // COMMIT's own reply chain shows (L-REV-9, G-16).
                RequestSeen::Withdrawn => {
                    disputes.insert("request_withdrawn");
                }
                RequestSeen::Body(request) => {
                    if let (Some(a), Some(b)) = (&commit.authority_ref, &request.authority_ref) {
                        if a != b {
                            disputes.insert("authority_mismatch");
                        }
                    }
                }
                RequestSeen::Unknown => {}
            }
            if matches!(self.chain(req_eid).0, ChainHead::Conflict { .. }) {
                annotations.insert("request_revision_conflict");
            }
        }
        if !disputes.is_empty() {
            annotations.insert("disputed");
        }

        // Supersession (section 4): the original requester's REQUEST with
        // `replaces`, and a COMMIT to it by the original committer.
        let mut superseded_by = Vec::new();
        for q in self.sorted(self.linked(eid, Link::Replacing)) {
            for c in self.sorted(self.linked(q, Link::Commits)) {
                if self.entries[c].message().from == commit_msg.from {
                    superseded_by.push(self.entries[c].id.clone());
                }
            }
        }
        if !superseded_by.is_empty() {
            annotations.insert("superseded");
        }

        // Challenges of the COMMIT or of its reports.
        let reports = self.sorted(self.linked(eid, Link::Reports));
        let challenged = self.has_indexed(self.linked(eid, Link::Challenges))
            || reports
                .iter()
                .any(|r| self.has_indexed(self.linked(*r, Link::Challenges)));
        if challenged {
            annotations.insert("challenged");
        }

        let (progress, verified, ever_terminal) = self.progress(ctx, &reports, &mut annotations);
        if progress == Progress::Reported(ProgressState::Fulfilled) && !verified {
            annotations.insert("unverified");
        }
        CommitmentState {
            id: self.entries[eid].id.clone(),
            request: commit.request.clone(),
            progress,
            verified,
            ever_terminal,
            annotations,
            disputes,
            superseded_by,
            reports: reports
                .iter()
                .map(|&r| self.entries[r].id.clone())
                .collect(),
            chain,
        }
    }

    /// Progress from the author's reports (profile rules L-COM-1 to L-COM-5).
    fn progress(
        &self,
        ctx: CtxId,
        reports: &[EntryId],
        annotations: &mut BTreeSet<&'static str>,
    ) -> (Progress, bool, bool) {
        let Assessments {
            mut effective,
            ever_terminal,
            stale: stale_reports,
        } = self.assessments(reports, annotations);

        let terminal: Vec<&Effective> =
            effective.iter().filter(|e| e.state.is_terminal()).collect();
        if !terminal.is_empty() {
            // Terminal dominates (section 4): later active or blocked reports
            // do not reopen the commitment.
            let terminal_ids: BTreeSet<EntryId> = terminal.iter().map(|e| e.eid).collect();
            for e in effective.iter().filter(|e| !e.state.is_terminal()) {
                if !self.reply_ancestors(ctx, e.eid).is_disjoint(&terminal_ids) {
                    annotations.insert("reopen_ignored");
                }
            }
            let first = terminal[0].state;
            if terminal.iter().all(|e| e.state == first) {
                let verified = terminal.iter().any(|e| e.verified);
                return (Progress::Reported(first), verified, true);
            }
            annotations.insert("conflicting_terminal");
            return (Progress::Unresolved, false, true);
        }
        if !stale_reports.is_empty() {
            // "unresolved until a fresh REPORT" (section 4): after an
            // invalidated terminal assessment, or a report whose revisions
            // conflict, only reports that follow it through their reply chain
            // count; older ones describe a state that is gone.
            effective.retain(|e| !self.reply_ancestors(ctx, e.eid).is_disjoint(&stale_reports));
        }
        if effective.is_empty() {
            let p = if stale_reports.is_empty() {
                Progress::Unreported
            } else {
                Progress::Unresolved
            };
            return (p, false, ever_terminal);
        }
        // The current reports are those no other report follows through its
        // reply chain; concurrent reports that disagree leave it unresolved.
        let all: BTreeSet<EntryId> = effective.iter().map(|e| e.eid).collect();
        let mut superseded = BTreeSet::new();
        for e in &effective {
            superseded.extend(self.reply_ancestors(ctx, e.eid).intersection(&all).copied());
        }
        let current: Vec<&Effective> = effective
            .iter()
            .filter(|e| !superseded.contains(&e.eid))
            .collect();
        let first = current[0].state;
        if current.iter().all(|e| e.state == first) {
            (Progress::Reported(first), false, ever_terminal)
        } else {
            annotations.insert("concurrent_reports");
            (Progress::Unresolved, false, ever_terminal)
        }
    }

    /// Each of the author's reports as its revisions leave it: the
    /// assessments in force, whether any was ever terminal, and the reports
    /// whose assessment is gone (a corrected or withdrawn terminal one, or
    /// one whose revisions conflict).
    fn assessments(
        &self,
        reports: &[EntryId],
        annotations: &mut BTreeSet<&'static str>,
    ) -> Assessments {
        let mut effective = Vec::new();
        let mut ever_terminal = false;
        let mut invalidated_terminal = false;
        let mut stale_reports = BTreeSet::new();
        for &r in reports {
            let original = self.entries[r].message();
            let Body::Report(body) = &original.body else {
                continue;
            };
            let mut versions: Vec<(ProgressState, bool)> =
                vec![(body.state, verified(original, body))];
            let (head, head_eid) = self.chain(r);
            // Every replacement along the chain is a version of the assessment.
            for rev in self.sorted(self.linked(r, Link::Revisions)) {
                if let Some(b) = replacement_report(self.entries[rev].message()) {
                    versions.push((b.state, verified(self.entries[rev].message(), &b)));
                }
            }
            let was_terminal = versions.iter().any(|(s, _)| s.is_terminal());
            ever_terminal |= was_terminal;
            let current = match head {
                ChainHead::Original => Some((body.state, verified(original, body))),
                ChainHead::Replaced(_) => head_eid.and_then(|h| {
                    let m = self.entries[h].message();
                    replacement_report(m).map(|b| (b.state, verified(m, &b)))
                }),
                ChainHead::Withdrawn(_) => None,
                ChainHead::Conflict { .. } => {
                    // The assessment is unknown until a fresh report follows it.
                    stale_reports.insert(r);
                    annotations.insert("report_revision_conflict");
                    None
                }
            };
            match current {
                Some((state, v)) if was_terminal && !state.is_terminal() => {
                    // A corrected terminal assessment: progress is open again
                    // only as "unresolved", never as renewed work.
                    invalidated_terminal = true;
                    stale_reports.insert(r);
                    let _ = (state, v);
                }
                Some((state, verified)) => effective.push(Effective {
                    eid: r,
                    state,
                    verified,
                }),
                None if was_terminal => {
                    invalidated_terminal = true;
                    stale_reports.insert(r);
                }
                None => {}
            }
        }
        if invalidated_terminal {
            annotations.insert("terminal_invalidated");
        }
        Assessments {
            effective,
            ever_terminal,
            stale: stale_reports,
        }
    }
}

/// A report's assessment in force: the state it gives, and whether its
/// evidence verifies it.
struct Effective {
    eid: EntryId,
    state: ProgressState,
    verified: bool,
}

/// The author's reports on a commitment, once their revisions are applied.
struct Assessments {
    effective: Vec<Effective>,
    ever_terminal: bool,
    /// Reports whose assessment is gone: only reports that follow them
    /// through their reply chain count.
    stale: BTreeSet<EntryId>,
}

/// The REPORT body a replacing REVISE carries.
fn replacement_report(revise: &Message) -> Option<ReportBody> {
    let Body::Revise(r) = &revise.body else {
        return None;
    };
    let replacement: &Json = r.replacement.as_ref()?;
    match parse_body(crate::message::Act::Report, replacement, &Pointer::root()) {
        Ok(Body::Report(b)) => Some(b),
        _ => None,
    }
}

/// A report is verified when one of its claims cites evidence embedded in the
/// same message; a bare reference is not verification (section 3).
fn verified(message: &Message, report: &ReportBody) -> bool {
    let Some(evidence) = &message.evidence else {
        return false;
    };
    report
        .claims
        .iter()
        .flat_map(|c| c.evidence.iter())
        .any(|id| evidence.iter().any(|e| &e.id == id))
}
