//! Crash points inside a request: counting the mutating operations and
//! holding the one a harness armed, and every one after it, unanswered and
//! not applied, until the harness decides (power loss, or resume).
//!
//! Holding everything from the crash point on is what makes the crash point
//! exact: the state a power loss starts from is the state just before the
//! held operation, whatever other threads or processes try afterwards.
//! The gate keeps no thread waiting: a held operation is a parked job, so
//! the FUSE thread goes on answering reads and lookups.

use std::fmt;
use std::path::PathBuf;

/// The operations that change what a power loss could leave, and so count
/// as crash points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// `write` to a file.
    Write,
    /// `fsync` of a file.
    Fsync,
    /// `fdatasync` of a file.
    Fdatasync,
    /// `fsync` of a directory.
    Fsyncdir,
    /// `creat`/`open(O_CREAT)` of a new file.
    Create,
    /// `mknod` (a FIFO, a socket, a regular file).
    Mknod,
    /// `mkdir`.
    Mkdir,
    /// `symlink`.
    Symlink,
    /// `link`.
    Link,
    /// `unlink`.
    Unlink,
    /// `rmdir`.
    Rmdir,
    /// `rename`/`renameat2`.
    Rename,
    /// `truncate`/`ftruncate`, or an `O_TRUNC` open of an existing file.
    Truncate,
}

impl OpKind {
    /// The lower-case name of the system call, for reports.
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Write => "write",
            OpKind::Fsync => "fsync",
            OpKind::Fdatasync => "fdatasync",
            OpKind::Fsyncdir => "fsyncdir",
            OpKind::Create => "create",
            OpKind::Mknod => "mknod",
            OpKind::Mkdir => "mkdir",
            OpKind::Symlink => "symlink",
            OpKind::Link => "link",
            OpKind::Unlink => "unlink",
            OpKind::Rmdir => "rmdir",
            OpKind::Rename => "rename",
            OpKind::Truncate => "truncate",
        }
    }
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A mutating operation that is held: not answered, not applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeldOp {
    /// Its number among the mutating operations since the mount (the
    /// first is 1), as [`crate::Mounted::mutating_ops`] counts them.
    pub seq: u64,
    /// What it is.
    pub kind: OpKind,
    /// The path it acts on, relative to the mount root (for a rename or a
    /// link, the source).
    pub path: PathBuf,
    /// The destination of a rename or a link.
    pub to: Option<PathBuf>,
    /// The thread ID of the caller, as the kernel gives it (0 when the
    /// kernel made the request itself).
    pub pid: u32,
}

/// Why [`crate::Mounted::arm`] refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ArmError {
    /// Operations are counted from 1: `arm(1)` holds the next one.
    #[error("arm(0): the next mutating operation is arm(1)")]
    Zero,
    /// A crash point was reached and is not settled yet.
    #[error("an operation is held: call power_loss or resume first")]
    Held,
}

/// What the gate decided for one operation.
pub(crate) enum Admit<J> {
    /// Run it now.
    Run(J),
    /// Parked: it waits for the harness.
    Held,
}

/// How many of the last mutating operations' kinds the gate remembers.
pub(crate) const RECENT: usize = 64;

/// The crash-point state machine, generic over the parked job.
pub(crate) struct Gate<J> {
    seen: u64,
    /// The kinds of the last [`RECENT`] mutating operations, with their
    /// numbers: what a harness reads to tell where in a request a crash
    /// point fell (between two writes, between a write and its sync).
    recent: std::collections::VecDeque<(u64, OpKind)>,
    armed_at: Option<u64>,
    frozen: bool,
    first: Option<HeldOp>,
    held: Vec<(HeldOp, J)>,
}

impl<J> Gate<J> {
    pub(crate) fn new() -> Gate<J> {
        Gate {
            seen: 0,
            recent: std::collections::VecDeque::with_capacity(RECENT),
            armed_at: None,
            frozen: false,
            first: None,
            held: Vec::new(),
        }
    }

    /// Mutating operations seen since the mount, held ones included.
    pub(crate) fn seen(&self) -> u64 {
        self.seen
    }

    /// Holds the `k`-th mutating operation from now (1 is the next one).
    pub(crate) fn arm(&mut self, k: u64) -> Result<(), ArmError> {
        if k == 0 {
            return Err(ArmError::Zero);
        }
        if self.frozen {
            return Err(ArmError::Held);
        }
        self.armed_at = Some(self.seen.saturating_add(k));
        Ok(())
    }

    /// Forgets an armed crash point that was not reached.
    pub(crate) fn disarm(&mut self) {
        self.armed_at = None;
    }

    /// The kinds of the mutating operations numbered after `mark` (a
    /// value of [`Gate::seen`]), oldest first: at most the last
    /// [`RECENT`], held ones included.
    pub(crate) fn kinds_since(&self, mark: u64) -> Vec<OpKind> {
        self.recent
            .iter()
            .filter(|(seq, _)| *seq > mark)
            .map(|(_, kind)| *kind)
            .collect()
    }

    /// Counts one mutating operation of kind `kind` and decides whether it
    /// runs. `describe` is called only for a held one.
    pub(crate) fn admit(
        &mut self,
        kind: OpKind,
        describe: impl FnOnce(u64) -> HeldOp,
        job: J,
    ) -> Admit<J> {
        self.seen += 1;
        if self.recent.len() == RECENT {
            self.recent.pop_front();
        }
        self.recent.push_back((self.seen, kind));
        if !self.frozen && self.armed_at == Some(self.seen) {
            self.frozen = true;
            self.armed_at = None;
        }
        if !self.frozen {
            return Admit::Run(job);
        }
        let op = describe(self.seen);
        if self.first.is_none() {
            self.first = Some(op.clone());
        }
        self.held.push((op, job));
        Admit::Held
    }

    /// The crash point, once reached (it stays reported after its process
    /// died, until power loss or resume).
    pub(crate) fn first(&self) -> Option<&HeldOp> {
        self.first.as_ref()
    }

    /// Every operation still parked, oldest first, and the gate opens
    /// again: nothing armed, nothing held.
    pub(crate) fn take_all(&mut self) -> Vec<(HeldOp, J)> {
        self.frozen = false;
        self.first = None;
        self.armed_at = None;
        std::mem::take(&mut self.held)
    }

    /// The parked operations `pick` chooses, oldest first; the gate stays
    /// closed.
    pub(crate) fn take_where(&mut self, mut pick: impl FnMut(&HeldOp) -> bool) -> Vec<J> {
        let (taken, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut self.held)
            .into_iter()
            .partition(|(op, _)| pick(op));
        self.held = kept;
        taken.into_iter().map(|(_, job)| job).collect()
    }

    /// The callers of the parked operations (0, the kernel, left out).
    pub(crate) fn held_pids(&self) -> Vec<u32> {
        let mut pids: Vec<u32> = self
            .held
            .iter()
            .map(|(op, _)| op.pid)
            .filter(|p| *p != 0)
            .collect();
        pids.sort_unstable();
        pids.dedup();
        pids
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(seq: u64) -> HeldOp {
        HeldOp {
            seq,
            kind: OpKind::Write,
            path: PathBuf::from("f"),
            to: None,
            pid: 7,
        }
    }

    #[test]
    fn holds_the_kth_operation_and_every_one_after() {
        let mut g: Gate<u32> = Gate::new();
        assert!(matches!(g.admit(OpKind::Write, op, 1), Admit::Run(1)));
        g.arm(2).unwrap();
        assert!(matches!(g.admit(OpKind::Write, op, 2), Admit::Run(2)));
        assert!(matches!(g.admit(OpKind::Write, op, 3), Admit::Held));
        assert_eq!(g.first().map(|o| o.seq), Some(3));
        assert!(matches!(g.admit(OpKind::Write, op, 4), Admit::Held));
        assert_eq!(g.arm(1), Err(ArmError::Held));
        assert_eq!(g.seen(), 4);
        let held: Vec<u32> = g.take_all().into_iter().map(|(_, j)| j).collect();
        assert_eq!(held, [3, 4]);
        assert!(matches!(g.admit(OpKind::Write, op, 5), Admit::Run(5)));
    }

    #[test]
    fn a_released_operation_leaves_the_gate_closed() {
        let mut g: Gate<u32> = Gate::new();
        g.arm(1).unwrap();
        assert!(matches!(g.admit(OpKind::Write, op, 1), Admit::Held));
        assert_eq!(g.held_pids(), [7]);
        assert_eq!(g.take_where(|o| o.pid == 7), [1]);
        assert!(g.held_pids().is_empty());
        assert!(matches!(g.admit(OpKind::Write, op, 2), Admit::Held));
        assert_eq!(g.first().map(|o| o.seq), Some(1));
    }

    #[test]
    fn remembers_the_kinds_of_the_last_operations() {
        let mut g: Gate<u32> = Gate::new();
        let _ = g.admit(OpKind::Create, op, 1);
        let mark = g.seen();
        let _ = g.admit(OpKind::Write, op, 2);
        g.arm(2).unwrap();
        let _ = g.admit(OpKind::Write, op, 3);
        let _ = g.admit(OpKind::Fdatasync, op, 4);
        assert_eq!(
            g.kinds_since(mark),
            [OpKind::Write, OpKind::Write, OpKind::Fdatasync]
        );
        for n in 0..(RECENT as u32 + 5) {
            let _ = g.admit(OpKind::Rename, op, n);
        }
        assert_eq!(g.kinds_since(0).len(), RECENT);
    }

    #[test]
    fn arm_zero_and_disarm() {
        let mut g: Gate<u32> = Gate::new();
        assert_eq!(g.arm(0), Err(ArmError::Zero));
        g.arm(1).unwrap();
        g.disarm();
        assert!(matches!(g.admit(OpKind::Write, op, 1), Admit::Run(1)));
    }
}
