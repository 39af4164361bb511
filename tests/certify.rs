//! `tern-sim certify`, `coverage` and `diff` end to end: the reference is
//! certified with four report files, a mutant is not and the diff says
//! which cases regressed, reports are reproducible byte for byte, an
//! interrupt still leaves complete reports behind, a label names one
//! implementation, and latency over the protocol has a file of its own.

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
