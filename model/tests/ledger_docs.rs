//! Statements of docs/ledger.md and docs/profile.md that are easy to let
//! drift from the code, each held against the reference ledger: the
//! execution refusal table's order, how finely standing is compared for
//! `Invalidated` events, and what a pending message's `missing` lists.
//! Tests are named after the rule they keep true.

mod common;

use common::kit::*;
use serde_json::json;
use tern_model::ledger::{EventKind, Execution, Outcome, Refusal, RejectClass};

const LEDGER_MD: &str = include_str!("../../docs/ledger.md");

/// The refusal names of ledger.md section 7's table, in row order.
fn refusal_table() -> Vec<(String, String)> {
    let start = LEDGER_MD
        .find("## 7. Execution")
        .expect("ledger.md has section 7");
    LEDGER_MD[start..]
        .lines()
        .skip_while(|l| !l.starts_with("| # |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            (cells[2].trim_matches('`').to_owned(), cells[3].to_owned())
        })
        .collect()
}

#[test]
fn l_exe_2_the_table_compares_the_thread_before_the_standing() {
    let table = refusal_table();
    let position = |pred: &dyn Fn(&(String, String)) -> bool| {
        table
            .iter()
            .position(pred)
            .unwrap_or_else(|| panic!("{table:?}"))
    };
    let thread_row = position(&|(name, when)| {
        name == "unknown_commitment" && when.contains("not in this thread")
    });
    for standing in ["id_conflict", "pending_commitment", "rejected_commitment"] {
        assert!(
            thread_row < position(&|(name, _)| name == standing),
            "{standing}: {table:?}"
        );
    }
    // And the ledger does so: pending, equivocated and rejected messages of
    // another thread are all unknown to this one.
    let mut t = Tester::new(Some("reviewer"));
    t.send(&commit(
        "reviewer:1",
        &["drafter"],
        "ops",
        "drafter:9",
        None,
    ));
    let ask = frame(
        "drafter:2",
        &["reviewer"],
        "ops",
        None,
        "ASK",
        json!({"question": "Which?"}),
    );
    t.accept(&ask);
    t.reject(
        &commit("reviewer:2", &["drafter"], "ops", "drafter:2", None),
        RejectClass::Reference,
    );
    let a = request("drafter:3", &["reviewer"], "ops", None);
    t.accept(&a);
    t.accept(&commit(
        "reviewer:3",
        &["drafter"],
        "ops",
        "drafter:3",
        None,
    ));
    let mut other = commit("reviewer:3", &["drafter"], "ops", "drafter:3", None);
    other["body"]["action"] = json!("Something else");
    t.send(&other);
    for (id, standing) in [
        ("reviewer:1", Refusal::PendingCommitment),
        ("reviewer:2", Refusal::RejectedCommitment),
        ("reviewer:3", Refusal::IdConflict),
    ] {
        assert_eq!(
            t.execute("ops", id),
            Execution::Refused(standing),
            "{id} in its own thread"
        );
        assert_eq!(
            t.execute("design", id),
            Execution::Refused(Refusal::UnknownCommitment),
            "{id} in another thread"
        );
    }
}

#[test]
fn l_evt_3_a_rejection_with_a_new_cause_of_the_same_class_is_invalidated() {
    let mut t = Tester::new(None);
    let ask = frame(
        "drafter:1",
        &["reviewer"],
        "design",
        None,
        "ASK",
        json!({"question": "Which?"}),
    );
    t.accept(&ask);
    // Rejected: its `request` names an ASK.
    let before = match t.outcome(&commit(
        "reviewer:1",
        &["drafter"],
        "design",
        "drafter:1",
        None,
    )) {
        Outcome::Rejected(r) => r,
        other => panic!("{other:?}"),
    };
    assert_eq!(before.class, RejectClass::Reference);
    let mut second = ask.clone();
    second["body"]["question"] = json!("Which one, really?");
    let events = t.send(&second);
    let invalidated: Vec<_> = events
        .iter()
        .filter(|e| {
            e.kind == EventKind::Invalidated
                && e.id.as_ref().is_some_and(|i| i.as_str() == "reviewer:1")
        })
        .collect();
    assert_eq!(invalidated.len(), 1, "{events:?}");
    // Still rejected, with the same class, for another cause: the standing
    // compared is the whole rejection, as ledger.md section 3 says.
    match &invalidated[0].outcome {
        Outcome::Rejected(after) => {
            assert_eq!(after.class, before.class);
            assert_ne!(after.message, before.message);
        }
        other => panic!("{other:?}"),
    }
    assert!(LEDGER_MD.contains("**and its `message`\n  text**"));
}

#[test]
fn l_ref_1_missing_lists_every_unsettled_dependency_but_no_settled_one() {
    let mut t = Tester::new(None);
    // A stored, rejected REQUEST: it replaces itself.
    let mut rejected = request("drafter:1", &["reviewer"], "design", None);
    rejected["body"]["replaces"] = json!("drafter:1");
    t.reject(&rejected, RejectClass::Reference);
    // The reply is missing: pending, and the rejected `request` is settled,
    // so it is not listed, although it will decide the verdict.
    let mut c = commit("reviewer:1", &["drafter"], "design", "drafter:1", None);
    c["reply"] = json!("drafter:9");
    assert_eq!(
        t.outcome(&c),
        Outcome::Pending {
            missing: vec![mref("drafter:9")]
        }
    );
    // Both missing: both listed, `reply` first, although the check of the
    // `request` never ran.
    let mut c = commit("reviewer:2", &["drafter"], "design", "drafter:7", None);
    c["reply"] = json!("drafter:8");
    assert_eq!(
        t.outcome(&c),
        Outcome::Pending {
            missing: vec![mref("drafter:8"), mref("drafter:7")]
        }
    );
    assert!(LEDGER_MD
        .contains("including dependencies after the one whose check made the message wait"));
    // Once the reply arrives, the later check runs and rejects.
    let events = t.send(&frame(
        "drafter:9",
        &["reviewer"],
        "design",
        None,
        "ASK",
        json!({"question": "Ready?"}),
    ));
    assert!(events.iter().any(|e| e.kind == EventKind::Released
        && matches!(&e.outcome, Outcome::Rejected(r) if r.class == RejectClass::Reference)));
}
