//! Round trips through the subprocess adapter to `tern-sim agent`, against a
//! raw pipe echo child (`cat`) with lines of the same size, measured in one
//! group: the echo is the floor of this transport.

/// The binary's allocator (src/main.rs), so that the figures are the binary's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use tern_harness::contract::plugin::Implementation;
use tern_harness::contract::storage::Storage;
use tern_harness::contract::world::World;
use tern_harness::implementations::adapter::{Limits, SubprocessImpl};
use tern_harness::simulator::scenario::Scenario;
use tern_model::message::ThreadId;

const ROUND_TRIPS: u64 = 200;

fn adapter(c: &mut Criterion) {
    let scenario = Scenario::new(2, 200, false, |_| 0);
    let init = scenario.init_for("alice");
    let imp = SubprocessImpl::new(
        format!("{} agent", env!("CARGO_BIN_EXE_tern-sim")),
        Limits::default(),
    )
    .expect("state directory");
    let storage = Storage::new();
    let world = World::new();
    let mut receiver = imp
        .start(&init, storage.clone(), world.for_agent("alice", &storage))
        .expect("agent starts");
    let thread = ThreadId::new("plan").unwrap();
    // The request and answer of a `view` of an empty thread, as sized on the wire.
    let line = format!(
        "{{\"seq\":1,\"ok\":{}}}",
        receiver.view(&thread).expect("view")
    );

    let mut echo = Command::new("cat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("cat");
    let mut echo_in = echo.stdin.take().unwrap();
    let mut echo_out = BufReader::new(echo.stdout.take().unwrap());
    let mut buf = String::new();

    let mut group = c.benchmark_group("adapter");
    group.throughput(Throughput::Elements(ROUND_TRIPS));
    group.bench_function("raw_pipe_echo", |b| {
        b.iter(|| {
            for _ in 0..ROUND_TRIPS {
                writeln!(echo_in, "{line}").unwrap();
                echo_in.flush().unwrap();
                buf.clear();
                echo_out.read_line(&mut buf).unwrap();
                black_box(&buf);
            }
        })
    });
    group.bench_function("adapter_view_round_trip", |b| {
        b.iter(|| {
            for _ in 0..ROUND_TRIPS {
                black_box(receiver.view(&thread).unwrap());
            }
        })
    });
    group.finish();
    drop(echo_in);
    let _ = echo.wait();
}

criterion_group!(benches, adapter);
criterion_main!(benches);
