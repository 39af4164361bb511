//! The default `certify` budget reaches every situation of the catalogue
//! against the reference, at least `MIN_REACHED` times each.
//!
//! The budget is a thousand runs of five agents: minutes in a debug build,
//! about a minute in release. It is ignored by a plain `cargo test` and run
//! by CI as `cargo test --release --test situations -- --ignored`.

use tern_sim::harness::certify::{
    run_simulation, Budget, DEFAULT_AGENTS, DEFAULT_FIRST_SEED, DEFAULT_SEEDS, DEFAULT_STEPS,
    MIN_REACHED,
};
use tern_sim::harness::contract::plugin::Identity;
use tern_sim::harness::implementations::reference::ReferenceImpl;
use tern_sim::harness::simulator::driver::Jobs;
use tern_sim::harness::simulator::faults::FaultSet;

#[test]
#[ignore = "the full certify budget: run in release (CI does)"]
fn the_default_certify_budget_reaches_every_situation_often() {
    let budget = Budget {
        first_seed: DEFAULT_FIRST_SEED,
        seeds: DEFAULT_SEEDS,
        agents: DEFAULT_AGENTS,
        steps: DEFAULT_STEPS,
        faults: FaultSet::all(),
        names: Default::default(),
        swarm: true,
        shard: tern_harness::shard::Shard::WHOLE,
        deadline: None,
    };
    let imp = ReferenceImpl;
    let identity = Identity::builtin("tern-sim reference");
    let sim = run_simulation(
        &budget,
        &imp,
        Jobs::per_core(),
        Some(&identity),
        |_, _| {},
        || false,
    );
    assert!(sim.counterexample.is_none(), "the reference failed");
    assert_eq!(sim.runs, DEFAULT_SEEDS);
    let rare: Vec<String> = sim
        .stats
        .situations
        .iter()
        .filter(|(_, n)| *n < MIN_REACHED)
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
            .get(tern_sim::harness::simulator::situations::Situation::Moment(
                tern_sim::harness::simulator::situations::Moment::Executed,
            ));
    assert!(
        executed * 10 >= sim.stats.executions * 3,
        "{executed} of {} execution requests allowed",
        sim.stats.executions
    );
}
