//! The state machine test: steps played into an implementation, judged by
//! the simulator's run.

use std::marker::PhantomData;

use proptest_state_machine::StateMachineTest;

use super::text::failure;
use super::{Subject, TernWorld};
use crate::simulator::runner::{Run, RunConfig};
use crate::simulator::workload::Step;

/// The [`StateMachineTest`] that plays [`TernWorld`]'s steps into
/// `S::implementation()`, one agent per receiver, and fails at the first
/// broken invariant.
///
/// The system under test is a stepwise [`Run`]: the implementation's
/// receivers, the oracle each is paired with, the network, storage and
/// clock. Each transition plays one step and every check after it; the
/// teardown lets the network drain, compares every view once more and
/// checks that agents that stored the same messages agree, as the end of a
/// `tern-sim run` run does. A failure panics with the violation and the run
/// in shorthand, which proptest reports for the smallest failing case.
///
/// [`check`](super::check) drives it; `prop_state_machine!` can too:
///
/// ```
/// use proptest_state_machine::prop_state_machine;
/// use tern_harness::conformance::{Conformance, Subject};
/// use tern_harness::contract::plugin::Implementation;
/// use tern_harness::implementations::reference::ReferenceImpl;
///
/// struct Reference;
///
/// impl Subject for Reference {
///     fn implementation() -> &'static dyn Implementation {
///         &ReferenceImpl
///     }
/// }
///
/// prop_state_machine! {
///     #![proptest_config(tern_harness::conformance::ProptestConfig {
///         cases: 2,
///         ..tern_harness::conformance::config()
///     })]
///     // `#[test]` here, in a test file.
///     fn conforms(sequential 1..=50 => Conformance<Reference>);
/// }
/// # conforms();
/// ```
///
/// [`Run`]: crate::simulator::runner::Run
pub struct Conformance<S>(PhantomData<S>);

impl<S: Subject> StateMachineTest for Conformance<S> {
    type SystemUnderTest = Run<'static>;
    type Reference = TernWorld<S>;

    fn init_test(config: &RunConfig) -> Run<'static> {
        // Recorded: a failure shows the run in shorthand.
        match Run::new(config.clone(), S::implementation(), true) {
            Ok(run) => run,
            Err(v) => panic!("{}", failure(config, &v, &[])),
        }
    }

    fn apply(mut run: Run<'static>, config: &RunConfig, step: Step) -> Run<'static> {
        match run.step(&step) {
            Ok(()) => run,
            Err(v) => {
                let violation = (*v).clone();
                let played = run.failed(v);
                panic!("{}", failure(config, &violation, &played.happenings))
            }
        }
    }

    fn teardown(run: Run<'static>, config: RunConfig) {
        let played = run.finish();
        if let Some(v) = &played.violation {
            panic!("{}", failure(&config, v, &played.happenings));
        }
    }
}
