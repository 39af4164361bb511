//! Running one case against an implementation: a fresh storage and world,
//! each step in order, each result held against the case's expectation and
//! against the checks that hold for every delivery. The transcript it keeps
//! ([`transcript`]) is what reports draw as a sequence diagram.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use tern_model::ledger::{Contexts, EffectKey, Execution, LedgerConfig, LocalTime};
use tern_model::message::{Participant, Principal, ThreadId};

use super::case::{
    Case, ComparedEvent, DeliverCrash, EventKindKey, ExecuteCrash, ExpectDeliver, Step,
};
use super::pattern::mismatch;
use crate::contract::plugin::{
    Capability, Delivered, Identity, ImplError, Implementation, InitParams, Receiver,
};
use crate::contract::storage::{CrashPoint, Storage};
use crate::contract::world::World;
use crate::judge::compare::{events_text, execution_text, RejectNames};
use crate::judge::delivery::{self, Breach, Call, Came, Judged};
use crate::judge::failure::Failure;
use crate::judge::invariants::{self as inv, Invariant};
use crate::judge::no_effect;
use crate::judge::replies::KnownAcks;
use crate::judge::under_test::{Asked, UnderTest};

mod calls;
mod transcript;

use transcript::{counts_text, effect_names};
pub use transcript::{Answer, Did, Exchange};

/// The outcome of a case (docs/corpus.md section 3).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pass,
    Fail,
    /// The implementation misbehaved: crashed on its own, broke the
    /// protocol, timed out.
    Error,
    NotApplicable,
    /// A claimed capability failed.
    FalseClaim,
}

impl Status {
    pub const ALL: &'static [Status] = &[
        Status::Pass,
        Status::Fail,
        Status::Error,
        Status::NotApplicable,
        Status::FalseClaim,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Error => "error",
            Status::NotApplicable => "not_applicable",
            Status::FalseClaim => "false_claim",
        }
    }

    pub fn from_name(name: &str) -> Option<Status> {
        Status::ALL.iter().copied().find(|s| s.as_str() == name)
    }

    /// Whether this outcome stands in the way of certification.
    pub fn is_failure(self) -> bool {
        matches!(self, Status::Fail | Status::Error | Status::FalseClaim)
    }
}

/// Its name, as reports print it.
impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a failed step broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// The case's own expectation for the step.
    Expectation {
        /// The receiver did what was expected, but under another name:
        /// another reject class, another refusal reason. The names are
        /// the profile's (docs/ledger.md sections 4 and 7), so such a
        /// failure counts at `profile` level whatever the case's level.
        names_only: bool,
    },
    /// A rule every step keeps whatever the case expects
    /// (`no-reply-to-invalid`, ...), or `implementation-sound` for an
    /// implementation that failed a call on its own.
    Invariant(Invariant),
}

impl Check {
    /// The name reports show: `expectation`, or the invariant's.
    pub fn name(self) -> &'static str {
        match self {
            Check::Expectation { .. } => "expectation",
            Check::Invariant(i) => i.name,
        }
    }
}

impl std::fmt::Display for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Where and how a case went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepFailure {
    /// 0-based index of the step.
    pub step: usize,
    pub op: &'static str,
    pub check: Check,
    pub expected: String,
    pub actual: String,
}

impl StepFailure {
    /// A rule of the judge broken at `step`.
    pub fn of(step: usize, op: &'static str, failure: Failure) -> StepFailure {
        StepFailure {
            step,
            op,
            check: Check::Invariant(failure.invariant),
            expected: failure.expected,
            actual: failure.actual,
        }
    }

    /// A failure under another name only ([`Check::Expectation`]).
    pub fn names_only(&self) -> bool {
        matches!(self.check, Check::Expectation { names_only: true })
    }

    /// `error` for an implementation that failed a call on its own,
    /// `fail` for one that broke a rule or an expectation.
    fn status(&self) -> Status {
        match self.check {
            Check::Invariant(i) if i == inv::ALIVE => Status::Error,
            _ => Status::Fail,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseRun {
    pub id: String,
    pub status: Status,
    pub failure: Option<StepFailure>,
    /// For `not_applicable`: what the implementation did not claim.
    pub unclaimed: Vec<Capability>,
    pub transcript: Vec<Exchange>,
}

/// Who sent a frame, for the diagram's lifelines: its `from` when the
/// transport's principal is the one bound to it in the thread's context,
/// otherwise the principal itself, so that a spoofer gets a lifeline of its
/// own instead of hiding behind the name it claims.
fn sender_of(frame: &[u8], principal: &Principal, config: &LedgerConfig) -> String {
    let Ok(v) = serde_json::from_slice::<Value>(frame) else {
        return principal.to_string();
    };
    let (Some(from), Some(thread)) = (v["from"].as_str(), v["thread"].as_str()) else {
        return principal.to_string();
    };
    let bound = match &config.contexts {
        Contexts::Open => Some(from.to_owned()),
        Contexts::Fixed { contexts, threads } => ThreadId::new(thread)
            .ok()
            .and_then(|t| threads.get(&t))
            .and_then(|c| contexts.get(c))
            .and_then(|c| {
                Participant::new(from)
                    .ok()
                    .and_then(|p| c.bindings.get(&p).map(|k| k.to_string()))
            }),
    };
    if bound.as_deref() == Some(principal.as_str()) {
        from.to_owned()
    } else {
        format!("{principal} (as {from})")
    }
}

/// One case being played: the receiver, the storage and world it runs on,
/// and the transcript of what it was asked and answered.
struct Player<'a> {
    case: &'a Case,
    /// The receiver, its storage and its start-up and crashes: the case's
    /// own expectations take the place of the oracle it carries.
    under_test: UnderTest<'a>,
    world: World,
    transcript: Vec<Exchange>,
    /// The ACKs delivered or sent so far, for the ACK-of-ACK rule.
    acks: KnownAcks,
}

type Checked = Result<(), StepFailure>;

impl Player<'_> {
    /// The case's expectation for `step` not met.
    fn unexpected(&self, step: usize, expected: String, actual: String) -> StepFailure {
        StepFailure {
            step,
            op: self.case.steps[step].op(),
            check: Check::Expectation { names_only: false },
            expected,
            actual,
        }
    }

    fn fail_by_name(&self, step: usize, expected: String, actual: String) -> StepFailure {
        StepFailure {
            check: Check::Expectation { names_only: true },
            ..self.unexpected(step, expected, actual)
        }
    }

    /// `failure` at `step` (the start-up, before the first step, is step
    /// 0 with op `start`).
    fn broke(&self, step: usize, failure: Failure) -> StepFailure {
        StepFailure::of(
            step,
            self.case.steps.get(step).map_or("start", Step::op),
            failure,
        )
    }

    /// Starts the implementation on the case's storage and world, with
    /// `crash` armed for the start-up's first sync: the judge's start-up,
    /// with its rule that starting acts on nothing.
    fn launch(&mut self, crash: Option<CrashPoint>) -> Result<Came, Breach> {
        self.under_test.start(&self.world, crash)
    }

    fn start(&mut self, step: usize) -> Checked {
        match self.launch(None) {
            Ok(_) => Ok(()),
            Err(breach) => {
                if matches!(breach, Breach::Effects { .. }) {
                    self.mark_last_failed();
                }
                Err(self.breach(step, "a started receiver", breach))
            }
        }
    }

    /// A start-up killed at its first sync. One that never syncs is killed
    /// when its answer arrives; either way the receiver stays down.
    fn start_crashing(&mut self, step: usize, crash: DeliverCrash) -> Checked {
        let result = self.launch(Some(crash.point()));
        // A start-up that never synced is killed once it has answered.
        if let Ok(Came::Answered) = result {
            self.under_test.crash();
        }
        self.record(Exchange {
            step,
            did: Did::Restarted { crash: Some(crash) },
            ok: true,
        });
        if let Err(breach) = result {
            let answering = match breach {
                Breach::Effects { .. } => {
                    self.mark_last_failed();
                    "a started receiver"
                }
                _ => "a crash at the scheduled point",
            };
            return Err(self.breach(step, answering, breach));
        }
        Ok(())
    }

    /// What an operation with a scheduled crash may return: the injected
    /// crash, or (when it never reached the crash point) an answer the
    /// harness throws away. An answer *after* the crash fired means the
    /// implementation swallowed it; any other failure is its own.
    fn crashed_as_scheduled(
        &self,
        i: usize,
        call: Call,
        result: Result<(), ImplError>,
        fired: bool,
    ) -> Checked {
        match delivery::crash_judged(call, result, fired) {
            Ok(_) => Ok(()),
            Err(breach) => Err(self.breach(i, "a crash at the scheduled point", breach)),
        }
    }

    fn receiver(&mut self) -> &mut dyn Receiver {
        self.under_test
            .receiver()
            .expect("the case loader checks that the receiver is up")
    }

    fn record(&mut self, x: Exchange) {
        self.transcript.push(x);
    }

    fn mark_last_failed(&mut self) {
        if let Some(x) = self.transcript.last_mut() {
            x.ok = false;
        }
    }

    /// A call that broke a rule of [`delivery`], as the failure of its
    /// invariant; a call the implementation failed on its own is an error,
    /// `answering` saying what was awaited.
    fn breach(&self, i: usize, answering: &str, breach: Breach) -> StepFailure {
        self.broke(i, breach.into_failure(answering))
    }

    fn play_step(&mut self, i: usize) -> Checked {
        let case = self.case;
        match &case.steps[i] {
            Step::Deliver {
                frame,
                principal,
                at,
                expect,
                crash,
            } => self.deliver(i, frame, principal, *at, expect.as_ref(), *crash),
            Step::Execute {
                thread,
                commitment,
                at,
                expect,
                crash,
            } => self.execute(i, thread, commitment, *at, expect.as_ref(), *crash),
            Step::View { thread, pattern } => self.check_view(i, thread, pattern),
            Step::Effects { expect } => self.check_effects(i, expect),
            Step::Crash => {
                self.record(Exchange {
                    step: i,
                    did: Did::Crashed,
                    ok: true,
                });
                self.under_test.crash();
                Ok(())
            }
            Step::Restart { crash: None } => {
                self.record(Exchange {
                    step: i,
                    did: Did::Restarted { crash: None },
                    ok: true,
                });
                self.start(i)
            }
            Step::Restart { crash: Some(c) } => self.start_crashing(i, *c),
        }
    }

    /// A view step: the receiver's view of `thread`, asked by the judge's
    /// rule that a view acts on nothing, against the case's pattern.
    fn check_view(&mut self, i: usize, thread: &ThreadId, pattern: &Value) -> Checked {
        let world = self.world.clone();
        let (answer, failure) = match no_effect::view(self.receiver(), &world, thread) {
            Err(breach) => (
                Answer::Failed(breach.actual()),
                Some(self.breach(i, "a view", breach)),
            ),
            Ok(view) => {
                let view = view.to_value();
                let failure = mismatch(pattern, &view).map(|(at, why)| {
                    self.unexpected(
                        i,
                        format!("a view matching {pattern}"),
                        format!("at {}: {why}", if at.is_empty() { "the top" } else { &at }),
                    )
                });
                (Answer::Given(view), failure)
            }
        };
        self.record(Exchange {
            step: i,
            did: Did::Viewed {
                thread: thread.clone(),
                answer,
            },
            ok: failure.is_none(),
        });
        failure.map_or(Ok(()), Err)
    }

    /// An effects step: the world's count of each effect against the case's,
    /// a count over one being the at-most-once rule's failure.
    fn check_effects(&mut self, i: usize, expect: &BTreeMap<String, u32>) -> Checked {
        let mut counts: BTreeMap<String, u32> = BTreeMap::new();
        for (_, k) in self.world.log() {
            *counts.entry(k.0).or_default() += 1;
        }
        let failure = (&counts != expect).then(|| {
            let (expected, actual) = (counts_text(expect), counts_text(&counts));
            if counts.values().any(|n| *n > 1) {
                self.broke(i, Failure::new(inv::AT_MOST_ONCE, expected, actual))
            } else {
                self.unexpected(i, expected, actual)
            }
        });
        self.record(Exchange {
            step: i,
            did: Did::Effects { counts },
            ok: failure.is_none(),
        });
        failure.map_or(Ok(()), Err)
    }
}

/// What the implementation says about itself, from one start on a scratch
/// storage and world. `Err` is the misbehaviour that stopped it starting.
pub fn identify(implementation: &dyn Implementation, case: &Case) -> Result<Identity, String> {
    identify_as(implementation, &case.setup.init())
}

/// [`identify`], for a receiver started with `init`.
pub fn identify_as(
    implementation: &dyn Implementation,
    init: &InitParams,
) -> Result<Identity, String> {
    let storage = Storage::new();
    let world = World::new();
    let agent = world.for_agent(init.participant.as_str(), &storage);
    let mut r = implementation
        .start(init, storage, agent)
        .map_err(|e| e.to_string())?;
    let identity = r.identity();
    r.dismiss();
    Ok(identity)
}

/// Runs one case. `identity` is what the implementation claimed (see
/// [`identify`]); a case needing a capability it did not claim is not run.
pub fn play(case: &Case, implementation: &dyn Implementation, identity: &Identity) -> CaseRun {
    let unclaimed: Vec<Capability> = case
        .requires
        .iter()
        .copied()
        .filter(|c| !identity.claims(*c))
        .collect();
    if !unclaimed.is_empty() {
        return CaseRun {
            id: case.id.clone(),
            status: Status::NotApplicable,
            failure: None,
            unclaimed,
            transcript: Vec::new(),
        };
    }
    let mut player = Player {
        case,
        under_test: UnderTest::new(implementation, case.setup.init()),
        world: World::new(),
        transcript: Vec::new(),
        acks: KnownAcks::default(),
    };
    let mut result = player.start(0);
    if result.is_ok() {
        for i in 0..case.steps.len() {
            result = player.play_step(i);
            if result.is_err() {
                break;
            }
        }
    }
    player.under_test.dismiss();
    let (status, failure) = match result {
        Ok(()) => (Status::Pass, None),
        Err(failure) => {
            let status = failure.status();
            // A failure at a step that exercises a claimed capability shows
            // the claim was false; elsewhere it is an ordinary failure.
            let exercised: BTreeSet<Capability> = case
                .steps
                .get(failure.step)
                .and_then(Step::needs)
                .into_iter()
                .collect();
            let false_claim = status == Status::Fail && !exercised.is_empty();
            (
                if false_claim {
                    Status::FalseClaim
                } else {
                    status
                },
                Some(failure),
            )
        }
    };
    CaseRun {
        id: case.id.clone(),
        status,
        failure,
        unclaimed: Vec::new(),
        transcript: player.transcript,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::implementations::mutants::{Mutant, MutantImpl};
    use crate::implementations::reference::ReferenceImpl;

    fn case(rel: &str) -> Case {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../scenarios")
            .join(rel);
        let text = std::fs::read_to_string(&path).expect("the case is in the repository");
        Case::from_json(&path, &text).expect("the case loads")
    }

    fn mutant(name: &str) -> MutantImpl {
        MutantImpl(
            *Mutant::ALL
                .iter()
                .find(|m| m.name() == name)
                .expect("a mutant of the zoo"),
        )
    }

    const RECONCILED: &str = "s1-encoding/dedup.crash-after-effect-reconciled.json";

    /// Every step leaves at least one line, in step order, and a passing
    /// case has none marked failed.
    #[test]
    fn the_reference_passes_with_every_step_on_record() {
        let c = case(RECONCILED);
        let run = play(&c, &ReferenceImpl, &Identity::builtin("reference"));
        assert_eq!((run.status, &run.failure), (Status::Pass, &None));
        let steps: Vec<usize> = run.transcript.iter().map(|x| x.step).collect();
        assert!(steps.windows(2).all(|w| w[0] <= w[1]), "{steps:?}");
        let each: BTreeSet<usize> = steps.into_iter().collect();
        assert_eq!(each, (0..c.steps.len()).collect());
        assert!(run.transcript.iter().all(|x| x.ok));
        for x in run.transcript.iter().filter(|x| x.op() != "outgoing") {
            assert_eq!(x.op(), c.steps[x.step].op(), "step {}", x.step);
        }
    }

    /// A case is not run against an implementation that does not claim
    /// what it needs: no line, and the capability named.
    #[test]
    fn a_case_needing_an_unclaimed_capability_is_not_applicable() {
        let c = case(RECONCILED);
        let mut claims_nothing = Identity::builtin("reference");
        claims_nothing.capabilities.clear();
        let run = play(&c, &ReferenceImpl, &claims_nothing);
        assert_eq!(run.status, Status::NotApplicable);
        assert_eq!(run.unclaimed, [Capability::Execute]);
        assert!(run.transcript.is_empty());
    }

    /// A failure at a step that exercises a claimed capability shows the
    /// claim false; the transcript ends at the line that failed.
    #[test]
    fn failing_where_a_claimed_capability_is_exercised_is_a_false_claim() {
        let c = case(RECONCILED);
        let run = play(&c, &mutant("re-executes"), &Identity::builtin("m"));
        let failure = run.failure.as_ref().expect("the mutant fails");
        assert_eq!(run.status, Status::FalseClaim, "{failure:?}");
        assert_eq!(c.steps[failure.step].needs(), Some(Capability::Execute));
        let last = run.transcript.last().expect("a transcript");
        assert_eq!((last.step, last.ok), (failure.step, false));
        assert!(run.transcript[..run.transcript.len() - 1]
            .iter()
            .all(|x| x.ok));
    }

    /// The reference, except that every delivery says `duplicate` and
    /// sends a well-formed ASK of its own.
    struct MisreportsAndTalks;

    struct Talking(Box<dyn Receiver>);

    impl Implementation for MisreportsAndTalks {
        fn name(&self) -> String {
            "misreports-and-talks".into()
        }
        fn start(
            &self,
            init: &InitParams,
            storage: Storage,
            world: crate::contract::world::AgentWorld,
        ) -> Result<Box<dyn Receiver>, ImplError> {
            Ok(Box::new(Talking(
                ReferenceImpl.start(init, storage, world)?,
            )))
        }
    }

    impl Receiver for Talking {
        fn identity(&self) -> Identity {
            self.0.identity()
        }
        fn deliver(
            &mut self,
            frame: &[u8],
            principal: &Principal,
            now: LocalTime,
        ) -> Result<Delivered, ImplError> {
            let mut d = self.0.deliver(frame, principal, now)?;
            d.events[0].outcome = tern_model::ledger::Outcome::Duplicate;
            d.outgoing.push(
                br#"{"tern":"0.1","id":"bob:99","from":"bob","to":["alice"],"thread":"t","reply":null,"act":"ASK","body":{"question":"Which first?"}}"#
                    .to_vec(),
            );
            Ok(d)
        }
        fn execute(
            &mut self,
            thread: &ThreadId,
            commitment: &tern_model::message::MessageRef,
            now: LocalTime,
        ) -> Result<Execution, ImplError> {
            self.0.execute(thread, commitment, now)
        }
        fn view(&mut self, thread: &ThreadId) -> Result<crate::contract::plugin::View, ImplError> {
            self.0.view(thread)
        }
    }

    /// Events that differ from the expectation put the failure on the
    /// delivery's line, even when the delivery also sent a frame (which
    /// broke no rule, and stays drawn as it was).
    #[test]
    fn a_failure_of_the_events_falls_on_the_delivery_not_on_what_it_sent() {
        let c = case("s2-acts/acts.ack-is-not-agreement.json");
        let run = play(&c, &MisreportsAndTalks, &Identity::builtin("m"));
        let failure = run.failure.as_ref().expect("the events differ");
        assert_eq!(failure.check, Check::Expectation { names_only: false });
        let lines: Vec<(&str, bool)> = run
            .transcript
            .iter()
            .filter(|x| x.step == failure.step)
            .map(|x| (x.op(), x.ok))
            .collect();
        assert_eq!(lines, [("deliver", false), ("outgoing", true)]);
    }

    /// An implementation that fails a call on its own is an error, not a
    /// failure, and its answer is what it said.
    #[test]
    fn failing_a_call_is_an_error_of_the_implementation() {
        let c = case("s2-acts/acts.challenge-kind-values.json");
        let run = play(&c, &mutant("crashes-on-challenge"), &Identity::builtin("m"));
        let failure = run.failure.as_ref().expect("the mutant fails");
        assert_eq!(run.status, Status::Error, "{failure:?}");
        assert_eq!(failure.check, Check::Invariant(inv::ALIVE));
        let last = run.transcript.last().expect("a transcript");
        assert!(!last.ok);
        assert!(
            matches!(
                &last.did,
                Did::Delivered {
                    answer: Answer::Failed(_),
                    ..
                }
            ),
            "{last:?}"
        );
    }
}
