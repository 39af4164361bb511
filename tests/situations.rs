//! The default `certify` budget reaches every situation of the catalogue
//! against the reference, at least `MIN_REACHED` times each.
//!
//! The budget is a thousand runs of five agents: minutes in a debug build,
//! about a minute in release. It is ignored by a plain `cargo test` and run
//! by CI as `cargo test --release --test situations -- --ignored`.

use tern_sim::harness::certify::{
    run_simulation, Budget, SimulationRun, DEFAULT_AGENTS, DEFAULT_FIRST_SEED, DEFAULT_SEEDS,
    DEFAULT_STEPS, MIN_REACHED,
};
use tern_sim::harness::contract::plugin::Identity;
use tern_sim::harness::contract::plugin::{Durability, Implementation};
use tern_sim::harness::events::quiet;
use tern_sim::harness::implementations::adapter::{Limits, SubprocessImpl};
use tern_sim::harness::implementations::reference::ReferenceImpl;
use tern_sim::harness::simulator::driver::Jobs;
use tern_sim::harness::simulator::faults::FaultSet;

/// The simulation `certify` plays by default, of `imp` named `name`.
fn default_simulation(imp: &dyn Implementation, name: &str) -> SimulationRun {
    run_simulation(
        &default_budget(),
        imp,
        Jobs::per_core(),
        Some(&Identity::builtin(name)),
        &quiet,
        || false,
    )
}

/// The budget `certify` plays by default.
fn default_budget() -> Budget {
    Budget {
        first_seed: DEFAULT_FIRST_SEED,
        seeds: DEFAULT_SEEDS,
        agents: DEFAULT_AGENTS,
        steps: DEFAULT_STEPS,
        faults: FaultSet::all(),
        names: Default::default(),
        swarm: true,
        shard: tern_harness::shard::Shard::WHOLE,
        deadline: None,
    }
}

#[test]
#[ignore = "the full certify budget: run in release (CI does)"]
fn the_default_certify_budget_reaches_every_situation_often() {
    let sim = default_simulation(&ReferenceImpl, "tern-sim reference");
    assert!(sim.counterexample.is_none(), "the reference failed");
    assert_eq!(sim.runs, DEFAULT_SEEDS);
    let rare: Vec<String> = sim
        .stats
        .situations
        .iter()
        // (Those only a power loss reaches are the next test's.)
        .filter(|(s, n)| *n < MIN_REACHED && sim.stats.shows(*s))
        .map(|(s, n)| format!("{} ({n})", s.name()))
        .collect();
    assert!(
        rare.is_empty(),
        "reached fewer than {MIN_REACHED} times: {}",
        rare.join("; ")
    );
    // Executions the model allows are common, not rare.
    let executed =
        sim.stats
            .situations
            .get(tern_sim::harness::catalogue::situations::Situation::Moment(
                tern_sim::harness::catalogue::situations::Moment::Executed,
            ));
    assert!(
        executed * 10 >= sim.stats.executions * 3,
        "{executed} of {} execution requests allowed",
        sim.stats.executions
    );
}

/// Over the protocol, with the state directories on tern-statefs, the
/// default budget meets every situation only a power loss reaches, at
/// least `MIN_REACHED` times each, against `tern-sim agent`. Skipped (with
/// the reason) where FUSE cannot be used.
#[test]
#[ignore = "the full certify budget over the protocol: run in release (CI does)"]
fn the_default_certify_budget_over_the_protocol_meets_every_power_loss_often() {
    let agent = format!("{} agent", env!("CARGO_BIN_EXE_tern-sim"));
    let imp = SubprocessImpl::new(agent.as_str(), Limits::default()).unwrap();
    // (The simulation turns power loss on itself; this only asks whether
    // it can.)
    if !imp.set_power_loss(true) {
        eprintln!("skipped: {}", imp.durability().label());
        return;
    }
    imp.set_power_loss(false);
    // (It claims `execute`, which is all the simulation asks of it.)
    let sim = default_simulation(&imp, "tern-sim agent");
    assert!(
        sim.counterexample.is_none(),
        "the reference agent failed under power loss: {:?}",
        sim.counterexample.map(|c| c.violation)
    );
    assert_eq!(sim.durability, Durability::PowerLoss);
    assert!(sim.stats.power_loss);
    let counts: Vec<(String, u64)> = sim
        .stats
        .situations
        .iter()
        .filter(|(s, _)| s.needs_power_loss())
        .map(|(s, n)| (s.name(), n))
        .collect();
    eprintln!("power-loss situations in the default budget: {counts:?}");
    assert_eq!(counts.len(), 6);
    let rare: Vec<String> = counts
        .iter()
        .filter(|(_, n)| *n < MIN_REACHED)
        .map(|(s, n)| format!("{s} ({n})"))
        .collect();
    assert!(
        rare.is_empty(),
        "reached fewer than {MIN_REACHED} times: {}",
        rare.join("; ")
    );
}
