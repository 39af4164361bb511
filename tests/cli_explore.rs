//! `tern-sim explore` end to end: exit statuses, one JSON document that
//! does not depend on --jobs, a saved trace that `replay` re-runs.

mod common;

use common::{run_in, stdout};
use serde_json::Value;

#[test]
fn the_reference_exhausts_a_scope_and_the_output_does_not_depend_on_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let one = run_in(
        dir.path(),
        &[
            "explore",
            "pending-chain",
            "--format",
            "json",
            "--jobs",
            "1",
        ],
    );
    assert_eq!(one.status.code(), Some(0), "{one:?}");
    let two = run_in(
        dir.path(),
        &[
            "explore",
            "pending-chain",
            "--format",
            "json",
            "--jobs",
            "2",
        ],
    );
    assert_eq!(stdout(&one), stdout(&two));
    let doc: Value = serde_json::from_str(&stdout(&one)).unwrap();
    assert_eq!(doc["scopes"][0]["verdict"], "exhausted");
    assert!(doc["scopes"][0]["states"].as_u64().unwrap() > 1);
}

#[test]
fn a_mutant_fails_with_a_trace_that_replay_reruns() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "explore",
            "commit-execute-crash",
            "--mutant",
            "memory-dedup",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = stdout(&out);
    assert!(text.contains("violation of at-most-once-effects"), "{text}");
    assert!(text.contains("shortest schedule"), "{text}");
    let trace = "tern-sim-traces/explore-commit-execute-crash.json";
    assert!(dir.path().join(trace).is_file());
    let again = run_in(dir.path(), &["replay", trace]);
    assert_eq!(again.status.code(), Some(1), "{again:?}");
    assert!(stdout(&again).contains("violation of at-most-once-effects"));
    let fixed = run_in(dir.path(), &["replay", trace, "--reference"]);
    assert_eq!(fixed.status.code(), Some(0), "{fixed:?}");
    assert!(stdout(&fixed).contains("no violation: the schedule passes"));
}

#[test]
fn bad_scopes_are_usage_errors_and_a_bound_is_not_exhaustion() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(dir.path(), &["explore", "no-such-scope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no built-in scope `no-such-scope`"));
    std::fs::write(
        dir.path().join("s.json"),
        r#"{"id": "s", "setup": {"participant": "bob"}}"#,
    )
    .unwrap();
    let out = run_in(dir.path(), &["explore", "--scope-file", "s.json"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        err.contains("s.json") && err.contains("missing field `principal`"),
        "{err}"
    );
    let out = run_in(
        dir.path(),
        &["explore", "grant-expiry", "--max-states", "10"],
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(stdout(&out).contains("not exhausted"));
}
