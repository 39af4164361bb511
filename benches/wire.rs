//! Strict parse + validate throughput against an untyped, non-strict
//! `serde_json::Value` parse of the same realistic messages, in one group so
//! the ratio is measured side by side.

/// The binary's allocator (src/main.rs), so that the figures are the binary's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};

const CORPUS: &str = include_str!("data/messages.jsonl");

fn frames() -> Vec<&'static [u8]> {
    CORPUS.lines().map(str::as_bytes).collect()
}

fn parse(c: &mut Criterion) {
    let frames = frames();
    for f in &frames {
        assert!(
            tern_model::parse_frame(f).is_ok(),
            "bench corpus must be valid"
        );
    }
    let bytes: usize = frames.iter().map(|f| f.len()).sum();
    let mut group = c.benchmark_group("parse");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function("serde_json_value", |b| {
        b.iter(|| {
            for f in &frames {
                black_box(serde_json::from_slice::<serde_json::Value>(black_box(f)).ok());
            }
        })
    });
    group.bench_function("tern_strict_parse_validate", |b| {
        b.iter(|| {
            for f in &frames {
                black_box(tern_model::parse_frame(black_box(f)).ok());
            }
        })
    });
    group.finish();
}

criterion_group!(benches, parse);
criterion_main!(benches);
