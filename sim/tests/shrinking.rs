//! Shrinking a run that failed by timing out: the harness knows a hang is
//! a failure, so candidates are waited on for less (the implementation's
//! wait is capped while shrinking and the cap lifted after), the result is
//! confirmed with the full wait, and a result that does not reproduce with
//! it falls back to the original run. Shrinking also stops on request.

use std::sync::Mutex;
use std::time::Duration;

use tern_harness::contract::plugin::{
    Delivered, Identity, ImplError, Implementation, InitParams, Receiver,
};
use tern_harness::contract::storage::Storage;
use tern_harness::contract::world::AgentWorld;
use tern_harness::events::quiet;
use tern_harness::implementations::reference::ReferenceImpl;
use tern_harness::simulator::driver::{
    first_violation, shrink, Batch, Jobs, ShrinkBudget, ShrinkEnd,
};
use tern_harness::simulator::faults::FaultSet;
use tern_model::ledger::{Execution, LocalTime};
use tern_model::message::{MessageRef, Principal, ThreadId};

/// The reference, except that it "hangs" (answers `TimedOut`) on the
/// deliveries `hangs` picks, given whether a cap on the wait is in force.
struct Hanging {
    hangs: fn(frame: &[u8], capped: bool) -> bool,
    caps: Mutex<Vec<Option<Duration>>>,
}

impl Hanging {
    fn new(hangs: fn(&[u8], bool) -> bool) -> Hanging {
        Hanging {
            hangs,
            caps: Mutex::new(Vec::new()),
        }
    }
    fn capped(&self) -> bool {
        self.caps
            .lock()
            .unwrap()
            .last()
            .copied()
            .flatten()
            .is_some()
    }
}

struct HangingReceiver {
    inner: Box<dyn Receiver>,
    hangs: fn(&[u8], bool) -> bool,
    capped: bool,
}

impl Receiver for HangingReceiver {
    fn identity(&self) -> Identity {
        self.inner.identity()
    }
    fn deliver(
        &mut self,
        frame: &[u8],
        principal: &Principal,
        now: LocalTime,
    ) -> Result<Delivered, ImplError> {
        if (self.hangs)(frame, self.capped) {
            return Err(ImplError::TimedOut("did not answer `deliver`".into()));
        }
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
    fn view(
        &mut self,
        thread: &ThreadId,
    ) -> Result<tern_harness::contract::plugin::View, ImplError> {
        self.inner.view(thread)
    }
}

impl Implementation for Hanging {
    fn name(&self) -> String {
        "hanging".into()
    }
    fn start(
        &self,
        init: &InitParams,
        storage: Storage,
        world: AgentWorld,
    ) -> Result<Box<dyn Receiver>, ImplError> {
        Ok(Box::new(HangingReceiver {
            inner: ReferenceImpl.start(init, storage, world)?,
            hangs: self.hangs,
            capped: self.capped(),
        }))
    }
    fn cap_request_wait(&self, cap: Option<Duration>) {
        self.caps.lock().unwrap().push(cap);
    }
}

fn batch() -> Batch {
    Batch {
        first_seed: 3,
        seeds: 20,
        agents: 3,
        steps: 150,
        faults: FaultSet::all(),
        names: Default::default(),
        swarm: false,
        shard: tern_harness::shard::Shard::WHOLE,
        deadline: None,
    }
}

fn is_challenge(frame: &[u8]) -> bool {
    String::from_utf8_lossy(frame).contains("\"act\":\"CHALLENGE\"")
}

#[test]
fn a_timeout_is_shrunk_with_capped_waits_and_confirmed_with_full_ones() {
    let imp = Hanging::new(|frame, _| is_challenge(frame));
    let out = first_violation(&batch(), &imp, Jobs::ONE, false, &quiet, || false);
    let (config, generated, violation) = out.failure.expect("a CHALLENGE is delivered");
    assert!(violation.failure.timed_out);
    let budget = ShrinkBudget::default();
    let ce = shrink(&config, generated, violation, &imp, budget, |_| {});
    assert_eq!(
        *imp.caps.lock().unwrap(),
        [Some(budget.hang_wait), None],
        "capped while shrinking, lifted before the confirming replay"
    );
    assert!(ce.violation.failure.timed_out);
    assert_eq!(ce.violation.failure.invariant.name, "implementation-sound");
    assert_eq!(ce.shrink_end, ShrinkEnd::Complete);
    assert!(ce.steps.len() <= 3, "{} steps", ce.steps.len());
}

#[test]
fn a_shrunk_timeout_that_needs_the_cap_falls_back_to_the_original_run() {
    // Under the cap every delivery "times out" (a slow implementation);
    // with the full wait only a CHALLENGE does.
    let imp = Hanging::new(|frame, capped| capped || is_challenge(frame));
    let out = first_violation(&batch(), &imp, Jobs::ONE, false, &quiet, || false);
    let (config, generated, violation) = out.failure.expect("a CHALLENGE is delivered");
    let original = generated.steps.clone();
    let ce = shrink(
        &config,
        generated,
        violation,
        &imp,
        ShrinkBudget::default(),
        |_| {},
    );
    assert_eq!(
        ce.steps, original,
        "kept whole: the shrunk run passes with full waits"
    );
    assert!(ce.violation.failure.timed_out);
}

#[test]
fn shrinking_stops_when_asked_and_keeps_a_failing_run() {
    let imp = Hanging::new(|frame, _| is_challenge(frame));
    let out = first_violation(&batch(), &imp, Jobs::ONE, false, &quiet, || false);
    let (config, generated, violation) = out.failure.expect("a CHALLENGE is delivered");
    let original = generated.steps.len();
    let stop = || true;
    let budget = ShrinkBudget {
        stop: &stop,
        ..ShrinkBudget::default()
    };
    let ce = shrink(&config, generated, violation, &imp, budget, |_| {});
    assert_eq!(ce.shrink_end, ShrinkEnd::Interrupted);
    assert_eq!(ce.steps.len(), original);
    assert!(ce.happenings.is_empty(), "not replayed after an interrupt");
}
