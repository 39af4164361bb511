//! Simulated durable storage: an append-only record log per agent, where
//! what was not synced is lost on a crash.

use std::any::Any;
use std::cell::RefCell;
use std::hash::{Hash, Hasher};
use std::rc::Rc;

use crate::contract::error::ImplError;

/// Where a scheduled crash fires, relative to storage and the world.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CrashPoint {
    /// At the next sync, before anything pending becomes durable.
    BeforeSync,
    /// At the next sync, once the pending records are durable.
    AfterSync,
    /// Right after the next effect is performed, before it can be reported.
    AfterEffect,
    /// At the next effect, before it happens: whatever the receiver made
    /// durable first (its intent) survives, and the world never sees the
    /// effect. On restart a receiver must reconcile, not assume it was done.
    BeforeEffect,
}

impl CrashPoint {
    /// The crash point's name, as traces and the shorthand print it
    /// (docs/simulator.md).
    pub fn name(self) -> &'static str {
        match self {
            CrashPoint::BeforeSync => "BeforeSync",
            CrashPoint::AfterSync => "AfterSync",
            CrashPoint::AfterEffect => "AfterEffect",
            CrashPoint::BeforeEffect => "BeforeEffect",
        }
    }
}

/// How much a crash takes of what the implementation had not made
/// durable. In tern-sim's own process storage is simulated and a crash
/// always drops what was not synced; over the protocol, with the state
/// directory on tern-statefs (docs/statefs.md), each crash is one of these,
/// drawn from the run's seed and written in its trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Loss {
    /// The process is killed; the kernel keeps every write that returned.
    Kill,
    /// A power loss: every change that was not durable is gone.
    Power,
    /// A power loss that keeps, of each file, a prefix of its unsynced
    /// writes cut at a byte the seed picks: a torn write.
    Torn(u64),
}

impl Loss {
    /// For people: how the crash ended the process.
    pub fn describe(self) -> String {
        match self {
            Loss::Kill => "killed; the kernel keeps every write that returned".into(),
            Loss::Power => "power loss; what was not synced is gone".into(),
            Loss::Torn(seed) => {
                format!("power loss, torn (seed {seed}); of what was not synced, a prefix of each file stays")
            }
        }
    }
}

/// How a crash over a power-loss state directory falls: how much it takes,
/// and, for a crash inside a request, at which of the request's mutating
/// file operations (write, sync, create, rename, unlink, truncate; counted
/// from 1). A request that makes fewer is crashed right after it answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct PowerCut {
    pub loss: Loss,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_op: Option<u8>,
}

/// A mutating file operation, as an implementation's state directory saw
/// it: what a crash point inside a request is told by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileOp {
    Write,
    /// `fsync` or `fdatasync` of a file.
    Sync,
    /// `fsync` of a directory.
    SyncDir,
    Create,
    Rename,
    /// `unlink`, `rmdir`.
    Remove,
    Truncate,
    /// `mkdir`, `mknod`, `link`, `symlink`.
    Other,
}

impl FileOp {
    pub fn name(self) -> &'static str {
        match self {
            FileOp::Write => "write",
            FileOp::Sync => "sync",
            FileOp::SyncDir => "directory sync",
            FileOp::Create => "create",
            FileOp::Rename => "rename",
            FileOp::Remove => "unlink",
            FileOp::Truncate => "truncate",
            FileOp::Other => "other",
        }
    }
}

/// What a crash over a power-loss state directory did, for the situations
/// a run counts and the story it tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PowerNote {
    /// The crash fell at a held operation of a request: `op`, after
    /// `earlier` operations of the same request.
    Held { op: FileOp, earlier: Vec<FileOp> },
    /// The request made fewer operations than the crash point: it answered,
    /// and the crash fell before tern-sim took the answer. `last` is the
    /// request's last operation.
    Answered { last: Option<FileOp> },
    /// A power loss was made on the state directory: whether it dropped
    /// unsynced data, and whether it kept a torn part of a write.
    Lost { dropped_data: bool, torn: bool },
}

#[derive(Debug, Clone, Default)]
struct Inner {
    /// Distinguishes storages: a subprocess keeps each in a folder of its own.
    id: u64,
    durable: Vec<Vec<u8>>,
    pending: Vec<Vec<u8>>,
    armed: Option<CrashPoint>,
    fired: bool,
    /// Oldest first, at most [`KEPT_CHECKPOINTS`].
    checkpoints: Vec<Checkpoint>,
    /// How the agent's crashes fall over a power-loss state directory: set
    /// by the harness at each crash step, read by the subprocess adapter.
    cut: Option<PowerCut>,
    /// What the adapter saw of the crashes, until the harness takes it.
    notes: Vec<PowerNote>,
}

/// How many checkpoints a storage keeps. A checkpoint stops holding once
/// the world performs an effect its recovery had found not performed
/// (the replay from the start would now decide that intent otherwise);
/// with only the latest kept, each such effect made the next restart
/// replay the whole history, and a long run with crashes cost about the
/// square of its length. With a few kept, the restart resumes from the
/// latest that still holds: one made before that intent was decided.
const KEPT_CHECKPOINTS: usize = 8;

/// What a receiver rebuilt from the first `records` durable records, kept
/// beside the log so that its next start replays only the records after
/// them: without it, every restart replays the whole history, and a long
/// run with crashes costs the square of its length. It stands for a
/// snapshot file written atomically once those records are durable; the
/// crash schedule does not reach it (crash points fire at the log's
/// syncs and at effects, as before), and only the in-process reference
/// keeps one.
#[derive(Debug, Clone)]
pub struct Checkpoint {
    pub records: usize,
    pub state: Rc<dyn Any>,
}

/// A handle on one agent's storage, shared by the harness and the receiver.
#[derive(Debug, Clone, Default)]
pub struct Storage(Rc<RefCell<Inner>>);

impl Storage {
    pub fn new() -> Storage {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let s = Storage::default();
        s.0.borrow_mut().id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        s
    }

    pub fn id(&self) -> u64 {
        self.0.borrow().id
    }

    /// A copy that shares nothing with this storage: its records,
    /// checkpoints and crash schedule, under an ID of its own. The
    /// explorer forks a state this way instead of replaying its schedule
    /// from a fresh start ([`crate::contract::plugin::Receiver::fork`]).
    pub fn fork(&self) -> Storage {
        let copy = Storage::new();
        let id = copy.id();
        *copy.0.borrow_mut() = Inner {
            id,
            ..self.0.borrow().clone()
        };
        copy
    }

    /// Appends a record; it survives a crash only once synced.
    pub fn append(&self, record: Vec<u8>) -> Result<(), ImplError> {
        let mut inner = self.0.borrow_mut();
        if inner.fired {
            return Err(ImplError::Crashed);
        }
        inner.pending.push(record);
        Ok(())
    }

    /// Makes every appended record durable.
    pub fn sync(&self) -> Result<(), ImplError> {
        let mut inner = self.0.borrow_mut();
        if inner.fired {
            return Err(ImplError::Crashed);
        }
        match inner.armed {
            Some(CrashPoint::BeforeSync) => {
                inner.fired = true;
                return Err(ImplError::Crashed);
            }
            Some(CrashPoint::AfterSync) => {
                let pending = std::mem::take(&mut inner.pending);
                inner.durable.extend(pending);
                inner.fired = true;
                return Err(ImplError::Crashed);
            }
            _ => {}
        }
        let pending = std::mem::take(&mut inner.pending);
        inner.durable.extend(pending);
        Ok(())
    }

    /// Every durable record, in order (what a restarted receiver reads).
    pub fn records(&self) -> Vec<Vec<u8>> {
        self.0.borrow().durable.clone()
    }

    /// The durable records from the `from`-th on.
    pub fn records_from(&self, from: usize) -> Vec<Vec<u8>> {
        let inner = self.0.borrow();
        inner.durable.get(from..).unwrap_or_default().to_vec()
    }

    /// What the storage holds, durable and not yet synced, each as a
    /// multiset: the order records were written in does not count. Two
    /// receivers that wrote the same records in other orders agree; one
    /// that lost or never wrote a record does not. (The explorer merges
    /// states by it.)
    pub fn unordered_hash(&self, h: &mut impl Hasher) {
        let inner = self.0.borrow();
        for records in [&inner.durable, &inner.pending] {
            let mut sum = 0u64;
            for r in records.iter() {
                let mut one = std::collections::hash_map::DefaultHasher::new();
                r.hash(&mut one);
                sum = sum.wrapping_add(one.finish());
            }
            records.len().hash(h);
            sum.hash(h);
        }
    }

    /// How the next crash of this agent falls (harness side), over a
    /// power-loss state directory; `None` kills only.
    pub fn set_cut(&self, cut: Option<PowerCut>) {
        self.0.borrow_mut().cut = cut;
    }

    /// How this agent's crashes fall now (adapter side).
    pub fn cut(&self) -> Option<PowerCut> {
        self.0.borrow().cut
    }

    /// Tells the harness what a crash did to the state directory.
    pub fn note(&self, note: PowerNote) {
        self.0.borrow_mut().notes.push(note);
    }

    /// What the crashes did since the last call, oldest first.
    pub fn take_notes(&self) -> Vec<PowerNote> {
        std::mem::take(&mut self.0.borrow_mut().notes)
    }

    /// Schedules a crash (harness side).
    pub fn arm(&self, point: CrashPoint) {
        self.0.borrow_mut().armed = Some(point);
    }

    /// Runs `call` with `crash` armed for exactly its length (how the
    /// harness crashes one operation, whatever the implementation does
    /// inside it): the call's result, and whether the crash fired. A crash
    /// that did not fire is disarmed again.
    pub fn with_crash<T>(&self, crash: Option<CrashPoint>, call: impl FnOnce() -> T) -> (T, bool) {
        if let Some(point) = crash {
            self.arm(point);
        }
        let result = call();
        let fired = crash.is_some() && self.fired();
        if crash.is_some() && !fired {
            self.disarm();
        }
        (result, fired)
    }

    /// Cancels a scheduled crash that has not fired.
    pub fn disarm(&self) {
        let mut inner = self.0.borrow_mut();
        if !inner.fired {
            inner.armed = None;
        }
    }

    pub fn armed(&self) -> Option<CrashPoint> {
        self.0.borrow().armed
    }

    pub fn fire(&self) {
        self.0.borrow_mut().fired = true;
    }

    /// Whether the scheduled crash happened.
    pub fn fired(&self) -> bool {
        self.0.borrow().fired
    }

    /// The crash: what was not synced is gone, and the next receiver starts
    /// on the durable records.
    pub fn crash(&self) {
        let mut inner = self.0.borrow_mut();
        inner.pending.clear();
        inner.armed = None;
        inner.fired = false;
    }
}

/// What a receiver needs of durable storage. The simulator's [`Storage`]
/// loses unsynced records on a crash; `tern-sim agent` keeps its records in a
/// file in its state directory.
pub trait Durable {
    fn append(&self, record: Vec<u8>) -> Result<(), ImplError>;
    fn sync(&self) -> Result<(), ImplError>;
    fn records(&self) -> Result<Vec<Vec<u8>>, ImplError>;

    /// The durable records from the `from`-th on.
    fn records_from(&self, from: usize) -> Result<Vec<Vec<u8>>, ImplError> {
        let mut all = self.records()?;
        Ok(all.split_off(from.min(all.len())))
    }

    /// The checkpoints kept, latest first; none if this storage keeps
    /// none.
    fn checkpoints(&self) -> Vec<Checkpoint> {
        Vec::new()
    }

    /// Keeps a checkpoint of the state after the first `records` durable
    /// records, which must all be durable now, as the latest; a storage
    /// that keeps none ignores it.
    fn keep_checkpoint(&self, _checkpoint: Checkpoint) {}

    /// Forgets the checkpoints of a later state than the first `records`
    /// records, which a recovery found no longer hold.
    fn forget_checkpoints_after(&self, _records: usize) {}

    /// The snapshot this storage keeps durably beside its log, if it keeps
    /// one: what a receiver wrote with [`Durable::keep_snapshot`] and a
    /// start reads back instead of replaying the records it covers.
    /// `tern-sim agent`'s file log keeps one in its state directory; the
    /// simulator's storage keeps none (its checkpoints are in memory).
    fn snapshot(&self) -> Option<StoredSnapshot> {
        None
    }

    /// After how many records replayed at a start a receiver should keep
    /// a snapshot; `None` if this storage keeps none.
    fn snapshot_after(&self) -> Option<usize> {
        None
    }

    /// Makes `bytes`, a receiver's state after the first `records`
    /// records, the durable snapshot, then drops those records from the
    /// log. `records` must be every record written so far, all synced.
    fn keep_snapshot(&self, _records: usize, _bytes: &[u8]) -> Result<(), ImplError> {
        Ok(())
    }

    /// This storage's part in a receiver forked onto `storage`, a copy of
    /// the harness's storage it was started on
    /// ([`crate::contract::plugin::Receiver::fork`]); `None`, the default,
    /// where the records are not the harness's to copy (a file log).
    fn fork_onto(&self, storage: &Storage) -> Option<Self>
    where
        Self: Sized,
    {
        let _ = storage;
        None
    }
}

/// A snapshot read back from durable storage: a receiver's state after
/// the first `records` records of its log, in the receiver's own bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSnapshot {
    pub records: usize,
    pub bytes: Vec<u8>,
    /// Where it was read from, for messages (a file's path).
    pub source: String,
}

impl Durable for Storage {
    fn append(&self, record: Vec<u8>) -> Result<(), ImplError> {
        Storage::append(self, record)
    }

    fn fork_onto(&self, storage: &Storage) -> Option<Storage> {
        Some(storage.clone())
    }

    fn sync(&self) -> Result<(), ImplError> {
        Storage::sync(self)
    }

    fn records(&self) -> Result<Vec<Vec<u8>>, ImplError> {
        Ok(Storage::records(self))
    }

    fn records_from(&self, from: usize) -> Result<Vec<Vec<u8>>, ImplError> {
        Ok(Storage::records_from(self, from))
    }

    fn checkpoints(&self) -> Vec<Checkpoint> {
        self.0.borrow().checkpoints.iter().rev().cloned().collect()
    }

    fn keep_checkpoint(&self, checkpoint: Checkpoint) {
        let mut inner = self.0.borrow_mut();
        if checkpoint.records <= inner.durable.len() {
            if inner.checkpoints.len() >= KEPT_CHECKPOINTS {
                inner.checkpoints.remove(0);
            }
            inner.checkpoints.push(checkpoint);
        }
    }

    fn forget_checkpoints_after(&self, records: usize) {
        self.0
            .borrow_mut()
            .checkpoints
            .retain(|c| c.records <= records);
    }
}
