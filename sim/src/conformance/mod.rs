//! Randomized conformance as a proptest state machine, for implementations
//! written in Rust: a vendor's own `cargo test` plays the simulator's
//! worlds against its implementation, with proptest's shrinking and its
//! regression files.
//!
//! [`TernWorld`] is the reference state machine (a
//! [`ReferenceStateMachine`]): its state is the world of a run (agents,
//! grants, skews, faults, drawn from a seed as `tern-sim run` draws them) and
//! its transitions are the simulator's workload [`Step`]s. [`Conformance`]
//! is the [`StateMachineTest`] that plays those steps into any
//! [`Implementation`]: each step goes through a stepwise [`Run`], which holds
//! the oracle (one reference ledger per agent), the faulty network and the
//! crashes, and judges every operation exactly as `tern-sim run` does. A
//! broken invariant fails the test case with its name, its section of the
//! seed, expected against actual, and the run in shorthand; proptest then
//! shrinks the steps to a small counterexample and saves it.
//!
//! An implementation is named by a type that implements [`Subject`]. The
//! few lines a vendor writes, in a test of their own crate:
//!
//! ```
//! use tern_harness::conformance::{self, Subject};
//! use tern_harness::contract::plugin::Implementation;
//! # use tern_harness::implementations::reference::ReferenceImpl as MyImplementation;
//!
//! struct Mine;
//!
//! impl Subject for Mine {
//!     fn implementation() -> &'static dyn Implementation {
//!         &MyImplementation
//!     }
//! }
//!
//! // In a `#[test]` function:
//! # let _ = || {
//! conformance::check::<Mine>();
//! # };
//! # conformance::check_with::<Mine>(conformance::ProptestConfig {
//! #     cases: 2,
//! #     ..conformance::config()
//! # });
//! ```
//!
//! [`check`] runs [`config`]'s cases; [`check_with`] takes another
//! configuration (fewer cases, no regression file). The same machine plugs
//! into `proptest_state_machine::prop_state_machine!` for full control:
//! `fn conforms(sequential 1..=200 => Conformance<Mine>);`.
//!
//! [`ReferenceStateMachine`]: proptest_state_machine::ReferenceStateMachine
//! [`StateMachineTest`]: proptest_state_machine::StateMachineTest
//! [`Step`]: crate::simulator::workload::Step
//! [`Run`]: crate::simulator::runner::Run
//! [`Implementation`]: crate::contract::plugin::Implementation

// Vendors read this module's rustdoc before anything else of tern-sim's.
#![warn(missing_docs)]

mod machine;
mod text;
mod world;

use proptest::test_runner::TestRunner;
use proptest_state_machine::{ReferenceStateMachine, StateMachineTest};

use crate::contract::plugin::Implementation;

pub use machine::Conformance;
pub use proptest::test_runner::Config as ProptestConfig;
pub use world::{Settings, TernWorld};

/// An implementation under test, named by a type: proptest's state machine
/// traits have no room for a value, so the implementation is reached
/// through this type's functions.
///
/// A unit struct, a constant or a `static` gives the `'static` reference:
///
/// ```
/// use tern_harness::conformance::{Settings, Subject};
/// use tern_harness::contract::plugin::Implementation;
/// use tern_harness::implementations::mutants::{Mutant, MutantImpl};
///
/// /// A receiver that forgets its executions when it restarts.
/// struct Forgetful;
///
/// impl Subject for Forgetful {
///     fn implementation() -> &'static dyn Implementation {
///         &MutantImpl(Mutant::MemoryDedup)
///     }
///
///     fn settings() -> Settings {
///         Settings { agents: 2, ..Settings::default() }
///     }
/// }
/// # assert_eq!(Forgetful::implementation().name(), "mutant memory-dedup");
/// ```
pub trait Subject: 'static {
    /// The implementation every agent of every run starts, and restarts
    /// after each crash.
    fn implementation() -> &'static dyn Implementation;

    /// The worlds it is tested in; the default is every fault among three
    /// agents, as `tern-sim run --faults` plays them.
    fn settings() -> Settings {
        Settings::default()
    }
}

/// The proptest configuration [`check`] uses: 100 cases, the runs of a
/// default `tern-sim run` (each case is a whole run of several agents, so
/// fewer than proptest's 256), and a minute of shrinking, since each
/// attempt replays a run. `PROPTEST_CASES` and `PROPTEST_MAX_SHRINK_TIME`
/// still decide, when set, as for any proptest test. Failures are saved in
/// a `proptest-regressions` file beside the test, and replayed first.
pub fn config() -> ProptestConfig {
    let from_env = ProptestConfig::default();
    let set = |name: &str| std::env::var_os(name).is_some();
    ProptestConfig {
        cases: if set("PROPTEST_CASES") {
            from_env.cases
        } else {
            100
        },
        max_shrink_time: if set("PROPTEST_MAX_SHRINK_TIME") {
            from_env.max_shrink_time
        } else {
            60_000
        },
        ..from_env
    }
}

/// Checks that `S` conforms: [`config`]'s cases, each a run of up to
/// `S::settings().steps` steps. Panics (fails the test) with the smallest
/// counterexample found.
#[track_caller]
pub fn check<S: Subject>() {
    check_with::<S>(config());
}

/// [`check`] with another proptest configuration. Regression files are
/// written beside the calling test's source (as `proptest!` would) unless
/// `config.failure_persistence` is `None`.
///
/// ```
/// use tern_harness::conformance::{self, ProptestConfig, Subject};
/// use tern_harness::contract::plugin::Implementation;
/// use tern_harness::implementations::mutants::{Mutant, MutantImpl};
///
/// struct TrustsFrom;
///
/// impl Subject for TrustsFrom {
///     fn implementation() -> &'static dyn Implementation {
///         &MutantImpl(Mutant::TrustsFrom)
///     }
/// }
///
/// // A receiver that believes `from` is caught, by the invariant meant for it.
/// let config = ProptestConfig {
///     failure_persistence: None,
///     max_shrink_iters: 50,
///     ..conformance::config()
/// };
/// let check = || conformance::check_with::<TrustsFrom>(config);
/// let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(check));
/// let message = failed.unwrap_err().downcast::<String>().unwrap();
/// assert!(message.contains("violation of identity-bound"), "{message}");
/// ```
#[track_caller]
pub fn check_with<S: Subject>(mut config: ProptestConfig) {
    if config.source_file.is_none() {
        config.source_file = Some(std::panic::Location::caller().file());
    }
    let settings = S::settings();
    if let Err(why) = settings.validate() {
        panic!("tern-sim conformance: {why}");
    }
    let strategy = TernWorld::<S>::sequential_strategy(1..=settings.steps);
    let mut runner = TestRunner::new(config.clone());
    let result = runner.run(&strategy, |(world, steps, seen)| {
        Conformance::<S>::test_sequential(config.clone(), world, steps, seen);
        Ok(())
    });
    if let Err(failure) = result {
        panic!("{failure}\n{runner}");
    }
}
