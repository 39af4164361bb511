//! A certification's simulation over the subprocess protocol against the
//! same runs in process, in one group: the reference served by `tern-sim
//! agent`, and the reference called directly. The ratio is what a vendor
//! pays for the protocol (one process per agent and per restart, a pipe
//! round trip per delivery, view and execution). Runs are played as the
//! CLI plays them, by the batch driver on one worker thread (`--jobs 1`).

/// The binary's allocator (src/main.rs), so that the figures are the binary's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use tern_harness::certify::{DEFAULT_AGENTS, DEFAULT_FIRST_SEED, DEFAULT_STEPS};
use tern_harness::contract::plugin::Implementation;
use tern_harness::events::quiet;
use tern_harness::implementations::adapter::{Limits, SubprocessImpl};
use tern_harness::implementations::reference::ReferenceImpl;
use tern_harness::simulator::driver::{first_violation, Batch, Jobs};
use tern_harness::simulator::faults::{Fault, FaultSet};

fn protocol(c: &mut Criterion) {
    // The first runs of certify's default budget.
    let budget = Batch {
        first_seed: DEFAULT_FIRST_SEED,
        seeds: 5,
        agents: DEFAULT_AGENTS,
        steps: DEFAULT_STEPS,
        faults: FaultSet::all(),
        names: Default::default(),
        swarm: true,
        shard: tern_harness::shard::Shard::WHOLE,
        deadline: None,
    };
    let agent = SubprocessImpl::new(
        format!("{} agent", env!("CARGO_BIN_EXE_tern-sim")),
        Limits::default(),
    )
    .expect("state directory");

    // The whole budget through the driver, as `certify --jobs 1` plays it;
    // every run must pass.
    let batch = |implementation: &dyn Implementation| {
        let outcome = first_violation(&budget, implementation, Jobs::ONE, false, &quiet, || false);
        assert!(outcome.failure.is_none() && outcome.complete);
        outcome.runs
    };
    let mut group = c.benchmark_group("protocol");
    group.throughput(Throughput::Elements(budget.seeds));
    group.sample_size(10);
    group.bench_function("runs_in_process", |b| {
        b.iter(|| black_box(batch(&ReferenceImpl)))
    });
    group.bench_function("runs_over_the_protocol", |b| {
        b.iter(|| black_box(batch(&agent)))
    });
    group.finish();
}

/// One run of 2,000 steps and one of 8,000 against `tern-sim agent`,
/// with every fault (so crashes, restarts and power losses where FUSE
/// serves them), as `tern-sim run --impl 'tern-sim agent' --faults
/// --seeds 1 --steps N` plays them. A restart reads the agent's snapshot
/// and replays only the log records after it, so the longer run costs
/// about four times the shorter plus what the harness's own checks grow
/// by, not the square of its length (docs/protocol.md section 7).
fn long_runs(c: &mut Criterion) {
    let agent = SubprocessImpl::new(
        format!("{} agent", env!("CARGO_BIN_EXE_tern-sim")),
        Limits::default(),
    )
    .expect("state directory");
    // Crashes are power losses where FUSE serves them, as in `run`.
    let mut faults = FaultSet::all();
    if agent.set_power_loss(true) {
        faults.0.insert(Fault::PowerLoss);
    }
    let run = |steps: usize| {
        let budget = Batch {
            first_seed: 1,
            seeds: 1,
            agents: 3,
            steps,
            faults: faults.clone(),
            names: Default::default(),
            swarm: true,
            shard: tern_harness::shard::Shard::WHOLE,
            deadline: None,
        };
        let outcome = first_violation(&budget, &agent, Jobs::ONE, false, &quiet, || false);
        assert!(outcome.failure.is_none() && outcome.complete);
        outcome.runs
    };
    let mut group = c.benchmark_group("protocol_long_runs");
    group.sample_size(10);
    for steps in [2000, 8000] {
        group.bench_function(format!("steps_{steps}"), |b| {
            b.iter(|| black_box(run(steps)))
        });
    }
    group.finish();
}

criterion_group!(benches, protocol, long_runs);
criterion_main!(benches);
