//! The built-in reference implementation: the model's ledger made durable.
//!
//! Every input is logged and synced before its outcome is reported, so that
//! a crash never loses what was reported (the commit point of the contract).
//! An execution is logged as an intent, synced, performed, then confirmed; a
//! restart replays the log, and settles an unconfirmed intent by asking the
//! world whether the effect happened: if it did, it is recorded as done; if
//! not, the intent is dropped and the commitment may be executed later. That
//! is the operation-level idempotency and reconciliation of section 1.

use std::rc::Rc;
use std::sync::Arc;

use tern_model::ledger::{
    EffectKey, EventKind, Execution, Ledger, LocalTime, Outcome, SharedMessage,
};
use tern_model::message::{MessageRef, Principal, ThreadId};
use tern_model::WireError;

use crate::contract::plugin::{
    Delivered, Identity, ImplError, Implementation, InitParams, Receiver, View, ViewDigest,
};
use crate::contract::storage::{Checkpoint, Durable, Storage};
use crate::contract::world::{AgentWorld, Effects};

mod snapshot;

/// The reference implementation, the default IUT.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReferenceImpl;

impl Implementation for ReferenceImpl {
    fn name(&self) -> String {
        "tern-sim reference".to_owned()
    }

    fn start(
        &self,
        init: &InitParams,
        storage: Storage,
        world: AgentWorld,
    ) -> Result<Box<dyn Receiver>, ImplError> {
        Ok(Box::new(ReferenceReceiver::recover(init, storage, world)?))
    }
}

/// A log record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Record {
    Deliver {
        now: i64,
        principal: String,
        frame: Vec<u8>,
    },
    /// A delivery whose frame did not parse. It changed nothing but the
    /// count of deliveries, so its bytes are not kept: a hostile peer's
    /// megabyte frame costs the log nine bytes, not a megabyte.
    Invalid {
        now: i64,
    },
    Intent {
        now: i64,
        thread: String,
        commitment: String,
    },
    Done {
        key: String,
    },
    /// A receiver's own note that it answered the message `key` (thread and
    /// ID). Only the `dedup-after-answer` mutant writes it, as its separate
    /// dedup index; the reference rebuilds deduplication from `Deliver`
    /// records alone and skips it on replay.
    Seen {
        key: String,
    },
    /// A start-up began, and one ended: written only by the
    /// `distrusts-tail-after-failed-start` mutant, which reads a start that
    /// never ended as a sign of a torn log. The reference skips both.
    Started,
    Ready,
}

fn put(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

fn take<'a>(input: &mut &'a [u8]) -> Option<&'a [u8]> {
    let len = u32::from_le_bytes(input.get(..4)?.try_into().ok()?) as usize;
    let bytes = input.get(4..4 + len)?;
    *input = &input[4 + len..];
    Some(bytes)
}

impl Record {
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            Record::Deliver {
                now,
                principal,
                frame,
            } => {
                out.push(0);
                out.extend_from_slice(&now.to_le_bytes());
                put(&mut out, principal.as_bytes());
                put(&mut out, frame);
            }
            Record::Intent {
                now,
                thread,
                commitment,
            } => {
                out.push(1);
                out.extend_from_slice(&now.to_le_bytes());
                put(&mut out, thread.as_bytes());
                put(&mut out, commitment.as_bytes());
            }
            Record::Done { key } => {
                out.push(2);
                put(&mut out, key.as_bytes());
            }
            Record::Seen { key } => {
                out.push(3);
                put(&mut out, key.as_bytes());
            }
            Record::Started => out.push(4),
            Record::Ready => out.push(5),
            Record::Invalid { now } => {
                out.push(6);
                out.extend_from_slice(&now.to_le_bytes());
            }
        }
        out
    }

    pub(crate) fn decode(bytes: &[u8]) -> Option<Record> {
        let (&tag, mut rest) = bytes.split_first()?;
        let text = |b: &[u8]| String::from_utf8(b.to_vec()).ok();
        let mut now = || -> Option<i64> {
            let n = i64::from_le_bytes(rest.get(..8)?.try_into().ok()?);
            rest = &rest[8..];
            Some(n)
        };
        match tag {
            0 => {
                let now = now()?;
                let principal = text(take(&mut rest)?)?;
                let frame = take(&mut rest)?.to_vec();
                Some(Record::Deliver {
                    now,
                    principal,
                    frame,
                })
            }
            1 => {
                let now = now()?;
                let thread = text(take(&mut rest)?)?;
                let commitment = text(take(&mut rest)?)?;
                Some(Record::Intent {
                    now,
                    thread,
                    commitment,
                })
            }
            2 => Some(Record::Done {
                key: text(take(&mut rest)?)?,
            }),
            3 => Some(Record::Seen {
                key: text(take(&mut rest)?)?,
            }),
            4 => Some(Record::Started),
            5 => Some(Record::Ready),
            6 => Some(Record::Invalid { now: now()? }),
            _ => None,
        }
    }
}

/// How a receiver records executions. Only `Full` is correct; the others
/// exist so the mutant zoo can show what the simulator catches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recording {
    /// Intent synced before the effect, confirmation after.
    Full,
    /// Executions kept in memory only.
    DeliveriesOnly,
    /// The effect first, the intent after.
    EffectFirst,
    /// As `Full`, but recovery counts every durable intent as done without
    /// asking the world, so an effect a crash prevented is never performed.
    IntentsAsDone,
    /// As `Full` for executions, but a delivery that comes out pending is
    /// held in memory and written only once a later delivery releases it,
    /// so a restart loses every message still pending.
    PendingInMemory,
    /// As `Full` for executions, but a delivery is answered before its
    /// record is durable: the record is synced when the next delivery
    /// begins, or when a view is asked (a group commit). A crash at the
    /// next delivery's sync loses an answered message.
    WriteBehind,
}

/// What a recovery rebuilt from the log, kept as a [`Checkpoint`]: a
/// restart then replays only the records after it.
#[derive(Debug, Clone)]
struct Recovered {
    ledger: Ledger,
    /// Effects of intents that replay dropped because the world had not
    /// performed them.
    dropped: Vec<EffectKey>,
    /// Effects a `Done` record confirms. A persistent set: every start
    /// copies it out of its checkpoint and into the next, and it grows
    /// with the run.
    done: imbl::OrdSet<String>,
}

impl Recovered {
    fn new(init: &InitParams) -> Recovered {
        Recovered {
            ledger: Ledger::new(init.config.clone()),
            dropped: Vec::new(),
            done: imbl::OrdSet::new(),
        }
    }

    /// Replays `records` onto this state, asking `world` what it
    /// performed; gives the effects performed that no `Done` record
    /// confirms yet.
    fn replay(
        &mut self,
        records: &[Record],
        world: &impl Effects,
        recording: Recording,
    ) -> Result<Vec<EffectKey>, ImplError> {
        for r in records {
            if let Record::Done { key } = r {
                self.done.insert(key.clone());
            }
        }
        let Recovered {
            ledger,
            dropped,
            done,
        } = self;
        let mut confirm = Vec::new();
        for record in records {
            match record {
                Record::Deliver {
                    now,
                    principal,
                    frame,
                } => {
                    let principal = Principal::new(principal.as_str())
                        .map_err(|e| ImplError::Misbehaved(format!("corrupt log: {e}")))?;
                    ledger.deliver(frame, &principal, LocalTime(*now));
                }
                Record::Intent {
                    now,
                    thread,
                    commitment,
                } => {
                    let (Ok(thread), Ok(commitment)) =
                        (ThreadId::new(thread), MessageRef::new(commitment))
                    else {
                        return Err(ImplError::Misbehaved("corrupt log: bad intent".into()));
                    };
                    // The decision tells the key without recording anything yet.
                    let Execution::Executed { effect } =
                        ledger.would_execute(&thread, &commitment, LocalTime(*now))
                    else {
                        continue;
                    };
                    // The world is the truth, not our own confirmation:
                    // a crash at the effect leaves a confirmation written
                    // after a perform the world never took (over the
                    // protocol, the `perform` line is sent, then the
                    // process is killed before the world counts it).
                    let happened =
                        recording == Recording::IntentsAsDone || world.performed(&effect);
                    if happened {
                        ledger.execute(&thread, &commitment, LocalTime(*now));
                        if !done.contains(effect.0.as_str()) {
                            confirm.push(effect);
                        }
                    } else {
                        dropped.push(effect);
                    }
                }
                Record::Invalid { .. } => ledger.count_invalid_delivery(),
                Record::Done { .. } | Record::Seen { .. } | Record::Started | Record::Ready => {}
            }
        }
        Ok(confirm)
    }

    /// Panics unless `other` (a replay of the whole log) rebuilt what this
    /// state (a checkpoint and the records after it) did.
    #[cfg(debug_assertions)]
    fn assert_same_as(&self, other: &Recovered) {
        let mut threads = self.ledger.threads();
        threads.extend(other.ledger.threads());
        threads.sort();
        threads.dedup();
        for thread in &threads {
            assert_eq!(
                self.ledger.view_text(thread),
                other.ledger.view_text(thread),
                "a recovery from a checkpoint differs from a whole replay in {thread}"
            );
        }
        fn sorted(d: &[EffectKey]) -> Vec<&str> {
            let mut d: Vec<&str> = d.iter().map(|e| e.0.as_str()).collect();
            d.sort_unstable();
            d
        }
        assert_eq!(
            sorted(&self.dropped),
            sorted(&other.dropped),
            "dropped intents"
        );
        assert_eq!(self.done, other.done, "confirmed effects");
    }
}

/// The records of a log, each read back.
fn decoded(records: &[Vec<u8>]) -> Result<Vec<Record>, ImplError> {
    records
        .iter()
        .map(|r| {
            Record::decode(r).ok_or_else(|| ImplError::Misbehaved("corrupt log record".into()))
        })
        .collect()
}

/// A recovery that replayed at least this many records keeps a checkpoint:
/// a restart then costs one copy of the ledger and a replay of at most
/// about this many records, whatever the history.
const CHECKPOINT_AFTER: usize = 32;

/// One running reference receiver, over any durable storage and world.
pub struct ReferenceReceiver<S = Storage, W = AgentWorld> {
    ledger: Ledger,
    storage: S,
    world: W,
    recording: Recording,
    /// Pending deliveries not yet written, under `PendingInMemory`: the
    /// message's thread and ID, and its record.
    held: Vec<(Option<ThreadId>, Option<MessageRef>, Record)>,
    /// The effects of the intents this start's recovery dropped, because
    /// the world never performed them.
    dropped: Vec<EffectKey>,
}

impl ReferenceReceiver<Storage, AgentWorld> {
    /// Rebuilds the ledger from the durable log and reconciles intents.
    pub fn recover(
        init: &InitParams,
        storage: Storage,
        world: AgentWorld,
    ) -> Result<Self, ImplError> {
        Self::recover_with(init, storage, world, Recording::Full)
    }
}

impl<S: Durable, W: Effects> ReferenceReceiver<S, W> {
    /// Recovers a receiver that records executions as `recording` says.
    pub fn recover_with(
        init: &InitParams,
        storage: S,
        world: W,
        recording: Recording,
    ) -> Result<Self, ImplError> {
        // Only the correct recording keeps checkpoints: the mutants'
        // defects are in how they replay.
        let checkpointed = recording == Recording::Full;
        let kept = if checkpointed {
            storage.checkpoints()
        } else {
            Vec::new()
        };
        // The latest checkpoint that still holds. Replay decides a dropped
        // intent by asking the world, so a checkpoint holds only while the
        // world still says no to every intent its recovery dropped.
        let resumed = kept.iter().find_map(|c| {
            let state = c.state.downcast_ref::<Recovered>()?;
            let valid = state.dropped.iter().all(|e| !world.performed(e));
            valid.then(|| (c.records, state.clone()))
        });
        if checkpointed {
            // Those of later states no longer hold, nor ever will: the
            // world forgets no effect.
            storage.forget_checkpoints_after(resumed.as_ref().map_or(0, |r| r.0));
        }
        #[cfg(debug_assertions)]
        let in_memory = resumed.is_some();
        let (start, mut state) = match resumed {
            Some(resumed) => resumed,
            // Else the snapshot on disk, if the storage keeps one: it holds
            // whatever the world says (snapshot.rs says why).
            None => match storage.snapshot().filter(|_| checkpointed) {
                Some(s) => (
                    s.records,
                    Recovered::from_snapshot(init, &s.bytes).map_err(|e| {
                        ImplError::Misbehaved(format!("cannot read {}: {e}", s.source))
                    })?,
                ),
                None => (0, Recovered::new(init)),
            },
        };
        let records = decoded(&storage.records_from(start)?)?;
        let confirm = state.replay(&records, &world, recording)?;
        // Tests run in debug builds: there, every recovery that resumed
        // from a checkpoint is checked against a replay of the whole log,
        // so a checkpoint kept past the point where it stopped holding
        // cannot hide. (A snapshot on disk replaced the records it covers:
        // tests compare its recoveries with whole replays elsewhere.)
        #[cfg(debug_assertions)]
        if in_memory && start > 0 {
            let mut whole = Recovered::new(init);
            whole.replay(&decoded(&storage.records()?)?, &world, recording)?;
            state.assert_same_as(&whole);
        }
        let replayed = records.len() + confirm.len();
        for key in confirm {
            storage.append(Record::Done { key: key.0.clone() }.encode())?;
            state.done.insert(key.0);
        }
        storage.sync()?;
        if checkpointed && replayed >= CHECKPOINT_AFTER {
            storage.keep_checkpoint(Checkpoint {
                records: start + replayed,
                state: Rc::new(state.clone()),
            });
        }
        // Every record is durable now: a storage that keeps a snapshot on
        // disk keeps this state once enough records were replayed, so that
        // the next start replays only what comes after it.
        if let Some(after) = storage.snapshot_after().filter(|_| checkpointed) {
            if replayed >= after.max(1) {
                storage.keep_snapshot(start + replayed, &state.to_snapshot())?;
            }
        }
        Ok(ReferenceReceiver {
            ledger: state.ledger,
            storage,
            world,
            recording,
            held: Vec::new(),
            dropped: state.dropped,
        })
    }

    /// The effects whose intents a crash cut before the world performed
    /// them: a correct receiver performs each only when asked to execute
    /// again, under the authority that holds then.
    pub(crate) fn dropped_at_recovery(&self) -> &[EffectKey] {
        &self.dropped
    }

    /// This receiver, on copies of the harness's storage and world
    /// ([`Receiver::fork`]): its ledger is copied, nothing else is kept.
    pub(crate) fn fork_onto(&self, storage: &Storage, world: &AgentWorld) -> Option<Self> {
        Some(ReferenceReceiver {
            ledger: self.ledger.clone(),
            storage: self.storage.fork_onto(storage)?,
            world: self.world.fork_onto(world)?,
            recording: self.recording,
            held: self.held.clone(),
            dropped: self.dropped.clone(),
        })
    }

    /// The durable storage, for a mutant that keeps records of its own
    /// beside the reference's.
    pub(crate) fn storage(&self) -> &S {
        &self.storage
    }

    /// `PendingInMemory`: the outcome is decided first, and only a message
    /// that is not pending is written, together with the held messages it
    /// released (after it, so that a replay finds their references).
    fn deliver_holding_pending(
        &mut self,
        record: Record,
        parsed: Result<Arc<SharedMessage>, WireError>,
        principal: &Principal,
        now: LocalTime,
    ) -> Result<Delivered, ImplError> {
        let events = self.ledger.deliver_shared(parsed, principal, now);
        match events.first() {
            Some(e) if matches!(e.outcome, Outcome::Pending { .. }) => {
                self.held.push((e.thread.clone(), e.id.clone(), record));
            }
            _ => {
                self.storage.append(record.encode())?;
                for released in events.iter().filter(|e| e.kind == EventKind::Released) {
                    let at = self
                        .held
                        .iter()
                        .position(|(t, id, _)| *t == released.thread && *id == released.id);
                    if let Some(at) = at {
                        let (_, _, r) = self.held.remove(at);
                        self.storage.append(r.encode())?;
                    }
                }
            }
        }
        self.storage.sync()?;
        Ok(Delivered {
            events,
            outgoing: Vec::new(),
        })
    }

    fn confirm(&self, key: &EffectKey) -> Result<(), ImplError> {
        self.storage
            .append(Record::Done { key: key.0.clone() }.encode())?;
        self.storage.sync()
    }
}

impl<S: Durable + 'static, W: Effects + 'static> Receiver for ReferenceReceiver<S, W> {
    fn identity(&self) -> Identity {
        Identity::builtin("tern-sim reference")
    }

    fn fork(&self, storage: &Storage, world: &AgentWorld) -> Option<Box<dyn Receiver>> {
        Some(Box::new(self.fork_onto(storage, world)?))
    }

    fn deliver(
        &mut self,
        frame: &[u8],
        principal: &Principal,
        now: LocalTime,
    ) -> Result<Delivered, ImplError> {
        // Read through the thread's kept frames: the harness read this
        // frame when it was sent, and a duplicate was read before.
        let parsed = tern_model::ledger::parse_shared(frame);
        let record = match parsed {
            Ok(_) => Record::Deliver {
                now: now.0,
                principal: principal.as_str().to_owned(),
                frame: frame.to_vec(),
            },
            Err(_) => Record::Invalid { now: now.0 },
        };
        match self.recording {
            Recording::PendingInMemory => {
                return self.deliver_holding_pending(record, parsed, principal, now)
            }
            Recording::WriteBehind => {
                // The previous answer's record becomes durable only now.
                self.storage.sync()?;
                self.storage.append(record.encode())?;
            }
            _ => {
                self.storage.append(record.encode())?;
                self.storage.sync()?;
            }
        }
        Ok(Delivered {
            events: self.ledger.deliver_shared(parsed, principal, now),
            outgoing: Vec::new(),
        })
    }

    fn execute(
        &mut self,
        thread: &ThreadId,
        commitment: &MessageRef,
        now: LocalTime,
    ) -> Result<Execution, ImplError> {
        let decision = self.ledger.would_execute(thread, commitment, now);
        let Execution::Executed { effect } = &decision else {
            return Ok(decision);
        };
        let intent = Record::Intent {
            now: now.0,
            thread: thread.as_str().to_owned(),
            commitment: commitment.as_str().to_owned(),
        };
        match self.recording {
            Recording::Full
            | Recording::IntentsAsDone
            | Recording::PendingInMemory
            | Recording::WriteBehind => {
                self.storage.append(intent.encode())?;
                self.storage.sync()?;
                self.ledger.execute(thread, commitment, now);
                self.world.perform(effect)?;
                self.confirm(effect)?;
            }
            Recording::DeliveriesOnly => {
                self.ledger.execute(thread, commitment, now);
                self.world.perform(effect)?;
            }
            Recording::EffectFirst => {
                self.ledger.execute(thread, commitment, now);
                self.world.perform(effect)?;
                self.storage.append(intent.encode())?;
                self.storage.sync()?;
                self.confirm(effect)?;
            }
        }
        Ok(decision)
    }

    fn view(&mut self, thread: &ThreadId) -> Result<View, ImplError> {
        if self.recording == Recording::WriteBehind {
            self.storage.sync()?;
        }
        Ok(self.ledger.view_text(thread))
    }

    fn view_digests(&mut self, threads: &[ThreadId]) -> Option<Result<Vec<ViewDigest>, ImplError>> {
        // A write-behind view syncs first, once per view, and a sync can
        // be where a crash is armed: those views are asked as texts.
        if self.recording == Recording::WriteBehind {
            return None;
        }
        Some(Ok(threads
            .iter()
            .map(|t| self.ledger.view_digest(t))
            .collect()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        for r in [
            Record::Deliver {
                now: -5,
                principal: "pk-a".into(),
                frame: vec![0xff, b'{', 0],
            },
            Record::Intent {
                now: 9,
                thread: "t".into(),
                commitment: "a:1".into(),
            },
            Record::Done {
                key: "c/a:1".into(),
            },
            Record::Invalid { now: -7 },
            Record::Seen {
                key: "t/a:1".into(),
            },
            Record::Started,
            Record::Ready,
        ] {
            assert_eq!(Record::decode(&r.encode()), Some(r));
        }
        assert_eq!(Record::decode(&[0, 1, 2]), None);
        assert_eq!(Record::decode(&[]), None);
    }
}
