//! The rules of a move: which moves are open from a state, and what each
//! does to the subject and to the harness's part of the state. The
//! search, the replay of a schedule and the worker pool all play moves by
//! these rules, so that a move means the same wherever it is played.

use tern_model::ledger::LocalTime;
use tern_model::message::{MessageRef, Principal, ThreadId};

use super::{Action, AtOp, Came, CrashPoint, Failure, Harness, Move, Parsed, Prepared, Subject};

impl Prepared<'_> {
    /// The moves open from a state, in a fixed order.
    pub(super) fn moves(&self, h: &Harness) -> Vec<Move> {
        let mut out = Vec::new();
        let crash_left = h.budget.crashes > 0;
        if !h.up {
            out.push(Move::Restart {
                crash: None,
                at_op: None,
            });
            if crash_left {
                for p in [CrashPoint::BeforeSync, CrashPoint::AfterSync] {
                    out.push(Move::Restart {
                        crash: Some(p),
                        at_op: None,
                    });
                }
            }
            return out;
        }
        for (i, a) in self.actions.iter().enumerate() {
            if h.owed[i] == 0 || h.cut.first().is_some_and(|&c| c as usize != i) {
                continue;
            }
            let action = i as u16;
            match a {
                Action::Deliver { .. } => {
                    if !h.quiet {
                        out.push(Move::Deliver {
                            action,
                            crash: None,
                            at_op: None,
                        });
                    }
                    if crash_left && h.cut.is_empty() && !h.quiet {
                        out.push(Move::DeliverQuietly { action });
                    }
                    if crash_left {
                        for p in [CrashPoint::BeforeSync, CrashPoint::AfterSync] {
                            out.push(Move::Deliver {
                                action,
                                crash: Some(p),
                                at_op: None,
                            });
                        }
                    }
                }
                Action::Execute { at, .. } => {
                    for t in 0..at.len().min(u8::MAX as usize) as u8 {
                        if !h.quiet {
                            out.push(Move::Execute {
                                action,
                                at: t,
                                crash: None,
                                at_op: None,
                            });
                        }
                        if crash_left {
                            for p in [CrashPoint::BeforeEffect, CrashPoint::AfterEffect] {
                                out.push(Move::Execute {
                                    action,
                                    at: t,
                                    crash: Some(p),
                                    at_op: None,
                                });
                            }
                        }
                    }
                }
            }
        }
        if !h.cut.is_empty() {
            return out;
        }
        if h.budget.duplicates > 0 && !h.quiet {
            out.extend(h.answered.iter().map(|&action| Move::Duplicate { action }));
        }
        if crash_left && !h.fresh {
            out.push(Move::CrashIdle);
        }
        out
    }

    pub(super) fn delivery(&self, action: u16) -> (&[u8], &Parsed, &Principal, LocalTime) {
        match (
            &self.actions[action as usize],
            &self.parsed[action as usize],
        ) {
            (
                Action::Deliver {
                    frame,
                    principal,
                    at,
                },
                Some(parsed),
            ) => (frame, parsed, principal, *at),
            _ => unreachable!("a delivery move names a delivery"),
        }
    }

    /// The execution `action` names, asked at its `at`-th clock value: the
    /// thread, the commitment and the time.
    pub(super) fn execution(&self, action: u16, at: u8) -> (&ThreadId, &MessageRef, LocalTime) {
        match &self.actions[action as usize] {
            Action::Execute {
                thread,
                commitment,
                at: times,
            } => (thread, commitment, times[at as usize]),
            Action::Deliver { .. } => unreachable!("an execute move names an execution"),
        }
    }

    /// Plays one move on `subject`, updating `h`; then compares views.
    pub(super) fn play(
        &self,
        subject: &mut Subject,
        h: &mut Harness,
        mv: Move,
    ) -> Result<(), Failure> {
        h.fresh = false;
        h.quiet = false;
        match mv {
            Move::DeliverQuietly { action } => {
                let (frame, parsed, principal, at) = self.delivery(action);
                h.owed[action as usize] -= 1;
                subject.deliver(frame, parsed, principal, at, None)?;
                h.answered.insert(action);
                h.quiet = true;
                // The oracle's views are kept for the state, the
                // receiver's are not asked.
                return subject.check_views(false);
            }
            Move::Deliver {
                action,
                crash,
                at_op,
            } => {
                let (frame, parsed, principal, at) = self.delivery(action);
                h.owed[action as usize] -= 1;
                if crash.is_some() {
                    h.budget.crashes -= 1;
                    subject.set_cut(AtOp::cut(at_op));
                }
                match subject.deliver(frame, parsed, principal, at, crash)? {
                    Came::Answered => {
                        // A crash point the delivery never reached (a
                        // frame rejected before any write) crashed nothing.
                        if crash.is_some() {
                            h.budget.crashes += 1;
                        }
                        h.answered.insert(action);
                        h.cut.retain(|&c| c != action);
                    }
                    Came::Crashed => {
                        h.owed[action as usize] += 1;
                        h.up = false;
                        if !h.cut.contains(&action) {
                            h.cut.push(action);
                        }
                    }
                }
            }
            Move::Duplicate { action } => {
                let (frame, parsed, principal, at) = self.delivery(action);
                h.budget.duplicates -= 1;
                subject.deliver(frame, parsed, principal, at, None)?;
            }
            Move::Execute {
                action,
                at,
                crash,
                at_op,
            } => {
                let (thread, commitment, now) = self.execution(action, at);
                h.owed[action as usize] -= 1;
                if crash.is_some() {
                    h.budget.crashes -= 1;
                    subject.set_cut(AtOp::cut(at_op));
                }
                match subject.execute(thread, commitment, now, crash)? {
                    Came::Crashed => {
                        // Asked again once the receiver is back.
                        h.owed[action as usize] += 1;
                        h.up = false;
                    }
                    // No effect reached: the crash point was never hit.
                    Came::Answered if crash.is_some() => h.budget.crashes += 1,
                    Came::Answered => {}
                }
            }
            Move::CrashIdle => {
                h.budget.crashes -= 1;
                subject.set_cut(AtOp::cut(None));
                h.up = false;
                if let Some(lost) = subject.crash_idle() {
                    let i = self.actions.iter().position(|a| {
                        matches!(a, Action::Deliver { frame, principal, .. }
                            if **frame == *lost.frame && *principal == lost.principal)
                    });
                    if let Some(i) = i {
                        h.owed[i] += 1;
                    }
                }
            }
            Move::Restart { crash, at_op } => {
                if crash.is_some() {
                    h.budget.crashes -= 1;
                    subject.set_recovery_crash_op(at_op);
                }
                h.fresh = true;
                h.up = subject.restart(crash)? == Came::Answered;
                if h.up && crash.is_some() {
                    h.budget.crashes += 1;
                }
            }
        }
        subject.check_views(h.cut.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::Corpus;
    use crate::explore::builtin;
    use crate::explore::scope::Scope;
    use crate::implementations::reference::ReferenceImpl;
    use crate::judge::compare::RejectNames;

    /// A COMMIT, its request and an ask to execute it, with one crash.
    fn scope() -> Scope {
        let scenarios = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
        let corpus = Corpus::load(&scenarios).expect("the corpus loads");
        let scope =
            builtin::by_name("commit-execute-crash", Some(&corpus)).expect("a built-in scope");
        assert!(scope.budget.crashes > 0, "the tests need a crash budget");
        scope
    }

    fn crashes(m: &Move) -> bool {
        match *m {
            Move::Deliver { crash, .. }
            | Move::Execute { crash, .. }
            | Move::Restart { crash, .. } => crash.is_some(),
            Move::DeliverQuietly { .. } | Move::CrashIdle => true,
            Move::Duplicate { .. } => false,
        }
    }

    fn action_of(m: &Move) -> Option<u16> {
        match *m {
            Move::Deliver { action, .. }
            | Move::Execute { action, .. }
            | Move::DeliverQuietly { action }
            | Move::Duplicate { action } => Some(action),
            Move::CrashIdle | Move::Restart { .. } => None,
        }
    }

    #[test]
    fn a_fresh_receiver_is_offered_each_owed_action_plain_quiet_and_crashed() {
        let scope = scope();
        let p = Prepared::new(&scope, true);
        let h = p.root();
        let moves = p.moves(&h);
        // Nothing happened yet: a crash between operations is pointless,
        // there is nothing to duplicate, and nothing to restart.
        assert!(!moves.iter().any(|m| matches!(
            m,
            Move::CrashIdle | Move::Duplicate { .. } | Move::Restart { .. }
        )));
        for (i, a) in p.actions.iter().enumerate() {
            let of = |m: &&Move| action_of(m) == Some(i as u16);
            let n = moves.iter().filter(of).count();
            match a {
                Action::Deliver { .. } => {
                    assert_eq!(n, 4, "plain, quiet, before and after sync: {moves:?}")
                }
                Action::Execute { at, .. } => assert_eq!(n, 3 * at.len(), "{moves:?}"),
            }
        }
    }

    #[test]
    fn with_no_crash_left_no_move_crashes_and_a_receiver_that_is_down_only_restarts() {
        let scope = scope();
        let p = Prepared::new(&scope, true);
        let mut h = p.root();
        h.budget.crashes = 0;
        let moves = p.moves(&h);
        assert!(!moves.is_empty() && !moves.iter().any(crashes), "{moves:?}");

        h.up = false;
        assert_eq!(
            p.moves(&h),
            [Move::Restart {
                crash: None,
                at_op: None
            }]
        );
        h.budget.crashes = 1;
        let restarts = p.moves(&h);
        assert_eq!(restarts.len(), 3, "{restarts:?}");
        assert!(restarts.iter().all(|m| matches!(m, Move::Restart { .. })));
    }

    #[test]
    fn a_quiet_delivery_is_followed_by_a_crash_and_a_cut_delivery_goes_first() {
        let scope = scope();
        let p = Prepared::new(&scope, true);
        let mut h = p.root();
        h.fresh = false;
        h.quiet = true;
        let moves = p.moves(&h);
        assert!(!moves.is_empty() && moves.iter().all(crashes), "{moves:?}");

        let mut h = p.root();
        h.cut = vec![1];
        let moves = p.moves(&h);
        assert!(!moves.is_empty(), "the cut delivery is owed");
        assert!(moves.iter().all(|m| action_of(m) == Some(1)), "{moves:?}");
    }

    /// A delivery cut before its sync leaves the receiver down, the frame
    /// owed again and first in line, and the crash spent; the restart
    /// brings it back fresh.
    #[test]
    fn a_crashed_delivery_is_owed_again_and_goes_first_after_the_restart() {
        let scope = scope();
        let p = Prepared::new(&scope, true);
        let (mut subject, mut h) = p
            .replayed(&ReferenceImpl, RejectNames::Compared, &[])
            .expect("the reference starts");
        let owed = h.owed.clone();
        let crashes = h.budget.crashes;
        let action = p
            .actions
            .iter()
            .position(|a| matches!(a, Action::Deliver { .. }))
            .expect("a delivery") as u16;
        let cut = Move::Deliver {
            action,
            crash: Some(CrashPoint::BeforeSync),
            at_op: None,
        };
        p.play(&mut subject, &mut h, cut)
            .expect("the reference crashes as told");
        assert!(!h.up);
        assert_eq!(h.cut, [action]);
        assert_eq!(h.owed, owed);
        assert_eq!(h.budget.crashes, crashes - 1);

        let restart = Move::Restart {
            crash: None,
            at_op: None,
        };
        p.play(&mut subject, &mut h, restart)
            .expect("the reference restarts");
        assert!(h.up && h.fresh);
        let moves = p.moves(&h);
        assert!(
            moves.iter().all(|m| action_of(m) == Some(action)),
            "{moves:?}"
        );

        let again = Move::Deliver {
            action,
            crash: None,
            at_op: None,
        };
        p.play(&mut subject, &mut h, again)
            .expect("the reference answers");
        assert!(h.cut.is_empty() && h.answered.contains(&action));
        assert_eq!(h.owed[action as usize], owed[action as usize] - 1);
    }
}
