//! Moves and schedules in words, for traces, counterexamples and people.

use super::{Action, AtOp, CrashPoint, Move, Prepared};
use crate::shorthand;

impl Prepared<'_> {
    /// A schedule in words, a move per line.
    pub fn describe_schedule(&self, schedule: &[Move]) -> Vec<String> {
        schedule.iter().map(|&m| self.describe(m)).collect()
    }

    /// A move in words, for traces and people.
    pub fn describe(&self, mv: Move) -> String {
        let crash = |p: Option<CrashPoint>| match p {
            None => String::new(),
            Some(CrashPoint::BeforeSync) => ", crash before it is durable".into(),
            Some(CrashPoint::AfterSync) => ", crash once it is durable".into(),
            Some(CrashPoint::BeforeEffect) => ", crash at the effect, before it".into(),
            Some(CrashPoint::AfterEffect) => ", crash right after the effect".into(),
        };
        let inside = |at: Option<AtOp>| {
            at.map(|a| {
                format!(
                    ", {} at its {} file operation",
                    if a.power { "power loss" } else { "killed" },
                    shorthand::ordinal(usize::from(a.op))
                )
            })
        };
        match mv {
            Move::Deliver {
                action,
                crash: c,
                at_op,
            } => {
                let (frame, _, principal, _) = self.delivery(action);
                format!(
                    "deliver {}{}",
                    shorthand::line(frame, Some(principal.as_str())),
                    inside(at_op).unwrap_or_else(|| crash(c))
                )
            }
            Move::DeliverQuietly { action } => {
                let (frame, _, principal, _) = self.delivery(action);
                format!(
                    "deliver {}, no view asked after it",
                    shorthand::line(frame, Some(principal.as_str()))
                )
            }
            Move::Duplicate { action } => {
                let (frame, _, principal, _) = self.delivery(action);
                format!(
                    "deliver again {}",
                    shorthand::line(frame, Some(principal.as_str()))
                )
            }
            Move::Execute {
                action,
                at,
                crash: c,
                at_op,
            } => match &self.actions[action as usize] {
                Action::Execute {
                    thread,
                    commitment,
                    at: times,
                } => format!(
                    "execute {thread}/{commitment} at {} ms{}",
                    times[at as usize].0,
                    inside(at_op).unwrap_or_else(|| crash(c))
                ),
                Action::Deliver { .. } => unreachable!("an execute move names an execution"),
            },
            Move::CrashIdle => "crash between operations".into(),
            Move::Restart { crash: c, at_op } => format!(
                "restart{}",
                match at_op {
                    Some(k) => format!(
                        ", crash at its {} file operation, losing what the last crash lost",
                        shorthand::ordinal(usize::from(k))
                    ),
                    None => crash(c),
                }
            ),
        }
    }
}
