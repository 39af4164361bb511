//! Ledger throughput: deliveries per second for a realistic mixed
//! conversation, and the cost of a delivery (parse + ledger step) against one
//! strict parse of the same frames, in one group so the ratio is side by side;
//! and what a view after each delivery adds, written out or digested.

/// The binary's allocator (src/main.rs), so that the figures are the binary's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use serde_json::json;
use tern_model::ledger::{Ledger, LedgerConfig, LocalTime};
use tern_model::message::{Principal, ThreadId};

/// A claim citing the review notes.
fn claim(t: &str) -> serde_json::Value {
    json!({"text": t, "basis": "observed", "confidence": "high",
                             "scope": "This review only.", "evidence": ["ev:notes"], "alternatives": []})
}

/// A frame of `thread` from the participant `id` names, under its own
/// principal, with the review notes as evidence when `evidence`.
fn frame(
    thread: &str,
    id: &str,
    to: &str,
    reply: Option<&str>,
    act: &str,
    body: serde_json::Value,
    evidence: bool,
) -> (Vec<u8>, Principal) {
    let from = id.split(':').next().unwrap();
    let mut v = json!({"tern": "0.1", "id": id, "from": from, "to": [to], "thread": thread,
                       "reply": reply, "act": act, "body": body});
    if evidence {
        v["evidence"] = json!([{"id": "ev:notes", "source": "review notes", "collected_at": "2026-11-30T12:00:00Z",
                                "method": "read", "result": "Finding recorded."}]);
    }
    (
        serde_json::to_vec(&v).unwrap(),
        Principal::new(from).unwrap(),
    )
}

/// 50 threads, each a full exchange: request, commitment, reports, talk,
/// a revision, acknowledgements and a challenge; 550 frames in all.
fn conversation() -> Vec<(Vec<u8>, Principal)> {
    let mut out = Vec::new();
    for k in 0..50 {
        let thread = format!("thread-{k}");
        let mut push = |id: &str,
                        to: &str,
                        reply: Option<&str>,
                        act: &str,
                        body: serde_json::Value,
                        evidence: bool| {
            out.push(frame(&thread, id, to, reply, act, body, evidence));
        };
        push(
            "drafter:1",
            "reviewer",
            None,
            "REQUEST",
            json!({"action": "Review the ACK rule in the supplied draft.",
            "done_when": "Identify whether ACK implies agreement and explain why.", "constraints": ["Review only; do not edit files."], "authority_ref": null}),
            false,
        );
        push(
            "reviewer:1",
            "drafter",
            Some("drafter:1"),
            "COMMIT",
            json!({"request": "drafter:1", "action": "Review the supplied ACK rule.",
            "deliverable": "A finding and textual support.", "done_when": "Explain whether ACK implies agreement with supporting text.",
            "due": "2026-12-24T17:00:00Z", "conditions": ["The draft is accessible."], "authority_ref": null}),
            false,
        );
        push(
            "reviewer:2",
            "drafter",
            Some("reviewer:1"),
            "REPORT",
            json!({"commitment": "reviewer:1", "state": "active", "claims": [claim("Started.")]}),
            false,
        );
        push(
            "drafter:2",
            "reviewer",
            Some("reviewer:2"),
            "ACK",
            json!({"target": "reviewer:2"}),
            false,
        );
        push(
            "drafter:3",
            "reviewer",
            None,
            "ASK",
            json!({"question": "Which ambiguity should we remove first?"}),
            false,
        );
        push(
            "reviewer:3",
            "drafter",
            Some("drafter:3"),
            "TELL",
            json!({"claims": [claim("The ACK rule is the most ambiguous.")]}),
            true,
        );
        push(
            "reviewer:4",
            "drafter",
            Some("reviewer:2"),
            "REPORT",
            json!({"commitment": "reviewer:1", "state": "blocked",
            "claims": [claim("The draft is not available to me.")], "next": "Please provide the draft text."}),
            false,
        );
        push(
            "reviewer:5",
            "drafter",
            None,
            "REVISE",
            json!({"target": "reviewer:3", "previous": "reviewer:3", "mode": "replace",
            "replacement": {"claims": [claim("The ACK rule and the REVISE rule are equally ambiguous.")]}, "impact": []}),
            true,
        );
        push(
            "drafter:4",
            "reviewer",
            Some("reviewer:5"),
            "CHALLENGE",
            json!({"target": "reviewer:5", "kind": "inference",
            "reason": "The REVISE rule was clarified last week.", "claims": []}),
            false,
        );
        push(
            "reviewer:6",
            "drafter",
            Some("reviewer:4"),
            "REPORT",
            json!({"commitment": "reviewer:1", "state": "fulfilled",
            "claims": [claim("ACK does not imply agreement: section 2 says so.")]}),
            true,
        );
        push(
            "drafter:5",
            "reviewer",
            Some("reviewer:6"),
            "ACK",
            json!({"target": "reviewer:6"}),
            false,
        );
    }
    out
}

fn ledger(c: &mut Criterion) {
    let frames = conversation();
    {
        let mut l = Ledger::new(LedgerConfig::open_auditor());
        for (f, p) in &frames {
            let o = &l.deliver(f, p, LocalTime(0))[0].outcome;
            assert_eq!(
                *o,
                tern_model::ledger::Outcome::Accepted,
                "bench conversation must be valid"
            );
        }
    }
    let mut group = c.benchmark_group("ledger");
    group.throughput(Throughput::Elements(frames.len() as u64));
    group.bench_function("parse_only", |b| {
        b.iter(|| {
            for (f, _) in &frames {
                black_box(tern_model::parse_frame(black_box(f)).ok());
            }
        })
    });
    group.bench_function("parse_and_ledger_step", |b| {
        b.iter(|| {
            let mut l = Ledger::new(LedgerConfig::open_auditor());
            for (f, p) in &frames {
                black_box(l.deliver(black_box(f), p, LocalTime(0)));
            }
            l
        })
    });
    group.finish();
}

/// What the simulator pays to compare a view after each delivery: the
/// delivery alone, then with the view of its thread written out (what
/// comparing texts costs), then with the view's digest (what comparing
/// digests costs), side by side.
fn views(c: &mut Criterion) {
    let frames = conversation();
    let threads: Vec<ThreadId> = frames
        .iter()
        .map(|(f, _)| {
            let m = tern_model::parse_frame(f).expect("bench frames are valid");
            m.thread.clone()
        })
        .collect();
    let mut group = c.benchmark_group("views");
    group.throughput(Throughput::Elements(frames.len() as u64));
    group.bench_function("deliver", |b| {
        b.iter(|| {
            let mut l = Ledger::new(LedgerConfig::open_auditor());
            for (f, p) in &frames {
                black_box(l.deliver(f, p, LocalTime(0)));
            }
            l
        })
    });
    group.bench_function("deliver_then_view_text", |b| {
        b.iter(|| {
            let mut l = Ledger::new(LedgerConfig::open_auditor());
            for ((f, p), t) in frames.iter().zip(&threads) {
                black_box(l.deliver(f, p, LocalTime(0)));
                black_box(l.view_text(t));
            }
            l
        })
    });
    group.bench_function("deliver_then_view_digest", |b| {
        b.iter(|| {
            let mut l = Ledger::new(LedgerConfig::open_auditor());
            for ((f, p), t) in frames.iter().zip(&threads) {
                black_box(l.deliver(f, p, LocalTime(0)));
                black_box(l.view_digest(t));
            }
            l
        })
    });
    group.finish();
}

criterion_group!(benches, ledger, views);
criterion_main!(benches);
