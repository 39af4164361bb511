//! The exploration part of a certification: the built-in scopes explored
//! in order until the first violation, each bounded so that a
//! certification always ends, and what each found.

use super::SimVerdict;
use crate::contract::plugin::{Capability, Identity, Implementation};
use crate::events::{Event, Listener};
use crate::explore::scope::Scope;
use crate::explore::search::{self, explore, Exploration, Limits, Prepared, ScopeVerdict};
use crate::judge::compare::RejectNames;
use crate::shard::Shard;
use crate::simulator::driver::Jobs;

/// The exploration part: every schedule of the built-in scopes.
#[derive(Debug, Clone)]
pub struct ExplorationRun {
    /// Each scope explored, in order, until the first violation.
    pub scopes: Vec<ExploredScope>,
    /// Why it did not run at all, when it did not.
    pub skipped: Option<String>,
    /// False when interrupted, or a scope was not exhausted.
    pub complete: bool,
}

#[derive(Debug, Clone)]
pub struct ExploredScope {
    pub id: String,
    pub clauses: Vec<String>,
    pub exploration: Exploration,
    /// The counterexample's moves in words.
    pub shorthand: Vec<String>,
}

impl ExplorationRun {
    /// Not explored: `why`.
    pub fn skipped(why: impl Into<String>) -> ExplorationRun {
        ExplorationRun {
            scopes: Vec::new(),
            skipped: Some(why.into()),
            complete: true,
        }
    }

    pub fn violation(&self) -> Option<&ExploredScope> {
        self.scopes
            .iter()
            .find(|s| s.exploration.violation.is_some())
    }

    pub fn verdict(&self) -> SimVerdict {
        SimVerdict::of(
            self.skipped.is_some(),
            self.violation().is_some(),
            self.complete,
        )
    }
}

/// Explores `shard`'s share of `scopes` in order, stopping at the first
/// violation (or when `stop` says so), with the names the certification
/// level compares. `events` hears each scope explored.
#[allow(clippy::too_many_arguments)]
pub fn run_exploration(
    scopes: &[Scope],
    shard: Shard,
    implementation: &dyn Implementation,
    identity: Option<&Identity>,
    names: RejectNames,
    jobs: Jobs,
    events: &Listener<'_>,
    stop: impl Fn() -> bool + Sync,
) -> ExplorationRun {
    let Some(identity) = identity else {
        return ExplorationRun::skipped("the implementation did not start");
    };
    if scopes.is_empty() {
        return ExplorationRun::skipped("no scope to explore");
    }
    let mut out = ExplorationRun {
        scopes: Vec::new(),
        skipped: None,
        complete: true,
    };
    let scopes = scopes.iter().filter(|s| shard.takes_name(&s.id));
    let limits = Limits {
        merge: true,
        sleep_sets: true,
        max_states: EXPLORE_MAX_STATES,
        jobs: jobs.0.get(),
        power_loss: true,
    };
    for scope in scopes {
        let prepared = Prepared::new(scope, identity.claims(Capability::Execute));
        let exploration = explore(
            &prepared,
            implementation,
            names,
            limits,
            &search::Watch::default(),
            &stop,
        );
        let shorthand = exploration
            .violation
            .as_ref()
            .map(|ce| prepared.describe_schedule(&ce.schedule))
            .unwrap_or_default();
        out.complete &= exploration.verdict() != ScopeVerdict::NotExhausted;
        let found = exploration.violation.is_some();
        let explored = ExploredScope {
            id: scope.id.clone(),
            clauses: scope.clauses.clone(),
            exploration,
            shorthand,
        };
        events(Event::Scope(&explored));
        out.scopes.push(explored);
        if found || stop() {
            out.complete &= !stop();
            break;
        }
    }
    out
}

/// The bound on each scope's states in a certification: far above what
/// the built-in scopes need.
pub const EXPLORE_MAX_STATES: u64 = 1_000_000;
