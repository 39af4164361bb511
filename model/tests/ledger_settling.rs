//! Incremental settling against settling from scratch, and what a ledger
//! keeps for frames it does not store.
//!
//! A ledger re-settles only what an ID conflict touches and wakes waiting
//! messages in the order a from-scratch re-settling would have left them.
//! [`Ledger::settling_from_scratch`] is the reference that re-settles the
//! whole context on every conflict; the two must give the same events for
//! every delivery, the same views and the same executions.

mod common;

use common::conversation::{build, commitments, moves, shuffled, viewers, Sent};
use common::kit::{config, mref, thread};
use proptest::prelude::*;
use serde_json::{json, Value};
use tern_model::ledger::{Ledger, LedgerConfig, LocalTime, Outcome, Viewer};
use tern_model::message::{Participant, Principal};

fn views(ledger: &Ledger) -> Value {
    Value::Array(ledger.threads().iter().map(|t| ledger.view(t)).collect())
}

/// Plays `frames` into an incremental ledger and the reference, comparing
/// every delivery's events, then views, outcomes and executions.
fn agree(frames: &[Sent], viewer: Option<&str>) -> Result<(), TestCaseError> {
    let mut fast = Ledger::new(config(viewer));
    let mut reference = Ledger::settling_from_scratch(config(viewer));
    for (i, s) in frames.iter().enumerate() {
        let a = fast.deliver(&s.bytes, &s.principal, LocalTime(0));
        let b = reference.deliver(&s.bytes, &s.principal, LocalTime(0));
        prop_assert_eq!(a, b, "delivery {} for viewer {:?}", i, viewer);
    }
    prop_assert_eq!(fast.outcomes(), reference.outcomes());
    prop_assert_eq!(views(&fast), views(&reference));
    for (t, id) in commitments(frames) {
        let a = fast.execute(&thread(&t), &mref(&id), LocalTime(0));
        let b = reference.execute(&thread(&t), &mref(&id), LocalTime(0));
        prop_assert_eq!(a, b, "execute {} in {}", id, t);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// In arrival order, shuffled and reversed (references before what
    /// they name, so that conflicts meet pending messages).
    #[test]
    fn incremental_settling_agrees_with_settling_from_scratch(ms in moves(60), seed in any::<u64>()) {
        let frames = build(&ms);
        let reversed: Vec<Sent> = frames.iter().rev().cloned().collect();
        for order in [frames.clone(), shuffled(&frames, seed), reversed] {
            for viewer in viewers() {
                agree(&order, viewer)?;
            }
        }
    }
}

/// The property above is only as strong as its conversations: check that
/// they reach ID conflicts that change settled messages and that meet
/// messages still waiting.
#[test]
fn generated_conversations_reach_conflicts_that_change_standing() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &[11; 32]),
    );
    let strategy = moves(60);
    let (mut invalidated, mut released_after_conflict) = (0, 0);
    for _ in 0..200 {
        let frames = build(&strategy.new_tree(&mut runner).unwrap().current());
        for order in [frames.clone(), frames.iter().rev().cloned().collect()] {
            let mut ledger = Ledger::new(config(None));
            let mut conflicts = 0;
            for s in &order {
                let events = ledger.deliver(&s.bytes, &s.principal, LocalTime(0));
                if matches!(&events[0].outcome, Outcome::Rejected(r) if r.class.as_str() == "id_conflict")
                {
                    conflicts += 1;
                }
                for e in &events[1..] {
                    match e.kind {
                        tern_model::ledger::EventKind::Invalidated => invalidated += 1,
                        tern_model::ledger::EventKind::Released if conflicts > 0 => {
                            released_after_conflict += 1
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    assert!(
        invalidated > 0,
        "no conflict ever changed a settled message"
    );
    assert!(
        released_after_conflict > 0,
        "no message was ever released after a conflict"
    );
}

/// A conversation's frames and some rejected variants of them.
fn stored_then_refused(viewer: Option<&str>) -> (Ledger, Vec<Sent>) {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &[5; 32]),
    );
    let frames = build(&moves(60).new_tree(&mut runner).unwrap().current());
    let mut ledger = Ledger::new(config(viewer));
    for s in &frames {
        ledger.deliver(&s.bytes, &s.principal, LocalTime(0));
    }
    (ledger, frames)
}

/// Section 1 and issue "memory on endless streams": frames that are
/// rejected before storage, and duplicates, leave nothing that lasts.
#[test]
fn rejected_frames_and_duplicates_leave_no_lasting_state() {
    for viewer in viewers() {
        let (mut ledger, frames) = stored_then_refused(viewer);
        let stored = ledger.stored_messages();
        let footprint = ledger.footprint();
        assert!(stored > 0, "the conversation stored nothing");
        let spoofer = Principal::new("pk-nobody").unwrap();
        let mut duplicates = 0;
        for n in 0..10_000usize {
            let s = &frames[n % frames.len()];
            let events = match n % 5 {
                // Not Tern at all.
                0 => ledger.deliver(b"{}", &s.principal, LocalTime(0)),
                // A spoofed sender.
                1 => ledger.deliver(&s.bytes, &spoofer, LocalTime(0)),
                // A thread without an identity context, new every time.
                2 => {
                    let v = json!({"tern": "0.1", "id": format!("drafter:{n}"), "from": "drafter",
                        "to": ["reviewer"], "thread": format!("fresh-{n}"), "reply": null,
                        "act": "ASK", "body": {"question": "Who reads this?"}});
                    ledger.deliver(&serde_json::to_vec(&v).unwrap(), &s.principal, LocalTime(0))
                }
                // Everything delivered before, again.
                _ => ledger.deliver(&s.bytes, &s.principal, LocalTime(0)),
            };
            assert_eq!(events.len(), 1, "a refused frame settled something");
            if events[0].outcome == Outcome::Duplicate {
                duplicates += 1;
            }
        }
        assert!(
            duplicates > 1000,
            "too few duplicates to mean anything: {duplicates}"
        );
        assert_eq!(ledger.stored_messages(), stored, "viewer {viewer:?}");
        assert_eq!(ledger.footprint(), footprint, "viewer {viewer:?}");
    }
}

/// With an open configuration every thread has a context; a participant's
/// ledger still refuses frames not addressed to it, in any number of new
/// threads, without keeping a context for each.
#[test]
fn frames_refused_in_new_threads_create_no_context() {
    let mut config = LedgerConfig::open_auditor();
    config.viewer = Viewer::Participant(Participant::new("me").unwrap());
    let mut ledger = Ledger::new(config);
    let footprint = ledger.footprint();
    for n in 0..10_000 {
        let v = json!({"tern": "0.1", "id": format!("a:{n}"), "from": "a", "to": ["b"],
            "thread": format!("thread-{n}"), "reply": null, "act": "ASK",
            "body": {"question": "Who reads this?"}});
        let events = ledger.deliver(
            &serde_json::to_vec(&v).unwrap(),
            &Principal::new("a").unwrap(),
            LocalTime(0),
        );
        assert!(
            matches!(&events[0].outcome, Outcome::Rejected(r) if r.class.as_str() == "not_addressed")
        );
    }
    assert_eq!(ledger.footprint(), footprint);
    assert_eq!(ledger.stored_messages(), 0);
    assert!(ledger.threads().is_empty());
}

/// Many contents under one ID: each new one is an ID conflict, each old one
/// a duplicate, however many there are.
#[test]
fn many_contents_under_one_id_are_each_recognised() {
    let mut ledger = Ledger::new(LedgerConfig::open_auditor());
    let frame = |k: usize| {
        serde_json::to_vec(&json!({"tern": "0.1", "id": "a:0", "from": "a", "to": ["b"],
            "thread": "t", "reply": null, "act": "ASK", "body": {"question": format!("Version {k}?")}}))
        .unwrap()
    };
    let a = Principal::new("a").unwrap();
    for k in 0..200 {
        let events = ledger.deliver(&frame(k), &a, LocalTime(0));
        let expected = if k == 0 { "accepted" } else { "id_conflict" };
        let got = match &events[0].outcome {
            Outcome::Accepted => "accepted",
            Outcome::Rejected(r) => r.class.as_str(),
            other => panic!("{other:?}"),
        };
        assert_eq!(got, expected, "content {k}");
    }
    for k in (0..200).rev() {
        assert_eq!(
            ledger.deliver(&frame(k), &a, LocalTime(0))[0].outcome,
            Outcome::Duplicate,
            "content {k}"
        );
    }
    assert_eq!(ledger.stored_messages(), 200);
    let view = ledger.view(&thread("t"));
    assert_eq!(
        view["messages"][0]["variants"].as_array().map(Vec::len),
        Some(200)
    );
}
