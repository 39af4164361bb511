//! The simulation part of a certification: the budget's runs until the
//! first violation, shrunk, with power losses wherever FUSE can serve
//! them, and the optional second play of some seeds that checks the
//! implementation is deterministic.

use std::sync::Mutex;

use super::{Budget, SimulationRun, Timing};
use crate::contract::plugin::{Capability, Identity, Implementation, PowerLossServed};
use crate::events::{self, Event, Listener};
use crate::implementations::latency::{self, During};
use crate::implementations::locked;
use crate::simulator::determinism;
use crate::simulator::driver::{play as driver_play, Jobs, DEFAULT_HANG_WAIT, DEFAULT_SHRINK_TIME};
use crate::simulator::faults::Fault;
use crate::simulator::hunt::{hunt, Hunt};
use crate::simulator::runner::Stats;

/// Plays the budget's runs until the first violation, which is shrunk.
/// `events` hears which seed each worker takes up, and each run played,
/// in seed order, with the totals so far.
pub fn run_simulation(
    budget: &Budget,
    implementation: &dyn Implementation,
    jobs: Jobs,
    identity: Option<&Identity>,
    events: &Listener<'_>,
    stop: impl Fn() -> bool + Sync,
) -> SimulationRun {
    // Crashes over the protocol are power losses wherever FUSE serves them,
    // for the simulation's runs only (the corpus crashes by kills; the
    // exploration asks for power losses itself).
    let mut budget = budget.clone();
    budget.faults.0.remove(&Fault::PowerLoss);
    let power = PowerLossServed::on(implementation, budget.faults.has(Fault::Crash));
    if power.is_on() {
        budget.faults.0.insert(Fault::PowerLoss);
    }
    let budget = &budget;
    let mut out = SimulationRun {
        budget: budget.clone(),
        durability: implementation.durability(),
        runs: 0,
        stats: Stats::default(),
        counterexample: None,
        log: None,
        skipped: None,
        complete: true,
        latency: Vec::new(),
        determinism: None,
    };
    if budget.seeds == 0 {
        out.skipped = Some("no simulation budget (--seeds 0)".to_owned());
        return out;
    }
    match identity {
        None => {
            out.skipped = Some("the implementation did not start".to_owned());
            return out;
        }
        Some(i) if !i.claims(Capability::Execute) => {
            out.skipped = Some(
                "the implementation does not claim `execute`, which the simulation needs"
                    .to_owned(),
            );
            return out;
        }
        Some(_) => {}
    }
    let plan = Hunt {
        batch: budget.clone(),
        jobs,
        record: false,
        shrink: true,
        shrink_time: Some(DEFAULT_SHRINK_TIME),
        hang_wait: DEFAULT_HANG_WAIT,
    };
    // Request times are the runs': shrinking replays pieces of a run, whose
    // requests are no run's, so the times are taken once the batch is over
    // (a violation found, or the hunt ended).
    let timing = Mutex::new(Some(Timing::start()));
    let taken = Mutex::new(Vec::new());
    let batch_over = || {
        if let Some(timing) = locked(&timing).take() {
            latency::begin(None);
            *locked(&taken) = latency::take();
            drop(timing);
        }
    };
    let hunted = hunt(
        &plan,
        implementation,
        &|event| {
            match event {
                Event::Started {
                    work: events::Work::Seed(seed),
                    ..
                } => latency::begin(Some(During::Seed(seed))),
                Event::Found { .. } => batch_over(),
                _ => {}
            }
            events(event)
        },
        &stop,
        &stop,
    );
    batch_over();
    out.latency = taken.into_inner().unwrap_or_else(|e| e.into_inner());
    out.runs = hunted.runs;
    out.stats = hunted.stats;
    out.complete = hunted.complete;
    out.counterexample = hunted.found.map(|f| f.counterexample);
    // The shrunk run once more, on this thread, for its stderr whole.
    if let Some(ce) = &out.counterexample {
        if implementation.take_log().is_some() {
            let _ = driver_play(&ce.config, &ce.steps, implementation, false);
            out.log = implementation
                .take_log()
                .map(|log| String::from_utf8_lossy(&log).into_owned());
        }
    }
    out
}

/// Plays the simulation's failing seed and up to `sample` of its passing
/// ones twice each, on fresh state and with the crashes its runs had
/// (`--check-determinism`). A simulation that did not run is not checked.
pub fn check_determinism(
    sim: &mut SimulationRun,
    implementation: &dyn Implementation,
    sample: u64,
    stop: impl Fn() -> bool,
) {
    if sim.skipped.is_some() {
        return;
    }
    let _power = PowerLossServed::on(implementation, sim.budget.faults.has(Fault::PowerLoss));
    let failing = sim.counterexample.as_ref().map(|c| c.config.seed);
    let seeds = determinism::seeds_to_check(&sim.budget, sim.runs, failing, sample);
    sim.determinism = Some(determinism::check(
        &sim.budget,
        &seeds,
        implementation,
        stop,
    ));
}
