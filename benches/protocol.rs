//! A certification's simulation over the subprocess protocol against the
//! same runs in process, in one group: the reference served by `tern-sim
//! agent`, and the reference called directly. The ratio is what a vendor
//! pays for the protocol (one process per agent and per restart, a pipe
//! round trip per delivery, view and execution).

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use tern_harness::implementations::adapter::{Limits, SubprocessImpl};
use tern_harness::implementations::reference::ReferenceImpl;
use tern_harness::simulator::driver::{generate, mix_for, play, Generated};
use tern_harness::simulator::faults::FaultSet;
use tern_harness::simulator::runner::RunConfig;

/// Runs of certify's shape (five agents, 200 steps, every fault).
const SEEDS: std::ops::Range<u64> = 1..6;

fn protocol(c: &mut Criterion) {
    let faults = FaultSet::all();
    let runs: Vec<(RunConfig, Generated)> = SEEDS
        .map(|seed| {
            let config = RunConfig {
                seed,
                agents: 5,
                steps: 200,
                mix: mix_for(seed, &faults, true),
                names: Default::default(),
                faults: faults.clone(),
            };
            let generated = generate(&config);
            (config, generated)
        })
        .collect();
    let agent = SubprocessImpl::new(
        format!("{} agent", env!("CARGO_BIN_EXE_tern-sim")),
        Limits::default(),
    )
    .expect("state directory");
    for (config, generated) in &runs {
        assert!(play(config, &generated.steps, &ReferenceImpl, false)
            .violation
            .is_none());
    }

    let mut group = c.benchmark_group("protocol");
    group.throughput(Throughput::Elements(runs.len() as u64));
    group.sample_size(10);
    group.bench_function("runs_in_process", |b| {
        b.iter(|| {
            for (config, generated) in &runs {
                black_box(play(config, &generated.steps, &ReferenceImpl, false));
            }
        })
    });
    group.bench_function("runs_over_the_protocol", |b| {
        b.iter(|| {
            for (config, generated) in &runs {
                black_box(play(config, &generated.steps, &agent, false));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, protocol);
criterion_main!(benches);
