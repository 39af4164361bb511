//! The conformance corpus against the reference: in process, and through
//! `tern-sim agent` over the subprocess protocol (a process start per case),
//! measured in one group so the ratio is the cost of the protocol.

/// The binary's allocator (src/main.rs), so that the figures are the binary's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tern_harness::certify::run_corpus;
use tern_harness::corpus::{Case, Corpus};
use tern_harness::events::quiet;
use tern_harness::implementations::adapter::{Limits, SubprocessImpl};
use tern_harness::implementations::reference::ReferenceImpl;

fn corpus(c: &mut Criterion) {
    let corpus = Corpus::load(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenarios"
    )))
    .expect("the corpus loads");
    let cases: Vec<&Case> = corpus.cases.iter().collect();
    let agent = SubprocessImpl::new(
        format!("{} agent", env!("CARGO_BIN_EXE_tern-sim")),
        Limits::default(),
    )
    .expect("state directory");
    let mut group = c.benchmark_group("corpus");
    group.throughput(Throughput::Elements(cases.len() as u64));
    group.sample_size(10);
    group.bench_function("reference in process", |b| {
        b.iter(|| {
            let run = run_corpus(&cases, &ReferenceImpl, &quiet, || false);
            assert_eq!(run.cases.len(), cases.len());
        })
    });
    group.bench_function("reference over the protocol", |b| {
        b.iter(|| {
            let run = run_corpus(&cases, &agent, &quiet, || false);
            assert_eq!(run.cases.len(), cases.len());
        })
    });
    group.finish();
}

criterion_group!(benches, corpus);
criterion_main!(benches);
