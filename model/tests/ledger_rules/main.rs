//! One test per ledger rule, each named for the seed section it enforces.

#[path = "../common/mod.rs"]
mod common;

use common::kit::*;
use serde_json::json;
use tern_model::ledger::{EventKind, Execution, LocalTime, Outcome, Refusal, RejectClass};

mod authority;
mod commitments;
mod identity;
mod revisions;

use commitments::*;

const WORKED: &str = include_str!("../../../examples/worked-exchange.jsonl");

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
