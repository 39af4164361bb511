//! The corpus against the reference and the mutant zoo, in process: the
//! reference passes every case; every mutant is refused certification, and
//! by a failure that names the clause its defect breaks. Also the
//! traceability rules a corpus must keep: every seed clause has a case,
//! every citation exists, the profile's table and the registry agree.

use std::path::PathBuf;

use tern_harness::certify::{run_corpus, run_simulation, Budget, Conformance, ExplorationRun};
use tern_harness::contract::plugin::{
    Capability, Delivered, Identity, ImplError, Implementation, InitParams, Receiver,
};
use tern_harness::contract::storage::Storage;
use tern_harness::contract::world::AgentWorld;
use tern_harness::corpus::play::{play, Check, Status};
use tern_harness::corpus::{Case, Corpus, CorpusError, Level};
use tern_harness::events::quiet;
use tern_harness::implementations::mutants::{Mutant, MutantImpl};
use tern_harness::implementations::reference::ReferenceImpl;
use tern_harness::judge::compare::RejectNames;
use tern_harness::judge::invariants;
use tern_harness::simulator::driver::Jobs;
use tern_harness::simulator::faults::FaultSet;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// These tests are about the corpus and the simulation; exploration has
/// its own (tests/explore.rs).
fn not_explored() -> ExplorationRun {
    ExplorationRun::skipped("not explored here")
}

fn corpus() -> Corpus {
    Corpus::load(&root().join("scenarios")).unwrap_or_else(|e| panic!("the corpus loads: {e}"))
}

#[test]
fn every_seed_clause_has_a_case_and_every_citation_exists() {
    let c = corpus();
    assert!(c.cases.len() >= 150, "{} cases", c.cases.len());
    let uncovered: Vec<&str> = c
        .coverage()
        .into_iter()
        .filter(|(_, cases)| cases.is_empty())
        .map(|(id, _)| id)
        .collect();
    assert!(
        uncovered.is_empty(),
        "clauses without a case: {uncovered:?}"
    );
    let profile = std::fs::read_to_string(root().join("docs/profile.md")).unwrap();
    for case in &c.cases {
        for rule in &case.rules {
            assert!(
                profile.contains(&format!("| {rule} |")),
                "{}: no rule `{rule}` in docs/profile.md",
                case.id
            );
        }
    }
}

#[test]
fn the_profile_table_and_the_clause_registry_agree() {
    let c = corpus();
    let profile = std::fs::read_to_string(root().join("docs/profile.md")).unwrap();
    let rows: Vec<(String, String)> = profile
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split(" | ").collect();
            let id = cells.first()?.strip_prefix("| ")?;
            (id.starts_with('S') && id.contains('.')).then(|| (id.to_owned(), cells[1].to_owned()))
        })
        .collect();
    assert_eq!(rows.len(), c.clauses.all().len());
    for ((id, text), clause) in rows.iter().zip(c.clauses.all()) {
        assert_eq!(id, &clause.id);
        assert!(
            text.starts_with(&format!("\"{}\"", clause.sentence)),
            "{id}: profile says {text}, registry says {:?}",
            clause.sentence
        );
    }
}

#[test]
fn the_reference_passes_every_case() {
    let c = corpus();
    let cases: Vec<&Case> = c.cases.iter().collect();
    let run = run_corpus(&cases, &ReferenceImpl, &quiet, || false);
    let failed: Vec<String> = run
        .cases
        .iter()
        .filter(|r| r.status != Status::Pass)
        .map(|r| format!("{}: {:?}", r.id, r.failure))
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
}

/// A certification's budget with no simulation run: the corpus alone.
fn no_simulation() -> Budget {
    Budget {
        seeds: 0,
        first_seed: 1,
        agents: 5,
        steps: 200,
        faults: FaultSet::all(),
        names: Default::default(),
        swarm: true,
        shard: tern_harness::shard::Shard::WHOLE,
        deadline: None,
    }
}

// Every defect against a rule the seed states must cost core
// conformance too, from the corpus alone. Four defects break only
// the profile's readings: the `not_addressed` rule (L-ID-5),
// numbers out of range counting as non-finite (P-JSON-8), a grant
// expired at its very instant (L-EXE-6), and a frame made durable
// but never answered being a duplicate when it comes again
// (`dedup.crash-after-durable-delivery`, a profile case).
// So do the mutants wrong in a situation only the profile's rules
// reach (a broken frame of a profile reading, a thread no context
// knows), a grant expired a millisecond early (L-EXE-6 again),
// `Invalidated` events (L-EVT-3), the refusal of an equivocated
// COMMIT (L-DUP-4) and the mismatches that make a commitment
// disputed (L-COM-8). A frame stored again after a cut delivery
// shows in the profile's reading that its redelivery is a
// duplicate (L-DUP-6), and an effect forgotten after an ID
// conflict in the profile's equivocation (L-DUP-4).
const PROFILE_ONLY: [Mutant; 10] = [
    Mutant::StoresTwice,
    Mutant::ForgetsEquivocatedEffects,
    Mutant::AcceptsMisrouted,
    Mutant::NonFinite,
    Mutant::ValidAtExpiry,
    Mutant::ExpiresEarly,
    Mutant::DedupAfterAnswer,
    Mutant::NeverInvalidates,
    Mutant::ExecutesIdConflicted,
    Mutant::ExecutesDisputed,
];

#[test]
fn every_mutant_is_refused_certification_with_its_clause() {
    let c = corpus();
    let cases: Vec<&Case> = c.cases.iter().collect();
    let no_simulation = no_simulation();
    let mut by_simulation = Vec::new();
    let mut problems = Vec::new();
    let mut core_conformant = Vec::new();
    for &m in Mutant::ALL {
        let imp = MutantImpl(m);
        let corpus_run = run_corpus(&cases, &imp, &quiet, || false);
        let failing: Vec<(&Case, Status)> = corpus_run
            .cases
            .iter()
            .filter(|r| r.status.is_failure())
            .map(|r| (*cases.iter().find(|c| c.id == r.id).unwrap(), r.status))
            .collect();
        // A mutant that breaks the contract itself (it errs) is named by
        // its `error` outcome; the others by a clause of their invariant.
        let named = failing.iter().any(|(case, status)| {
            case.is_about(m.target())
                || (m.target() == invariants::ALIVE && *status == Status::Error)
        });
        let sim = if named {
            run_simulation(&no_simulation, &imp, Jobs::default(), None, &quiet, || {
                false
            })
        } else {
            // Defects only faults reveal are for the simulation.
            let budget = Budget {
                seeds: 60,
                ..no_simulation.clone()
            };
            let identity = corpus_run.identity.as_ref().ok();
            let s = run_simulation(&budget, &imp, Jobs::default(), identity, &quiet, || false);
            match &s.counterexample {
                Some(ce) if ce.violation.failure.invariant == m.target() => {
                    by_simulation.push(m.name())
                }
                other => problems.push(format!(
                    "{}: corpus failures {:?}, simulation {:?}",
                    m.name(),
                    failing.iter().map(|(c, _)| &c.id).collect::<Vec<_>>(),
                    other.as_ref().map(|ce| ce.violation.failure.invariant.name)
                )),
            }
            s
        };
        let conformance = Conformance::of(&cases, &corpus_run, &sim, &not_explored());
        assert!(
            !conformance.certified(Level::Profile),
            "{} would be certified",
            m.name()
        );
        // Every defect against a rule the seed states must cost core
        // conformance too, from the corpus alone (see PROFILE_ONLY).
        if !PROFILE_ONLY.contains(&m)
            && m.situation().at_core()
            && Conformance::of(
                &cases,
                &corpus_run,
                &run_simulation(&no_simulation, &imp, Jobs::default(), None, &quiet, || {
                    false
                }),
                &not_explored(),
            )
            .core
        {
            core_conformant.push(m.name());
        }
    }
    assert!(
        core_conformant.is_empty(),
        "core conformant from the corpus alone although they break a seed rule: {core_conformant:?}"
    );
    assert!(problems.is_empty(), "{problems:#?}");
    // Any mutant the corpus misses is a gap in the corpus
    // (`pending.survives-crash-and-restart` closed the last known one).
    assert_eq!(
        by_simulation,
        Vec::<&str>::new(),
        "the corpus alone should name every other mutant's clause; only the simulation caught these"
    );
}

/// The reference with one deliberate difference that is not a defect of
/// behaviour: it claims no optional capability, or it calls every
/// rejection `envelope` and every refusal `unknown_grant`.
#[derive(Clone, Copy)]
enum Twist {
    ClaimsNothing,
    OtherNames,
}

struct Twisted(Twist, Box<dyn Receiver>);

impl Receiver for Twisted {
    fn identity(&self) -> Identity {
        let mut i = self.1.identity();
        if let Twist::ClaimsNothing = self.0 {
            i.capabilities.clear();
        }
        i
    }
    fn deliver(
        &mut self,
        frame: &[u8],
        principal: &tern_model::message::Principal,
        now: tern_model::ledger::LocalTime,
    ) -> Result<Delivered, ImplError> {
        let mut d = self.1.deliver(frame, principal, now)?;
        if let Twist::OtherNames = self.0 {
            for e in &mut d.events {
                if let tern_model::ledger::Outcome::Rejected(r) = &mut e.outcome {
                    r.class = tern_model::ledger::RejectClass::Envelope;
                }
            }
        }
        Ok(d)
    }
    fn execute(
        &mut self,
        thread: &tern_model::message::ThreadId,
        commitment: &tern_model::message::MessageRef,
        now: tern_model::ledger::LocalTime,
    ) -> Result<tern_model::ledger::Execution, ImplError> {
        use tern_model::ledger::{Execution, Refusal};
        Ok(match (self.0, self.1.execute(thread, commitment, now)?) {
            (Twist::OtherNames, Execution::Refused(_)) => Execution::Refused(Refusal::UnknownGrant),
            (_, e) => e,
        })
    }
    fn view(
        &mut self,
        thread: &tern_model::message::ThreadId,
    ) -> Result<tern_harness::contract::plugin::View, ImplError> {
        let mut v = self.1.view(thread)?.to_value();
        if let (Twist::OtherNames, Some(ms)) = (self.0, v["messages"].as_array_mut()) {
            for m in ms {
                if m.get("class").is_some() {
                    m["class"] = "envelope".into();
                }
            }
        }
        Ok(tern_harness::contract::plugin::View::from_value(&v))
    }
}

impl Implementation for Twist {
    fn name(&self) -> String {
        "the reference, twisted".into()
    }
    fn start(
        &self,
        init: &InitParams,
        storage: Storage,
        world: AgentWorld,
    ) -> Result<Box<dyn Receiver>, ImplError> {
        Ok(Box::new(Twisted(
            *self,
            ReferenceImpl.start(init, storage, world)?,
        )))
    }
}

#[test]
fn cases_needing_an_unclaimed_capability_do_not_apply() {
    let c = corpus();
    let cases: Vec<&Case> = c.cases.iter().collect();
    let run = run_corpus(&cases, &Twist::ClaimsNothing, &quiet, || false);
    for (case, r) in cases.iter().zip(&run.cases) {
        let expected = if case.requires.contains(&Capability::Execute) {
            Status::NotApplicable
        } else {
            Status::Pass
        };
        assert_eq!(r.status, expected, "{}", case.id);
    }
    assert!(run.cases.iter().any(|r| r.status == Status::NotApplicable));
}

#[test]
fn a_claimed_capability_that_fails_is_a_false_claim() {
    let c = corpus();
    let case = c
        .cases
        .iter()
        .find(|k| {
            k.requires.contains(&Capability::Execute)
                && play(
                    k,
                    &MutantImpl(Mutant::IgnoresExpiry),
                    &Identity::builtin("m"),
                )
                .status
                    != Status::Pass
        })
        .expect("some execution case catches a grant that never expires");
    let run = play(
        case,
        &MutantImpl(Mutant::IgnoresExpiry),
        &Identity::builtin("m"),
    );
    assert_eq!(
        run.status,
        Status::FalseClaim,
        "{}: {:?}",
        case.id,
        run.failure
    );
}

fn load_one(text: &str) -> Result<Corpus, CorpusError> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        root().join("scenarios/clauses.json"),
        dir.path().join("clauses.json"),
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("s1")).unwrap();
    std::fs::write(dir.path().join("s1/x.bad-case.json"), text).unwrap();
    Corpus::load(dir.path())
}

const GOOD: &str = r#"{"id": "x.bad-case", "title": "t", "level": "core",
  "clauses": [{"id": "S8.2", "section": 8, "sentence": "duplicate JSON keys"}],
  "invariants": ["strict-parsing"],
  "setup": {"participant": "bob", "principal": "pk-bob", "config": {}},
  "steps": [{"op": "deliver", "principal": "alice", "frame": "{\"a\":1,\"a\":2}",
             "expect": {"events": [{"event": "delivered", "id": null, "outcome": "rejected", "class": "parse"}]}}]}"#;

#[test]
fn a_malformed_case_is_reported_with_its_file_and_member() {
    assert!(load_one(GOOD).is_ok(), "{:?}", load_one(GOOD).err());
    let cases = [
        (GOOD.replace("S8.2", "S8.99"), "/clauses/0", "not in clauses.json"),
        (GOOD.replace("duplicate JSON keys", "duplicate keys"), "/clauses/0", "other words"),
        (GOOD.replace("\"title\"", "\"titel\""), "", "unknown field `titel`"),
        (GOOD.replace("\"parse\"", "\"parsing\""), "/steps/0/expect/events/0/class", "unknown reject class"),
        (GOOD.replace("\"op\": \"deliver\"", "\"op\": \"send\""), "steps[0]", "unknown variant `send`"),
        (GOOD.replace(",\n             \"expect\": {\"events\": [{\"event\": \"delivered\", \"id\": null, \"outcome\": \"rejected\", \"class\": \"parse\"}]}", ""), "/steps/0", "needs `expect`"),
        (GOOD.replace("\"core\"", "\"strict\""), "/level", "core"),
        (GOOD.replace("\"strict-parsing\"", "\"strict-parse\""), "/invariants/0", "no invariant `strict-parse`"),
        (
            GOOD.replace(
                "\"class\": \"parse\"}]}}]",
                "\"class\": \"parse\"}]}}, {\"op\": \"view\", \"thread\": \"t\", \"expect\": {\"messages\": [{\"$absent\": true}]}}]",
            ),
            "/steps/1/expect/messages/0",
            "an object's member",
        ),
    ];
    for (text, pointer, words) in cases {
        let e = load_one(&text).expect_err(&text).to_string();
        assert!(e.contains("x.bad-case.json"), "{e}");
        assert!(
            e.contains(pointer) && e.contains(words),
            "wanted {pointer} / {words}: {e}"
        );
    }
    let renamed = GOOD.replace("\"x.bad-case\"", "\"x.other\"");
    assert!(load_one(&renamed)
        .unwrap_err()
        .to_string()
        .contains("x.other.json"));
}

#[test]
fn a_case_catches_a_wrong_expectation() {
    // The same case with the opposite expectation must fail against the
    // reference: a case that cannot fail would prove nothing.
    let c = load_one(&GOOD.replace("\"rejected\", \"class\": \"parse\"", "\"accepted\"")).unwrap();
    let identity = Identity::builtin("reference");
    let run = play(&c.cases[0], &ReferenceImpl, &identity);
    assert_eq!(run.status, Status::Fail);
    let f = run.failure.unwrap();
    assert_eq!(
        (f.step, f.check),
        (0, Check::Expectation { names_only: false })
    );
    assert!(f.actual.contains("rejected parse"), "{}", f.actual);
}

#[test]
fn a_core_case_that_differs_only_in_a_name_fails_at_profile_level() {
    // The frame is rejected as expected, under another class: the seed's
    // rule holds, the profile's name does not.
    let c = load_one(&GOOD.replace("\"class\": \"parse\"", "\"class\": \"body\"")).unwrap();
    let cases: Vec<&Case> = c.cases.iter().collect();
    let corpus_run = run_corpus(&cases, &ReferenceImpl, &quiet, || false);
    let f = corpus_run.cases[0].failure.clone().expect("it fails");
    assert!(f.names_only(), "{f:?}");
    let sim = run_simulation(
        &Budget {
            seeds: 0,
            first_seed: 1,
            agents: 1,
            steps: 1,
            faults: FaultSet::none(),
            names: Default::default(),
            swarm: true,
            shard: tern_harness::shard::Shard::WHOLE,
            deadline: None,
        },
        &ReferenceImpl,
        Jobs::default(),
        None,
        &quiet,
        || false,
    );
    let conformance = Conformance::of(&cases, &corpus_run, &sim, &not_explored());
    assert!(conformance.core && !conformance.profile, "{conformance:?}");

    // Expecting acceptance of a rejected frame is not a matter of names.
    let c = load_one(&GOOD.replace("\"rejected\", \"class\": \"parse\"", "\"accepted\"")).unwrap();
    let cases: Vec<&Case> = c.cases.iter().collect();
    let corpus_run = run_corpus(&cases, &ReferenceImpl, &quiet, || false);
    assert!(!corpus_run.cases[0].failure.as_ref().unwrap().names_only());
    assert!(!Conformance::of(&cases, &corpus_run, &sim, &not_explored()).core);
}

#[test]
fn other_names_for_the_same_decisions_are_core_conformant_but_not_profile() {
    let c = corpus();
    let cases: Vec<&Case> = c.cases.iter().collect();
    let corpus_run = run_corpus(&cases, &Twist::OtherNames, &quiet, || false);
    assert!(corpus_run.cases.iter().any(|r| r.status == Status::Fail));
    let budget = |names| Budget {
        seeds: 20,
        first_seed: 1,
        agents: 3,
        steps: 150,
        faults: FaultSet::all(),
        names,
        swarm: true,
        shard: tern_harness::shard::Shard::WHOLE,
        deadline: None,
    };
    let identity = corpus_run.identity.as_ref().ok();
    let blind = run_simulation(
        &budget(RejectNames::Ignored),
        &Twist::OtherNames,
        Jobs::default(),
        identity,
        &quiet,
        || false,
    );
    assert!(
        blind.counterexample.is_none(),
        "{:?}",
        blind.counterexample.map(|c| c.violation)
    );
    let core = Conformance::of(&cases, &corpus_run, &blind, &not_explored());
    assert!(core.core && !core.profile, "{:?}", core.by_level);
    assert!(core.certified(Level::Core));
    let strict = run_simulation(
        &budget(RejectNames::Compared),
        &Twist::OtherNames,
        Jobs::default(),
        identity,
        &quiet,
        || false,
    );
    assert!(
        strict.counterexample.is_some(),
        "names are compared at profile level"
    );
}

#[test]
fn every_invariant_names_clauses_that_exist() {
    let c = corpus();
    for i in invariants::ALL {
        let clauses = invariants::clauses(i.name);
        assert_eq!(
            clauses.is_empty(),
            i.name == invariants::ALIVE.name,
            "{} must name its seed clauses (only the contract's own invariant names none)",
            i.name
        );
        for id in clauses {
            assert!(c.clauses.get(id).is_some(), "{}: no clause {id}", i.name);
        }
    }
}

#[test]
fn every_situation_names_clauses_that_exist() {
    let c = corpus();
    for s in tern_harness::catalogue::situations::Situation::all() {
        assert!(!s.clauses().is_empty(), "{} names no clause", s.name());
        for id in s.clauses() {
            assert!(c.clauses.get(id).is_some(), "{}: no clause {id}", s.name());
        }
    }
}

/// Only `execute` may act on the world. The corpus player judges every
/// start-up and every view by the world's effects before and after, as the
/// simulator and the explorer do: a receiver that finishes interrupted work
/// while starting, or performs an effect while answering a view, fails at
/// that very step, by `authority-before-effect`, in the case written for
/// the rule. Before, both only failed a later count of the effects, under
/// `expectation`.
#[test]
fn the_player_catches_an_effect_while_starting_or_answering_a_view() {
    let c = corpus();
    let case = |id: &str| {
        c.cases
            .iter()
            .find(|k| k.id == id)
            .unwrap_or_else(|| panic!("{id} is in the corpus"))
    };
    for (id, mutant, step, op, expected, actual) in [
        (
            "permission.start-up-performs-nothing",
            Mutant::ResumesAtStart,
            3,
            "restart",
            "no effect while starting",
            "1 effect(s) performed during start-up",
        ),
        (
            "permission.views-perform-nothing",
            Mutant::EffectInView,
            2,
            "view",
            "no effect while answering a view",
            "1 effect(s) performed while answering a view of t",
        ),
    ] {
        let k = case(id);
        assert!(k.is_about(invariants::AUTHORITY), "{id} names the rule");
        let reference = play(k, &ReferenceImpl, &Identity::builtin("reference"));
        assert_eq!(
            reference.status,
            Status::Pass,
            "{id}: {:?}",
            reference.failure
        );
        let run = play(k, &MutantImpl(mutant), &Identity::builtin(mutant.name()));
        assert_eq!(run.status, Status::Fail, "{id}");
        let f = run.failure.expect("a failure");
        assert_eq!(
            (
                f.step,
                f.op,
                f.check,
                f.expected.as_str(),
                f.actual.as_str()
            ),
            (
                step,
                op,
                Check::Invariant(invariants::AUTHORITY),
                expected,
                actual
            ),
            "{id}"
        );
        assert!(
            !run.transcript.last().expect("a transcript").ok,
            "{id}: the step that acted is marked"
        );
    }
}
