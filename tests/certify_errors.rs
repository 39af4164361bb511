//! `tern-sim certify` when something is wrong before any case is judged:
//! an implementation that does not start, one that hangs, and a report
//! folder that cannot be written or a selection that names no case.

mod common;

use std::path::Path;

use common::{run_in, stdout};
use serde_json::Value;

fn report(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("report.json")).expect("report.json written");
    serde_json::from_str(&text).expect("report.json is JSON")
}

#[test]
fn an_implementation_that_does_not_start_is_an_error_on_every_case_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "certify",
            "--impl",
            "echo broken >&2; exit 3",
            "--report-dir",
            "out",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let r = report(&dir.path().join("out"));
    let i = &r["implementations"][0];
    let why = i["start_error"]
        .as_str()
        .expect("the start error is reported");
    assert!(why.contains("broken"), "stderr is shown: {why}");
    assert!(i["cases"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["status"] == "error"));
    assert_eq!(i["simulation"]["verdict"], "not_run");
    assert_eq!(i["verdict"]["certified"], false);
    assert!(stdout(&out).contains("did not start"));
}

#[test]
fn a_hanging_implementation_costs_a_few_timeouts_not_one_per_case() {
    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/misbehave.py");
    let pids = dir.path().join("pids");
    let cmd = format!("python3 {} hang {}", script.display(), pids.display());
    let out = run_in(
        dir.path(),
        &[
            "certify",
            "--impl",
            &cmd,
            "--seeds",
            "0",
            "--timeout",
            "300",
            "--give-up-after",
            "3",
            "--report-dir",
            "out",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let r = report(&dir.path().join("out"));
    let cases = r["implementations"][0]["cases"].as_array().unwrap().clone();
    let ran: Vec<&Value> = cases
        .iter()
        .filter(|c| {
            c["status"] == "error"
                && !c["failure"]["actual"]
                    .as_str()
                    .unwrap()
                    .starts_with("not run")
        })
        .collect();
    assert_eq!(ran.len(), 3, "three timeouts, then the rest are not run");
    assert!(
        ran.iter()
            .all(|c| c["failure"]["actual"].as_str().unwrap().contains("answer")),
        "{:?}",
        ran[0]["failure"]
    );
    let skipped = cases
        .iter()
        .filter(|c| {
            c["failure"]["actual"]
                .as_str()
                .is_some_and(|a| a.starts_with("not run: the 3 cases"))
        })
        .count();
    assert!(skipped > 100, "{skipped}");
    // It claims nothing, so the cases that need `execute` do not apply.
    assert!(cases.iter().any(|c| c["status"] == "not_applicable"));
}

#[test]
fn an_unwritable_report_folder_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("taken"), "a file, not a folder").unwrap();
    let out = run_in(
        dir.path(),
        &["certify", "--seeds", "0", "--report-dir", "taken"],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not a folder") && err.contains("taken"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("taken")).unwrap(),
        "a file, not a folder"
    );

    let none = run_in(
        dir.path(),
        &["certify", "--seeds", "0", "--only", "no-such-case"],
    );
    assert_eq!(none.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&none.stderr).contains("no-such-case"));

    let json = run_in(
        dir.path(),
        &[
            "certify",
            "--seeds",
            "0",
            "--format",
            "json",
            "--report-dir",
            "j",
        ],
    );
    assert_eq!(json.status.code(), Some(0));
    let printed: Value =
        serde_json::from_str(&stdout(&json)).expect("--format json prints report.json");
    assert_eq!(printed, report(&dir.path().join("j")));
}
