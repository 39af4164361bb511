//! How certify's verdict follows from the levels, the simulation and the
//! exploration, and that every report states it alike: core conformance
//! only, an exploration violation, a corpus of one's own, and a report
//! written before exploration was part of the verdict.

mod common;

use std::path::Path;

use common::{run_in, stdout};
use serde_json::Value;

fn report(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("report.json")).expect("report.json written");
    serde_json::from_str(&text).expect("report.json is JSON")
}

/// One verdict, rendered the same everywhere: an implementation the corpus
/// finds core conformant, which is not certified at `profile` (its corpus
/// profile cases and its simulation fail), is "conformant at `core` level"
/// in summary.txt and the HTML, as `verdict.core` says in report.json.
#[test]
fn every_rendering_states_the_conformance_report_json_records() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "certify",
            "--mutant",
            "accepts-misrouted",
            "--level",
            "profile",
            "--seeds",
            "30",
            "--report-dir",
            "out",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let r = report(&dir.path().join("out"));
    let verdict = &r["implementations"][0]["verdict"];
    assert_eq!(verdict["core"], true, "{verdict}");
    assert_eq!(verdict["certified"], false, "{verdict}");
    assert_eq!(verdict["simulation"], "violation", "{verdict}");
    let summary = std::fs::read_to_string(dir.path().join("out/summary.txt")).unwrap();
    assert!(
        summary.contains("(conformant at `core` level; simulation violation; exploration "),
        "{summary}"
    );
    let html = std::fs::read_to_string(dir.path().join("out/report.html")).unwrap();
    assert!(
        html.contains("conformant at core level; simulation: violation"),
        "{html}"
    );
    assert!(
        !summary.contains("not conformant at any level"),
        "{summary}"
    );
}

/// At `--level core` the simulation judges by the seed alone: a receiver
/// whose only defects break profile rules (it stores frames not addressed
/// to it, L-ID-5; it reads out-of-range numbers, P-JSON-8) is certified at
/// `core` and refused at `profile`.
#[test]
fn a_receiver_that_breaks_only_profile_rules_is_certified_at_core_only() {
    for mutant in ["accepts-misrouted", "accepts-non-finite-numbers"] {
        for (level, code) in [("core", 0), ("profile", 1)] {
            let dir = tempfile::tempdir().unwrap();
            let out = run_in(
                dir.path(),
                &[
                    "certify",
                    "--mutant",
                    mutant,
                    "--level",
                    level,
                    "--seeds",
                    "60",
                    "--report-dir",
                    "out",
                ],
            );
            assert_eq!(
                out.status.code(),
                Some(code),
                "{mutant} at {level}: {}",
                stdout(&out)
            );
            let r = report(&dir.path().join("out"));
            let verdict = &r["implementations"][0]["verdict"];
            assert_eq!(
                verdict["certified"],
                code == 0,
                "{mutant} at {level}: {verdict}"
            );
            assert_eq!(verdict["core"], true, "{mutant} at {level}: {verdict}");
        }
    }
}

/// The exploration of the built-in scopes is part of the verdict, and each
/// report says what it found and how to reproduce it.
#[test]
fn an_exploration_violation_is_in_every_report_and_blocks_certification() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "certify",
            "--mutant",
            "memory-dedup",
            "--seeds",
            "0",
            "--report-dir",
            "out",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let r = report(&dir.path().join("out"));
    let i = &r["implementations"][0];
    assert_eq!(i["verdict"]["exploration"], "violation", "{}", i["verdict"]);
    assert_eq!(i["verdict"]["simulation"], "not_run");
    let v = &i["exploration"]["violation"];
    assert_eq!(v["invariant"], "at-most-once-effects", "{v}");
    let reproduce = "tern-sim explore commit-execute-crash --mutant memory-dedup";
    assert_eq!(v["reproduce"], reproduce);
    assert!(v["schedule"].as_array().is_some_and(|s| !s.is_empty()));
    let read = |f: &str| std::fs::read_to_string(dir.path().join("out").join(f)).unwrap();
    assert!(read("summary.txt").contains(&format!("reproduce: {reproduce}")));
    assert!(read("junit.xml").contains(r#"<testsuite name="exploration""#));
    let html = read("report.html");
    assert!(
        html.contains("<h3>Exploration</h3>") && html.contains(reproduce),
        "{html}"
    );
    // Left out, it is `not_run`, and the report says why.
    let out = run_in(
        dir.path(),
        &[
            "certify",
            "--mutant",
            "memory-dedup",
            "--seeds",
            "0",
            "--no-explore",
            "--report-dir",
            "left-out",
        ],
    );
    let r = report(&dir.path().join("left-out"));
    let x = &r["implementations"][0]["exploration"];
    assert_eq!(x["verdict"], "not_run", "{x}");
    assert_eq!(x["skipped"], "left out (--no-explore)");
    assert!(!stdout(&out).contains("✘ exploration"));
}

/// A corpus of one's own need not hold the cases the built-in scopes are
/// drawn from: those scopes are left out and named, the rest explored.
#[test]
fn a_corpus_of_ones_own_certifies_with_default_flags() {
    let dir = tempfile::tempdir().unwrap();
    let mine = dir.path().join("mine");
    std::fs::create_dir_all(mine.join("cases")).unwrap();
    let ours = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    std::fs::copy(ours.join("clauses.json"), mine.join("clauses.json")).unwrap();
    for case in [
        "identity.spoofed-frame-does-not-occupy-id",
        "body.unknown-field-rejected",
    ] {
        let file = format!("{case}.json");
        std::fs::copy(
            ours.join("s1-encoding").join(&file),
            mine.join("cases").join(&file),
        )
        .unwrap();
    }
    let o = run_in(
        dir.path(),
        &[
            "certify",
            "--scenarios",
            "mine",
            "--seeds",
            "1",
            "--report-dir",
            "r",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let says = "exploration: 8 built-in scope(s) left out, since this corpus lacks the case each is drawn from: revision-race (case `conflict.competing-successors-order-a`)";
    assert!(stdout(&o).contains(says), "{}", stdout(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains(says));
    let r = report(&dir.path().join("r"));
    assert_eq!(r["scopes_left_out"].as_array().unwrap().len(), 8);
    assert_eq!(
        r["implementations"][0]["exploration"]["scopes"][0]["scope"],
        "spoofed-same-id"
    );
}

#[test]
fn a_report_from_before_exploration_still_reads_and_an_unknown_verdict_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let o = run_in(
        dir.path(),
        &[
            "certify",
            "--no-explore",
            "--seeds",
            "1",
            "--report-dir",
            "new",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut old = report(&dir.path().join("new"));
    for i in old["implementations"].as_array_mut().unwrap() {
        let i = i.as_object_mut().unwrap();
        i.remove("exploration");
        i["verdict"].as_object_mut().unwrap().remove("exploration");
    }
    let write = |name: &str, v: &Value| {
        std::fs::write(dir.path().join(name), serde_json::to_vec(v).unwrap()).unwrap()
    };
    write("old.json", &old);
    let o = run_in(dir.path(), &["diff", "old.json", "new/report.json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    old["implementations"][0]["verdict"]["simulation"] = "bogus".into();
    write("bogus.json", &old);
    let o = run_in(dir.path(), &["diff", "bogus.json", "new/report.json"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("bogus.json") && err.contains("/implementations/0/verdict/simulation"),
        "{err}"
    );
    old["implementations"][0]["verdict"]["simulation"] = "clean".into();
    old["implementations"][0]["verdict"]["exploration"] = "bogus".into();
    write("bogus.json", &old);
    let o = run_in(dir.path(), &["diff", "bogus.json", "new/report.json"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("/implementations/0/verdict/exploration") && err.contains("unknown verdict"),
        "{err}"
    );
}
