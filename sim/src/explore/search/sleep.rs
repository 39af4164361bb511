//! Sleep sets: which deliveries commute from a state, by the oracle, and
//! what a state met again by another order must still play. The one part
//! of the search that rests on an assumption about the implementation
//! (docs/explore.md §3), kept apart so that it reads as one argument.

use std::collections::HashMap;

use tern_model::ledger::{Event, Execution, Ledger};
use tern_model::message::ThreadId;

use super::{Harness, KeptOracle, Move, Node, Prepared};

/// What the search remembers of a state it expanded, for when it meets
/// it again by another schedule.
pub(super) struct Expanded {
    /// The moves it left out; meeting the state with a sleep set that
    /// lacks some of them means those must be played after all.
    pub(super) sleep: Vec<Move>,
    /// The layer it was put in and its place there: while that layer is
    /// the next, it is not expanded yet.
    pub(super) pending: (usize, usize),
    pub(super) schedule: Vec<Move>,
    pub(super) harness: Harness,
    pub(super) oracle: Option<KeptOracle>,
}

impl Expanded {
    /// The state met again, by a schedule whose sleep set is `sleep`. The
    /// moves it left out that this schedule does not must be played from
    /// it after all: at once if it is still waiting in the next layer
    /// (`layer` is that layer's number), else by a node of its own that
    /// plays only those.
    pub(super) fn meet(&mut self, sleep: &[Move], layer: usize, next: &mut Vec<Node>) {
        let missing: Vec<Move> = self
            .sleep
            .iter()
            .copied()
            .filter(|m| !sleep.contains(m))
            .collect();
        if missing.is_empty() {
            return;
        }
        self.sleep.retain(|m| sleep.contains(m));
        match self.pending {
            (l, index) if l == layer => next[index].sleep.clone_from(&self.sleep),
            _ => next.push(Node {
                schedule: self.schedule.clone(),
                harness: self.harness.clone(),
                sleep: self.sleep.clone(),
                oracle: self.oracle.clone(),
                only: Some(missing),
                twin: false,
                origin: None,
            }),
        }
    }
}

/// Pairs of deliveries weighed, by the views of the oracle they were
/// weighed from: the same oracle is met again in many states (those that
/// differ only in what the receiver holds, or in a crash the oracle does
/// not see), and weighing a pair costs four deliveries and two views.
#[derive(Default)]
pub(super) struct Weighed(HashMap<(u128, u16, u16), bool>);

impl Prepared<'_> {
    /// Whether `a` and `b` commute from the state `h`, whose oracle is
    /// `oracle`: both plain deliveries of different frames, no crash left
    /// to tell which was answered last (a crash between operations loses
    /// the last acknowledgement), and the oracle gives each the same events
    /// in either order and the same views after both. A conforming
    /// receiver then ends in the same state either way; the assumption is
    /// that the implementation under test does too (docs/explore.md §3).
    ///
    /// The oracle is named by its views (as the state key names it), so
    /// that a pair weighed from one oracle is not weighed again from an
    /// oracle with the same views: `weighed` keeps the answers.
    pub(super) fn commute(
        &self,
        oracle: &KeptOracle,
        h: &Harness,
        a: Move,
        b: Move,
        weighed: &mut Weighed,
    ) -> bool {
        let (
            Move::Deliver {
                action: x,
                crash: None,
                at_op: None,
            },
            Move::Deliver {
                action: y,
                crash: None,
                at_op: None,
            },
        ) = (a, b)
        else {
            return false;
        };
        if x == y || h.budget.crashes > 0 || !h.cut.is_empty() {
            return false;
        }
        // A frame that does not parse changes nothing but the count of
        // deliveries, which only an event's number shows (and `said`
        // leaves out): it commutes with every delivery. Debug builds (the
        // tests) weigh it all the same, so that a ledger that came to keep
        // something of such a frame cannot hide behind this shortcut.
        if self.delivery(x).1.is_err() || self.delivery(y).1.is_err() {
            debug_assert!(
                self.weigh(&oracle.ledger, x, y),
                "an unparsable frame did not commute"
            );
            return true;
        }
        let KeptOracle {
            ledger: oracle,
            views,
        } = oracle;
        let pair = (*views, x.min(y), x.max(y));
        if let Some(&kept) = weighed.0.get(&pair) {
            // Debug builds (the tests) weigh it again: an oracle whose views
            // do not tell all that weighing reads cannot hide.
            debug_assert_eq!(kept, self.weigh(oracle, x, y), "a pair weighed again");
            return kept;
        }
        let commute = self.weigh(oracle, x, y);
        weighed.0.insert(pair, commute);
        commute
    }

    /// Whether deliveries `x` and `y` commute from `oracle`, weighed by
    /// delivering both in either order to copies of it.
    fn weigh(&self, oracle: &Ledger, x: u16, y: u16) -> bool {
        let deliver = |ledger: &mut Ledger, action: u16| -> Vec<Gist> {
            let (_, parsed, principal, at) = self.delivery(action);
            ledger
                .deliver_shared(parsed.clone(), principal, at)
                .iter()
                .map(gist)
                .collect()
        };
        let (mut xy, mut yx) = (oracle.clone(), oracle.clone());
        let (x1, y1) = (deliver(&mut xy, x), deliver(&mut xy, y));
        let (y2, x2) = (deliver(&mut yx, y), deliver(&mut yx, x));
        x1 == x2
            && y1 == y2
            && self
                .threads
                .iter()
                .all(|t| xy.view_digest(t) == yx.view_digest(t))
    }
}

impl Prepared<'_> {
    /// Whether `mv` is an execution with a crash at its effect that the
    /// oracle refuses from the state `h`, whose oracle is `oracle`, while
    /// the same execution without a crash is played from it too. A
    /// receiver that refuses never reaches the effect the crash waits for,
    /// so the move comes to what the plain execution comes to, and a
    /// receiver that acts is caught by the plain execution, at the same
    /// depth.
    pub(super) fn crash_never_reached(&self, oracle: &KeptOracle, h: &Harness, mv: Move) -> bool {
        let Move::Execute {
            action,
            at,
            crash: Some(_),
            at_op: None,
        } = mv
        else {
            return false;
        };
        let (thread, commitment, now) = self.execution(action, at);
        !h.quiet
            && matches!(
                oracle.ledger.would_execute(thread, commitment, now),
                Execution::Refused(_)
            )
    }
}

/// What an event says, without the delivery number it came from (which
/// the order of deliveries changes).
type Gist = (
    tern_model::ledger::EventKind,
    Option<tern_model::message::MessageRef>,
    Option<ThreadId>,
    tern_model::ledger::Outcome,
);

fn gist(e: &Event) -> Gist {
    (e.kind, e.id.clone(), e.thread.clone(), e.outcome.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::storage::CrashPoint;
    use crate::corpus::Corpus;
    use crate::explore::builtin;
    use crate::explore::scope::{Action, Scope};
    use crate::implementations::reference::ReferenceImpl;
    use crate::judge::compare::RejectNames;

    fn scope_named(name: &str) -> Scope {
        let scenarios = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
        let corpus = Corpus::load(&scenarios).expect("the corpus loads");
        builtin::by_name(name, Some(&corpus)).expect("a built-in scope")
    }

    /// alice's REQUEST, bob's COMMIT to it, and an ask to execute it.
    fn scope() -> Scope {
        scope_named("commit-execute-crash")
    }

    /// The deliveries of `p`, in order.
    fn deliveries(p: &Prepared) -> Vec<u16> {
        p.actions
            .iter()
            .enumerate()
            .filter(|(_, a)| matches!(a, Action::Deliver { .. }))
            .map(|(i, _)| i as u16)
            .collect()
    }

    fn deliver(action: u16) -> Move {
        Move::Deliver {
            action,
            crash: None,
            at_op: None,
        }
    }

    /// A COMMIT before its REQUEST is pending and released by it; after
    /// it, both are simply accepted: the events differ, so the two orders
    /// are both explored. And nothing commutes while a crash could still
    /// tell which frame was answered last.
    #[test]
    fn a_commit_and_its_request_do_not_commute_and_nothing_does_with_a_crash_left() {
        let scope = scope();
        let p = Prepared::new(&scope, true);
        let [request, commit] = deliveries(&p)[..] else {
            panic!("two deliveries")
        };
        let (subject, mut h) = p
            .replayed(&ReferenceImpl, RejectNames::Compared, &[])
            .expect("the reference starts");
        let oracle = KeptOracle::of(&subject);
        let mut weighed = Weighed::default();
        assert!(h.budget.crashes > 0);
        assert!(!p.commute(&oracle, &h, deliver(request), deliver(commit), &mut weighed));
        assert!(weighed.0.is_empty(), "not weighed at all with a crash left");

        h.budget.crashes = 0;
        assert!(!p.commute(&oracle, &h, deliver(request), deliver(commit), &mut weighed));
        assert_eq!(weighed.0.len(), 1, "weighed once, and kept");
        assert!(!p.commute(&oracle, &h, deliver(commit), deliver(request), &mut weighed));
        assert_eq!(
            weighed.0.len(),
            1,
            "the pair in the other order is the same pair"
        );
        assert!(!p.commute(
            &oracle,
            &h,
            deliver(request),
            deliver(request),
            &mut weighed
        ));
        let crashed = Move::Deliver {
            action: commit,
            crash: Some(CrashPoint::AfterSync),
            at_op: None,
        };
        assert!(!p.commute(&oracle, &h, deliver(request), crashed, &mut weighed));
    }

    /// bob's REPORT on bob:1, bob's COMMIT bob:1 to alice:1, and alice's
    /// REQUEST alice:1: the REPORT waits for the COMMIT whichever comes
    /// first of it and either other frame, but the COMMIT is released by
    /// the REQUEST only when it came first.
    #[test]
    fn frames_that_leave_each_other_as_they_were_commute() {
        let scope = scope_named("pending-chain");
        let p = Prepared::new(&scope, true);
        let [report, commit, request] = deliveries(&p)[..] else {
            panic!("three deliveries")
        };
        let (subject, mut h) = p
            .replayed(&ReferenceImpl, RejectNames::Compared, &[])
            .expect("the reference starts");
        h.budget.crashes = 0;
        let oracle = KeptOracle::of(&subject);
        let mut weighed = Weighed::default();
        let mut commute = |x, y| p.commute(&oracle, &h, deliver(x), deliver(y), &mut weighed);
        assert!(commute(report, commit));
        assert!(commute(report, request));
        assert!(!commute(commit, request));
    }

    /// A state met again by a schedule that sleeps on fewer moves must
    /// play the ones only its first schedule slept on.
    #[test]
    fn a_state_met_again_plays_what_the_new_schedule_does_not_sleep_on() {
        let scope = scope();
        let p = Prepared::new(&scope, true);
        let (a, b, c) = (deliver(0), deliver(1), Move::CrashIdle);
        let mut expanded = Expanded {
            sleep: vec![a, b],
            pending: (3, 0),
            schedule: vec![c],
            harness: p.root(),
            oracle: None,
        };
        let mut next = Vec::new();
        expanded.meet(&[a, b, c], 4, &mut next);
        assert!(
            next.is_empty(),
            "it sleeps on at least as much: nothing to add"
        );
        assert_eq!(expanded.sleep, [a, b]);

        expanded.meet(&[a], 4, &mut next);
        assert_eq!(next.len(), 1);
        assert_eq!(next[0].only.as_deref(), Some(&[b][..]));
        assert_eq!(next[0].schedule, [c]);
        assert_eq!(expanded.sleep, [a]);

        // Still waiting in the next layer: its own node sleeps on less.
        let mut waiting = next;
        expanded.sleep = vec![a, b];
        waiting[0].sleep = vec![a, b];
        expanded.pending = (5, 0);
        expanded.meet(&[b], 5, &mut waiting);
        assert_eq!(waiting.len(), 1);
        assert_eq!(waiting[0].sleep, [b]);
    }
}
