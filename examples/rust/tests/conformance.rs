//! tern-sim's conformance state machine, in this crate's `cargo test`: the
//! example receiver conforms, and a receiver with a known defect is caught
//! by the invariant it breaks.

use tern_example_receiver::ExampleImpl;
use tern_harness::conformance::{self, ProptestConfig, Subject};
use tern_harness::contract::plugin::Implementation;
use tern_harness::implementations::mutants::{Mutant, MutantImpl};

/// The implementation under test.
struct Example;

impl Subject for Example {
    fn implementation() -> &'static dyn Implementation {
        &ExampleImpl
    }
}

/// Randomized runs among three agents with every fault; a failure is
/// shrunk, reported with the run in shorthand, and saved in
/// `tests/conformance.proptest-regressions` to be played first next time.
#[test]
fn the_example_conforms() {
    conformance::check::<Example>();
}

/// tern-sim's mutant that keeps its executed effects in memory only: after
/// a crash it performs an effect again.
struct Forgetful;

impl Subject for Forgetful {
    fn implementation() -> &'static dyn Implementation {
        &MutantImpl(Mutant::MemoryDedup)
    }
}

/// The same machine fails a broken receiver, naming the broken invariant.
/// Its failure is expected, so it is not saved as a regression.
#[test]
#[should_panic(expected = "violation of at-most-once-effects")]
fn a_receiver_that_forgets_its_executions_is_caught() {
    conformance::check_with::<Forgetful>(ProptestConfig {
        failure_persistence: None,
        ..conformance::config()
    });
}
