//! Exploration throughput: one built-in scope explored at `--jobs 1`, its
//! states rebuilt by replaying their schedules (what a receiver that
//! cannot be copied costs, the explorer's only way before `Receiver::fork`)
//! against the same exploration forking the state it expands, in one
//! group. Both explore the same states; the bench checks that they do.
//!
//! A second group weighs the reductions that leave moves out (sleep sets,
//! twins while a crash is left, crashes at an effect never reached): the
//! same scopes with every move played from every state (merging only,
//! `--no-sleep-sets`) against the default. Both reach the same states.

/// The binary's allocator (src/main.rs), so that the figures are the binary's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::path::Path;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use tern_harness::contract::plugin::{
    Delivered, Identity, ImplError, Implementation, InitParams, Receiver, View,
};
use tern_harness::contract::storage::Storage;
use tern_harness::contract::world::AgentWorld;
use tern_harness::corpus::Corpus;
use tern_harness::explore::builtin;
use tern_harness::explore::search::{explore, Exploration, Limits, Prepared, Watch};
use tern_harness::implementations::reference::ReferenceImpl;
use tern_model::ledger::{Execution, LocalTime};
use tern_model::message::{MessageRef, Principal, ThreadId};

/// The reference, with `Receiver::fork` left at its default: every state
/// is replayed.
struct Unforkable;

struct Replayed(Box<dyn Receiver>);

impl Receiver for Replayed {
    fn identity(&self) -> Identity {
        self.0.identity()
    }
    fn deliver(
        &mut self,
        frame: &[u8],
        principal: &Principal,
        now: LocalTime,
    ) -> Result<Delivered, ImplError> {
        self.0.deliver(frame, principal, now)
    }
    fn execute(
        &mut self,
        thread: &ThreadId,
        commitment: &MessageRef,
        now: LocalTime,
    ) -> Result<Execution, ImplError> {
        self.0.execute(thread, commitment, now)
    }
    fn view(&mut self, thread: &ThreadId) -> Result<View, ImplError> {
        self.0.view(thread)
    }
}

impl Implementation for Unforkable {
    fn name(&self) -> String {
        "tern-sim reference, replayed".into()
    }
    fn start(
        &self,
        init: &InitParams,
        storage: Storage,
        world: AgentWorld,
    ) -> Result<Box<dyn Receiver>, ImplError> {
        Ok(Box::new(Replayed(
            ReferenceImpl.start(init, storage, world)?,
        )))
    }
}

fn limits() -> Limits {
    reduced(true)
}

fn reduced(sleep_sets: bool) -> Limits {
    Limits {
        merge: true,
        sleep_sets,
        max_states: 1_000_000,
        jobs: 1,
        power_loss: false,
    }
}

fn run(prepared: &Prepared, imp: &dyn Implementation) -> Exploration {
    explore(
        prepared,
        imp,
        Default::default(),
        limits(),
        &Watch::default(),
        &|| false,
    )
}

fn bench(c: &mut Criterion) {
    let corpus = Corpus::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios"))
        .expect("the corpus loads");
    let mut group = c.benchmark_group("explore");
    group.sample_size(10);
    for name in ["revision-race", "renewal"] {
        let scope = builtin::by_name(name, Some(&corpus)).expect("a built-in scope");
        let prepared = Prepared::new(&scope, true);
        let forked = run(&prepared, &ReferenceImpl);
        let replayed = run(&prepared, &Unforkable);
        assert!(forked.exhausted && forked.violation.is_none());
        assert_eq!(forked.counts.states, replayed.counts.states, "{name}");
        assert_eq!(forked.counts.transitions, replayed.counts.transitions);
        group.throughput(Throughput::Elements(forked.counts.states));
        group.bench_function(format!("{name}/replayed"), |b| {
            b.iter(|| black_box(run(&prepared, &Unforkable)))
        });
        group.bench_function(format!("{name}/forked"), |b| {
            b.iter(|| black_box(run(&prepared, &ReferenceImpl)))
        });
    }
    group.finish();
    let mut group = c.benchmark_group("explore_reductions");
    group.sample_size(10);
    for name in ["revision-race", "renewal"] {
        let scope = builtin::by_name(name, Some(&corpus)).expect("a built-in scope");
        let prepared = Prepared::new(&scope, true);
        let run = |sleep_sets: bool| {
            explore(
                &prepared,
                &ReferenceImpl,
                Default::default(),
                reduced(sleep_sets),
                &Watch::default(),
                &|| false,
            )
        };
        let (every, fewer) = (run(false), run(true));
        assert!(fewer.exhausted && fewer.violation.is_none());
        assert_eq!(every.counts.states, fewer.counts.states, "{name}");
        assert!(fewer.counts.transitions < every.counts.transitions);
        group.throughput(Throughput::Elements(fewer.counts.states));
        group.bench_function(format!("{name}/every-move"), |b| {
            b.iter(|| black_box(run(false)))
        });
        group.bench_function(format!("{name}/reduced"), |b| {
            b.iter(|| black_box(run(true)))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
