//! Whether a receiver may perform its own commitment now (section 5:
//! "Before acting, independently validate identity, resource scope, grant
//! expiry, and human-approval requirements").
//!
//! Nothing said in messages enters this decision beyond the commitment's
//! standing: claims, evidence, confidence, urgency and extensions are never
//! read here, so talk cannot create authority.

use crate::message::{Act, Body, MessageRef, ThreadId};

use super::config::{LocalTime, Viewer};
use super::derive::{ChainHead, Progress, RequestSeen};
use super::outcome::{EffectKey, Execution, Refusal};
use super::store::Status;
use super::Ledger;

impl Ledger {
    /// Decides, and on success records, the execution of `commitment` in
    /// `thread` at the executor's local time `now`. At most one effect per
    /// commitment is ever granted.
    pub fn execute(
        &mut self,
        thread: &ThreadId,
        commitment: &MessageRef,
        now: LocalTime,
    ) -> Execution {
        match self.may_execute(thread, commitment, now) {
            Ok((ctx, key)) => {
                self.contexts[ctx].executed.insert(commitment.clone());
                self.contexts[ctx].version += 1;
                Execution::Executed { effect: key }
            }
            Err(refusal) => Execution::Refused(refusal),
        }
    }

    /// The decision `execute` would take now, without recording anything:
    /// for callers that must make an effect durable before recording it.
    pub fn would_execute(
        &self,
        thread: &ThreadId,
        commitment: &MessageRef,
        now: LocalTime,
    ) -> Execution {
        match self.may_execute(thread, commitment, now) {
            Ok((_, key)) => Execution::Executed { effect: key },
            Err(refusal) => Execution::Refused(refusal),
        }
    }

    /// Whether a revision conflict is known on commitment `commitment` in
    /// `thread`: what blocks its execution (seed §4), asked also of one that
    /// was already executed, which the execution refusals do not reveal
    /// (`already_executed` is decided first).
    pub fn knows_revision_conflict(&self, thread: &ThreadId, commitment: &MessageRef) -> bool {
        let Some(ctx) = self.existing_context(thread) else {
            return false;
        };
        let Some(&eid) = self.contexts[ctx].ids.get(commitment) else {
            return false;
        };
        if !self.in_thread(thread, eid) || *self.entries[eid].status() != Status::Accepted {
            return false;
        }
        let state = self.commitment(ctx, eid);
        matches!(state.chain, ChainHead::Conflict { .. })
            || state.annotations.contains("request_revision_conflict")
            || state.annotations.contains("report_revision_conflict")
    }

    /// The effects recorded so far, in key order.
    pub fn effects(&self) -> Vec<EffectKey> {
        let mut keys: Vec<EffectKey> = self
            .contexts
            .iter()
            .enumerate()
            .flat_map(|(ctx, c)| c.executed.iter().map(move |id| self.effect_key(ctx, id)))
            .collect();
        keys.sort();
        keys
    }

    pub(crate) fn effect_key(&self, ctx: usize, id: &MessageRef) -> EffectKey {
        EffectKey(format!("{}/{}", self.contexts[ctx].name, id))
    }

    fn may_execute(
        &self,
        thread: &ThreadId,
        commitment: &MessageRef,
        now: LocalTime,
    ) -> Result<(usize, EffectKey), Refusal> {
        let Viewer::Participant(me) = self.config.viewer.clone() else {
            return Err(Refusal::NotOwnCommitment);
        };
        let Some(ctx) = self.existing_context(thread) else {
            return Err(Refusal::UnknownCommitment);
        };
        let Some(&eid) = self.contexts[ctx].ids.get(commitment) else {
            return Err(Refusal::UnknownCommitment);
        };
        let entry = &self.entries[eid];
        if !self.in_thread(thread, eid) {
            return Err(Refusal::UnknownCommitment);
        }
        match entry.status() {
            Status::Equivocated => return Err(Refusal::IdConflict),
            Status::Pending(_) | Status::Unsettled => return Err(Refusal::PendingCommitment),
            Status::Rejected(_) => return Err(Refusal::RejectedCommitment),
            Status::Accepted => {}
        }
        let message = entry.message();
        if message.thread != *thread {
            return Err(Refusal::UnknownCommitment);
        }
        let Body::Commit(commit) = &message.body else {
            return Err(Refusal::NotACommitment);
        };
        debug_assert_eq!(message.act(), Act::Commit);
        if message.from != me {
            // "A COMMIT cannot bind another participant" (section 2).
            return Err(Refusal::NotOwnCommitment);
        }
        if self.contexts[ctx].executed.contains(commitment) {
            return Err(Refusal::AlreadyExecuted);
        }

        let state = self.commitment(ctx, eid);
        let request_eid = self.contexts[ctx].ids.get(&commit.request).copied();
        let request_conflict = state.annotations.contains("request_revision_conflict");
        if matches!(state.chain, ChainHead::Conflict { .. })
            || request_conflict
            || state.annotations.contains("report_revision_conflict")
        {
            return Err(Refusal::RevisionConflict);
        }
        if matches!(state.chain, ChainHead::Withdrawn(_)) {
            return Err(Refusal::Withdrawn);
        }
        if !state.superseded_by.is_empty() {
            return Err(Refusal::Superseded);
        }
        if state.is_disputed() {
            return Err(Refusal::Disputed);
        }
        if state.ever_terminal || matches!(state.progress, Progress::Reported(s) if s.is_terminal())
        {
            return Err(Refusal::Terminal);
        }

        // Authority (section 5): the COMMIT's grant, else the REQUEST's as
        // the COMMIT read it (L-EXE-5, L-REV-9); a null reference grants
        // nothing beyond local policy.
        let request_grant = request_eid.and_then(|q| match self.request_as_seen(ctx, eid, q) {
            RequestSeen::Body(r) => r.authority_ref.clone(),
            RequestSeen::Withdrawn | RequestSeen::Unknown => None,
        });
        let grant_ref = commit.authority_ref.clone().or(request_grant);
        let policy = &self.config.policy;
        let mut needs_approval = policy.approval_required.contains(thread);
        match grant_ref {
            None => {
                if !policy.permitted_without_grant.contains(thread) {
                    return Err(Refusal::NoAuthority);
                }
            }
            Some(g) => {
                let Some(grant) = self.config.grants.get(&g) else {
                    return Err(Refusal::UnknownGrant);
                };
                if grant.grantee != me {
                    return Err(Refusal::GrantNotForExecutor);
                }
                if !grant.threads.contains(thread) {
                    return Err(Refusal::OutOfScope);
                }
                if grant.expires_at.is_some_and(|t| now >= t) {
                    return Err(Refusal::GrantExpired);
                }
                needs_approval |= grant.requires_approval;
            }
        }
        if needs_approval
            && !policy
                .approvals
                .contains(&(thread.clone(), commitment.clone()))
        {
            return Err(Refusal::ApprovalRequired);
        }
        Ok((ctx, self.effect_key(ctx, commitment)))
    }
}
