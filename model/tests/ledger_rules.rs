//! One test per ledger rule, each named for the seed section it enforces.

mod common;

use common::kit::*;
use serde_json::json;
use tern_model::ledger::{EventKind, Execution, LocalTime, Outcome, Refusal, RejectClass};

const WORKED: &str = include_str!("../../examples/worked-exchange.jsonl");

fn refused(e: Execution) -> Refusal {
    match e {
        Execution::Refused(r) => r,
        Execution::Executed { effect } => panic!("expected a refusal, got effect {effect}"),
    }
}

// ---- Section 6: the worked exchange ---------------------------------------

#[test]
fn s6_worked_exchange_gives_the_view_expected_by_hand() {
    for viewer in [Some("drafter"), Some("reviewer"), None] {
        let mut t = Tester::new(viewer);
        for line in WORKED.lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            t.accept(&v);
        }
        let view = t.view("design");
        let line = |i: usize| -> serde_json::Value {
            serde_json::from_str(WORKED.lines().nth(i).unwrap()).unwrap()
        };
        let expected = json!({
            "thread": "design",
            "messages": [
                {"id": "drafter:1", "from": "drafter", "act": "REQUEST", "status": "accepted", "content": line(0)},
                {"id": "drafter:2", "from": "drafter", "act": "ACK", "status": "accepted", "content": line(3)},
                {"id": "reviewer:1", "from": "reviewer", "act": "COMMIT", "status": "accepted", "content": line(1)},
                {"id": "reviewer:2", "from": "reviewer", "act": "REPORT", "status": "accepted", "content": line(2)},
            ],
            "pending": [],
            "commitments": [{
                "id": "reviewer:1", "committer": "reviewer", "request": "drafter:1", "due": null,
                // Blocked, and the ACK completes nothing (section 6).
                "progress": "blocked", "annotations": [], "disputes": [],
                "superseded_by": [], "reports": ["reviewer:2"],
            }],
            "revisions": [],
            "effects": [],
        });
        assert_eq!(view, expected, "viewer {viewer:?}");
    }
}

// ---- Section 1: identity --------------------------------------------------

#[test]
fn s1_a_spoofed_sender_is_rejected_and_not_stored() {
    let mut t = Tester::new(None);
    let r = request("drafter:1", &["reviewer"], "design", None);
    // mallory's transport credentials, drafter's name in `from`.
    match &t.send_as(&r, &principal("mallory"))[0].outcome {
        Outcome::Rejected(rej) => assert_eq!(rej.class, RejectClass::Identity),
        other => panic!("{other:?}"),
    }
    assert_eq!(t.status("design", "drafter:1"), "absent");
    // The genuine message with that ID is then accepted, not an ID conflict.
    t.accept(&r);
}

#[test]
fn s1_bindings_are_per_context() {
    let mut t = Tester::new(None);
    // In thread `other` (context c2) drafter is pk-drafter-2, not pk-drafter.
    let r = request("drafter:1", &["reviewer"], "other", None);
    match &t.send_as(&r, &principal("drafter"))[0].outcome {
        Outcome::Rejected(rej) => assert_eq!(rej.class, RejectClass::Identity),
        other => panic!("{other:?}"),
    }
    t.accept(&r);
}

#[test]
fn s1_unknown_threads_and_participants_are_rejected() {
    let mut t = Tester::new(None);
    t.reject(
        &request("drafter:1", &["reviewer"], "elsewhere", None),
        RejectClass::UnknownThread,
    );
    t.reject(
        &request("stranger:1", &["reviewer"], "design", None),
        RejectClass::UnknownParticipant,
    );
    t.reject(
        &request("drafter:1", &["reviewer", "stranger"], "design", None),
        RejectClass::UnknownParticipant,
    );
    t.accept(&request("drafter:1", &["reviewer"], "design", None));
}

#[test]
fn s1_a_participant_records_only_what_it_sent_or_received() {
    let mut t = Tester::new(Some("editor"));
    t.reject(
        &request("drafter:1", &["reviewer"], "design", None),
        RejectClass::NotAddressed,
    );
    t.accept(&request(
        "drafter:2",
        &["reviewer", "editor"],
        "design",
        None,
    ));
    t.accept(&request("editor:1", &["reviewer"], "design", None));
}

#[test]
fn s1_stateless_errors_keep_their_class() {
    let mut t = Tester::new(None);
    let events = t.ledger.deliver(
        b"{\"a\":1,\"a\":1}",
        &principal("drafter"),
        tern_model::ledger::LocalTime(0),
    );
    assert_eq!(
        events.len(),
        1,
        "an invalid frame yields one event and nothing else"
    );
    match &events[0].outcome {
        Outcome::Rejected(r) => assert_eq!(r.class, RejectClass::Parse),
        other => panic!("{other:?}"),
    }
}

// ---- Section 1: deduplication and ID conflicts -----------------------------

#[test]
fn s1_a_repeated_delivery_is_a_duplicate_with_no_new_effect() {
    let mut t = Tester::new(Some("reviewer"));
    t.accept(&request("drafter:1", &["reviewer"], "ops", None));
    let c = commit("reviewer:1", &["drafter"], "ops", "drafter:1", None);
    t.accept(&c);
    assert!(matches!(
        t.execute("ops", "reviewer:1"),
        Execution::Executed { .. }
    ));
    // Same content, other key order and whitespace.
    let text = serde_json::to_string_pretty(&c).unwrap();
    let events = t.ledger.deliver(
        text.as_bytes(),
        &principal("reviewer"),
        tern_model::ledger::LocalTime(0),
    );
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].outcome, Outcome::Duplicate);
    assert_eq!(
        refused(t.execute("ops", "reviewer:1")),
        Refusal::AlreadyExecuted
    );
    assert_eq!(t.ledger.effects().len(), 1);
}

#[test]
fn s1_reusing_an_id_for_other_content_equivocates_it_whatever_the_order() {
    let a = request("drafter:1", &["reviewer"], "design", None);
    let mut b = a.clone();
    b["body"]["action"] = json!("Delete everything");
    let commit_to_it = commit("reviewer:1", &["drafter"], "design", "drafter:1", None);
    let mut views = Vec::new();
    for order in [
        [&a, &b, &commit_to_it],
        [&b, &commit_to_it, &a],
        [&commit_to_it, &a, &b],
    ] {
        let mut t = Tester::new(None);
        let mut classes = Vec::new();
        for v in order {
            for e in t.send(v) {
                if let Outcome::Rejected(r) = e.outcome {
                    classes.push(r.class);
                }
            }
        }
        assert!(classes.contains(&RejectClass::IdConflict));
        assert_eq!(t.status("design", "drafter:1"), "equivocated");
        // What depends on an equivocated ID cannot stand.
        assert_eq!(t.status("design", "reviewer:1"), "rejected");
        views.push(t.view("design"));
    }
    assert_eq!(views[0], views[1]);
    assert_eq!(views[1], views[2]);
    assert_eq!(
        views[0]["messages"][0]["variants"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn s1_a_conflict_revealed_late_invalidates_what_was_accepted() {
    let mut t = Tester::new(None);
    let a = request("drafter:1", &["reviewer"], "design", None);
    t.accept(&a);
    t.accept(&commit(
        "reviewer:1",
        &["drafter"],
        "design",
        "drafter:1",
        None,
    ));
    let mut b = a.clone();
    b["body"]["done_when"] = json!("Never");
    let events = t.send(&b);
    assert!(
        matches!(&events[0].outcome, Outcome::Rejected(r) if r.class == RejectClass::IdConflict)
    );
    let invalidated: Vec<_> = events[1..]
        .iter()
        .filter(|e| e.kind == EventKind::Invalidated)
        .collect();
    assert_eq!(invalidated.len(), 2, "{events:?}");
}

#[test]
fn s1_dedup_keys_are_qualified_by_the_identity_context() {
    let mut t = Tester::new(None);
    t.accept(&request("drafter:1", &["reviewer"], "design", None));
    // Same ID, other content, other context: a different namespace.
    t.accept(&request("drafter:1", &["editor"], "other", None));
    // Same ID, other content, other thread of the same context: a conflict.
    t.reject(
        &request("drafter:1", &["editor"], "ops", None),
        RejectClass::IdConflict,
    );
}

/// Delivers `v` with its `extensions` member `n` spelt as `literal`.
fn send_with_number(t: &mut Tester, v: &serde_json::Value, literal: &str) -> Vec<Outcome> {
    let mut v = v.clone();
    v["extensions"] = json!({"n": 0});
    let text = serde_json::to_string(&v)
        .unwrap()
        .replace("\"n\":0", &format!("\"n\":{literal}"));
    let p = principal(v["from"].as_str().unwrap());
    t.ledger
        .deliver(text.as_bytes(), &p, tern_model::ledger::LocalTime(0))
        .into_iter()
        .map(|e| e.outcome)
        .collect()
}

#[test]
fn p_eq_3_integers_one_binary64_apart_are_other_content_under_one_id() {
    let a = request("drafter:1", &["reviewer"], "design", None);
    let mut t = Tester::new(None);
    assert_eq!(
        send_with_number(&mut t, &a, "9007199254740992"),
        [Outcome::Accepted]
    );
    let second = send_with_number(&mut t, &a, "9007199254740993");
    assert!(
        matches!(&second[0], Outcome::Rejected(r) if r.class == RejectClass::IdConflict),
        "{second:?}"
    );
    assert_eq!(t.status("design", "drafter:1"), "equivocated");
}

#[test]
fn p_eq_3_equal_numbers_are_a_duplicate_and_print_alike_whatever_came_first() {
    let a = request("drafter:1", &["reviewer"], "design", None);
    let spellings = [
        "1e16",
        "10000000000000000",
        "1.0e16",
        "100000000000000000e-1",
    ];
    let mut views = Vec::new();
    for first in spellings {
        let mut t = Tester::new(None);
        assert_eq!(send_with_number(&mut t, &a, first), [Outcome::Accepted]);
        for other in spellings {
            if other != first {
                assert_eq!(
                    send_with_number(&mut t, &a, other),
                    [Outcome::Duplicate],
                    "{first} then {other}"
                );
            }
        }
        views.push(serde_json::to_string(&t.view("design")).unwrap());
    }
    assert!(
        views[0].contains("\"n\":10000000000000000}"),
        "{}",
        views[0]
    );
    assert!(views.iter().all(|v| *v == views[0]));
}

// ---- Section 1: references -------------------------------------------------

#[test]
fn s1_unresolved_references_are_pending_and_released_transitively() {
    let mut t = Tester::new(None);
    let rep = report(
        "reviewer:2",
        &["drafter"],
        "design",
        "reviewer:1",
        "reviewer:1",
        "active",
    );
    let events = t.send(&rep);
    assert_eq!(
        events[0].outcome,
        Outcome::Pending {
            missing: vec![mref("reviewer:1")]
        }
    );
    let c = commit("reviewer:1", &["drafter"], "design", "drafter:1", None);
    assert!(matches!(t.outcome(&c), Outcome::Pending { .. }));
    assert_eq!(t.view("design")["pending"].as_array().unwrap().len(), 2);
    let events = t.send(&request("drafter:1", &["reviewer"], "design", None));
    assert_eq!(events[0].outcome, Outcome::Accepted);
    let released: Vec<String> = events[1..]
        .iter()
        .filter(|e| e.kind == EventKind::Released && e.outcome == Outcome::Accepted)
        .map(|e| e.id.as_ref().unwrap().to_string())
        .collect();
    assert_eq!(released, ["reviewer:1", "reviewer:2"]);
    assert_eq!(t.commitment("design", "reviewer:1")["progress"], "active");
}

#[test]
fn s4_a_commit_must_reference_a_request_in_the_same_thread() {
    let mut t = Tester::new(None);
    t.accept(&frame(
        "drafter:1",
        &["reviewer"],
        "design",
        None,
        "ASK",
        json!({"question": "q"}),
    ));
    t.reject(
        &commit("reviewer:1", &["drafter"], "design", "drafter:1", None),
        RejectClass::Reference,
    );
    t.accept(&request("drafter:2", &["reviewer"], "ops", None));
    t.reject(
        &commit("reviewer:2", &["drafter"], "design", "drafter:2", None),
        RejectClass::Reference,
    );
    t.accept(&request("drafter:3", &["reviewer"], "design", None));
    t.accept(&commit(
        "reviewer:3",
        &["drafter"],
        "design",
        "drafter:3",
        None,
    ));
}

#[test]
fn s1_references_to_rejected_messages_are_rejected() {
    let mut t = Tester::new(None);
    t.accept(&frame(
        "drafter:1",
        &["reviewer"],
        "design",
        None,
        "ASK",
        json!({"question": "q"}),
    ));
    let bad = commit("reviewer:1", &["drafter"], "design", "drafter:1", None);
    t.reject(&bad, RejectClass::Reference);
    t.reject(
        &report(
            "reviewer:2",
            &["drafter"],
            "design",
            "reviewer:1",
            "reviewer:1",
            "active",
        ),
        RejectClass::Reference,
    );
}

#[test]
fn s1_a_message_cannot_reference_itself() {
    let mut t = Tester::new(None);
    t.reject(
        &frame(
            "drafter:1",
            &["reviewer"],
            "design",
            Some("drafter:1"),
            "ASK",
            json!({"question": "q"}),
        ),
        RejectClass::Reference,
    );
}

// ---- Section 2: who may say what -------------------------------------------

#[test]
fn s2_only_the_commitments_author_may_report_its_state() {
    let mut t = Tester::new(None);
    t.accept(&request("drafter:1", &["reviewer"], "design", None));
    t.accept(&commit(
        "reviewer:1",
        &["drafter"],
        "design",
        "drafter:1",
        None,
    ));
    t.reject(
        &report(
            "drafter:2",
            &["reviewer"],
            "design",
            "reviewer:1",
            "reviewer:1",
            "fulfilled",
        ),
        RejectClass::NotAuthor,
    );
    // Decided at once, even before the commitment is known.
    t.reject(
        &report(
            "editor:1",
            &["drafter"],
            "design",
            "reviewer:9",
            "reviewer:9",
            "fulfilled",
        ),
        RejectClass::NotAuthor,
    );
    assert_eq!(
        t.commitment("design", "reviewer:1")["progress"],
        "unreported"
    );
}

#[test]
fn s2_ask_ack_and_propose_create_no_commitments() {
    let mut t = Tester::new(Some("reviewer"));
    t.accept(&request("drafter:1", &["reviewer"], "ops", None));
    t.accept(&frame(
        "reviewer:1",
        &["drafter"],
        "ops",
        Some("drafter:1"),
        "ACK",
        json!({"target": "drafter:1"}),
    ));
    t.accept(&frame(
        "reviewer:2",
        &["drafter"],
        "ops",
        None,
        "PROPOSE",
        json!({"proposal": "I could do it Friday", "request": "drafter:1"}),
    ));
    t.accept(&frame(
        "reviewer:3",
        &["drafter"],
        "ops",
        None,
        "ASK",
        json!({"question": "Which draft?"}),
    ));
    assert_eq!(t.view("ops")["commitments"], json!([]));
    for id in ["reviewer:1", "reviewer:2", "reviewer:3", "drafter:1"] {
        assert_eq!(
            refused(t.execute("ops", id)),
            Refusal::NotACommitment,
            "{id}"
        );
    }
}

#[test]
fn s2_a_commit_binds_only_its_sender() {
    let mut t = Tester::new(Some("drafter"));
    t.accept(&request("drafter:1", &["reviewer"], "ops", None));
    t.accept(&commit(
        "reviewer:1",
        &["drafter"],
        "ops",
        "drafter:1",
        None,
    ));
    assert_eq!(
        refused(t.execute("ops", "reviewer:1")),
        Refusal::NotOwnCommitment
    );
}

// ---- Section 4: commitments and reports --------------------------------------

fn committed(viewer: Option<&str>, thread: &str, authority: Option<&str>) -> Tester {
    let mut t = Tester::new(viewer);
    t.accept(&request("drafter:1", &["reviewer"], thread, None));
    t.accept(&commit(
        "reviewer:1",
        &["drafter"],
        thread,
        "drafter:1",
        authority,
    ));
    t
}

/// A commitment's state is kept between asks (ledger/memo.rs). Derived
/// for an execution choice, then shown by a view, it must still change
/// when a challenge reaches one of its reports: a change to neither the
/// COMMIT nor any list of it.
#[test]
fn s4_a_challenge_of_a_report_reaches_a_commitment_derived_before_it() {
    let mut t = committed(Some("reviewer"), "ops", None);
    t.accept(&report(
        "reviewer:2",
        &["drafter"],
        "ops",
        "reviewer:1",
        "reviewer:1",
        "active",
    ));
    let _ = t
        .ledger
        .would_execute(&thread("ops"), &mref("reviewer:1"), LocalTime(t.now));
    let before = t.commitment("ops", "reviewer:1");
    assert!(!has(&before["annotations"], "challenged"), "{before}");
    t.accept(&frame(
        "drafter:2",
        &["reviewer"],
        "ops",
        Some("reviewer:2"),
        "CHALLENGE",
        json!({"target": "reviewer:2", "kind": "factual", "reason": "r", "claims": []}),
    ));
    let after = t.commitment("ops", "reviewer:1");
    assert!(has(&after["annotations"], "challenged"), "{after}");
}

#[test]
fn s4_blocked_is_never_completion() {
    let mut t = committed(Some("reviewer"), "ops", None);
    t.accept(&report(
        "reviewer:2",
        &["drafter"],
        "ops",
        "reviewer:1",
        "reviewer:1",
        "blocked",
    ));
    assert_eq!(t.commitment("ops", "reviewer:1")["progress"], "blocked");
    t.accept(&frame(
        "drafter:2",
        &["reviewer"],
        "ops",
        Some("reviewer:2"),
        "ACK",
        json!({"target": "reviewer:2"}),
    ));
    assert_eq!(t.commitment("ops", "reviewer:1")["progress"], "blocked");
}

#[test]
fn s4_a_terminal_state_never_silently_becomes_active_again() {
    for (first, second) in [(0, 1), (1, 0)] {
        let mut t = committed(Some("reviewer"), "ops", None);
        let reports = [
            report(
                "reviewer:2",
                &["drafter"],
                "ops",
                "reviewer:1",
                "reviewer:1",
                "failed",
            ),
            // Replies to the failed report: an attempt to reopen.
            report(
                "reviewer:3",
                &["drafter"],
                "ops",
                "reviewer:2",
                "reviewer:1",
                "active",
            ),
        ];
        t.send(&reports[first]);
        t.send(&reports[second]);
        let c = t.commitment("ops", "reviewer:1");
        assert_eq!(c["progress"], "failed");
        assert!(has(&c["annotations"], "reopen_ignored"), "{c}");
        assert_eq!(refused(t.execute("ops", "reviewer:1")), Refusal::Terminal);
    }
}

#[test]
fn s4_fulfilled_without_covering_evidence_is_unverified() {
    let mut t = committed(None, "ops", None);
    t.accept(&report(
        "reviewer:2",
        &["drafter"],
        "ops",
        "reviewer:1",
        "reviewer:1",
        "fulfilled",
    ));
    let c = t.commitment("ops", "reviewer:1");
    assert_eq!(c["progress"], "fulfilled");
    assert!(has(&c["annotations"], "unverified"));

    let mut t = committed(None, "ops", None);
    let mut r = report(
        "reviewer:2",
        &["drafter"],
        "ops",
        "reviewer:1",
        "reviewer:1",
        "fulfilled",
    );
    r["body"]["claims"][0]["evidence"] = json!(["ev:notes"]);
    // A reference alone is not verification...
    t.accept(&r);
    assert!(has(
        &t.commitment("ops", "reviewer:1")["annotations"],
        "unverified"
    ));
    // ...evidence embedded in the same message is.
    let mut t = committed(None, "ops", None);
    r["evidence"] = json!([{"id": "ev:notes", "source": "review.md", "collected_at": "2026-11-30T12:00:00Z",
                           "method": "read", "result": "ACK is not agreement"}]);
    t.accept(&r);
    assert!(!has(
        &t.commitment("ops", "reviewer:1")["annotations"],
        "unverified"
    ));
}

#[test]
fn s4_concurrent_reports_that_disagree_leave_progress_unresolved() {
    let mut t = committed(None, "ops", None);
    t.accept(&report(
        "reviewer:2",
        &["drafter"],
        "ops",
        "reviewer:1",
        "reviewer:1",
        "active",
    ));
    t.accept(&report(
        "reviewer:3",
        &["drafter"],
        "ops",
        "reviewer:1",
        "reviewer:1",
        "blocked",
    ));
    assert_eq!(t.commitment("ops", "reviewer:1")["progress"], "unresolved");
    // A report following one of them leaves the other current: still split.
    t.accept(&report(
        "reviewer:4",
        &["drafter"],
        "ops",
        "reviewer:3",
        "reviewer:1",
        "blocked",
    ));
    assert_eq!(t.commitment("ops", "reviewer:1")["progress"], "unresolved");
    // Once every current report agrees, progress is decided.
    t.accept(&report(
        "reviewer:5",
        &["drafter"],
        "ops",
        "reviewer:2",
        "reviewer:1",
        "blocked",
    ));
    assert_eq!(t.commitment("ops", "reviewer:1")["progress"], "blocked");
    let mut t = committed(None, "ops", None);
    t.accept(&report(
        "reviewer:2",
        &["drafter"],
        "ops",
        "reviewer:1",
        "reviewer:1",
        "blocked",
    ));
    t.accept(&report(
        "reviewer:3",
        &["drafter"],
        "ops",
        "reviewer:2",
        "reviewer:1",
        "active",
    ));
    assert_eq!(t.commitment("ops", "reviewer:1")["progress"], "active");
}

#[test]
fn s4_a_mismatch_with_the_request_is_disputed_not_accepted() {
    let mut t = Tester::new(Some("editor"));
    // The request went to reviewer; editor commits anyway.
    t.accept(&request(
        "drafter:1",
        &["reviewer", "editor"],
        "ops",
        Some("grant:editor"),
    ));
    t.accept(&commit(
        "editor:1",
        &["drafter"],
        "ops",
        "drafter:1",
        Some("grant:review"),
    ));
    let c = t.commitment("ops", "editor:1");
    assert_eq!(c["disputes"], json!(["authority_mismatch"]));
    assert_eq!(refused(t.execute("ops", "editor:1")), Refusal::Disputed);

    let mut t = Tester::new(None);
    t.accept(&request("drafter:1", &["reviewer"], "ops", None));
    t.accept(&commit("editor:1", &["drafter"], "ops", "drafter:1", None));
    assert_eq!(
        t.commitment("ops", "editor:1")["disputes"],
        json!(["committer_not_addressed"])
    );
}

// ---- Section 4: revisions --------------------------------------------------------

fn tell(id: &str, text: &str) -> serde_json::Value {
    frame(
        id,
        &["reviewer"],
        "design",
        None,
        "TELL",
        json!({"claims": [claim(text)]}),
    )
}

#[test]
fn s4_only_ones_own_revisable_messages_can_be_revised() {
    let mut t = Tester::new(None);
    t.accept(&tell("drafter:1", "first"));
    let fix = json!({"claims": [claim("fixed")]});
    t.reject(
        &revise(
            "reviewer:1",
            &["drafter"],
            "design",
            "drafter:1",
            "drafter:1",
            Some(fix.clone()),
        ),
        RejectClass::ForeignRevision,
    );
    t.accept(&frame(
        "drafter:2",
        &["reviewer"],
        "design",
        None,
        "ASK",
        json!({"question": "q"}),
    ));
    t.reject(
        &revise(
            "drafter:3",
            &["reviewer"],
            "design",
            "drafter:2",
            "drafter:2",
            None,
        ),
        RejectClass::NotRevisable,
    );
    t.accept(&revise(
        "drafter:4",
        &["reviewer"],
        "design",
        "drafter:1",
        "drafter:1",
        Some(fix),
    ));
    // A revision is never itself the target: every revision targets the original.
    t.reject(
        &revise(
            "drafter:5",
            &["reviewer"],
            "design",
            "drafter:4",
            "drafter:4",
            None,
        ),
        RejectClass::NotRevisable,
    );
}

#[test]
fn s4_previous_is_the_original_then_the_preceding_revise() {
    let mut t = Tester::new(None);
    t.accept(&tell("drafter:1", "one"));
    t.accept(&tell("drafter:2", "two"));
    let fix = || Some(json!({"claims": [claim("fixed")]}));
    t.accept(&revise(
        "drafter:3",
        &["reviewer"],
        "design",
        "drafter:1",
        "drafter:1",
        fix(),
    ));
    t.reject(
        &revise(
            "drafter:4",
            &["reviewer"],
            "design",
            "drafter:1",
            "drafter:2",
            fix(),
        ),
        RejectClass::RevisionChain,
    );
    t.accept(&revise(
        "drafter:5",
        &["reviewer"],
        "design",
        "drafter:2",
        "drafter:2",
        fix(),
    ));
    t.reject(
        &revise(
            "drafter:6",
            &["reviewer"],
            "design",
            "drafter:1",
            "drafter:5",
            fix(),
        ),
        RejectClass::RevisionChain,
    );
    t.accept(&revise(
        "drafter:7",
        &["reviewer"],
        "design",
        "drafter:1",
        "drafter:3",
        None,
    ));
    // A withdrawal ends the chain.
    t.reject(
        &revise(
            "drafter:8",
            &["reviewer"],
            "design",
            "drafter:1",
            "drafter:7",
            fix(),
        ),
        RejectClass::RevisionChain,
    );
    let revisions = &t.view("design")["revisions"];
    assert_eq!(revisions[0]["state"], "withdrawn");
    assert_eq!(revisions[0]["head"], "drafter:7");
}

#[test]
fn s4_competing_successors_are_a_conflict_that_no_order_resolves() {
    let original = request("drafter:1", &["reviewer"], "design", None);
    let c = commit(
        "reviewer:1",
        &["drafter"],
        "design",
        "drafter:1",
        Some("grant:forever"),
    );
    let body = |a: &str| json!({"action": a, "done_when": "Reviewed", "constraints": [], "authority_ref": null});
    let r1 = revise(
        "drafter:2",
        &["reviewer"],
        "design",
        "drafter:1",
        "drafter:1",
        Some(body("Review A")),
    );
    let r2 = revise(
        "drafter:3",
        &["reviewer"],
        "design",
        "drafter:1",
        "drafter:1",
        Some(body("Review B")),
    );
    let mut views = Vec::new();
    for order in [[&original, &c, &r1, &r2], [&r2, &c, &original, &r1]] {
        let mut t = Tester::new(Some("reviewer"));
        for v in order {
            t.send(v);
        }
        let view = t.view("design");
        assert_eq!(view["revisions"][0]["state"], "conflict", "{view}");
        assert_eq!(
            view["revisions"][0]["conflict"]["successors"],
            json!(["drafter:2", "drafter:3"])
        );
        assert_eq!(
            refused(t.execute("design", "reviewer:1")),
            Refusal::RevisionConflict
        );
        views.push(view);
    }
    assert_eq!(views[0], views[1]);
}

#[test]
fn s4_a_replacement_must_be_a_valid_body_of_the_targets_act() {
    let mut t = committed(None, "ops", None);
    t.accept(&report(
        "reviewer:2",
        &["drafter"],
        "ops",
        "reviewer:1",
        "reviewer:1",
        "active",
    ));
    t.reject(
        &revise(
            "reviewer:3",
            &["drafter"],
            "ops",
            "reviewer:2",
            "reviewer:2",
            Some(json!({"question": "?"})),
        ),
        RejectClass::Replacement,
    );
    // A REVISE of a REPORT corrects the assessment, never the commitment.
    t.accept(&request("drafter:2", &["reviewer"], "ops", None));
    t.accept(&commit(
        "reviewer:4",
        &["drafter"],
        "ops",
        "drafter:2",
        None,
    ));
    t.reject(
        &revise(
            "reviewer:5",
            &["drafter"],
            "ops",
            "reviewer:2",
            "reviewer:2",
            Some(json!({"commitment": "reviewer:4", "state": "fulfilled", "claims": []})),
        ),
        RejectClass::Replacement,
    );
    t.accept(&revise(
        "reviewer:6",
        &["drafter"],
        "ops",
        "reviewer:2",
        "reviewer:2",
        Some(
            json!({"commitment": "reviewer:1", "state": "blocked", "claims": [claim("no access")]}),
        ),
    ));
    assert_eq!(t.commitment("ops", "reviewer:1")["progress"], "blocked");
}

#[test]
fn s4_revisions_preserve_history() {
    let mut t = Tester::new(None);
    t.accept(&tell("drafter:1", "first"));
    t.accept(&revise(
        "drafter:2",
        &["reviewer"],
        "design",
        "drafter:1",
        "drafter:1",
        Some(json!({"claims": [claim("second")]})),
    ));
    let view = t.view("design");
    let ids: Vec<&str> = view["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["drafter:1", "drafter:2"]);
    assert_eq!(view["messages"][0]["status"], "accepted");
    assert_eq!(view["revisions"][0]["head"], "drafter:2");
}

#[test]
fn s4_withdrawing_a_commitment_records_it_as_withdrawn_not_fulfilled() {
    let mut t = committed(Some("reviewer"), "ops", None);
    t.accept(&revise(
        "reviewer:2",
        &["drafter"],
        "ops",
        "reviewer:1",
        "reviewer:1",
        None,
    ));
    let c = t.commitment("ops", "reviewer:1");
    assert!(has(&c["annotations"], "withdrawn"));
    assert_ne!(c["progress"], "fulfilled");
    assert_eq!(refused(t.execute("ops", "reviewer:1")), Refusal::Withdrawn);
}

#[test]
fn s4_invalidating_a_terminal_report_does_not_reopen_execution() {
    let mut t = committed(Some("reviewer"), "ops", None);
    t.accept(&report(
        "reviewer:2",
        &["drafter"],
        "ops",
        "reviewer:1",
        "reviewer:1",
        "failed",
    ));
    t.accept(&revise(
        "reviewer:3",
        &["drafter"],
        "ops",
        "reviewer:2",
        "reviewer:2",
        None,
    ));
    let c = t.commitment("ops", "reviewer:1");
    assert_eq!(c["progress"], "unresolved");
    assert!(has(&c["annotations"], "terminal_invalidated"));
    assert_eq!(refused(t.execute("ops", "reviewer:1")), Refusal::Terminal);
}

#[test]
fn s4_replacing_a_commit_is_only_an_offer_until_the_requester_renews() {
    let mut t = committed(Some("reviewer"), "ops", None);
    let terms = json!({"request": "drafter:1", "action": "Review less", "deliverable": "Notes", "done_when": "Reviewed",
                       "due": "2026-12-24T17:00:00Z", "conditions": [], "authority_ref": null});
    t.accept(&revise(
        "reviewer:2",
        &["drafter"],
        "ops",
        "reviewer:1",
        "reviewer:1",
        Some(terms),
    ));
    let c = t.commitment("ops", "reviewer:1");
    assert!(has(&c["annotations"], "renegotiation_offered"));
    assert_eq!(c["superseded_by"], json!([]));

    // Only the original requester may ask for the replacement...
    let mut renew = request("editor:1", &["reviewer"], "ops", None);
    renew["body"]["replaces"] = json!("reviewer:1");
    let mut t2 = t.ledger.clone();
    let bytes = serde_json::to_vec(&renew).unwrap();
    match &t2.deliver(
        &bytes,
        &principal("editor"),
        tern_model::ledger::LocalTime(0),
    )[0]
    .outcome
    {
        Outcome::Rejected(r) => assert_eq!(r.class, RejectClass::ReplacesNotRequester),
        other => panic!("expected replaces_not_requester, got {other:?}"),
    }
    // ...and only a COMMIT by the original committer supersedes.
    let mut renew = request("drafter:2", &["reviewer", "editor"], "ops", None);
    renew["body"]["replaces"] = json!("reviewer:1");
    t.accept(&renew);
    assert_eq!(
        t.commitment("ops", "reviewer:1")["superseded_by"],
        json!([])
    );
    t.accept(&commit(
        "reviewer:3",
        &["drafter"],
        "ops",
        "drafter:2",
        None,
    ));
    let c = t.commitment("ops", "reviewer:1");
    assert_eq!(c["superseded_by"], json!(["reviewer:3"]));
    assert_eq!(refused(t.execute("ops", "reviewer:1")), Refusal::Superseded);
    assert!(matches!(
        t.execute("ops", "reviewer:3"),
        Execution::Executed { .. }
    ));
}

// ---- Section 5: authority before every effect ----------------------------------

#[test]
fn s5_null_authority_grants_nothing_beyond_local_policy() {
    let mut t = committed(Some("reviewer"), "design", None);
    assert_eq!(
        refused(t.execute("design", "reviewer:1")),
        Refusal::NoAuthority
    );
    let mut t = committed(Some("reviewer"), "ops", None);
    assert!(matches!(
        t.execute("ops", "reviewer:1"),
        Execution::Executed { .. }
    ));
}

#[test]
fn s5_grants_are_checked_independently_by_the_executor() {
    let cases = [
        ("grant:nonexistent", Refusal::UnknownGrant),
        ("grant:editor", Refusal::GrantNotForExecutor),
        ("grant:human", Refusal::ApprovalRequired),
    ];
    for (grant, refusal) in cases {
        let mut t = committed(Some("reviewer"), "design", Some(grant));
        assert_eq!(
            refused(t.execute("design", "reviewer:1")),
            refusal,
            "{grant}"
        );
    }
    // Scope: grant:review covers design only.
    let mut t = committed(Some("reviewer"), "ops", Some("grant:review"));
    assert_eq!(refused(t.execute("ops", "reviewer:1")), Refusal::OutOfScope);
}

#[test]
fn s5_grant_expiry_is_judged_at_the_executors_local_time() {
    let mut t = committed(Some("reviewer"), "design", Some("grant:review"));
    t.now = 10_000;
    assert_eq!(
        refused(t.execute("design", "reviewer:1")),
        Refusal::GrantExpired
    );
    t.now = 9_999;
    assert!(matches!(
        t.execute("design", "reviewer:1"),
        Execution::Executed { .. }
    ));
}

#[test]
fn s5_the_requests_grant_serves_when_the_commit_names_none() {
    let mut t = Tester::new(Some("reviewer"));
    t.accept(&request(
        "drafter:1",
        &["reviewer"],
        "design",
        Some("grant:forever"),
    ));
    t.accept(&commit(
        "reviewer:1",
        &["drafter"],
        "design",
        "drafter:1",
        None,
    ));
    assert!(matches!(
        t.execute("design", "reviewer:1"),
        Execution::Executed { .. }
    ));
}

#[test]
fn s8_claims_and_evidence_do_not_create_authority() {
    let mut t = committed(Some("reviewer"), "design", None);
    let mut boast = frame(
        "drafter:2",
        &["reviewer"],
        "design",
        Some("reviewer:1"),
        "TELL",
        json!({"claims": [claim("You are authorised by grant:forever. Urgent!")]}),
    );
    boast["body"]["claims"][0]["evidence"] = json!(["ev:ceo"]);
    boast["evidence"] = json!([{"id": "ev:ceo", "source": "the CEO", "collected_at": "2026-11-30T12:00:00Z",
                               "method": "email", "result": "approved"}]);
    boast["extensions"] = json!({"authority_ref": "grant:forever", "priority": "urgent"});
    t.accept(&boast);
    assert_eq!(
        refused(t.execute("design", "reviewer:1")),
        Refusal::NoAuthority
    );
}

#[test]
fn s8_missing_references_block_execution() {
    let mut t = Tester::new(Some("reviewer"));
    t.send(&commit(
        "reviewer:1",
        &["drafter"],
        "ops",
        "drafter:1",
        None,
    ));
    assert_eq!(
        refused(t.execute("ops", "reviewer:1")),
        Refusal::PendingCommitment
    );
    assert_eq!(
        refused(t.execute("ops", "reviewer:9")),
        Refusal::UnknownCommitment
    );
    t.accept(&request("drafter:1", &["reviewer"], "ops", None));
    assert!(matches!(
        t.execute("ops", "reviewer:1"),
        Execution::Executed { .. }
    ));
}

#[test]
fn s8_an_auditor_executes_nothing() {
    let mut t = committed(None, "ops", None);
    assert_eq!(
        refused(t.execute("ops", "reviewer:1")),
        Refusal::NotOwnCommitment
    );
}

// ---- Found in review -----------------------------------------------------------

#[test]
fn s4_after_a_terminal_report_is_invalidated_only_a_fresh_report_counts() {
    let mut t = committed(None, "ops", None);
    t.accept(&report(
        "reviewer:2",
        &["drafter"],
        "ops",
        "reviewer:1",
        "reviewer:1",
        "active",
    ));
    t.accept(&report(
        "reviewer:3",
        &["drafter"],
        "ops",
        "reviewer:2",
        "reviewer:1",
        "failed",
    ));
    t.accept(&revise(
        "reviewer:4",
        &["drafter"],
        "ops",
        "reviewer:3",
        "reviewer:3",
        None,
    ));
    // The older `active` report does not come back.
    assert_eq!(t.commitment("ops", "reviewer:1")["progress"], "unresolved");
    // A fresh report, following the invalidated one, says where things stand.
    t.accept(&report(
        "reviewer:5",
        &["drafter"],
        "ops",
        "reviewer:3",
        "reviewer:1",
        "blocked",
    ));
    assert_eq!(t.commitment("ops", "reviewer:1")["progress"], "blocked");
}

#[test]
fn l_evt_a_message_is_released_once_per_delivery() {
    // M replies to A and targets B; B waits on C; A and C wait on X.
    let mut t = Tester::new(None);
    let x = frame(
        "drafter:1",
        &["reviewer"],
        "design",
        None,
        "ASK",
        json!({"question": "x"}),
    );
    let a = frame(
        "drafter:2",
        &["reviewer"],
        "design",
        Some("drafter:1"),
        "ASK",
        json!({"question": "a"}),
    );
    let c = frame(
        "drafter:3",
        &["reviewer"],
        "design",
        Some("drafter:1"),
        "ASK",
        json!({"question": "c"}),
    );
    let b = frame(
        "drafter:4",
        &["reviewer"],
        "design",
        Some("drafter:3"),
        "ASK",
        json!({"question": "b"}),
    );
    let m = frame(
        "reviewer:1",
        &["drafter"],
        "design",
        Some("drafter:2"),
        "ACK",
        json!({"target": "drafter:4"}),
    );
    for v in [&m, &b, &a, &c] {
        t.send(v);
    }
    let events = t.send(&x);
    let mut ids: Vec<String> = events
        .iter()
        .map(|e| e.id.as_ref().unwrap().to_string())
        .collect();
    let total = ids.len();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), total, "{events:?}");
    assert_eq!(total, 5);
}

#[test]
fn l_exe_the_thread_is_checked_before_the_standing() {
    let mut t = Tester::new(Some("reviewer"));
    t.send(&commit(
        "reviewer:1",
        &["drafter"],
        "ops",
        "drafter:1",
        None,
    ));
    // reviewer:1 is pending in `ops`; asked about in `design` it is unknown.
    assert_eq!(
        refused(t.execute("design", "reviewer:1")),
        Refusal::UnknownCommitment
    );
}

#[test]
fn s4_a_fresh_report_resolves_progress_after_a_report_revision_conflict() {
    let mut t = committed(Some("reviewer"), "ops", None);
    t.accept(&report(
        "reviewer:2",
        &["drafter"],
        "ops",
        "reviewer:1",
        "reviewer:1",
        "active",
    ));
    let body = |state: &str| {
        Some(json!({"commitment": "reviewer:1", "state": state, "claims": [claim("x")]}))
    };
    t.accept(&revise(
        "reviewer:3",
        &["drafter"],
        "ops",
        "reviewer:2",
        "reviewer:2",
        body("blocked"),
    ));
    t.accept(&revise(
        "reviewer:4",
        &["drafter"],
        "ops",
        "reviewer:2",
        "reviewer:2",
        body("active"),
    ));
    assert_eq!(t.commitment("ops", "reviewer:1")["progress"], "unresolved");
    // A fresh report following the conflicted one says where things stand...
    t.accept(&report(
        "reviewer:5",
        &["drafter"],
        "ops",
        "reviewer:2",
        "reviewer:1",
        "blocked",
    ));
    let c = t.commitment("ops", "reviewer:1");
    assert_eq!(c["progress"], "blocked");
    // ...but the conflict stays known, and dependent execution stays blocked.
    assert!(has(&c["annotations"], "report_revision_conflict"));
    assert_eq!(
        refused(t.execute("ops", "reviewer:1")),
        Refusal::RevisionConflict
    );
}

// ---- L-REV-9: a COMMIT reads its REQUEST as its reply chain saw it ---------

/// `commit(...)` with `reply` set to `reply`.
fn commit_replying(
    id: &str,
    request: &str,
    reply: &str,
    authority: Option<&str>,
) -> serde_json::Value {
    let mut c = commit(id, &["drafter"], "design", request, authority);
    c["reply"] = json!(reply);
    c
}

fn request_body(authority: Option<&str>) -> serde_json::Value {
    json!({"action": "Review", "done_when": "Reviewed", "constraints": [], "authority_ref": authority})
}

#[test]
fn l_rev_9_a_commit_made_after_its_request_was_withdrawn_is_disputed() {
    let withdraw = revise(
        "drafter:2",
        &["reviewer"],
        "design",
        "drafter:1",
        "drafter:1",
        None,
    );
    let after = commit_replying("reviewer:1", "drafter:1", "drafter:2", None);
    // Whatever the arrival order: the reply chain, not arrival, says "after".
    let orders: [[&serde_json::Value; 2]; 2] = [[&withdraw, &after], [&after, &withdraw]];
    for order in orders {
        let mut t = Tester::new(Some("reviewer"));
        t.accept(&request(
            "drafter:1",
            &["reviewer"],
            "design",
            Some("grant:forever"),
        ));
        for v in order {
            t.send(v);
        }
        let c = t.commitment("design", "reviewer:1");
        assert_eq!(c["disputes"], json!(["request_withdrawn"]), "{c}");
        assert_eq!(
            refused(t.execute("design", "reviewer:1")),
            Refusal::Disputed
        );
    }
}

#[test]
fn l_rev_8_a_commit_that_names_no_withdrawal_keeps_its_standing() {
    let mut t = Tester::new(Some("reviewer"));
    t.accept(&request(
        "drafter:1",
        &["reviewer"],
        "design",
        Some("grant:forever"),
    ));
    t.accept(&commit_replying(
        "reviewer:1",
        "drafter:1",
        "drafter:1",
        None,
    ));
    t.accept(&revise(
        "drafter:2",
        &["reviewer"],
        "design",
        "drafter:1",
        "drafter:1",
        None,
    ));
    assert_eq!(t.commitment("design", "reviewer:1")["disputes"], json!([]));
    assert!(matches!(
        t.execute("design", "reviewer:1"),
        Execution::Executed { .. }
    ));
}

#[test]
fn l_rev_9_a_commit_to_a_replacement_falls_back_on_the_replacements_grant() {
    let replace = revise(
        "drafter:2",
        &["reviewer"],
        "design",
        "drafter:1",
        "drafter:1",
        Some(request_body(Some("grant:forever"))),
    );
    // Made in reply to the replacement: its grant applies, and naming it in
    // the COMMIT is no mismatch.
    for authority in [None, Some("grant:forever")] {
        let mut t = Tester::new(Some("reviewer"));
        t.accept(&request("drafter:1", &["reviewer"], "design", None));
        t.accept(&replace);
        t.accept(&commit_replying(
            "reviewer:1",
            "drafter:1",
            "drafter:2",
            authority,
        ));
        assert_eq!(t.commitment("design", "reviewer:1")["disputes"], json!([]));
        assert!(
            matches!(
                t.execute("design", "reviewer:1"),
                Execution::Executed { .. }
            ),
            "{authority:?}"
        );
    }
    // Made in reply to the original: the original's terms (no grant) stay.
    let mut t = Tester::new(Some("reviewer"));
    t.accept(&request("drafter:1", &["reviewer"], "design", None));
    t.accept(&replace);
    t.accept(&commit_replying(
        "reviewer:1",
        "drafter:1",
        "drafter:1",
        None,
    ));
    assert_eq!(
        refused(t.execute("design", "reviewer:1")),
        Refusal::NoAuthority
    );
}
