//! Certification: the whole corpus, then a budget of faulty simulations,
//! against one implementation, and the conformance levels that follow from
//! the outcomes (never from percentages).

use std::collections::BTreeMap;

use crate::contract::plugin::{Durability, Identity};
use crate::corpus::play::CaseRun;
use crate::implementations::latency::{self, Timed};
use crate::simulator::determinism::DeterminismCheck;
use crate::simulator::driver::{Batch, Counterexample};
use crate::simulator::runner::Stats;

mod cases;
mod exploration;
mod pipeline;
mod plan;
pub mod reproduce;
mod simulation;
mod verdict;

pub use cases::{
    give_up_point, given_up, given_up_failure, run_corpus, run_corpus_with, GIVE_UP_AFTER,
};
pub use exploration::{run_exploration, ExplorationRun, ExploredScope, EXPLORE_MAX_STATES};
pub use pipeline::{certify, Share};
pub use plan::{budget, subjects, Certification, Explore, Plan, PlanError, Soak, Subject};
pub use simulation::{check_determinism, run_simulation};
pub use verdict::{counts_at, Conformance, Coverage, Judgement, SimVerdict, Tally};

/// The simulation budget: a batch of runs. Certification always uses every
/// fault and swarm mixes, and ignores names for a `core` certification (the
/// seed does not name reject classes or refusal reasons).
pub type Budget = Batch;

/// `certify`'s default simulation budget, named once so that the test of
/// situation coverage measures the budget users get.
pub const DEFAULT_SEEDS: u64 = 1000;
pub const DEFAULT_FIRST_SEED: u64 = 1;
pub const DEFAULT_AGENTS: usize = 5;
pub const DEFAULT_STEPS: usize = 200;
/// How often the default budget must reach every situation against the
/// reference (docs/simulator.md, situations).
pub const MIN_REACHED: u64 = 20;

/// The corpus part of a certification.
#[derive(Debug, Clone)]
pub struct CorpusRun {
    /// What the implementation said at its first start, or why it could not start.
    pub identity: Result<Identity, String>,
    /// One per case run, in case order.
    pub cases: Vec<CaseRun>,
    /// False when interrupted before the last case.
    pub complete: bool,
    /// What a subprocess wrote on stderr while each failing case ran, by
    /// case ID (see [`crate::contract::plugin::Implementation::take_log`]).
    pub logs: BTreeMap<String, String>,
    /// Each request's round trip, over the protocol only (see
    /// [`latency`]); in no particular order.
    pub latency: Vec<Timed>,
}

/// The simulation part.
#[derive(Debug, Clone)]
pub struct SimulationRun {
    /// The budget played: with fault `power-loss` added where the
    /// implementation's crashes are power losses.
    pub budget: Budget,
    /// What a crash of the implementation took.
    pub durability: Durability,
    pub runs: u64,
    pub stats: Stats,
    pub counterexample: Option<Counterexample>,
    /// What a subprocess wrote on stderr while the shrunk counterexample
    /// played once more.
    pub log: Option<String>,
    /// Why the simulation did not run at all, when it did not.
    pub skipped: Option<String>,
    pub complete: bool,
    /// Each request's round trip in the runs played (not in shrinking),
    /// over the protocol only; in no particular order.
    pub latency: Vec<Timed>,
    /// What `--check-determinism` found, when asked.
    pub determinism: Option<DeterminismCheck>,
}

impl SimulationRun {
    pub fn verdict(&self) -> SimVerdict {
        SimVerdict::of(
            self.skipped.is_some(),
            self.counterexample.is_some(),
            self.complete,
        )
        .unless_nondeterministic(
            self.determinism
                .as_ref()
                .is_some_and(|d| d.divergence.is_some()),
        )
    }
}

/// Round trips are kept while this lives, and what is left over is
/// dropped at both ends, so one part of a certification never counts
/// another's requests.
struct Timing;

impl Timing {
    fn start() -> Timing {
        let _ = latency::take();
        latency::keep(true);
        Timing
    }
}

impl Drop for Timing {
    fn drop(&mut self) {
        latency::keep(false);
        latency::begin(None);
    }
}
