//! Certification: the whole corpus, then a budget of faulty simulations,
//! against one implementation, and the conformance levels that follow from
//! the outcomes (never from percentages).

use std::collections::BTreeMap;

use crate::contract::plugin::{Durability, Identity};
use crate::corpus::play::{CaseRun, Status};
use crate::corpus::{Case, Level};
use crate::implementations::latency::{self, Timed};
use crate::simulator::determinism::DeterminismCheck;
use crate::simulator::driver::{Batch, Counterexample};
use crate::simulator::runner::Stats;

mod cases;
mod exploration;
mod simulation;

pub use cases::{
    give_up_point, given_up, given_up_failure, run_corpus, run_corpus_with, GIVE_UP_AFTER,
};
pub use exploration::{run_exploration, ExplorationRun, ExploredScope, EXPLORE_MAX_STATES};
pub use simulation::{check_determinism, run_simulation, run_simulation_watched};

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

/// Reports write it by its name (`clean`, `not_run`...), and read only
/// those names back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SimVerdict {
    Clean,
    Violation,
    /// What a report holds before anything is judged.
    #[default]
    NotRun,
    Incomplete,
    /// The same seed, played twice on fresh state, got different answers
    /// (`--check-determinism`): whatever else was found cannot be
    /// reproduced, so this verdict comes before a violation.
    Nondeterministic,
}

impl SimVerdict {
    pub const ALL: [SimVerdict; 5] = [
        SimVerdict::Clean,
        SimVerdict::Violation,
        SimVerdict::NotRun,
        SimVerdict::Incomplete,
        SimVerdict::Nondeterministic,
    ];

    /// This verdict, or [`SimVerdict::Nondeterministic`] when a
    /// determinism check found two answers to one request.
    pub fn unless_nondeterministic(self, diverged: bool) -> SimVerdict {
        if diverged {
            SimVerdict::Nondeterministic
        } else {
            self
        }
    }

    /// A part that was skipped says so first; then a violation, found
    /// even in a part cut short; then whether it ran to its end.
    pub fn of(skipped: bool, violation: bool, complete: bool) -> SimVerdict {
        if skipped {
            SimVerdict::NotRun
        } else if violation {
            SimVerdict::Violation
        } else if !complete {
            SimVerdict::Incomplete
        } else {
            SimVerdict::Clean
        }
    }

    pub fn from_name(name: &str) -> Option<SimVerdict> {
        SimVerdict::ALL.into_iter().find(|v| v.as_str() == name)
    }

    /// The name as prose reads it: `not run`.
    pub fn words(self) -> &'static str {
        match self {
            SimVerdict::NotRun => "not run",
            other => other.as_str(),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            SimVerdict::Clean => "clean",
            SimVerdict::Violation => "violation",
            SimVerdict::NotRun => "not_run",
            SimVerdict::Incomplete => "incomplete",
            SimVerdict::Nondeterministic => "nondeterministic",
        }
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

/// Counts of outcomes at one level.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    pub counts: BTreeMap<Status, usize>,
}

impl Tally {
    pub fn get(&self, s: Status) -> usize {
        self.counts.get(&s).copied().unwrap_or(0)
    }

    pub fn failures(&self) -> usize {
        self.counts
            .iter()
            .filter(|(s, _)| s.is_failure())
            .map(|(_, n)| n)
            .sum()
    }
}

/// The conformance levels an implementation reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conformance {
    /// No core case failed (and the corpus ran to the end).
    pub core: bool,
    /// Nor any profile case.
    pub profile: bool,
    pub simulation: SimVerdict,
    pub exploration: SimVerdict,
    pub by_level: BTreeMap<Level, Tally>,
}

impl Conformance {
    pub fn of(
        cases: &[&Case],
        corpus: &CorpusRun,
        sim: &SimulationRun,
        exploration: &ExplorationRun,
    ) -> Conformance {
        let level: BTreeMap<&str, Level> = cases.iter().map(|c| (c.id.as_str(), c.level)).collect();
        let outcomes = corpus.cases.iter().map(|run| {
            let l = match &run.failure {
                // Another reject class or refusal reason than expected: the
                // receiver did what the seed asks, under another name.
                Some(f) if f.names_only => Level::Profile,
                _ => level.get(run.id.as_str()).copied().unwrap_or(Level::Core),
            };
            (l, run.status)
        });
        Conformance::of_outcomes(
            outcomes,
            corpus.complete && corpus.identity.is_ok(),
            sim.verdict(),
            exploration.verdict(),
        )
    }

    /// The levels reached from each case's outcome and the level it counts
    /// at; `whole` says the corpus ran to its end on a started
    /// implementation. `tern-sim merge` judges the shards' cases with it.
    pub fn of_outcomes(
        outcomes: impl IntoIterator<Item = (Level, Status)>,
        whole: bool,
        simulation: SimVerdict,
        exploration: SimVerdict,
    ) -> Conformance {
        let mut by_level: BTreeMap<Level, Tally> = BTreeMap::new();
        for (l, status) in outcomes {
            *by_level
                .entry(l)
                .or_default()
                .counts
                .entry(status)
                .or_default() += 1;
        }
        let clean = |l: Level| by_level.get(&l).is_none_or(|t| t.failures() == 0);
        let core = whole && clean(Level::Core);
        Conformance {
            core,
            profile: core && clean(Level::Profile),
            simulation,
            exploration,
            by_level,
        }
    }

    /// Certified at `level`: that level's cases all pass or do not apply,
    /// and neither the simulation nor the exploration found anything (a
    /// simulation that could not run for want of `execute`, or an
    /// exploration left out, does not block, and the report says so).
    pub fn certified(&self, level: Level) -> bool {
        let cases = match level {
            Level::Core => self.core,
            Level::Profile => self.profile,
        };
        let clean = |v: SimVerdict| matches!(v, SimVerdict::Clean | SimVerdict::NotRun);
        cases && clean(self.simulation) && clean(self.exploration)
    }

    /// The highest level certified, if any.
    pub fn level(&self) -> Option<Level> {
        [Level::Profile, Level::Core]
            .into_iter()
            .find(|l| self.certified(*l))
    }
}
