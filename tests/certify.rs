//! `tern-sim certify`, `coverage` and `diff` end to end: the reference is
//! certified with four report files, a mutant is not and the diff says
//! which cases regressed, reports are reproducible byte for byte, and an
//! interrupt still leaves complete reports behind.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{run_in, stdout, BIN};
use serde_json::Value;

fn report(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("report.json")).expect("report.json written");
    serde_json::from_str(&text).expect("report.json is JSON")
}

#[test]
fn the_reference_is_certified_at_profile_level_with_four_reports() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        dir.path(),
        &["certify", "--seeds", "2", "--report-dir", "out"],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        String::from_utf8_lossy(&out.stderr)
    );
    for f in [
        "report.json",
        "junit.xml",
        "report.html",
        "summary.txt",
        "summary.md",
        "badge.json",
        "badge.svg",
    ] {
        assert!(dir.path().join("out").join(f).is_file(), "{f}");
    }
    let r = report(&dir.path().join("out"));
    let i = &r["implementations"][0];
    assert_eq!(i["verdict"]["certified"], true);
    assert_eq!(i["verdict"]["level"], "profile");
    assert_eq!(i["simulation"]["verdict"], "clean");
    assert_eq!(i["capabilities"], serde_json::json!(["execute"]));
    assert!(r["corpus"]["cases"].as_u64().unwrap() >= 150);
    assert_eq!(r["clauses"].as_array().unwrap().len(), 124);
    assert!(stdout(&out).contains("CERTIFIED at `profile`"));
    let junit = std::fs::read_to_string(dir.path().join("out/junit.xml")).unwrap();
    assert!(junit.contains("<testsuite name=\"1. Encoding and grammar\""));
    assert!(!junit.contains("<failure"));
    // Nothing half-written is left behind.
    let stray: Vec<_> = std::fs::read_dir(dir.path().join("out"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(stray.is_empty());
}

#[test]
fn a_mutant_is_not_certified_and_the_diff_names_the_regressions() {
    let dir = tempfile::tempdir().unwrap();
    let good = run_in(
        dir.path(),
        &["certify", "--seeds", "0", "--report-dir", "good"],
    );
    assert_eq!(good.status.code(), Some(0));
    let bad = run_in(
        dir.path(),
        &[
            "certify",
            "--seeds",
            "0",
            "--mutant",
            "trusts-from",
            "--report-dir",
            "bad",
        ],
    );
    assert_eq!(bad.status.code(), Some(1), "{}", stdout(&bad));
    let text = stdout(&bad);
    assert!(text.contains("NOT CERTIFIED"), "{text}");
    assert!(
        text.contains("S8.1") || text.contains("S1.22"),
        "the clause is named: {text}"
    );
    let r = report(&dir.path().join("bad"));
    let failing: Vec<&Value> = r["implementations"][0]["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "fail")
        .collect();
    assert!(!failing.is_empty());
    assert!(failing
        .iter()
        .all(|c| !c["transcript"].as_array().unwrap().is_empty()));
    let junit = std::fs::read_to_string(dir.path().join("bad/junit.xml")).unwrap();
    assert!(junit.contains("<failure"));
    let html = std::fs::read_to_string(dir.path().join("bad/report.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("Not certified"));
    assert!(
        !html.contains("http://") || !html.contains("src=\"http"),
        "no external asset"
    );

    let regress = run_in(dir.path(), &["diff", "good/report.json", "bad/report.json"]);
    assert_eq!(regress.status.code(), Some(1));
    let text = stdout(&regress);
    assert!(
        text.contains("✘ regression") && text.contains("pass → fail"),
        "{text}"
    );
    let better = run_in(dir.path(), &["diff", "bad/report.json", "good/report.json"]);
    assert_eq!(better.status.code(), Some(0), "{}", stdout(&better));
    let same = run_in(
        dir.path(),
        &["diff", "good/report.json", "good/report.json"],
    );
    assert!(stdout(&same).contains("0 change(s), 0 regression(s)"));
    let broken = run_in(dir.path(), &["diff", "good/report.json", "good/junit.xml"]);
    assert_eq!(broken.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&broken.stderr).contains("junit.xml"));
}

#[test]
fn the_same_seed_gives_the_same_report_bytes() {
    // Two folders of one name in two places: the reproduce command names
    // the report folder as it was given.
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    for d in &dirs {
        let out = run_in(
            d.path(),
            &[
                "certify",
                "--seeds",
                "3",
                "--mutant",
                "memory-dedup",
                "--report-dir",
                "r",
            ],
        );
        assert_eq!(out.status.code(), Some(1));
    }
    for f in [
        "report.json",
        "junit.xml",
        "report.html",
        "summary.txt",
        "summary.md",
        "badge.json",
        "badge.svg",
        "traces/memory-dedup-seed-1.jsonl",
    ] {
        let a = std::fs::read(dirs[0].path().join("r").join(f)).unwrap();
        let b = std::fs::read(dirs[1].path().join("r").join(f)).unwrap();
        assert!(a == b, "{f} differs between two runs of the same seed");
    }
}

#[test]
fn implementations_side_by_side_over_the_protocol() {
    let dir = tempfile::tempdir().unwrap();
    let agent = format!("{BIN} agent");
    let mutant = format!("{BIN} agent --mutant acks-acks");
    let out = run_in(
        dir.path(),
        &[
            "certify",
            "--seeds",
            "0",
            "--impl",
            &agent,
            "--impl",
            &mutant,
            "--report-dir",
            "cmp",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let r = report(&dir.path().join("cmp"));
    let impls = r["implementations"].as_array().unwrap();
    assert_eq!(impls.len(), 2);
    assert_eq!(impls[0]["verdict"]["certified"], true, "{}", stdout(&out));
    assert_eq!(impls[0]["name"], "tern-sim agent");
    assert_eq!(impls[1]["verdict"]["certified"], false);
    let text = stdout(&out);
    assert!(text.contains("case where they differ"), "{text}");
}

#[test]
fn coverage_lists_every_clause_and_fails_on_a_gap() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(dir.path(), &["coverage", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["clauses"], 124);
    assert_eq!(v["uncovered"], serde_json::json!([]));
    let row = v["matrix"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["clause"] == "S8.2")
        .unwrap();
    assert!(row["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m == "accepts-duplicate-keys"));

    // A corpus with a single case covers one clause: every other is a gap.
    let corpus = dir.path().join("tiny");
    std::fs::create_dir_all(corpus.join("s8")).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    std::fs::copy(root.join("clauses.json"), corpus.join("clauses.json")).unwrap();
    let one = std::fs::read_dir(root.join("s8-checklist"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::copy(&one, corpus.join("s8").join(one.file_name().unwrap())).unwrap();
    let gap = run_in(dir.path(), &["coverage", "--scenarios", "tiny"]);
    assert_eq!(gap.status.code(), Some(1));
    assert!(stdout(&gap).contains("✘ none"));

    let missing = run_in(dir.path(), &["certify", "--scenarios", "nowhere"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("nowhere"));
}

#[test]
fn an_interrupt_still_writes_complete_reports() {
    let dir = tempfile::tempdir().unwrap();
    let agent = format!("{BIN} agent");
    let child = Command::new(BIN)
        .args([
            "certify",
            "--impl",
            &agent,
            "--seeds",
            "100000",
            "--report-dir",
            "out",
        ])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    unsafe {
        libc_kill(child.id() as i32, 2);
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = report(&dir.path().join("out"));
    assert_eq!(r["interrupted"], true);
    assert_eq!(r["implementations"][0]["verdict"]["certified"], false);
    assert!(dir.path().join("out/report.html").is_file());
}

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
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

/// A label names one implementation: certify refuses to name one twice,
/// and diff refuses a report that lists one label several times.
#[test]
fn a_label_names_one_implementation() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        vec![
            "certify",
            "--mutant",
            "trusts-from",
            "--mutant",
            "trusts-from",
        ],
        vec!["certify", "--impl", "x", "--impl", "x"],
    ] {
        let o = run_in(dir.path(), &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("is named twice"), "{args:?}: {err}");
    }
    let o = run_in(
        dir.path(),
        &[
            "certify",
            "--only",
            "identity.",
            "--seeds",
            "0",
            "--report-dir",
            "r",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    let mut thrice = report(&dir.path().join("r"));
    let one = thrice["implementations"][0].clone();
    thrice["implementations"] = serde_json::json!([one.clone(), one.clone(), one]);
    std::fs::write(dir.path().join("thrice.json"), thrice.to_string()).unwrap();
    let o = run_in(dir.path(), &["diff", "r/report.json", "thrice.json"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("thrice.json: not a tern-sim report: at /implementations/1/label"),
        "{err}"
    );
    assert!(o.stdout.is_empty());
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

#[test]
fn latency_over_the_protocol_goes_to_its_own_file_and_in_process_there_is_none() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let agent = format!("{BIN} agent");
    let out = run_in(
        d,
        &[
            "certify",
            "--impl",
            &agent,
            "--only",
            "dedup",
            "--seeds",
            "2",
            "--steps",
            "40",
            "--no-explore",
            "--report-dir",
            "r",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "a partial run: {}",
        stdout(&out)
    );
    let text = std::fs::read_to_string(d.join("r/latency.json")).expect("latency.json written");
    let l: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(l["schema"], "tern-sim/latency/1");
    let imp = &l["implementations"][0];
    assert_eq!(imp["label"], agent.as_str());
    let kinds = imp["kinds"].as_array().unwrap();
    for wanted in ["init", "deliver", "view"] {
        let k = kinds
            .iter()
            .find(|k| k["kind"] == wanted)
            .unwrap_or_else(|| panic!("{wanted} timed: {text}"));
        assert!(k["count"].as_u64().unwrap() > 0, "{text}");
        let (p50, p99, max) = (
            k["p50_us"].as_u64().unwrap(),
            k["p99_us"].as_u64().unwrap(),
            k["max_us"].as_u64().unwrap(),
        );
        assert!(p50 <= p99 && p99 <= max, "{text}");
    }
    let slowest = imp["slowest"].as_array().unwrap();
    assert_eq!(slowest.len(), 5, "{text}");
    let took: Vec<u64> = slowest
        .iter()
        .map(|s| s["took_us"].as_u64().unwrap())
        .collect();
    assert!(
        took.windows(2).all(|w| w[0] >= w[1]),
        "slowest first: {text}"
    );
    assert!(slowest.iter().all(|s| {
        let r = s["reproduce"].as_str().unwrap();
        r.starts_with("tern-sim ") && r.contains("--impl ") && s["request"].as_u64().unwrap() >= 1
    }));
    let s = stdout(&out);
    assert!(s.contains("latency of ") && s.contains("│ deliver"), "{s}");
    // Not in the reports that must be the same bytes for the same seed.
    let report = std::fs::read_to_string(d.join("r/report.json")).unwrap();
    assert!(!report.contains("p50") && !report.contains("latency"));
    let summary = std::fs::read_to_string(d.join("r/summary.txt")).unwrap();
    assert!(!summary.contains("p50"));

    // In process there is no round trip: nothing is shown, and the
    // earlier run's file does not stay beside the new reports.
    let out = run_in(
        d,
        &[
            "certify",
            "--only",
            "dedup",
            "--seeds",
            "2",
            "--no-explore",
            "--report-dir",
            "r",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(!stdout(&out).contains("latency"), "{}", stdout(&out));
    assert!(!d.join("r/latency.json").exists());
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
