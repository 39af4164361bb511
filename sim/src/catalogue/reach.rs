//! Recognising the situations of the catalogue as a run reaches them.
//!
//! Each frame is parsed once, when it is put on the network; what a
//! situation needs to know of it (its act, its revision links, its identity
//! context) is kept as [`Sent`] facts, so a delivery costs no parse here.
//! The judgement of what a delivery *means* is the model's: outcomes,
//! releases and refusals are read from the oracle's answers.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use tern_model::ledger::{Event, EventKind, Execution, Ledger, Outcome};
use tern_model::message::{Act, Body, Message, MessageRef, ThreadId};

use super::boast::Boasted;
use super::context_of;
use super::malformed::Malformation;
use super::situations::{Coverage, Moment, Situation};

/// What the situations need to know of one frame put on the network.
#[derive(Debug, Clone, Default)]
pub struct Sent {
    /// How the frame was broken, if the workload broke it.
    pub malformed: Option<Malformation>,
    /// The message, when the frame is a valid one: (thread, ID, sender).
    pub key: Option<(String, String, String)>,
    pub act: Option<Act>,
    /// A REVISE: its target.
    pub revises: Option<String>,
    pub revise_of_revise: bool,
    pub skips_link: bool,
    /// Its ID was used before in another identity context.
    pub other_context: bool,
    /// Its `to`, when the frame is a valid message.
    pub addressed: Vec<String>,
    /// The boast it is, when the workload boasted (the harness knows the
    /// shape it built; the frame alone does not say which place matters).
    pub boast: Option<Boasted>,
}

impl Sent {
    /// Which copy of this frame goes to `agent`.
    pub fn copy_to(&self, agent: &str) -> Whose {
        match &self.key {
            Some((_, _, sender)) if sender == agent => Whose::Own,
            Some(_) if !self.addressed.iter().any(|a| a == agent) => Whose::Misrouted,
            _ => Whose::Addressed,
        }
    }
}

/// Which copy of a frame an agent is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Whose {
    /// The sender's own (a replayed COMMIT comes back to its sender).
    Own,
    /// A copy to an agent its `to` does not name.
    Misrouted,
    /// A copy to an addressee (or to anyone, for a frame that does not
    /// parse).
    Addressed,
}

impl Whose {
    /// The copy to `agent`, in words.
    pub fn text(self, agent: &str) -> String {
        match self {
            Whose::Own => format!("{agent}'s own copy"),
            Whose::Misrouted => format!("the copy misrouted to {agent}"),
            Whose::Addressed => format!("a copy to {agent}"),
        }
    }
}

/// The run's memory of what happened, for recognising situations.
#[derive(Debug, Clone, Default)]
pub struct Reach {
    /// What was sent, shared by the copies of a memory (the explorer's
    /// states) until one of them sends a frame none sent before.
    sends: std::sync::Arc<Sends>,
    /// Commitments (thread, ID) whose effect was performed.
    executed: BTreeSet<(String, String)>,
    /// Per (agent, COMMIT ID), the agent's local time when it first stored it.
    arrived: BTreeMap<(usize, String), i64>,
    /// Per agent, the IDs its model holds as pending (from the outcomes
    /// and releases it gave), and those pending when it last crashed.
    /// Persistent sets: IDs that wait forever stay in them, and a crash
    /// copies its agent's set, which must not cost the length of the run.
    pending: BTreeMap<usize, imbl::OrdSet<String>>,
    pending_at_crash: BTreeMap<usize, imbl::OrdSet<String>>,
}

/// The memory of the frames sent.
#[derive(Debug, Clone, Default)]
struct Sends {
    /// The act of the first content sent under each ID.
    acts: HashMap<String, Act>,
    /// Per revision target, its REVISEs in the order they were sent.
    chains: HashMap<String, Vec<String>>,
    /// Per ID, the identity contexts it was used in.
    contexts: HashMap<String, BTreeSet<&'static str>>,
}

impl Reach {
    /// The facts of a frame about to be sent (one parse).
    /// A frame put on the network, as the harness parsed it (`None` when
    /// it is not a valid message).
    pub fn on_send(&mut self, message: Option<&Message>, malformed: Option<Malformation>) -> Sent {
        let mut sent = Sent {
            malformed,
            ..Sent::default()
        };
        let Some(m) = message else {
            return sent;
        };
        let id = m.id.as_str().to_owned();
        let thread = m.thread.as_str().to_owned();
        let context = context_of(&thread);
        let sends = std::sync::Arc::make_mut(&mut self.sends);
        let used = sends.contexts.entry(id.clone()).or_default();
        sent.other_context = used.iter().any(|c| *c != context);
        used.insert(context);
        sends.acts.entry(id.clone()).or_insert(m.act());
        if let Body::Revise(r) = &m.body {
            let target = r.target.as_str().to_owned();
            sent.revise_of_revise = sends.acts.get(&target) == Some(&Act::Revise);
            let chain = sends.chains.entry(target.clone()).or_default();
            let previous = r.previous.as_str();
            // The latest link is the last REVISE sent, or the target itself.
            let latest = chain.last().map_or(target.as_str(), String::as_str);
            sent.skips_link = previous != latest && !chain.contains(&id);
            if !chain.contains(&id) {
                chain.push(id.clone());
            }
            sent.revises = Some(target);
        }
        sent.act = Some(m.act());
        sent.addressed = m.to.iter().map(|p| p.as_str().to_owned()).collect();
        sent.key = Some((thread, id, m.from.as_str().to_owned()));
        sent
    }

    /// The situations of one delivery to agent `a`, from the model's events.
    pub fn on_delivery(
        &mut self,
        coverage: &mut Coverage,
        a: usize,
        agent: &str,
        local: i64,
        sent: &Sent,
        events: &[Event],
    ) {
        let Some(first) = events.first() else { return };
        coverage.reach(match &first.outcome {
            Outcome::Accepted => Situation::Moment(Moment::Accepted),
            Outcome::Duplicate => Situation::Moment(Moment::Duplicate),
            Outcome::Pending { .. } => Situation::Moment(Moment::Pending),
            Outcome::Rejected(r) => Situation::Rejected(r.class),
        });
        if let (Some(kind), Outcome::Rejected(_)) = (sent.malformed, &first.outcome) {
            coverage.reach(Situation::Malformed(kind));
        }
        // A boast counts where it could sway an execution: stored as
        // accepted by the committer whose commitment it is about.
        if let (Some(b), Outcome::Accepted) = (&sent.boast, &first.outcome) {
            if b.committer == agent {
                coverage.reach(Situation::Boast(b.shape));
            }
        }
        let pending = self.pending.entry(a).or_default();
        let restarted = self.pending_at_crash.get(&a);
        for e in events {
            if let Some(id) = &e.id {
                if matches!(e.outcome, Outcome::Pending { .. }) {
                    pending.insert(id.as_str().to_owned());
                } else {
                    pending.remove(id.as_str());
                }
            }
            match e.kind {
                EventKind::Delivered => {}
                EventKind::Released => {
                    coverage.reach(Situation::Moment(Moment::Released));
                    let id = e.id.as_ref().map(|i| i.as_str());
                    if id.is_some_and(|id| restarted.is_some_and(|p| p.contains(id))) {
                        coverage.reach(Situation::Moment(Moment::ReleasedAfterRestart));
                    }
                }
                EventKind::Invalidated => {
                    coverage.reach(Situation::Moment(Moment::Invalidated));
                }
            }
        }
        let Some((thread, id, from)) = &sent.key else {
            return;
        };
        let executed = self.executed.contains(&(thread.clone(), id.clone()));
        let conflict = events.iter().any(|e| {
            matches!(&e.outcome, Outcome::Rejected(r) if r.class == tern_model::ledger::RejectClass::IdConflict)
                || e.kind == EventKind::Invalidated
        });
        if executed && conflict {
            coverage.reach(Situation::Moment(Moment::IdConflictAfterEffect));
        }
        if sent.act == Some(Act::Commit) {
            if executed && from == agent && first.outcome == Outcome::Duplicate {
                coverage.reach(Situation::Moment(Moment::EffectThenRedelivered));
            }
            if first.outcome != Outcome::Duplicate {
                self.arrived.entry((a, id.clone())).or_insert(local);
            }
        }
        if sent.revise_of_revise {
            coverage.reach(Situation::Moment(Moment::ReviseOfRevise));
        }
        if sent.skips_link {
            coverage.reach(Situation::Moment(Moment::PreviousSkipsLink));
        }
        if sent.other_context {
            coverage.reach(Situation::Moment(Moment::SameIdTwoContexts));
        }
    }

    /// A delivery of `sent` that revealed a revision conflict on a
    /// commitment whose effect was performed: only a REVISE of an executed
    /// commitment can, and then the model says whether it did.
    pub fn on_revision_conflict(&self, coverage: &mut Coverage, sent: &Sent, model: &Ledger) {
        let Some((thread, _, _)) = sent.key.as_ref() else {
            return;
        };
        let Some(target) = sent.revises.as_ref() else {
            return;
        };
        if !self.executed.contains(&(thread.clone(), target.clone())) {
            return;
        }
        if let (Ok(t), Ok(id)) = (ThreadId::new(thread), MessageRef::new(target)) {
            if model.knows_revision_conflict(&t, &id) {
                coverage.reach(Situation::Moment(Moment::RevisionConflictAfterEffect));
            }
        }
    }

    /// The situations of one execution request: the model's decision, and
    /// where the executor's clock stood against the grant's expiry.
    #[allow(clippy::too_many_arguments)] // one per fact of the request
    pub fn on_execution(
        &mut self,
        coverage: &mut Coverage,
        a: usize,
        id: &str,
        local: i64,
        skewed: bool,
        expiry: Option<i64>,
        decision: &Execution,
    ) {
        match decision {
            Execution::Executed { .. } => coverage.reach(Situation::Moment(Moment::Executed)),
            Execution::Refused(r) => coverage.reach(Situation::Refused(*r)),
        }
        if skewed {
            coverage.reach(Situation::Moment(Moment::SkewedExecution));
        }
        if let Some(expires) = expiry {
            match local - expires {
                -1 => coverage.reach(Situation::Moment(Moment::ExpiryOneBefore)),
                0 => coverage.reach(Situation::Moment(Moment::ExpiryExactly)),
                1 => coverage.reach(Situation::Moment(Moment::ExpiryOneAfter)),
                _ => {}
            }
            let arrived = self.arrived.get(&(a, id.to_owned()));
            if matches!(
                decision,
                Execution::Refused(tern_model::ledger::Refusal::GrantExpired)
            ) && arrived.is_some_and(|t| *t < expires)
            {
                coverage.reach(Situation::Moment(Moment::ExpiredSinceArrival));
            }
        }
    }

    /// An effect of commitment `id` in `thread` was performed.
    pub fn on_effect(&mut self, thread: &str, id: &str) {
        self.executed.insert((thread.to_owned(), id.to_owned()));
    }

    /// Agent `a` crashed: what its model holds as pending may be released
    /// after the restart.
    pub fn on_crash(&mut self, a: usize) {
        let pending = self.pending.get(&a).cloned().unwrap_or_default();
        self.pending_at_crash.insert(a, pending);
    }
}
