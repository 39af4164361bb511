//! `--check-determinism` from the command line: a flaky implementation
//! over the protocol is named nondeterministic by `run` and `certify`, in
//! every report; the reference is not; and shards' checks merge.

mod common;

use std::path::Path;

use common::{run_in, stdout, BIN};
use serde_json::Value;

fn flaky() -> String {
    format!("{BIN} agent --mutant flaky-duplicates")
}

/// `flaky-duplicates` draws at random in each process, so two plays of one
/// seed agree now and then by chance: both answer `duplicate` first at the
/// same message (about one time in thirty), or the run strikes nowhere. A
/// check asked of it is repeated, up to five times, until it finds the
/// difference; five misses in a row (about one in twenty million by
/// chance) are the check's defect, and fail with the last miss.
fn until_found<T>(mut attempt: impl FnMut(usize) -> Result<T, String>) -> T {
    let mut last = String::new();
    for n in 0..5 {
        match attempt(n) {
            Ok(found) => return found,
            Err(miss) => last = miss,
        }
    }
    panic!("five plays of a flaky implementation, no difference found; the last: {last}")
}

fn json_of(o: &std::process::Output) -> Value {
    serde_json::from_str(&stdout(o))
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)))
}

fn read(dir: &Path, file: &str) -> String {
    std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

#[test]
fn run_names_the_first_request_a_flaky_implementation_answered_two_ways() {
    let dir = tempfile::tempdir().unwrap();
    let imp = flaky();
    let args = [
        "run",
        "--seed",
        "5",
        "--seeds",
        "5",
        "--no-shrink",
        "--impl",
        &imp,
    ];
    let d = until_found(|_| {
        let o = run_in(
            dir.path(),
            &[&args[..], &["--check-determinism", "--format", "json"]].concat(),
        );
        if o.status.code() != Some(1) {
            return Err(format!(
                "exit {:?}: {}",
                o.status.code(),
                String::from_utf8_lossy(&o.stderr)
            ));
        }
        let d = json_of(&o)["determinism"].clone();
        if d["divergence"].is_object() {
            Ok(d)
        } else {
            Err(format!("no difference found: {d}"))
        }
    });
    let v = &d["divergence"];
    assert!(
        v["request"].as_str().unwrap().starts_with("deliver to "),
        "{v}"
    );
    assert_ne!(v["first"], v["second"]);
    assert!(v["request_number"].as_u64().unwrap() >= 1);
    // The human output says what it means.
    let text = until_found(|_| {
        let o = run_in(
            dir.path(),
            &[&args[..], &["--check-determinism=1"]].concat(),
        );
        let text = stdout(&o);
        if o.status.code() == Some(1) && text.contains("NONDETERMINISTIC: seed ") {
            Ok(text)
        } else {
            Err(format!("exit {:?}: {text}", o.status.code()))
        }
    });
    assert!(text.contains("cannot be reproduced"), "{text}");
}

#[test]
fn run_checks_the_reference_and_says_nothing_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "run", "--seed", "3", "--seeds", "6", "--faults", "--format", "json",
    ];
    let o = run_in(
        dir.path(),
        &[&args[..], &["--check-determinism=3"]].concat(),
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let d = &json_of(&o)["determinism"];
    // Three of the six passing seeds, spread over them.
    assert_eq!(d["seeds"], serde_json::json!([3, 5, 7]));
    assert_eq!(d["complete"], true);
    assert!(d["divergence"].is_null(), "{d}");
    let o = run_in(dir.path(), &args);
    assert!(json_of(&o).get("determinism").is_none());
}

#[test]
fn run_shards_merge_their_checks() {
    let dir = tempfile::tempdir().unwrap();
    for shard in ["1/2", "2/2"] {
        let o = run_in(
            dir.path(),
            &[
                "run",
                "--seed",
                "10",
                "--seeds",
                "8",
                "--shard",
                shard,
                "--part-dir",
                "parts",
                "--check-determinism=2",
            ],
        );
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let o = run_in(dir.path(), &["merge", "parts", "--format", "json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let d = &json_of(&o)["determinism"];
    // Each shard sampled two of its four seeds: 10, 12, 14, 16 and 11,
    // 13, 15, 17.
    assert_eq!(d["seeds"], serde_json::json!([10, 14, 11, 15]));
    assert!(d["divergence"].is_null());
}

#[test]
fn certify_makes_nondeterminism_its_own_verdict_in_every_report() {
    let dir = tempfile::tempdir().unwrap();
    let imp = flaky();
    let (out, i) = until_found(|attempt| {
        let out = format!("out-{attempt}");
        let o = run_in(
            dir.path(),
            &[
                "certify",
                "--impl",
                &imp,
                "--only",
                "dedup",
                "--seeds",
                "3",
                "--steps",
                "100",
                "--check-determinism=1",
                "--report-dir",
                &out,
            ],
        );
        if o.status.code() != Some(1) {
            return Err(format!(
                "exit {:?}: {}",
                o.status.code(),
                String::from_utf8_lossy(&o.stderr)
            ));
        }
        let out = dir.path().join(out);
        let report: Value = serde_json::from_str(&read(&out, "report.json")).unwrap();
        let i = report["implementations"][0].clone();
        if i["simulation"]["verdict"] == "nondeterministic" {
            Ok((out, i))
        } else {
            Err(format!("no difference found: {}", i["simulation"]))
        }
    });
    assert_eq!(i["verdict"]["simulation"], "nondeterministic");
    assert!(i["simulation"]["determinism"]["divergence"].is_object());
    assert!(read(&out, "summary.txt").contains("NONDETERMINISTIC: seed "));
    assert!(read(&out, "summary.md").contains("Nondeterministic: seed "));
    assert!(read(&out, "report.html").contains("Nondeterministic: seed "));
    assert!(read(&out, "junit.xml").contains("nondeterministic: seed "));
}

#[test]
fn certify_checks_the_reference_and_certifies_it() {
    let dir = tempfile::tempdir().unwrap();
    let o = run_in(
        dir.path(),
        &[
            "certify",
            "--no-explore",
            "--seeds",
            "4",
            "--steps",
            "100",
            "--check-determinism=2",
            "--report-dir",
            "out",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = dir.path().join("out");
    let report: Value = serde_json::from_str(&read(&out, "report.json")).unwrap();
    let i = &report["implementations"][0];
    assert_eq!(i["verdict"]["certified"], true);
    assert_eq!(i["simulation"]["verdict"], "clean");
    assert_eq!(
        i["simulation"]["determinism"]["seeds"],
        serde_json::json!([1, 3])
    );
    assert!(read(&out, "summary.txt").contains("determinism: 2 seed(s) played twice"));
}
