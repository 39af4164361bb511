//! What a certification is asked to do, fixed before the first
//! implementation starts: the implementations with their labels and
//! whether each is explored, the level, the simulation budget and soak.
//! The rules that follow from the asking (which budget a level plays, a
//! soak too short to certify, a part the interrupt never let start) live
//! here, so that the command line only reads its flags.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use super::{Budget, CorpusRun, ExplorationRun, SimulationRun};
use crate::contract::plugin::{Implementation, PowerLossServed};
use crate::corpus::Level;
use crate::explore::scope::Scope;
use crate::judge::compare::RejectNames;
use crate::shard::Shard;
use crate::simulator::faults::Fault;

/// Whether an implementation's exploration runs, and if not, why: a
/// report says why a part did not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Explore {
    Asked,
    /// `--no-explore`.
    LeftOut,
    /// Over the protocol, exploring is asked for explicitly.
    NotAsked,
}

impl Explore {
    /// The policy for an implementation: in process exploration is the
    /// default, over the protocol it must be asked for, since every state
    /// explored is replayed from a fresh start.
    pub fn of(over_protocol: bool, explore: bool, no_explore: bool) -> Explore {
        if no_explore {
            Explore::LeftOut
        } else if over_protocol && !explore {
            Explore::NotAsked
        } else {
            Explore::Asked
        }
    }

    /// Why the exploration does not run, when it does not.
    pub fn skipped(self) -> Option<&'static str> {
        match self {
            Explore::Asked => None,
            Explore::LeftOut => Some("left out (--no-explore)"),
            Explore::NotAsked => Some(
                "not asked for over the protocol (--explore): every state explored is replayed from a fresh start",
            ),
        }
    }
}

/// One implementation to certify.
pub struct Subject {
    /// How reports name it: `reference`, a mutant's name, the command.
    pub label: String,
    /// What a command line adds to name it (` --mutant x`, ` --impl 'c'`,
    /// nothing for the reference), for the reproduce commands.
    pub flag: String,
    pub explore: Explore,
    pub implementation: Box<dyn Implementation>,
}

/// Everything a certification is asked to do, read from its command line
/// before the first implementation starts.
pub struct Plan {
    /// In report order, each label once (see [`subjects`]).
    pub subjects: Vec<Subject>,
    /// The level asked for.
    pub level: Level,
    /// The simulation budget (see [`budget`]).
    pub budget: Budget,
    pub soak: Option<Soak>,
    /// The built-in scopes this corpus serves, for those explored.
    pub scopes: Vec<Scope>,
    /// Errors in a row after which the corpus gives up (0: never).
    pub give_up_after: usize,
    /// `--check-determinism`: how many passing seeds to play twice.
    pub determinism: Option<u64>,
}

/// A plan that cannot be carried out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// A label names one column of every report, and `diff` matches
    /// implementations by it.
    #[error("`{0}` is named twice: each implementation is certified once")]
    NamedTwice(String),
}

/// The implementations in order, each label once.
pub fn subjects(subjects: Vec<Subject>) -> Result<Vec<Subject>, PlanError> {
    let mut labels = BTreeSet::new();
    if let Some(twice) = subjects.iter().find(|s| !labels.insert(s.label.as_str())) {
        return Err(PlanError::NamedTwice(twice.label.clone()));
    }
    Ok(subjects)
}

/// The simulation budget a certification at `level` plays: every fault,
/// swarm mixes, and reject classes and refusal reasons compared at
/// `profile` only, since the seed does not name them.
pub fn budget(
    seeds: u64,
    first_seed: u64,
    agents: usize,
    steps: usize,
    level: Level,
    shard: Shard,
) -> Budget {
    Budget {
        names: match level {
            Level::Core => RejectNames::Ignored,
            Level::Profile => RejectNames::Compared,
        },
        shard,
        ..Budget::with_every_fault(first_seed, seeds, agents, steps)
    }
}

/// A soak (`--duration`): seeds played in order for a while instead of a
/// count of runs, certifying only if at least the budget's runs played.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Soak(pub Duration);

impl Soak {
    /// The budget a soak plays: seeds without end from the first, until
    /// its time is up, counted from `now`.
    pub fn played(self, budget: &Budget, now: Instant) -> Budget {
        Budget {
            seeds: u64::MAX - budget.first_seed,
            deadline: Some(now + self.0),
            ..budget.clone()
        }
    }

    /// Too short a soak is not a clean one; the run reports the budget
    /// asked for, with the faults it played.
    pub fn judge(self, sim: &mut SimulationRun, budget: &Budget) {
        sim.complete &= sim.runs >= budget.seeds;
        sim.budget = Budget {
            faults: sim.budget.faults.clone(),
            ..budget.clone()
        };
    }
}

impl SimulationRun {
    /// The simulation of an implementation whose corpus run the interrupt
    /// cut short: due but never run, which is `incomplete`, not `not_run`
    /// (that is for `--seeds 0` or a missing `execute` claim). Its
    /// durability is the one its runs would have had: power loss wherever
    /// the machine serves it (asked with power loss on, or a machine with
    /// FUSE would read as kill only).
    pub fn never_ran(budget: &Budget, implementation: &dyn Implementation) -> SimulationRun {
        let durability = {
            let _power = PowerLossServed::on(implementation, budget.faults.has(Fault::Crash));
            implementation.durability()
        };
        SimulationRun {
            budget: budget.clone(),
            durability,
            runs: 0,
            stats: Default::default(),
            counterexample: None,
            log: None,
            skipped: None,
            complete: false,
            latency: Vec::new(),
            determinism: None,
        }
    }
}

impl ExplorationRun {
    /// The exploration of an implementation, or why it is left out, when
    /// the interrupt came before it could start: due, so `incomplete`.
    pub fn never_ran(explore: Explore) -> ExplorationRun {
        match explore.skipped() {
            Some(why) => ExplorationRun::skipped(why),
            None => ExplorationRun {
                scopes: Vec::new(),
                skipped: None,
                complete: false,
            },
        }
    }
}

/// What certifying one implementation gave: its three parts, with the
/// names reports give it.
#[derive(Debug, Clone)]
pub struct Certification {
    pub label: String,
    /// See [`Subject::flag`].
    pub flag: String,
    /// Its name as a trace records it (`Implementation::name`), which
    /// `tern-sim replay` starts by itself for the reference and mutants.
    pub implementation: String,
    pub corpus: CorpusRun,
    pub simulation: SimulationRun,
    pub exploration: ExplorationRun,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::certify::SimVerdict;
    use crate::implementations::reference::ReferenceImpl;

    fn subject(label: &str) -> Subject {
        Subject {
            label: label.to_owned(),
            flag: String::new(),
            explore: Explore::Asked,
            implementation: Box::new(ReferenceImpl),
        }
    }

    #[test]
    fn exploration_is_asked_for_over_the_protocol_and_left_out_on_request() {
        assert_eq!(Explore::of(false, false, false), Explore::Asked);
        assert_eq!(Explore::of(true, false, false), Explore::NotAsked);
        assert_eq!(Explore::of(true, true, false), Explore::Asked);
        assert_eq!(Explore::of(false, false, true), Explore::LeftOut);
        assert_eq!(Explore::Asked.skipped(), None);
        assert!(Explore::NotAsked
            .skipped()
            .is_some_and(|w| w.contains("--explore")));
        let x = ExplorationRun::never_ran(Explore::LeftOut);
        assert_eq!(x.verdict(), SimVerdict::NotRun);
        assert_eq!(
            ExplorationRun::never_ran(Explore::Asked).verdict(),
            SimVerdict::Incomplete
        );
    }

    #[test]
    fn a_label_names_one_implementation() {
        assert!(subjects(vec![subject("a"), subject("b")]).is_ok());
        let twice = subjects(vec![subject("a"), subject("b"), subject("a")]);
        assert_eq!(twice.err(), Some(PlanError::NamedTwice("a".to_owned())));
    }

    #[test]
    fn names_are_compared_at_profile_only() {
        let at = |l| budget(10, 1, 3, 50, l, Shard::WHOLE).names;
        assert_eq!(at(Level::Core), RejectNames::Ignored);
        assert_eq!(at(Level::Profile), RejectNames::Compared);
        assert!(budget(10, 1, 3, 50, Level::Core, Shard::WHOLE).swarm);
    }

    #[test]
    fn a_soak_certifies_only_once_it_played_the_budget() {
        let asked = budget(5, 7, 3, 50, Level::Profile, Shard::WHOLE);
        let now = Instant::now();
        let played = Soak(Duration::from_secs(2)).played(&asked, now);
        assert_eq!(played.seeds, u64::MAX - 7);
        assert_eq!(played.deadline, Some(now + Duration::from_secs(2)));
        for (runs, complete) in [(4, false), (5, true), (9, true)] {
            let mut sim = SimulationRun::never_ran(&played, &ReferenceImpl);
            sim.complete = true;
            sim.runs = runs;
            Soak(Duration::from_secs(2)).judge(&mut sim, &asked);
            assert_eq!(sim.complete, complete, "{runs} runs");
            assert_eq!(sim.budget.seeds, 5);
            assert_eq!(sim.budget.deadline, None);
        }
    }

    #[test]
    fn a_simulation_the_interrupt_never_let_start_is_incomplete() {
        let b = budget(5, 1, 3, 50, Level::Profile, Shard::WHOLE);
        let sim = SimulationRun::never_ran(&b, &ReferenceImpl);
        assert_eq!(sim.verdict(), SimVerdict::Incomplete);
        assert_eq!(sim.runs, 0);
    }
}
