//! The reference's checkpoints change nothing but speed: a long run with
//! crashes, played by a reference that resumes from checkpoints and by one
//! that replays its whole log at every start, gives the same run, event for
//! event, and the checkpoints were in fact used.

use std::cell::Cell;

use tern_harness::contract::plugin::{ImplError, Implementation, InitParams, Receiver};
use tern_harness::contract::storage::{Checkpoint, Durable, Storage};
use tern_harness::contract::world::AgentWorld;
use tern_harness::implementations::reference::{Recording, ReferenceReceiver};
use tern_harness::simulator::driver::{mix_for, play, steps_of};
use tern_harness::simulator::faults::FaultSet;
use tern_harness::simulator::runner::RunConfig;

thread_local! {
    /// Starts that resumed from a checkpoint, on this test's thread.
    static RESUMED: Cell<usize> = const { Cell::new(0) };
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
    fn checkpoint(&self) -> Option<Checkpoint> {
        if !self.checkpoints {
            return None;
        }
        let found = Durable::checkpoint(&self.storage);
        if found.is_some() {
            RESUMED.with(|r| r.set(r.get() + 1));
        }
        found
    }
    fn keep_checkpoint(&self, checkpoint: Checkpoint) {
        if self.checkpoints {
            self.storage.keep_checkpoint(checkpoint);
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
    for seed in [7, 11] {
        let config = RunConfig {
            seed,
            agents: 4,
            steps: 1500,
            mix: mix_for(seed, &faults, true),
            names: Default::default(),
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
            replayed.notes, resumed.notes,
            "seed {seed}: the runs differ"
        );
        assert_eq!(replayed.stats.deliveries, resumed.stats.deliveries);
        assert_eq!(replayed.stats.checks, resumed.stats.checks);
        assert!(replayed.stats.faults.get("crash").copied().unwrap_or(0) > 0);
    }
}
