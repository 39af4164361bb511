//! Sections 2 and 4: who may say what, commitments and their reports.

use super::*;

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

pub(crate) fn committed(viewer: Option<&str>, thread: &str, authority: Option<&str>) -> Tester {
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
