//! Section 1: identity, deduplication, ID conflicts and references.

use super::*;

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
