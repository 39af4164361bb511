//! Section 5: authority before every effect, and what review found.

use super::*;

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
