//! Section 4: revisions.

use super::*;

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
