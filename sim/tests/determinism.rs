//! `--check-determinism` in the harness: the reference, in process, answers
//! every seed the same way twice; an implementation that answers from a
//! counter the seed does not govern is caught at the first answer the
//! counter changes, and no earlier.

use std::sync::atomic::{AtomicU64, Ordering};

use tern_harness::contract::plugin::{
    Delivered, Identity, ImplError, Implementation, InitParams, Receiver, View,
};
use tern_harness::contract::storage::Storage;
use tern_harness::contract::world::AgentWorld;
use tern_harness::implementations::reference::ReferenceImpl;
use tern_harness::simulator::determinism::{check, seeds_to_check, transcript};
use tern_harness::simulator::driver::Batch;
use tern_harness::simulator::faults::FaultSet;
use tern_model::ledger::{Execution, LocalTime};
use tern_model::message::{MessageRef, Principal, ThreadId};

fn batch(faults: FaultSet) -> Batch {
    Batch {
        first_seed: 40,
        seeds: 30,
        agents: 3,
        steps: 120,
        faults,
        names: Default::default(),
        swarm: true,
        shard: tern_harness::shard::Shard::WHOLE,
        deadline: None,
    }
}

#[test]
fn the_reference_answers_every_seed_the_same_way_twice() {
    let b = batch(FaultSet::all());
    let seeds = seeds_to_check(&b, 31, Some(70), 4);
    assert_eq!(seeds, vec![70, 40, 47, 55, 62]);
    let found = check(&b, &seeds, &ReferenceImpl, || false);
    assert_eq!(found.seeds, seeds);
    assert!(found.complete);
    assert_eq!(found.divergence, None);
    // The transcript holds every kind of request, so the check compares
    // more than start-ups.
    let t = transcript(&b.config(40), &ReferenceImpl);
    for kind in ["start ", "deliver to ", "view ", "execute "] {
        assert!(
            t.iter().any(|e| e.request.starts_with(kind)),
            "no `{kind}` request in seed 40's transcript"
        );
    }
}

/// The reference, except that every other play (counted by starts of the
/// first agent) answers its agents' fifth delivery with an extra,
/// empty outgoing frame: what a receiver that reads the clock or a
/// random number does, seen from outside.
struct EveryOtherPlay {
    plays: AtomicU64,
}

impl Implementation for EveryOtherPlay {
    fn name(&self) -> String {
        "every other play".to_owned()
    }

    fn start(
        &self,
        init: &InitParams,
        storage: Storage,
        world: AgentWorld,
    ) -> Result<Box<dyn Receiver>, ImplError> {
        if init.participant.as_str() == "alice" {
            self.plays.fetch_add(1, Ordering::SeqCst);
        }
        let odd = self.plays.load(Ordering::SeqCst) % 2 == 1;
        let inner = ReferenceImpl.start(init, storage, world)?;
        Ok(Box::new(Odd {
            inner,
            odd,
            deliveries: 0,
        }))
    }
}

struct Odd {
    inner: Box<dyn Receiver>,
    odd: bool,
    deliveries: u64,
}

impl Receiver for Odd {
    fn identity(&self) -> Identity {
        self.inner.identity()
    }

    fn deliver(
        &mut self,
        frame: &[u8],
        principal: &Principal,
        now: LocalTime,
    ) -> Result<Delivered, ImplError> {
        let mut d = self.inner.deliver(frame, principal, now)?;
        self.deliveries += 1;
        if self.odd && self.deliveries == 5 {
            d.outgoing.push(b"{}".to_vec());
        }
        Ok(d)
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
}

#[test]
fn an_implementation_that_answers_by_a_counter_is_caught_at_its_first_other_answer() {
    let b = batch(FaultSet::none());
    let imp = EveryOtherPlay {
        plays: AtomicU64::new(0),
    };
    let found = check(&b, &[41, 42], &imp, || false);
    let d = found
        .divergence
        .expect("the two plays answered differently");
    assert_eq!(d.seed, 41, "the first seed already differs");
    assert_eq!(
        found.seeds,
        vec![41],
        "the check stops at the first difference"
    );
    assert!(d.request.starts_with("deliver to "), "{}", d.request);
    assert!(
        d.first.contains("\"outgoing\":[\"e30=\"]") ^ d.second.contains("\"outgoing\":[\"e30=\"]"),
        "one answer has the extra frame ({{}} in base64), the other not:\n{}\n{}",
        d.first,
        d.second
    );
    // Every request before it was answered the same way.
    let first = transcript(&b.config(41), &imp);
    let second = transcript(&b.config(41), &imp);
    assert_eq!(
        first[..d.request_number - 1],
        second[..d.request_number - 1]
    );
}

#[test]
fn an_interrupt_before_a_seed_ends_the_check_there() {
    let b = batch(FaultSet::none());
    let found = check(&b, &[41, 42], &ReferenceImpl, || true);
    assert!(!found.complete);
    assert!(found.seeds.is_empty());
}
