//! The reference state machine: a Tern world and the workload's steps.

use std::marker::PhantomData;

use proptest::prelude::*;
use proptest_state_machine::ReferenceStateMachine;

use super::Subject;
use crate::judge::compare::RejectNames;
use crate::shard::Shard;
use crate::simulator::driver::Batch;
use crate::simulator::faults::FaultSet;
use crate::simulator::runner::RunConfig;
use crate::simulator::scenario::MAX_AGENTS;
use crate::simulator::workload::{step_strategy, Step};

/// The worlds a [`Subject`] is tested in: what `tern-sim run` takes as
/// `--agents`, `--steps`, `--faults`, `--level` and `--no-swarm`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Honest agents, each running the implementation (1 to 16).
    pub agents: usize,
    /// The longest run: test cases play 1 to this many steps. The world is
    /// laid out for runs of this length (grant expiries, conversations), as
    /// `--steps` lays it out.
    pub steps: usize,
    /// The faults every run injects (`--faults` is all of them).
    pub faults: FaultSet,
    /// Whether rejection names are compared (`--level full`) or only
    /// what the seed says (`--level core`).
    pub names: RejectNames,
    /// Each run enables a random subset of message kinds, so that rare
    /// combinations come up.
    pub swarm: bool,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            agents: 3,
            steps: 200,
            faults: FaultSet::all(),
            names: RejectNames::Compared,
            swarm: true,
        }
    }
}

impl Settings {
    /// Settings a world can be built from, or why not.
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=MAX_AGENTS).contains(&self.agents) {
            return Err(format!(
                "{} agents: a world has 1 to {MAX_AGENTS}",
                self.agents
            ));
        }
        if self.steps == 0 {
            return Err("0 steps: a run has at least one".to_owned());
        }
        Ok(())
    }

    /// The run configuration of `seed`, exactly as `tern-sim run` with the
    /// same flags configures that seed's run.
    pub fn config(&self, seed: u64) -> RunConfig {
        Batch {
            first_seed: seed,
            seeds: 1,
            agents: self.agents,
            steps: self.steps,
            faults: self.faults.clone(),
            names: self.names,
            swarm: self.swarm,
            shard: Shard::WHOLE,
            deadline: None,
        }
        .config(seed)
    }
}

/// The reference state machine of a Tern world, as `S::settings()`
/// describes it.
///
/// Its state is the run's [`RunConfig`]: the world's agents, identities,
/// grants and clock skews, the faults and the mix of message kinds, all
/// from a random seed. The oracle (one reference ledger per agent), the
/// network and the crashes evolve inside the [`Run`] that
/// [`Conformance`](super::Conformance) plays, deterministically from that
/// configuration and the steps, so the state proptest clones for every
/// transition stays this small.
///
/// Its transitions are the simulator's [`Step`]s. A step names what it does
/// with small indices ("the 3rd request", "agent 2") that the run resolves
/// when it plays the step, so any subsequence of steps is a run: every
/// transition is allowed in every state, which is what lets proptest delete
/// steps freely while it shrinks. The seed does not shrink: the smallest
/// counterexample keeps its world and loses steps, as `tern-sim run`'s own
/// shrinking does.
///
/// [`Run`]: crate::simulator::runner::Run
pub struct TernWorld<S>(PhantomData<S>);

impl<S: Subject> ReferenceStateMachine for TernWorld<S> {
    type State = RunConfig;
    type Transition = Step;

    fn init_state() -> BoxedStrategy<RunConfig> {
        let settings = S::settings();
        if let Err(why) = settings.validate() {
            panic!("tern-sim conformance: {why}");
        }
        any::<u64>()
            .no_shrink()
            .prop_map(move |seed| settings.config(seed))
            .boxed()
    }

    fn transitions(config: &RunConfig) -> BoxedStrategy<Step> {
        step_strategy(config.mix)
    }

    fn apply(config: RunConfig, _: &Step) -> RunConfig {
        config
    }

    fn preconditions(_: &RunConfig, _: &Step) -> bool {
        // Every step is playable anywhere: its indices are resolved modulo
        // what the run holds when it is played, and a step with nothing to
        // act on does nothing. So any subsequence proptest's shrinking
        // leaves, under any world, is a run.
        true
    }
}
