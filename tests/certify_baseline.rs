//! `certify --baseline`: each failure marked new or ongoing against an
//! earlier report and what was resolved listed, in every report; a
//! baseline of another corpus is a note, a broken one is refused.

mod common;

use std::path::Path;

use common::{run_in, stdout};
use serde_json::Value;

fn report(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("report.json")).expect("report.json written");
    serde_json::from_str(&text).expect("report.json is JSON")
}

/// `certify --seeds 0 --no-explore` in `dir`, with `extra` arguments: the
/// whole corpus in process, the cheapest certification there is.
fn corpus_only(dir: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["certify", "--seeds", "0", "--no-explore"];
    args.extend_from_slice(extra);
    run_in(dir, &args)
}

fn changes(dir: &Path) -> Value {
    report(dir)["baseline"]["implementations"][0].clone()
}

fn ids(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("a list")
        .iter()
        .map(|x| x.as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_baseline_marks_failures_new_ongoing_and_resolved_in_every_report() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    assert_eq!(
        corpus_only(d, &["--report-dir", "good"]).status.code(),
        Some(0)
    );
    let bad = ["--mutant", "trusts-from"];
    assert_eq!(
        corpus_only(d, &[&bad[..], &["--report-dir", "bad"]].concat())
            .status
            .code(),
        Some(1)
    );

    // Passing before, failing now: every failure is New.
    let out = corpus_only(
        d,
        &[
            &bad[..],
            &["--baseline", "good/report.json", "--report-dir", "new"],
        ]
        .concat(),
    );
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let r = report(&d.join("new"));
    assert_eq!(r["baseline"]["path"], "good/report.json");
    assert_eq!(r["baseline"]["corpus_hash"], r["corpus"]["hash"]);
    assert_eq!(r["baseline"]["tern_sim_version"], r["tern_sim_version"]);
    let c = changes(&d.join("new"));
    assert_eq!(c["compared_with"], "reference");
    let failing: Vec<String> = r["implementations"][0]["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "fail")
        .map(|c| c["id"].as_str().unwrap().to_owned())
        .collect();
    assert!(!failing.is_empty());
    assert_eq!(ids(&c["cases"]["new"]), failing);
    assert!(ids(&c["cases"]["ongoing"]).is_empty() && ids(&c["cases"]["resolved"]).is_empty());
    assert!(!ids(&c["clauses"]["new"]).is_empty());
    let first = &failing[0];
    let text = stdout(&out);
    assert!(text.contains(&format!("✘ [new] {first} ")), "{text}");
    assert!(text.contains("baseline: good/report.json"), "{text}");
    let summary = std::fs::read_to_string(d.join("new/summary.txt")).unwrap();
    assert!(summary.contains(&format!("✘ [new] {first} ")), "{summary}");
    let junit = std::fs::read_to_string(d.join("new/junit.xml")).unwrap();
    assert!(junit.contains("message=\"[new] "), "{junit}");
    let html = std::fs::read_to_string(d.join("new/report.html")).unwrap();
    assert!(html.contains(r#"<span class="mark new">new</span> — "#));
    let md = std::fs::read_to_string(d.join("new/summary.md")).unwrap();
    assert!(md.contains(&format!("- **new** `{first}`")), "{md}");
    assert!(!md.contains("**ongoing**"), "{md}");

    // The same failures on both sides: Ongoing, nothing New.
    let out = corpus_only(
        d,
        &[
            &bad[..],
            &["--baseline", "bad/report.json", "--report-dir", "same"],
        ]
        .concat(),
    );
    assert_eq!(out.status.code(), Some(1));
    let c = changes(&d.join("same"));
    assert_eq!(ids(&c["cases"]["ongoing"]), failing);
    assert!(ids(&c["cases"]["new"]).is_empty() && ids(&c["clauses"]["new"]).is_empty());
    assert!(stdout(&out).contains(&format!("✘ [ongoing] {first} ")));
    let junit = std::fs::read_to_string(d.join("same/junit.xml")).unwrap();
    assert!(junit.contains("message=\"[ongoing] ") && !junit.contains("[new]"));

    // Failing before, passing now: Resolved, and certified all the same.
    let out = corpus_only(
        d,
        &["--baseline", "bad/report.json", "--report-dir", "fixed"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let c = changes(&d.join("fixed"));
    assert_eq!(ids(&c["cases"]["resolved"]), failing);
    assert!(ids(&c["cases"]["new"]).is_empty() && ids(&c["cases"]["ongoing"]).is_empty());
    assert!(!ids(&c["clauses"]["resolved"]).is_empty());
    let text = stdout(&out);
    assert!(text.contains(&format!("resolved cases: {first}")), "{text}");
    let html = std::fs::read_to_string(d.join("fixed/report.html")).unwrap();
    assert!(html.contains("Resolved: <code>"));

    // `diff` gives the same classification, and fails on anything New.
    let regress = run_in(d, &["diff", "good/report.json", "bad/report.json"]);
    assert_eq!(regress.status.code(), Some(1));
    assert!(stdout(&regress).contains(&format!("new cases: {first}")));
    let json = run_in(
        d,
        &[
            "diff",
            "--format",
            "json",
            "good/report.json",
            "bad/report.json",
        ],
    );
    let v: Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(
        v["baseline"]["implementations"][0]["cases"]["new"],
        report(&d.join("new"))["baseline"]["implementations"][0]["cases"]["new"]
    );
    let same = run_in(d, &["diff", "bad/report.json", "bad/report.json"]);
    assert_eq!(same.status.code(), Some(0), "{}", stdout(&same));
    assert!(stdout(&same).contains(&format!("0 new, {} ongoing", failing.len())));
    let better = run_in(d, &["diff", "bad/report.json", "good/report.json"]);
    assert_eq!(better.status.code(), Some(0));
    assert!(stdout(&better).contains(&format!("resolved cases: {first}")));
}

#[test]
fn a_baseline_of_another_corpus_is_a_note_and_a_bad_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    assert_eq!(
        corpus_only(d, &["--report-dir", "good"]).status.code(),
        Some(0)
    );
    let mut old = report(&d.join("good"));
    old["corpus"]["hash"] = Value::String("ab".repeat(32));
    std::fs::write(d.join("other.json"), old.to_string()).unwrap();
    let out = corpus_only(
        d,
        &[
            "--only",
            "dedup",
            "--baseline",
            "other.json",
            "--report-dir",
            "o",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "a partial run certifies nothing"
    );
    assert!(
        stdout(&out).contains("note: the baseline was made from another corpus (abababababab"),
        "{}",
        stdout(&out)
    );
    assert_eq!(
        report(&d.join("o"))["baseline"]["corpus_hash"],
        "ab".repeat(32)
    );

    std::fs::write(d.join("garbage.json"), "{\"schema\": [1, 2").unwrap();
    for (file, why) in [
        ("garbage.json", "not a tern-sim report"),
        ("missing.json", "cannot read"),
        ("good/junit.xml", "not a tern-sim report"),
    ] {
        let out = corpus_only(d, &["--baseline", file, "--report-dir", "g"]);
        assert_eq!(out.status.code(), Some(2), "{file}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(file) && err.contains(why), "{file}: {err}");
        assert!(!d.join("g/report.json").exists(), "refused before any work");
    }
}
