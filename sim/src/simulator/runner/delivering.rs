//! One delivery to one agent, judged: the crash armed for it, the answer
//! against the oracle's events and the delivery rules, and what the run
//! keeps of it for the views and crashes to come. The heart of a run's
//! checks, apart from the network that brings the copies.

use super::*;
use tern_model::ledger::Outcome;

use crate::contract::plugin::Delivered;

impl Run<'_> {
    /// The threads whose views [`Run::check_dirty`] will ask of agent `a`
    /// if delivering frame `sent` touches the thread it names, in the order
    /// it asks them.
    fn views_after(&self, a: usize, sent: usize) -> Vec<ThreadId> {
        let mut threads: BTreeSet<&str> = self
            .dirty
            .range((a, String::new())..(a + 1, String::new()))
            .map(|(_, t)| t.as_str())
            .collect();
        if let Ok(m) = &self.parsed[sent] {
            threads.insert(m.message().thread.as_str());
        }
        threads
            .into_iter()
            .filter_map(|t| ThreadId::new(t).ok())
            .collect()
    }

    /// One delivery to one agent, with every check.
    pub(super) fn deliver_to(
        &mut self,
        a: usize,
        frame: &[u8],
        principal: &Principal,
        sent: usize,
        views_follow: bool,
    ) -> Checked {
        self.stats.deliveries += 1;
        let local = self.local(a);
        let before = self.world.len();
        if !self.agents[a].is_up() {
            return Ok(());
        }
        let Asked::Answered { reply, owed } =
            self.ask_to_deliver(a, frame, principal, sent, views_follow, local)?
        else {
            return Ok(());
        };
        // (A redelivery after the last copy on the network was delivered
        // carries the agent's own record of the frame.)
        debug_assert!(
            self.sent[sent].frame.is_empty() || self.sent[sent].frame == frame,
            "a delivery names the frame it carries"
        );
        let expected =
            self.agents[a]
                .under_test
                .expect(self.parsed[sent].clone(), principal, local);
        self.stats.checks += 1;
        self.note_expected(a, sent, local, &expected);
        let first = oracle::first_outcome(&expected);
        self.judge_answer(a, sent, before, owed.is_some(), &expected, &first, &reply)?;
        self.keep_answered(a, frame, principal, sent, &expected, &first);
        Ok(())
    }

    /// Hands the frame to agent `a`'s receiver, with the crash armed for
    /// this delivery if its turn has come: its answer, or the crash that
    /// fired (the frame is then owed again after the restart).
    fn ask_to_deliver(
        &mut self,
        a: usize,
        frame: &[u8],
        principal: &Principal,
        sent: usize,
        views_follow: bool,
        local: LocalTime,
    ) -> Result<Asked, Box<Violation>> {
        let point = self.agents[a].pending_crash;
        let sync_point = matches!(point, Some(CrashPoint::BeforeSync | CrashPoint::AfterSync));
        let armed = sync_point && self.agents[a].crash_after == 0;
        if sync_point && !armed {
            self.agents[a].crash_after -= 1;
        }
        // The last delivery of the round to this agent, with no crash
        // armed: say which views come next (a guess from the frame's
        // thread; a receiver that was told wrong just answers more views).
        let follow = if views_follow && !armed {
            self.views_after(a, sent)
        } else {
            Vec::new()
        };
        let answer = self.agents[a].under_test.deliver(
            frame,
            principal,
            local,
            if armed { point } else { None },
            &follow,
            sent,
        );
        self.count_fell(a);
        match answer {
            Err(breach) => {
                Err(self.violation(Some(a), breach.into_failure("an answer to deliver")))
            }
            Ok(Asked::Crashed) => {
                self.agents[a].pending_crash = None;
                self.crashed(a, CrashWhen::Delivery);
                Ok(Asked::Crashed)
            }
            Ok(answered) => Ok(answered),
        }
    }

    /// What the oracle's events tell the run before the answer is judged:
    /// the situations the delivery reached.
    fn note_expected(&mut self, a: usize, sent: usize, local: LocalTime, expected: &[Event]) {
        let name = self.agents[a].name.clone();
        self.reach.on_delivery(
            &mut self.stats.situations,
            a,
            &name,
            local.0,
            &self.facts[sent],
            expected,
        );
        self.reach.on_revision_conflict(
            &mut self.stats.situations,
            &self.facts[sent],
            self.agents[a].oracle(),
        );
    }

    /// The receiver's answer against the delivery rules and the oracle's
    /// events, `first` being the outcome the frame deserves.
    #[allow(clippy::too_many_arguments)]
    fn judge_answer(
        &mut self,
        a: usize,
        sent: usize,
        before: usize,
        redelivered: bool,
        expected: &[Event],
        first: &Outcome,
        reply: &Delivered,
    ) -> Checked {
        let name = self.agents[a].name.clone();
        self.happen(|at| Happening::Deliver {
            at,
            index: sent,
            to: name.clone(),
            outcome: Reported(oracle::first_outcome(&reply.events)),
        });
        // The ACKs sent so far are the run's, noted as they were sent.
        let mut acks = std::mem::take(&mut self.acks);
        let judged = delivery::answered(
            before,
            self.world.len(),
            || {
                oracle::delivery_events(expected, &reply.events, redelivered, self.config.names)
                    .map_err(|m| self.lost_release(a, expected, &reply.events, m))
            },
            first,
            &reply.outgoing,
            &name,
            &mut acks,
        );
        self.acks = acks;
        // The frames sent count as a check once the judgement reached them
        // (past the effects and the events).
        let reached_frames = matches!(judged, Ok(()) | Err(Judged::Sent { .. }));
        if reached_frames && !reply.outgoing.is_empty() {
            self.stats.checks += 1;
        }
        match judged {
            Err(Judged::Effects(breach) | Judged::Sent { breach, .. }) => {
                Err(self.violation(Some(a), breach.into_failure("an answer to deliver")))
            }
            Err(Judged::Events(m)) => Err(self.violation(Some(a), m)),
            Ok(()) => Ok(()),
        }
    }

    /// What the run keeps of a delivery judged sound: the frame stored (for
    /// the agreement check), the view to compare at the end of the step,
    /// and the frame as the last answered (a crash between operations
    /// brings it again).
    fn keep_answered(
        &mut self,
        a: usize,
        frame: &[u8],
        principal: &Principal,
        sent: usize,
        expected: &[Event],
        first: &Outcome,
    ) {
        let thread = expected
            .first()
            .and_then(|e| e.thread.as_ref())
            .map(|t| t.to_string());
        if let Some(thread) = thread {
            if oracle::stores(first) {
                self.agents[a]
                    .stored
                    .entry(thread.clone())
                    .or_default()
                    .insert(frame.to_vec());
            }
            // Views are compared once per step for every (agent, thread) a
            // delivery touched: the same check, without rebuilding a view
            // per delivery.
            self.dirty.insert((a, thread));
        }
        self.agents[a].under_test.answered(frame, principal, sent);
    }
}
