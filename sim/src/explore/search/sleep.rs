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
        let deliver = |ledger: &mut Ledger, action: u16| -> Vec<Said> {
            let (_, parsed, principal, at) = self.delivery(action);
            ledger
                .deliver_shared(parsed.clone(), principal, at)
                .iter()
                .map(said)
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
type Said = (
    tern_model::ledger::EventKind,
    Option<tern_model::message::MessageRef>,
    Option<ThreadId>,
    tern_model::ledger::Outcome,
);

fn said(e: &Event) -> Said {
    (e.kind, e.id.clone(), e.thread.clone(), e.outcome.clone())
}
