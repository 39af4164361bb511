//! A batch hunted for its first violation: runs until one fails, and that
//! one made a counterexample, shrunk unless asked to keep it whole.
//! `tern-sim run` and a certification's simulation both hunt, with their
//! own plans; what happens between finding and shrinking (how a failure
//! replays, when shrinking may not be tried) is decided once, here.

use std::time::Duration;

use super::driver::{
    first_violation, reproduction, shrink_found, unshrunk, Batch, Counterexample, Jobs,
    ShrinkBudget,
};
use super::runner::{Stats, Violation};
use crate::contract::plugin::Implementation;
use crate::events::{Event, Listener};

/// What a hunt is asked to do.
#[derive(Debug, Clone)]
pub struct Hunt {
    pub batch: Batch,
    /// Runs played at once, and shrinking candidates tried at once.
    pub jobs: Jobs,
    /// Whether each run keeps its record, for a listener that shows it.
    pub record: bool,
    /// `false` keeps a failing run whole (`--no-shrink`).
    pub shrink: bool,
    /// The wall-clock limit of shrinking (see [`ShrinkBudget::time`]).
    pub shrink_time: Option<Duration>,
    /// See [`ShrinkBudget::hang_wait`].
    pub hang_wait: Duration,
}

/// What a hunt found.
#[derive(Debug, Clone)]
pub struct Hunted {
    /// Runs played to the end (the failing one included).
    pub runs: u64,
    pub stats: Stats,
    /// False when the stop of the runs cut the batch short.
    pub complete: bool,
    pub found: Option<Found>,
}

/// A violation found, and its counterexample.
#[derive(Debug, Clone)]
pub struct Found {
    /// The violation as the batch found it, before shrinking.
    pub first: Violation,
    pub counterexample: Counterexample,
}

/// Plays `plan`'s batch until its first violation, then shrinks it.
/// `events` hears every run as [`first_violation`] tells it, then
/// [`Event::Found`] before shrinking starts and each line the shrinker
/// reports. `stop_runs` is polled between runs, `stop_shrinking` between
/// shrinking attempts: a run's reader may be gone while the trace of what
/// it found is still wanted.
pub fn hunt(
    plan: &Hunt,
    implementation: &dyn Implementation,
    events: &Listener<'_>,
    stop_runs: &(dyn Fn() -> bool + Sync),
    stop_shrinking: &(dyn Fn() -> bool + Sync),
) -> Hunted {
    let outcome = first_violation(
        &plan.batch,
        implementation,
        plan.jobs,
        plan.record,
        events,
        stop_runs,
    );
    let found = outcome.failure.map(|(config, generated, violation)| {
        events(Event::Found {
            config: &config,
            violation: &violation,
        });
        let first = violation.clone();
        let counterexample = if plan.shrink {
            let budget = ShrinkBudget {
                time: plan.shrink_time,
                stop: stop_shrinking,
                hang_wait: plan.hang_wait,
                jobs: plan.jobs.0.get(),
            };
            shrink_found(
                &config,
                generated,
                violation,
                implementation,
                budget,
                |line| events(Event::Shrinking(line)),
            )
        } else {
            let config = reproduction(&config, &generated.steps, &violation, implementation);
            unshrunk(&config, generated.steps, violation, implementation)
        };
        Found {
            first,
            counterexample,
        }
    });
    Hunted {
        runs: outcome.runs,
        stats: outcome.stats,
        complete: outcome.complete,
        found,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::implementations::mutants::{Mutant, MutantImpl};
    use crate::simulator::driver::{ShrinkEnd, DEFAULT_HANG_WAIT};

    fn plan(shrink: bool) -> Hunt {
        Hunt {
            batch: Batch::with_every_fault(0, 60, 3, 120),
            jobs: Jobs::ONE,
            record: false,
            shrink,
            shrink_time: None,
            hang_wait: DEFAULT_HANG_WAIT,
        }
    }

    /// A mutant's violation is told before shrinking, and the
    /// counterexample is no longer than the run that found it; kept
    /// whole, it is the run that found it.
    #[test]
    fn a_violation_is_told_then_shrunk_or_kept_whole() {
        let mutant = MutantImpl(Mutant::ALL[0]);
        let heard = Mutex::new(Vec::new());
        let listener = |e: Event<'_>| match e {
            Event::Found { config, violation } => heard.lock().unwrap().push(format!(
                "found {} {}",
                config.seed, violation.failure.invariant.name
            )),
            Event::Run { .. } => heard.lock().unwrap().push("run".to_owned()),
            _ => {}
        };
        let shrunk = hunt(&plan(true), &mutant, &listener, &|| false, &|| false);
        let found = shrunk.found.expect("the mutant is caught");
        let heard = heard.into_inner().unwrap();
        assert_eq!(heard.len() as u64, shrunk.runs + 1, "{heard:?}");
        assert_eq!(
            heard.last().unwrap(),
            &format!(
                "found {} {}",
                found.counterexample.config.seed, found.first.failure.invariant.name
            )
        );
        let ce = &found.counterexample;
        assert_eq!(ce.shrink_end, ShrinkEnd::Complete);
        assert!(ce.steps.len() <= ce.original_len);

        let whole = hunt(
            &plan(false),
            &mutant,
            &crate::events::quiet,
            &|| false,
            &|| false,
        );
        let ce = whole.found.expect("caught again").counterexample;
        assert_eq!(whole.runs, shrunk.runs);
        assert_eq!(ce.shrink_end, ShrinkEnd::Skipped);
        assert_eq!(ce.steps.len(), ce.original_len);
    }
}
