//! What the reference receiver keeps as a snapshot on durable storage that
//! keeps one (`tern-sim agent`'s state directory): the state a recovery
//! rebuilt, as bytes. The ledger is written by `Ledger::write_state`
//! (every field, each stored message with its canonical text); beside it
//! the effects of intents the replay dropped and the effects a `Done`
//! record confirms.
//!
//! A snapshot is used at a start whatever the world says of the intents
//! its recovery dropped, unlike the checkpoints kept in memory, which are
//! dropped once the world performs one of those effects: the log records
//! before the snapshot are gone, and the snapshot and the records after it
//! still give the state a replay of the whole log would. The world
//! performs an effect only after the receiver made an intent for it
//! durable, so an effect performed after the snapshot has its intent among
//! the records after it, whose replay executes it; a replay of the whole
//! log executes it at the earlier, dropped intent instead. What a
//! commitment's execution changes (its entry among the executed, and the
//! views that list effects) is the same either way, since no delivery
//! depends on it, and the `Done` records that confirm it are the same.

use std::sync::Arc;

use tern_model::ledger::{EffectKey, Ledger};

use super::Recovered;
use crate::contract::plugin::InitParams;

/// The first byte of the bytes: their format.
const FORMAT: u8 = 1;

fn put(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    out.extend_from_slice(bytes);
}

fn take<'a>(input: &mut &'a [u8]) -> Result<&'a [u8], String> {
    let (len, rest) = input
        .split_first_chunk::<8>()
        .ok_or("the snapshot ends early")?;
    let len = usize::try_from(u64::from_le_bytes(*len)).map_err(|_| "a length overflows")?;
    if len > rest.len() {
        return Err("the snapshot ends early".into());
    }
    let (bytes, rest) = rest.split_at(len);
    *input = rest;
    Ok(bytes)
}

fn put_keys<'k>(out: &mut Vec<u8>, keys: impl ExactSizeIterator<Item = &'k str>) {
    out.extend_from_slice(&(keys.len() as u64).to_le_bytes());
    for k in keys {
        put(out, k.as_bytes());
    }
}

fn take_keys(input: &mut &[u8]) -> Result<Vec<String>, String> {
    let (n, rest) = input
        .split_first_chunk::<8>()
        .ok_or("the snapshot ends early")?;
    let n = u64::from_le_bytes(*n);
    *input = rest;
    // Each key takes at least its eight-byte length.
    if n > (input.len() / 8) as u64 {
        return Err("a list is longer than the snapshot".into());
    }
    (0..n)
        .map(|_| {
            let bytes = take(input)?;
            String::from_utf8(bytes.to_vec()).map_err(|_| "a key is not UTF-8".to_owned())
        })
        .collect()
}

impl Recovered {
    /// The state as a snapshot's bytes.
    pub(super) fn to_snapshot(&self) -> Vec<u8> {
        let mut ledger = Vec::new();
        self.ledger.write_state(&mut ledger);
        let mut out = Vec::with_capacity(ledger.len() + 64);
        out.push(FORMAT);
        put(&mut out, &ledger);
        put_keys(&mut out, self.dropped.iter().map(|e| e.0.as_str()));
        put_keys(&mut out, self.done.iter().map(String::as_str));
        out
    }

    /// The state [`Recovered::to_snapshot`] wrote, over the configuration
    /// of `init` (the receiver's, which a restart keeps).
    pub(super) fn from_snapshot(init: &InitParams, bytes: &[u8]) -> Result<Recovered, String> {
        let (&format, mut rest) = bytes.split_first().ok_or("the snapshot is empty")?;
        if format != FORMAT {
            return Err(format!(
                "a snapshot of format {format}; this receiver reads format {FORMAT}"
            ));
        }
        let ledger = Ledger::read_state(Arc::clone(&init.config), take(&mut rest)?)
            .map_err(|e| e.to_string())?;
        let dropped = take_keys(&mut rest)?.into_iter().map(EffectKey).collect();
        let done = take_keys(&mut rest)?.into_iter().collect();
        if !rest.is_empty() {
            return Err("bytes after the snapshot's state".into());
        }
        Ok(Recovered {
            ledger,
            dropped,
            done,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::cell::{Cell, RefCell};
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::Path;
    use std::rc::Rc;

    use serde_json::json;
    use tern_model::ledger::{Contexts, Execution, LedgerConfig, LocalTime, Policy, Viewer};
    use tern_model::message::{MessageRef, Participant, Principal, ThreadId};

    use super::*;
    use crate::contract::plugin::{ImplError, Receiver};
    use crate::contract::storage::Durable;
    use crate::contract::world::Effects;
    use crate::implementations::file_log::FileLog;
    use crate::implementations::reference::{Recording, ReferenceReceiver};

    /// The world: the effects it recorded; it refuses the next effect
    /// (a crash at it, before the world took it) when told to.
    #[derive(Clone, Default)]
    struct World {
        performed: Rc<RefCell<BTreeSet<String>>>,
        refuse: Rc<Cell<bool>>,
    }

    impl Effects for World {
        fn perform(&self, key: &EffectKey) -> Result<(), ImplError> {
            if self.refuse.replace(false) {
                return Err(ImplError::Crashed);
            }
            self.performed.borrow_mut().insert(key.0.clone());
            Ok(())
        }
        fn performed(&self, key: &EffectKey) -> bool {
            self.performed.borrow().contains(&key.0)
        }
    }

    fn init() -> InitParams {
        let bob = Participant::new("bob").unwrap();
        InitParams {
            participant: bob.clone(),
            principal: Principal::new("bob").unwrap(),
            config: Arc::new(LedgerConfig {
                viewer: Viewer::Participant(bob),
                contexts: Contexts::Open,
                grants: BTreeMap::new(),
                policy: Policy {
                    permitted_without_grant: [ThreadId::new("t").unwrap()].into(),
                    ..Policy::default()
                },
            }),
        }
    }

    /// A frame of `act` in thread `t` from the sender of `id`, with its
    /// principal (the sender's name: contexts are open).
    fn frame(id: &str, to: &str, act: &str, body: serde_json::Value) -> (Vec<u8>, Principal) {
        let from = id.split(':').next().unwrap();
        let m = json!({"tern": "0.1", "id": id, "from": from, "to": [to], "thread": "t",
                       "reply": null, "act": act, "body": body});
        (
            serde_json::to_vec(&m).unwrap(),
            Principal::new(from).unwrap(),
        )
    }

    fn tell(n: u32) -> (Vec<u8>, Principal) {
        let claim = json!({"text": format!("fact {n}"), "basis": "observed", "confidence": "high",
                           "scope": "here", "evidence": [], "alternatives": []});
        frame(
            &format!("alice:{n}"),
            "bob",
            "TELL",
            json!({"claims": [claim]}),
        )
    }

    type Agent = ReferenceReceiver<FileLog, World>;

    fn start(dir: &Path, after: Option<usize>, world: &World) -> Agent {
        let log = FileLog::open(dir.to_path_buf(), None, after).unwrap();
        ReferenceReceiver::recover_with(&init(), log, world.clone(), Recording::Full).unwrap()
    }

    /// The same receiver twice: one keeping a snapshot every three
    /// records, one replaying its whole log, each on its own state
    /// directory and world.
    struct Twins {
        dirs: [tempfile::TempDir; 2],
        worlds: [World; 2],
        agents: Vec<Agent>,
    }

    impl Twins {
        fn new() -> Twins {
            let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
            let worlds = [World::default(), World::default()];
            let mut t = Twins {
                dirs,
                worlds,
                agents: Vec::new(),
            };
            t.restart();
            t
        }

        /// Both crash and start again: the one with snapshots from its
        /// snapshot and the records after it, the other from its log.
        fn restart(&mut self) {
            self.agents.clear();
            self.agents = vec![
                start(self.dirs[0].path(), Some(3), &self.worlds[0]),
                start(self.dirs[1].path(), None, &self.worlds[1]),
            ];
            assert_eq!(self.view(0), self.view(1), "the two recoveries differ");
        }

        fn view(&mut self, i: usize) -> String {
            self.agents[i]
                .view(&ThreadId::new("t").unwrap())
                .unwrap()
                .as_str()
                .to_owned()
        }

        fn deliver(&mut self, (bytes, p): (Vec<u8>, Principal)) {
            let a = self.agents[0].deliver(&bytes, &p, LocalTime(0)).unwrap();
            let b = self.agents[1].deliver(&bytes, &p, LocalTime(0)).unwrap();
            assert_eq!(a.events, b.events);
        }

        fn execute(&mut self, refused: bool) -> Vec<Result<Execution, ImplError>> {
            let (t, c) = (
                ThreadId::new("t").unwrap(),
                MessageRef::new("bob:1").unwrap(),
            );
            (0..2)
                .map(|i| {
                    self.worlds[i].refuse.set(refused);
                    self.agents[i].execute(&t, &c, LocalTime(10))
                })
                .collect()
        }
    }

    #[test]
    fn a_state_written_and_read_back_is_the_same_state() {
        let mut t = Twins::new();
        t.deliver(frame(
            "alice:1",
            "bob",
            "REQUEST",
            json!({"action": "a", "done_when": "w", "constraints": [], "authority_ref": null}),
        ));
        let state = Recovered {
            ledger: t.agents[0].ledger.clone(),
            dropped: vec![EffectKey("t/bob:9".into())],
            done: ["t/bob:8".to_owned()].into_iter().collect(),
        };
        let bytes = state.to_snapshot();
        let back = Recovered::from_snapshot(&init(), &bytes).unwrap();
        assert_eq!(back.to_snapshot(), bytes);
        assert_eq!(back.dropped, state.dropped);
        assert_eq!(back.done, state.done);
        // Cut short, or with bytes after it, it is refused, not misread.
        for cut in 0..bytes.len() {
            assert!(Recovered::from_snapshot(&init(), &bytes[..cut]).is_err());
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(Recovered::from_snapshot(&init(), &longer).is_err());
    }

    /// A snapshot and the records after it recover what the whole log
    /// does, at every restart, including an intent that a recovery dropped
    /// (the world never took its effect), that a snapshot then covered,
    /// and whose effect a later execution performed: the whole replay
    /// executes the commitment at the first intent, the snapshot's
    /// recovery at the second, and both end with the same state.
    #[test]
    fn a_snapshot_and_the_records_after_it_recover_what_the_whole_log_does() {
        let mut t = Twins::new();
        t.deliver(frame(
            "alice:1",
            "bob",
            "REQUEST",
            json!({"action": "a", "done_when": "w", "constraints": [], "authority_ref": null}),
        ));
        t.deliver(frame(
            "bob:1",
            "alice",
            "COMMIT",
            json!({"request": "alice:1", "action": "a", "deliverable": "d", "done_when": "w",
                   "due": null, "conditions": [], "authority_ref": null}),
        ));
        for n in 2..6 {
            t.deliver(tell(n));
        }
        // A crash at the effect: the intent is durable, the effect never
        // happened.
        for r in t.execute(true) {
            assert!(matches!(r, Err(ImplError::Crashed)), "{r:?}");
        }
        t.restart();
        // Seven records replayed: the start kept a snapshot of them all,
        // the dropped intent included, and began its log again.
        let snapshot = t.dirs[0].path().join("tern-agent.snapshot");
        assert!(snapshot.exists());
        for n in 6..10 {
            t.deliver(tell(n));
        }
        t.restart();
        for r in t.execute(false) {
            assert!(matches!(r, Ok(Execution::Executed { .. })), "{r:?}");
        }
        assert_eq!(t.view(0), t.view(1));
        t.restart();
        assert!(t.view(0).contains("t/bob:1"), "{}", t.view(0));
        // The snapshot covers the first eleven records; the log holds the
        // intent and the confirmation after them.
        let log = FileLog::open(t.dirs[0].path().to_path_buf(), None, None).unwrap();
        assert_eq!(log.snapshot().map(|s| s.records), Some(11));
        assert_eq!(log.records_from(11).unwrap().len(), 2);
        // A redelivery is a duplicate for both, an execution already done.
        t.deliver(tell(3));
        for r in t.execute(false) {
            assert!(matches!(r, Ok(Execution::Refused(_))), "{r:?}");
        }
    }
}
