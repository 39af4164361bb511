//! Every failure a certification reports comes with the one command that
//! plays it again, and with the paths where expected and actual differ.

mod common;

use serde_json::Value;

use common::run_in;

#[test]
fn each_failure_names_a_command_that_fails_the_same_way() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "certify",
            "--mutant",
            "memory-dedup",
            "--seeds",
            "5",
            "--format",
            "json",
            "--report-dir",
            "first",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let imp = &report["implementations"][0];
    assert_eq!(imp["flag"], "--mutant memory-dedup");
    let failed: Vec<&Value> = imp["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["failure"].is_object())
        .collect();
    assert!(!failed.is_empty());
    for case in failed {
        let id = case["id"].as_str().unwrap();
        let command = case["failure"]["reproduce"].as_str().unwrap();
        assert_eq!(
            command,
            format!("tern-sim certify --only {id} --seeds 0 --no-explore --mutant memory-dedup")
        );
        let args: Vec<&str> = command.split_whitespace().skip(1).collect();
        let again = run_in(dir.path(), &[&args[..], &["--format", "json"]].concat());
        assert_eq!(again.status.code(), Some(1), "{command}");
        let again: Value = serde_json::from_slice(&again.stdout).unwrap();
        let same = again["implementations"][0]["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .expect("the case ran again");
        assert_eq!(same["status"], case["status"], "{command}");
    }
    // The simulation's run, played again by `run`, breaks the same rule.
    let v = &imp["simulation"]["violation"];
    let command = v["reproduce"].as_str().unwrap();
    assert!(command.starts_with("tern-sim run --seed "), "{command}");
    let args: Vec<&str> = command.split_whitespace().skip(1).collect();
    let again = run_in(dir.path(), &[&args[..], &["--format", "json"]].concat());
    assert_eq!(again.status.code(), Some(1), "{command}");
    let again: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(again["violation"]["invariant"], v["invariant"]);
    assert_eq!(again["counterexample"]["seed"], v["seed"]);
    // A lost effect is one path, not two 900-byte views.
    let differences = v["differences"].as_array().unwrap();
    assert_eq!(differences.len(), 1, "{differences:?}");
    assert_eq!(differences[0]["path"], "/effects/0");
    assert!(differences[0]["actual"].is_null());
    let summary = std::fs::read_to_string(dir.path().join("first/summary.txt")).unwrap();
    assert!(
        summary.contains("differs at:\n      /effects/0: expected \""),
        "{summary}"
    );
    assert!(summary.contains(&format!("reproduce: {command}")));
    let html = std::fs::read_to_string(dir.path().join("first/report.html")).unwrap();
    assert!(
        html.contains("<table class=\"diff\">") && html.contains(&format!("<pre>{command}</pre>"))
    );
}

#[test]
fn a_clean_certification_has_no_command_to_reproduce() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "certify",
            "--seeds",
            "2",
            "--no-explore",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        !text.contains("\"reproduce\"")
            && !text.contains("\"flag\"")
            && !text.contains("\"differences\"")
    );
}
