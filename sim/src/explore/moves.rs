//! The moves of a schedule, and where a crash inside a request can fall:
//! what a schedule is made of, apart from how the search walks them.

use crate::contract::storage::{CrashPoint, FileOp, Loss, PowerCut};

/// One move of a schedule. Actions are named by their index among the
/// scope's distinct actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Move {
    /// A delivery of a frame still owed, cut by `crash` if set: at one of
    /// its file operations (`at_op`) over a power-loss state directory.
    Deliver {
        action: u16,
        crash: Option<CrashPoint>,
        at_op: Option<AtOp>,
    },
    /// An ask to execute, at the action's clock value `at`.
    Execute {
        action: u16,
        at: u8,
        crash: Option<CrashPoint>,
        at_op: Option<AtOp>,
    },
    /// A delivery with no view asked after it, so that the crash that must
    /// come next finds whatever the receiver left undone once it answered.
    DeliverQuietly { action: u16 },
    /// A frame delivered again after it was answered.
    Duplicate { action: u16 },
    /// A crash between operations.
    CrashIdle,
    /// A start after a crash, cut at its first sync by `crash` if set, or
    /// at its `at_op`-th file operation over a power-loss state directory
    /// (a crash that takes what the crash it recovers from took).
    Restart {
        crash: Option<CrashPoint>,
        at_op: Option<u8>,
    },
}

impl Move {
    /// The move with the same crash point, not at a file operation: the
    /// one [`Prepared::moves`] offers.
    pub(crate) fn at_its_point(self) -> Move {
        match self {
            Move::Deliver { action, crash, .. } => Move::Deliver {
                action,
                crash,
                at_op: None,
            },
            Move::Execute {
                action, at, crash, ..
            } => Move::Execute {
                action,
                at,
                crash,
                at_op: None,
            },
            Move::Restart { crash, .. } => Move::Restart { crash, at_op: None },
            m => m,
        }
    }

    /// Whether what this move leads to depends on the last frame the
    /// receiver answered, beyond the rest of the state: a crash between
    /// operations loses that frame's acknowledgement, and an execution
    /// answered leaves it the last. Every other move answers a frame of its
    /// own, which is then the last, or crashes, which leaves none; a
    /// restart comes only after a crash.
    pub(crate) fn reads_last_answered(self) -> bool {
        matches!(self, Move::CrashIdle | Move::Execute { .. })
    }

    /// This plain move crashed at `at` inside its request: a delivery
    /// before its record is durable, an execution before its effect, a
    /// recovery before it is done (which takes what the crash it recovers
    /// from took).
    pub(crate) fn crashed_inside(self, at: AtOp) -> Option<Move> {
        match self {
            Move::Deliver {
                action,
                crash: None,
                at_op: None,
            } => Some(Move::Deliver {
                action,
                crash: Some(CrashPoint::BeforeSync),
                at_op: Some(at),
            }),
            Move::Execute {
                action,
                at: t,
                crash: None,
                at_op: None,
            } => Some(Move::Execute {
                action,
                at: t,
                crash: Some(CrashPoint::BeforeEffect),
                at_op: Some(at),
            }),
            Move::Restart {
                crash: None,
                at_op: None,
            } => Some(Move::Restart {
                crash: Some(CrashPoint::BeforeSync),
                at_op: Some(at.op),
            }),
            _ => None,
        }
    }
}

/// A crash inside a request over a power-loss state directory, at the
/// request's `op`-th mutating file operation (counted from 1), which the
/// file system holds while the process is killed. With `power` the
/// machine loses its power then, and what was not synced is gone; else
/// the process is killed and every write that returned stays, a partial
/// record among them. Moves with a crash but no `AtOp` are power losses
/// over such a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AtOp {
    pub op: u8,
    pub power: bool,
}

impl AtOp {
    /// The cut the state directory makes for a crash `at` (`None`: at a
    /// point between file operations), over a power-loss state directory.
    pub fn cut(at: Option<AtOp>) -> PowerCut {
        match at {
            None => PowerCut {
                loss: Loss::Power,
                at_op: None,
            },
            Some(a) => PowerCut {
                loss: if a.power { Loss::Power } else { Loss::Kill },
                at_op: Some(a.op),
            },
        }
    }
}

/// The crashes inside a request that made the file operations `ops`
/// (oldest first), one at each from the second: a power loss where the
/// operation before it is a sync (it drops less than one earlier would),
/// a kill elsewhere (a kill keeps what every operation but a sync did, so
/// a kill after a sync leaves what a kill before it leaves). At the first
/// operation nothing of the request is done yet: that is the crash before
/// the request is durable, a move of its own, as is a crash after the
/// last operation.
pub fn inside_points(ops: &[FileOp]) -> Vec<AtOp> {
    (1..ops.len().min(u8::MAX as usize))
        .map(|i| AtOp {
            op: i as u8 + 1,
            power: matches!(ops[i - 1], FileOp::Sync | FileOp::SyncDir),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_crashed_inside_at_each_operation_from_the_second() {
        use FileOp::*;
        let kill = |op| AtOp { op, power: false };
        let power = |op| AtOp { op, power: true };
        // A record appended and synced: a kill with the first write kept,
        // and one with both (a power loss there drops as much as one
        // before the request).
        assert_eq!(inside_points(&[Write, Write, Sync]), vec![kill(2), kill(3)]);
        // A log written afresh: after the new file's sync, a power loss
        // keeps the synced data and loses the rename.
        assert_eq!(
            inside_points(&[Create, Write, Sync, Rename, SyncDir]),
            vec![kill(2), kill(3), power(4), kill(5)]
        );
        assert_eq!(inside_points(&[Write]), vec![]);
        assert_eq!(inside_points(&[]), vec![]);
    }

    #[test]
    fn a_crash_inside_is_offered_only_for_a_plain_move_and_replays_at_its_point() {
        let at = AtOp {
            op: 2,
            power: false,
        };
        let plain = Move::Deliver {
            action: 1,
            crash: None,
            at_op: None,
        };
        let inside = plain.crashed_inside(at).unwrap();
        assert_eq!(
            inside,
            Move::Deliver {
                action: 1,
                crash: Some(CrashPoint::BeforeSync),
                at_op: Some(at),
            }
        );
        assert_eq!(
            inside.at_its_point(),
            Move::Deliver {
                action: 1,
                crash: Some(CrashPoint::BeforeSync),
                at_op: None,
            }
        );
        assert_eq!(inside.crashed_inside(at), None);
        assert_eq!(Move::CrashIdle.crashed_inside(at), None);
        assert_eq!(
            Move::Restart {
                crash: None,
                at_op: None
            }
            .crashed_inside(at),
            Some(Move::Restart {
                crash: Some(CrashPoint::BeforeSync),
                at_op: Some(2),
            })
        );
        assert_eq!(AtOp::cut(Some(at)).loss, Loss::Kill);
        assert_eq!(AtOp::cut(None).loss, Loss::Power);
    }
}
