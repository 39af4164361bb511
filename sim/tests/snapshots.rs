//! The reference's snapshots change nothing but speed: long runs with
//! crashes, played by a reference that keeps a snapshot of its state
//! (written as bytes and read back at the next start, as `tern-sim agent`
//! does in its state directory) and by one that replays its whole log at
//! every start, give the same runs, event for event, among them a run
//! where the world performs an effect whose intent a recovery had dropped
//! (a snapshot keeps its state whatever the world says later; the unit
//! tests of `reference/snapshot.rs` show that case alone).

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;

use tern_harness::contract::plugin::{ImplError, Implementation, InitParams, Receiver};
use tern_harness::contract::storage::{Durable, Storage, StoredSnapshot};
use tern_harness::contract::world::AgentWorld;
use tern_harness::implementations::reference::{Recording, ReferenceReceiver};
use tern_harness::simulator::driver::{mix_for, play, steps_of};
use tern_harness::simulator::faults::FaultSet;
use tern_harness::simulator::happening::notes;
use tern_harness::simulator::runner::RunConfig;

thread_local! {
    /// Each agent's durable snapshot, by its storage's ID: what a state
    /// directory keeps across restarts.
    static DISK: RefCell<BTreeMap<u64, StoredSnapshot>> = const { RefCell::new(BTreeMap::new()) };
    /// Starts that read a snapshot back, and snapshots kept.
    static READ: Cell<usize> = const { Cell::new(0) };
    static KEPT: Cell<usize> = const { Cell::new(0) };
}

/// The simulator's storage with a snapshot "on disk" beside it, kept every
/// few records. Its log keeps every record (the simulator's storage is
/// append-only), but a start that reads the snapshot asks only for the
/// records after it.
struct Snapshotting {
    storage: Storage,
    after: Option<usize>,
}

impl Durable for Snapshotting {
    fn append(&self, record: Vec<u8>) -> Result<(), ImplError> {
        self.storage.append(record)
    }
    fn sync(&self) -> Result<(), ImplError> {
        self.storage.sync()
    }
    fn records(&self) -> Result<Vec<Vec<u8>>, ImplError> {
        Ok(self.storage.records())
    }
    fn records_from(&self, from: usize) -> Result<Vec<Vec<u8>>, ImplError> {
        Ok(self.storage.records_from(from))
    }
    fn snapshot(&self) -> Option<StoredSnapshot> {
        self.after?;
        let found = DISK.with(|d| d.borrow().get(&self.storage.id()).cloned());
        if found.is_some() {
            READ.with(|r| r.set(r.get() + 1));
        }
        found
    }
    fn snapshot_after(&self) -> Option<usize> {
        self.after
    }
    fn keep_snapshot(&self, records: usize, bytes: &[u8]) -> Result<(), ImplError> {
        assert_eq!(
            records,
            self.storage.records().len(),
            "every record, synced"
        );
        KEPT.with(|k| k.set(k.get() + 1));
        DISK.with(|d| {
            d.borrow_mut().insert(
                self.storage.id(),
                StoredSnapshot {
                    records,
                    bytes: bytes.to_vec(),
                    source: "memory".into(),
                },
            )
        });
        Ok(())
    }
}

struct Reference {
    after: Option<usize>,
}

impl Implementation for Reference {
    fn name(&self) -> String {
        "reference".into()
    }
    fn start(
        &self,
        init: &InitParams,
        storage: Storage,
        world: AgentWorld,
    ) -> Result<Box<dyn Receiver>, ImplError> {
        let log = Snapshotting {
            storage,
            after: self.after,
        };
        Ok(Box::new(ReferenceReceiver::recover_with(
            init,
            log,
            world,
            Recording::Full,
        )?))
    }
}

#[test]
fn resuming_from_snapshots_plays_the_same_run_as_replaying_the_log() {
    let faults = FaultSet::all();
    // Seed 4 with five agents is a run where the world performs an effect
    // a recovery had dropped (tests/checkpoints.rs).
    for (seed, agents, steps, after) in [
        (7, 4, 1500, 16),
        (11, 4, 1500, 1),
        (4, 5, 1500, 8),
        (12, 3, 800, 3),
    ] {
        let config = RunConfig {
            seed,
            agents,
            steps,
            mix: mix_for(seed, &faults, true),
            names: Default::default(),
            sessions: Default::default(),
            faults: faults.clone(),
        };
        let steps = steps_of(&config);
        let replayed = play(&config, &steps, &Reference { after: None }, true);
        READ.with(|r| r.set(0));
        KEPT.with(|k| k.set(0));
        let resumed = play(&config, &steps, &Reference { after: Some(after) }, true);
        assert!(
            READ.with(Cell::get) > 0 && KEPT.with(Cell::get) > 0,
            "seed {seed}: no snapshot kept and read back"
        );
        assert!(
            replayed.violation.is_none(),
            "seed {seed}: {:?}",
            replayed.violation
        );
        assert!(
            resumed.violation.is_none(),
            "seed {seed}: {:?}",
            resumed.violation
        );
        assert_eq!(
            notes(&replayed.happenings),
            notes(&resumed.happenings),
            "seed {seed}: the runs differ"
        );
        assert_eq!(replayed.stats.deliveries, resumed.stats.deliveries);
        assert_eq!(replayed.stats.checks, resumed.stats.checks);
        assert!(replayed.stats.faults.get("crash").copied().unwrap_or(0) > 0);
    }
}
