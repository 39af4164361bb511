//! An agent's life in a run: its start-up (with the rule that starting
//! acts on nothing), crashes between operations and inside them, the power
//! a crash cut, restarts when due, and the frames a crash cut redelivered
//! first.

use super::*;

impl Run<'_> {
    /// Starts (or restarts) an agent's implementation on its storage.
    pub(super) fn start(&mut self, a: usize) -> Checked {
        // A crash scheduled for this recovery fires at its next sync.
        let point = self.agents[a].recovery_crash.take();
        let started = self.agents[a].under_test.start(&self.world, point);
        self.count_fell(a);
        match started {
            Err(breach) => {
                Err(self.violation(Some(a), breach.into_failure("the implementation starts")))
            }
            Ok(Came::Crashed) => {
                self.crashed(a, CrashWhen::Recovery);
                Ok(())
            }
            Ok(Came::Answered) => {
                let agent = &mut self.agents[a];
                agent.pipelines = agent
                    .under_test
                    .receiver()
                    .is_some_and(|r| r.identity().claims(Capability::Pipeline));
                agent.down_until = None;
                Ok(())
            }
        }
    }

    /// A crash while agent `a` is idle. Its last answer's acknowledgement
    /// is lost with it, so the sender delivers that frame again.
    pub(super) fn crash_between_operations(&mut self, a: usize, when: CrashWhen) {
        self.agents[a].pending_crash = None;
        self.agents[a].under_test.crash_idle();
        self.count_fell(a);
        self.crashed(a, when);
    }

    /// Counts the moments agent `a`'s calls came to (see [`Fell`](crate::judge::under_test::Fell)).
    pub(super) fn count_fell(&mut self, a: usize) {
        for fell in self.agents[a].under_test.take_fell() {
            self.stats
                .situations
                .reach(Situation::Moment(Moment::of(fell)));
        }
    }

    /// Counts a crash that left agent `a` down, and says when it comes
    /// back.
    pub(super) fn crashed(&mut self, a: usize, when: CrashWhen) {
        self.fault(Fault::Crash);
        self.reach.on_crash(a);
        let agent = &mut self.agents[a];
        agent.down_until = Some(self.now + DOWNTIME_MS);
        let name = agent.name.clone();
        // Over a power-loss state directory, how the crash fell: where in
        // the request, and what it takes (at the restart).
        let cut = agent.storage().cut();
        let at = self.power_notes(a);
        let power = cut.map(|cut| {
            if cut.loss != Loss::Kill {
                self.fault(Fault::PowerLoss);
            }
            PowerCrash { at, loss: cut.loss }
        });
        self.happen(|at| Happening::Fault {
            at,
            agent: name,
            fault: FaultEvent::Crash { when, power },
        });
    }

    /// Counts the situations of what the state directory of agent `a` told
    /// of its crashes since last asked, and says where a crash inside a
    /// request fell (`None` if it did not).
    pub(super) fn power_notes(&mut self, a: usize) -> Option<InRequest> {
        let mut at = None;
        for note in self.agents[a].storage().take_notes() {
            for moment in power_moments(&note) {
                self.stats.situations.reach(Situation::Moment(moment));
            }
            match note {
                PowerNote::Held { op, earlier } => at = Some(InRequest::Held { op, earlier }),
                PowerNote::Answered { last } => at = Some(InRequest::Answered { last }),
                PowerNote::Lost { .. } => {}
            }
        }
        at
    }

    pub(super) fn restart_due(&mut self) -> Checked {
        for a in 0..self.agents.len() {
            if self.agents[a].down_until.is_some_and(|t| t <= self.now) {
                self.restart(a)?;
            }
        }
        Ok(())
    }

    pub(super) fn restart(&mut self, a: usize) -> Checked {
        let name = self.agents[a].name.clone();
        self.happen(|at| Happening::Fault {
            at,
            agent: name,
            fault: FaultEvent::Restart,
        });
        let started = self.start(a);
        // What the power loss of the restart took.
        self.power_notes(a);
        started?;
        // The senders retransmit what was never acknowledged: first the
        // frames whose delivery a crash cut (until they are settled, the
        // receiver may hold what the model does not), then, once the views
        // are compared, the frame whose acknowledgement a crash between
        // operations lost. So a receiver that lost a message it had
        // answered shows it in its view (history), before the redelivery
        // can make it look like a duplicate taken for new.
        let (cut, answered): (Vec<_>, Vec<_>) = self.agents[a]
            .under_test
            .owed()
            .iter()
            .cloned()
            .partition(|u| u.point.is_some());
        self.redeliver(a, cut)?;
        if !answered.is_empty() {
            self.check_views(a)?;
        }
        self.redeliver(a, answered)?;
        self.check_views(a)
    }

    /// Delivers frames again to agent `a`, while it stays up.
    pub(super) fn redeliver(&mut self, a: usize, frames: Vec<Unacked<usize>>) -> Checked {
        for u in frames {
            if !self.agents[a].is_up() {
                break;
            }
            self.deliver_to(a, &u.frame, &u.principal, u.tag, false)?;
        }
        Ok(())
    }
}
