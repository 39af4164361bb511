//! The proptest state machine of `tern_harness::conformance`: it passes the
//! reference, catches a mutant by the invariant meant for it, and judges a
//! run exactly as the simulator does; and a run played step by step is the
//! run `play` plays.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::test_runner::RngSeed;
use proptest_state_machine::StateMachineTest;
use tern_harness::conformance::{self, Conformance, ProptestConfig, Settings, Subject};
use tern_harness::contract::plugin::{ImplError, Implementation, InitParams, Receiver};
use tern_harness::contract::storage::Storage;
use tern_harness::contract::world::AgentWorld;
use tern_harness::implementations::mutants::{Mutant, MutantImpl};
use tern_harness::implementations::reference::ReferenceImpl;
use tern_harness::simulator::driver::{play, steps_of};
use tern_harness::simulator::happening::notes;
use tern_harness::simulator::runner::{Played, Run, RunConfig};

/// The mutant the tests catch: it needs an execution, a crash and a second
/// ask, so it tests the crashes and the executions of the state machine.
const MUTANT: Mutant = Mutant::MemoryDedup;

/// The reference, counting its start-ups (crashes restart it).
struct Counted;

static STARTS: AtomicUsize = AtomicUsize::new(0);

impl Implementation for Counted {
    fn name(&self) -> String {
        "counted reference".to_owned()
    }

    fn start(
        &self,
        init: &InitParams,
        storage: Storage,
        world: AgentWorld,
    ) -> Result<Box<dyn Receiver>, ImplError> {
        STARTS.fetch_add(1, Ordering::SeqCst);
        ReferenceImpl.start(init, storage, world)
    }
}

struct Reference;

impl Subject for Reference {
    fn implementation() -> &'static dyn Implementation {
        &Counted
    }
}

struct Caught;

impl Subject for Caught {
    fn implementation() -> &'static dyn Implementation {
        &MutantImpl(MUTANT)
    }
}

/// Few cases, a fixed proptest seed and no regression file: the same test
/// every time, writing nothing.
fn quick(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        rng_seed: RngSeed::Fixed(15),
        failure_persistence: None,
        max_shrink_time: 20_000,
        ..conformance::config()
    }
}

fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn the_reference_conforms() {
    let cases = 20;
    let before = STARTS.load(Ordering::SeqCst);
    conformance::check_with::<Reference>(quick(cases));
    let starts = STARTS.load(Ordering::SeqCst) - before;
    let agents = Settings::default().agents;
    // Every case started its agents, and crashes restarted some.
    assert!(
        starts > cases as usize * agents,
        "{starts} start-ups in {cases} cases"
    );
}

#[test]
fn a_mutant_is_caught_by_its_invariant() {
    let failed = catch_unwind(|| conformance::check_with::<Caught>(quick(64)));
    let message = panic_text(failed.expect_err("the mutant passed"));
    let target = MUTANT.target();
    assert!(
        message.contains(&format!(
            "violation of {} (seed section {})",
            target.name, target.section
        )),
        "{message}"
    );
    // The run that shrinking left, in shorthand, ending where it failed.
    assert!(message.contains("the run in shorthand"), "{message}");
    assert!(message.contains("minimal failing input"), "{message}");
}

/// The config `tern-sim run --faults` gives a seed.
fn config(seed: u64) -> RunConfig {
    Settings::default().config(seed)
}

#[test]
fn the_machine_judges_a_run_as_the_simulator_does() {
    let mut judged = 0;
    for seed in 0..40 {
        let c = config(seed);
        let steps = steps_of(&c);
        let simulated = play(&c, &steps, &MutantImpl(MUTANT), false);
        let machine = catch_unwind(AssertUnwindSafe(|| {
            Conformance::<Caught>::test_sequential(quick(1), c.clone(), steps.clone(), None)
        }));
        match (simulated.violation, machine) {
            (None, Ok(())) => {}
            (Some(v), Err(payload)) => {
                let message = panic_text(payload);
                let said = format!(
                    "violation of {} (seed section {}) at step {}",
                    v.failure.invariant.name, v.failure.invariant.section, v.step
                );
                assert!(message.starts_with(&said), "seed {seed}: {said}\n{message}");
                assert!(
                    message.contains(&format!("world: seed {seed}, 3 agents")),
                    "{message}"
                );
                judged += 1;
            }
            (v, m) => panic!(
                "seed {seed}: the simulator says {v:?}, the machine {:?}",
                m.map_err(panic_text)
            ),
        }
    }
    assert!(judged > 0, "the mutant passed every seed: nothing compared");
}

/// A run played one step at a time, as the state machine plays it.
fn stepwise(config: &RunConfig, implementation: &dyn Implementation) -> Played {
    let steps = steps_of(config);
    let mut run = match Run::new(config.clone(), implementation, true) {
        Ok(run) => run,
        Err(v) => panic!("start-up failed: {v:?}"),
    };
    for step in &steps {
        if let Err(v) = run.step(step) {
            return run.failed(v);
        }
    }
    run.finish()
}

#[test]
fn a_run_played_step_by_step_is_the_run_played_whole() {
    let mut violations = 0;
    for seed in 0..12 {
        let c = config(seed);
        for implementation in [&ReferenceImpl as &dyn Implementation, &MutantImpl(MUTANT)] {
            let whole = play(&c, &steps_of(&c), implementation, true);
            let parts = stepwise(&c, implementation);
            assert_eq!(whole.stats, parts.stats, "seed {seed}");
            assert_eq!(whole.violation, parts.violation, "seed {seed}");
            assert_eq!(
                notes(&whole.happenings),
                notes(&parts.happenings),
                "seed {seed}"
            );
            assert!(whole.stats.deliveries > 0, "seed {seed}");
            violations += usize::from(whole.violation.is_some());
        }
    }
    assert!(
        violations > 0,
        "no run failed: the failing path is untested"
    );
}
