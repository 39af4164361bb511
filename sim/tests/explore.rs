//! Exhaustive exploration: the reference exhausts every built-in scope,
//! mutants are caught with a shortest counterexample that replays, schedule
//! counts match what can be worked out by hand, and the thread count
//! changes nothing.

use std::path::Path;

use tern_harness::catalogue::situations::{Moment, Situation};
use tern_harness::contract::plugin::Implementation;
use tern_harness::corpus::{Case, Corpus};
use tern_harness::explore::builtin;
use tern_harness::explore::scope::{FaultBudget, Scope};
use tern_harness::explore::search::{explore, Exploration, Limits, Prepared, Watch};
use tern_harness::explore::trace;
use tern_harness::implementations::mutants::{Mutant, MutantImpl};
use tern_harness::implementations::reference::ReferenceImpl;

fn corpus() -> Corpus {
    Corpus::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios"))
        .expect("the corpus loads")
}

/// Merging and sleep sets together, as `tern-sim explore` does by
/// default, or neither.
fn limits(reduce: bool, jobs: usize) -> Limits {
    Limits {
        merge: reduce,
        sleep_sets: reduce,
        max_states: 1_000_000,
        jobs,
        power_loss: false,
    }
}

fn run<'s>(
    scope: &'s Scope,
    imp: &dyn Implementation,
    limits: Limits,
) -> (Exploration, Prepared<'s>) {
    let prepared = Prepared::new(scope, true);
    let e = explore(
        &prepared,
        imp,
        Default::default(),
        limits,
        &Watch::default(),
        &|| false,
    );
    (e, prepared)
}

#[test]
fn the_reference_exhausts_every_built_in_scope() {
    let corpus = corpus();
    let scopes = builtin::all(Some(&corpus)).expect("the built-in scopes load");
    // The list ends with the corpus family.
    assert_eq!(scopes.len() + 1, builtin::list().len());
    for scope in &scopes {
        let (e, _) = run(scope, &ReferenceImpl, limits(true, 2));
        assert_eq!(e.violation, None, "{}", scope.id);
        assert!(e.exhausted, "{}", scope.id);
        assert!(
            e.counts.schedules > 0 && e.counts.merged > 0,
            "{}: {:?}",
            scope.id,
            e.counts
        );
    }
}

/// A mutant per family of bugs the built-in scopes are about: crashes
/// around effects, durability of deliveries, revisions, pending, grants.
const CAUGHT: &[(&str, &str, &str)] = &[
    ("pending-in-memory", "revision-race", "history-preserved"),
    (
        "memory-dedup",
        "commit-execute-crash",
        "at-most-once-effects",
    ),
    ("intent-as-done", "commit-execute-crash", "executions-agree"),
    ("dedup-after-answer", "revision-race", "dedup"),
    ("last-revision-wins", "revision-race", "no-silent-branch"),
    (
        "valid-at-expiry-instant",
        "grant-expiry",
        "authority-before-effect",
    ),
    ("trusts-from", "spoofed-same-id", "identity-bound"),
    ("never-invalidates", "late-id-conflict", "id-conflict"),
    ("executes-superseded", "renewal", "lifecycle-respected"),
    (
        "ignores-revision-conflict",
        "report-revision-conflict",
        "conflict-blocks-execution",
    ),
    ("stores-cut-delivery-twice", "pending-chain", "views-agree"),
    // Needs a delivery with no view asked before the crash that follows.
    ("group-commit", "revision-race", "history-preserved"),
    // Needs two crashes: the second inside the recovery.
    (
        "distrusts-tail-after-failed-start",
        "crash-in-recovery",
        "history-preserved",
    ),
];

#[test]
fn mutants_are_caught_with_a_shortest_counterexample_that_replays() {
    let corpus = corpus();
    for &(mutant, scope, invariant) in CAUGHT {
        let imp = MutantImpl(Mutant::by_name(mutant).expect("a mutant of the zoo"));
        let scope = builtin::by_name(scope, Some(&corpus)).expect("a built-in scope");
        let (e, prepared) = run(&scope, &imp, limits(true, 1));
        let ce = e
            .violation
            .as_ref()
            .unwrap_or_else(|| panic!("{mutant} survives {}", scope.id));
        assert_eq!(ce.failure.invariant.name, invariant, "{mutant}: {ce:?}");
        assert!(!e.exhausted);
        // The same schedule fails again, with the same invariant, at its
        // last move; every shorter prefix passes.
        let replayed = prepared.replay(&imp, Default::default(), &ce.schedule);
        let (at, m) = *replayed.expect_err("the counterexample replays");
        assert_eq!(at, ce.schedule.len().checked_sub(1), "{mutant}");
        assert_eq!(m, ce.failure, "{mutant}");
        for n in 0..ce.schedule.len() {
            assert!(
                prepared
                    .replay(&imp, Default::default(), &ce.schedule[..n])
                    .is_ok(),
                "{mutant}: a prefix of {n} moves already fails"
            );
        }
        // Breadth-first: no schedule of fewer moves fails, merged or not.
        let (unmerged, _) = run(&scope, &imp, limits(false, 1));
        let other = unmerged.violation.expect("caught without merging too");
        assert_eq!(other.schedule.len(), ce.schedule.len(), "{mutant}");
        // The saved trace reads back to the same scope and schedule, and
        // the reference passes it.
        let doc = trace::document(&scope, &prepared, ce, "x", false);
        assert!(trace::is_trace(&doc));
        let saved = trace::read(Path::new("t.json"), &doc).expect("the trace reads back");
        assert_eq!(saved.schedule, ce.schedule);
        assert_eq!(saved.scope.actions, scope.actions);
        let again = Prepared::new(&saved.scope, true);
        assert!(again
            .replay(&imp, Default::default(), &saved.schedule)
            .is_err());
        assert!(again
            .replay(&ReferenceImpl, Default::default(), &saved.schedule)
            .is_ok());
    }
}

/// Corpus case `id` and its scope, whose hand counts below take its three
/// actions.
fn three_actions_of(id: &str) -> (Case, Scope) {
    let case = corpus()
        .cases
        .into_iter()
        .find(|c| c.id == id)
        .expect("the case");
    let scope = Scope::from_case(&case, FaultBudget::default());
    assert_eq!(scope.actions.len(), 3, "{id}");
    (case, scope)
}

#[test]
fn schedule_counts_match_the_hand_count() {
    // Three distinct deliveries, no fault: 3! = 6 orders. Without merging
    // the tree has 3 + 3·2 + 3·2·1 = 15 transitions and 1 + 15 states.
    let (case, scope) = three_actions_of("pending.chained-release");
    let (full, _) = run(&scope, &ReferenceImpl, limits(false, 1));
    assert!(full.exhausted && full.violation.is_none());
    assert_eq!(full.counts.schedules, 6);
    assert_eq!(full.counts.transitions, 15);
    assert_eq!(full.counts.states, 16);
    assert_eq!(full.counts.depth, 3);
    let (merged, _) = run(&scope, &ReferenceImpl, limits(true, 1));
    assert!(merged.exhausted && merged.violation.is_none());
    assert!(merged.counts.schedules < 6, "{:?}", merged.counts);
    assert!(merged.counts.states < 16 && merged.counts.merged > 0);
    // One crash adds, per delivery, two crash points, each followed by a
    // restart (three ways), and a crash between operations: more of both.
    let crashing = Scope::from_case(
        &case,
        FaultBudget {
            crashes: 1,
            duplicates: 0,
        },
    );
    let (c, _) = run(&crashing, &ReferenceImpl, limits(false, 1));
    assert!(c.exhausted && c.violation.is_none());
    assert!(c.counts.schedules > 6 && c.counts.depth > 3);
    // The same verdicts with and without merging, for a mutant too.
    let imp = MutantImpl(Mutant::by_name("silent-releases").expect("a mutant"));
    let (a, _) = run(&scope, &imp, limits(false, 1));
    let (b, _) = run(&scope, &imp, limits(true, 1));
    assert_eq!(
        a.violation.map(|v| v.failure),
        b.violation.map(|v| v.failure)
    );
}

#[test]
fn the_thread_count_changes_nothing() {
    let corpus = corpus();
    for name in ["grant-expiry", "report-revision-conflict"] {
        let scope = builtin::by_name(name, Some(&corpus)).expect("a built-in scope");
        let (one, _) = run(&scope, &ReferenceImpl, limits(true, 1));
        let (two, _) = run(&scope, &ReferenceImpl, limits(true, 2));
        assert_eq!(one, two, "{name}");
        let imp = MutantImpl(Mutant::by_name("expires-early").expect("a mutant"));
        let (one, _) = run(&scope, &imp, limits(true, 1));
        let (two, _) = run(&scope, &imp, limits(true, 3));
        assert_eq!(one, two, "{name}");
    }
}

#[test]
fn a_scope_file_reads_back_as_it_was_written_and_errors_name_the_member() {
    let corpus = corpus();
    let scope = builtin::by_name("grant-expiry", Some(&corpus)).expect("a built-in scope");
    let text = scope.to_json().to_string();
    let again =
        Scope::from_json(Path::new("x.json"), &text, None).expect("a written scope reads back");
    assert_eq!(again.actions, scope.actions);
    assert_eq!(again.budget, scope.budget);
    assert_eq!(again.setup, scope.setup);
    let mut bad = scope.to_json();
    bad["deliver"][1]["at"] = serde_json::json!("yesterday");
    let e = Scope::from_json(Path::new("x.json"), &bad.to_string(), None).unwrap_err();
    assert!(e.to_string().contains("/deliver/1/at"), "{e}");
    let e = Scope::from_json(
        Path::new("x.json"),
        r#"{"id":"a","case":"no.such-case"}"#,
        Some(&corpus),
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("no corpus case `no.such-case`"),
        "{e}"
    );
    let e = Scope::from_json(Path::new("x.json"), r#"{"id":"a","cases":"x"}"#, None).unwrap_err();
    assert!(e.to_string().contains("unknown field `cases`"), "{e}");
}

#[test]
fn the_reference_exhausts_the_small_cases_of_the_corpus_family() {
    // Every order of every corpus case of up to five actions: no false
    // alarm, whatever the order the frames arrive in.
    let corpus = corpus();
    let family = builtin::corpus_family(&corpus, 5);
    assert!(family.len() > 150, "{}", family.len());
    for scope in &family {
        let (e, _) = run(scope, &ReferenceImpl, limits(true, 2));
        assert_eq!(e.violation, None, "{}", scope.id);
        assert!(e.exhausted, "{}", scope.id);
    }
    // And a parse mutant dies in it.
    let imp = MutantImpl(Mutant::by_name("skips-truncation-check").expect("a mutant"));
    assert!(family
        .iter()
        .any(|scope| run(scope, &imp, limits(true, 1)).0.violation.is_some()));
}

/// Every mutant of the zoo dies in the default scopes (the built-in ones,
/// then the corpus family), and the reference passes them all. Slow in a
/// debug build, so CI runs it in release:
/// `cargo test --release -p tern-harness --test explore -- --ignored`.
#[test]
#[ignore = "a release-build check: every mutant against every default scope"]
fn every_mutant_of_the_zoo_dies_in_the_default_scopes() {
    let corpus = corpus();
    // Small scopes first: a mutant stops at the first scope that kills it,
    // so its cost is the scopes it passes before that one.
    let mut scopes = builtin::corpus_family(&corpus, 12);
    scopes.sort_by_key(Scope::distinct_actions);
    scopes.extend(builtin::all(Some(&corpus)).expect("the built-in scopes load"));
    for scope in &scopes {
        let (e, _) = run(scope, &ReferenceImpl, limits(true, 2));
        assert!(e.violation.is_none() && e.exhausted, "{}: {e:?}", scope.id);
    }
    let survivors: Vec<&str> = Mutant::ALL
        .iter()
        .filter(|m| {
            let imp = MutantImpl(**m);
            !scopes
                .iter()
                .any(|scope| run(scope, &imp, limits(true, 2)).0.violation.is_some())
        })
        .map(|m| m.name())
        .collect();
    assert!(
        survivors.is_empty(),
        "mutants that survive every scope: {survivors:?}"
    );
}

/// Three deliveries the oracle shows commute pairwise (three messages of
/// one thread, none referring to another), no fault: unreduced, 3! = 6
/// orders in 15 transitions; with sleep sets alone, each subset of them is
/// reached once, in the scope's order: 2³ − 1 = 7 transitions, one
/// schedule, and the 5 other first moves left out. Every mutant of the zoo
/// gets the same verdict either way.
#[test]
fn sleep_sets_give_the_hand_count_and_the_same_verdicts() {
    let (_, scope) = three_actions_of("id.case-sensitive-ids");
    let only = |sleep_sets: bool| Limits {
        merge: false,
        sleep_sets,
        max_states: 1_000_000,
        jobs: 1,
        power_loss: false,
    };
    let (full, _) = run(&scope, &ReferenceImpl, only(false));
    assert!(full.exhausted && full.violation.is_none());
    assert_eq!(
        (
            full.counts.transitions,
            full.counts.schedules,
            full.counts.slept
        ),
        (15, 6, 0)
    );
    let (slept, _) = run(&scope, &ReferenceImpl, only(true));
    assert!(slept.exhausted && slept.violation.is_none());
    assert_eq!(
        (
            slept.counts.transitions,
            slept.counts.schedules,
            slept.counts.slept
        ),
        (7, 1, 5)
    );
    for &m in Mutant::ALL {
        let imp = MutantImpl(m);
        let verdict = |e: Exploration| (e.exhausted, e.violation.map(|v| v.failure.invariant.name));
        assert_eq!(
            verdict(run(&scope, &imp, only(false)).0),
            verdict(run(&scope, &imp, only(true)).0),
            "{}",
            m.name()
        );
    }
}

/// While a crash is left, two orders of the same deliveries reach states
/// that differ only in the last frame answered, whose acknowledgement a
/// crash between operations would lose. Only the moves that read that
/// frame are played from the second of them (a twin); every other move
/// leads where it leads from the first. An execution the oracle refuses is
/// not played with a crash at its effect, which it never reaches. Both
/// must leave every state reached, and every mutant of the zoo with the
/// verdict it gets when every move is played from every state.
#[test]
fn twins_and_unreached_crashes_leave_every_state_and_verdict_as_it_was() {
    let corpus = corpus();
    let scopes = builtin::all(Some(&corpus)).expect("the built-in scopes load");
    let scope = |id: &str| {
        scopes
            .iter()
            .find(|s| s.id == id)
            .expect("a built-in scope")
    };
    let merged_only = |sleep_sets: bool| Limits {
        merge: true,
        sleep_sets,
        max_states: 1_000_000,
        jobs: 1,
        power_loss: false,
    };
    for id in [
        "pending-chain",
        "late-id-conflict",
        "spoofed-same-id",
        "commit-execute-crash",
    ] {
        let scope = scope(id);
        assert!(scope.budget.crashes > 0, "{id} crashes");
        let (every, _) = run(scope, &ReferenceImpl, merged_only(false));
        let (twins, _) = run(scope, &ReferenceImpl, merged_only(true));
        assert!(every.exhausted && twins.exhausted, "{id}");
        assert_eq!(every.counts.states, twins.counts.states, "{id}");
        // Every crash at an effect that fires is still played: only those
        // that never fire are left out.
        for moment in [Moment::CrashBeforeEffect, Moment::CrashAfterEffect] {
            let at_effect = Situation::Moment(moment);
            assert_eq!(
                every.situations.get(at_effect),
                twins.situations.get(at_effect),
                "{id}: {}",
                at_effect.name()
            );
        }
        assert!(
            twins.counts.transitions < every.counts.transitions,
            "{id}: {:?} against {:?}",
            twins.counts,
            every.counts
        );
    }
    let scope = scope("commit-execute-crash");
    for &m in Mutant::ALL {
        let imp = MutantImpl(m);
        let verdict = |e: Exploration| (e.exhausted, e.violation.map(|v| v.failure.invariant.name));
        assert_eq!(
            verdict(run(scope, &imp, merged_only(false)).0),
            verdict(run(scope, &imp, merged_only(true)).0),
            "{}",
            m.name()
        );
    }
}

/// The explorer forks the state it expands, once per move, instead of
/// replaying its schedule for every move, when the receiver can be copied
/// (`Receiver::fork`). A copy that is not what a replay would give must not
/// pass unnoticed: debug builds check forked children against replayed
/// ones. This receiver's copy forgets every message it was given.
#[cfg(debug_assertions)]
#[test]
#[should_panic(expected = "forked")]
fn a_fork_that_differs_from_its_replay_is_caught_in_debug_builds() {
    use tern_harness::contract::plugin::{Delivered, ImplError, InitParams, Receiver, View};
    use tern_harness::contract::storage::Storage;
    use tern_harness::contract::world::AgentWorld;
    use tern_model::ledger::{Execution, LocalTime};
    use tern_model::message::{MessageRef, Principal, ThreadId};

    struct Forgetful {
        init: InitParams,
        inner: Box<dyn Receiver>,
    }
    impl Receiver for Forgetful {
        fn identity(&self) -> tern_harness::contract::plugin::Identity {
            self.inner.identity()
        }
        fn deliver(
            &mut self,
            frame: &[u8],
            principal: &Principal,
            now: LocalTime,
        ) -> Result<Delivered, ImplError> {
            self.inner.deliver(frame, principal, now)
        }
        fn execute(
            &mut self,
            thread: &ThreadId,
            commitment: &MessageRef,
            now: LocalTime,
        ) -> Result<Execution, ImplError> {
            self.inner.execute(thread, commitment, now)
        }
        fn view(&mut self, thread: &ThreadId) -> Result<View, ImplError> {
            self.inner.view(thread)
        }
        fn fork(&self, _: &Storage, world: &AgentWorld) -> Option<Box<dyn Receiver>> {
            // The defect: a fresh receiver on empty storage.
            let inner = ReferenceImpl
                .start(&self.init, Storage::new(), world.clone())
                .ok()?;
            Some(Box::new(Forgetful {
                init: self.init.clone(),
                inner,
            }))
        }
    }
    struct ForgetfulImpl;
    impl Implementation for ForgetfulImpl {
        fn name(&self) -> String {
            "forgetful".into()
        }
        fn start(
            &self,
            init: &InitParams,
            storage: Storage,
            world: AgentWorld,
        ) -> Result<Box<dyn Receiver>, ImplError> {
            Ok(Box::new(Forgetful {
                init: init.clone(),
                inner: ReferenceImpl.start(init, storage, world)?,
            }))
        }
    }
    let (_, scope) = three_actions_of("id.case-sensitive-ids");
    // The reference explores it cleanly, forked: only the bad copy fails.
    let (e, _) = run(&scope, &ReferenceImpl, limits(true, 1));
    assert!(e.exhausted && e.violation.is_none());
    run(&scope, &ForgetfulImpl, limits(true, 1));
}
