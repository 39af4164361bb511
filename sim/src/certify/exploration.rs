//! The exploration part of a certification: the built-in scopes explored
//! in order until the first violation, each bounded so that a
//! certification always ends, and what each found.

use super::SimVerdict;
use crate::contract::plugin::{Capability, Identity, Implementation};
use crate::events::Listener;
use crate::explore::scope::Scope;
use crate::explore::search::{Limits, Watch};
pub use crate::explore::sweep::ExploredScope;
use crate::explore::sweep::{sweep, Claims, Sweep};
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
    let limits = Limits {
        merge: true,
        sleep_sets: true,
        max_states: EXPLORE_MAX_STATES,
        jobs: jobs.0.get(),
        power_loss: true,
    };
    let policy = Sweep {
        limits,
        names,
        claims: Claims::Known(identity.claims(Capability::Execute)),
        until_first: true,
        watch: &Watch::default(),
    };
    let scopes = scopes.iter().filter(|s| shard.takes_name(&s.id));
    // With the claims known, no scope starts the implementation to ask.
    match sweep(scopes, implementation, &policy, events, |_, _, _| {}, &stop) {
        Ok(swept) => ExplorationRun {
            scopes: swept.scopes,
            skipped: None,
            complete: swept.complete,
        },
        Err(e) => ExplorationRun::skipped(e.to_string()),
    }
}

/// The bound on each scope's states in a certification: far above what
/// the built-in scopes need.
pub const EXPLORE_MAX_STATES: u64 = 1_000_000;
