//! Simulation throughput: deliveries per second of a faulty five-agent run
//! with every invariant and the differential check on, against one strict
//! parse per delivery of the same frames, in one group.

/// The binary's allocator (src/main.rs), so that the figures are the binary's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use tern_harness::implementations::reference::ReferenceImpl;
use tern_harness::simulator::driver::{frames_sent, mix_for, play, steps_of};
use tern_harness::simulator::faults::FaultSet;
use tern_harness::simulator::runner::RunConfig;

fn sim(c: &mut Criterion) {
    let faults = FaultSet::all();
    let config = RunConfig {
        seed: 42,
        agents: 5,
        steps: 200,
        mix: mix_for(42, &faults, true),
        names: Default::default(),
        sessions: Default::default(),
        faults,
    };
    let steps = steps_of(&config);
    let first = play(&config, &steps, &ReferenceImpl, false);
    assert!(first.violation.is_none());
    let deliveries = first.stats.deliveries;
    let frames = frames_sent(&config, &steps);
    assert!(!frames.is_empty());

    let mut group = c.benchmark_group("sim");
    group.throughput(Throughput::Elements(deliveries));
    group.sample_size(20);
    group.bench_function("one_parse_per_delivery", |b| {
        b.iter(|| {
            for i in 0..deliveries as usize {
                black_box(tern_model::parse_frame(black_box(&frames[i % frames.len()])).ok());
            }
        })
    });
    group.bench_function("run_with_all_checks", |b| {
        b.iter(|| black_box(play(&config, &steps, &ReferenceImpl, false)))
    });
    group.finish();
}

criterion_group!(benches, sim);
criterion_main!(benches);
