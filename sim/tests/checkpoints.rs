//! The reference's checkpoints change nothing but speed: a long run with
//! crashes, played by a reference that resumes from checkpoints and by one
//! that replays its whole log at every start, gives the same run, event for
//! event, and the checkpoints were in fact used, including one that stopped
//! holding and gave way to an older one.

use std::cell::Cell;

use tern_harness::contract::plugin::{ImplError, Implementation, InitParams, Receiver};
use tern_harness::contract::storage::{Checkpoint, Durable, Storage};
use tern_harness::contract::world::AgentWorld;
use tern_harness::implementations::reference::{Recording, ReferenceReceiver};
use tern_harness::simulator::driver::{mix_for, play, steps_of};
use tern_harness::simulator::faults::FaultSet;
use tern_harness::simulator::happening::notes;
use tern_harness::simulator::runner::RunConfig;

thread_local! {
    /// Starts that found a checkpoint, on this test's thread.
    static RESUMED: Cell<usize> = const { Cell::new(0) };
    /// Starts that found checkpoints which no longer held, and forgot them.
    static FORGOTTEN: Cell<usize> = const { Cell::new(0) };
}

/// The simulator's storage, either hiding its checkpoints (every start
/// replays the whole log) or counting the starts that find one.
struct Log {
    storage: Storage,
    checkpoints: bool,
}

impl Durable for Log {
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
    fn checkpoints(&self) -> Vec<Checkpoint> {
        if !self.checkpoints {
            return Vec::new();
        }
        let found = Durable::checkpoints(&self.storage);
        if !found.is_empty() {
            RESUMED.with(|r| r.set(r.get() + 1));
        }
        found
    }
    fn keep_checkpoint(&self, checkpoint: Checkpoint) {
        if self.checkpoints {
            self.storage.keep_checkpoint(checkpoint);
        }
    }
    fn forget_checkpoints_after(&self, records: usize) {
        let before = Durable::checkpoints(&self.storage).len();
        self.storage.forget_checkpoints_after(records);
        if Durable::checkpoints(&self.storage).len() < before {
            FORGOTTEN.with(|f| f.set(f.get() + 1));
        }
    }
}

struct Reference {
    checkpoints: bool,
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
        let log = Log {
            storage,
            checkpoints: self.checkpoints,
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
fn resuming_from_checkpoints_plays_the_same_run_as_replaying_the_log() {
    let faults = FaultSet::all();
    FORGOTTEN.with(|f| f.set(0));
    // Seed 4 with five agents is a run where a checkpoint stops holding (the
    // world performs an effect its recovery had dropped), so that a later
    // start resumes from an older one.
    for (seed, agents, steps) in [(7, 4, 1500), (11, 4, 1500), (4, 5, 1500)] {
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
        RESUMED.with(|r| r.set(0));
        let replayed = play(&config, &steps, &Reference { checkpoints: false }, true);
        assert_eq!(RESUMED.with(Cell::get), 0);
        let resumed = play(&config, &steps, &Reference { checkpoints: true }, true);
        assert!(
            RESUMED.with(Cell::get) > 0,
            "seed {seed}: no start resumed from a checkpoint"
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
    assert!(
        FORGOTTEN.with(Cell::get) > 0,
        "no checkpoint stopped holding, so no start had to resume from an older one"
    );
}
