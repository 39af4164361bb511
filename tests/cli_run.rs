//! `tern-sim run`, `replay` and `selftest` end to end.

mod common;

use std::process::Output;

use common::stdout;
use serde_json::Value;

fn run(args: &[&str], dir: &std::path::Path) -> Output {
    common::run_in(dir, args)
}

#[test]
fn the_reference_runs_clean_and_the_same_seed_prints_the_same_run() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "run", "--agents", "3", "--faults", "--seeds", "3", "--steps", "60", "--seed", "5",
    ];
    let a = run(&args, dir.path());
    assert_eq!(a.status.code(), Some(0), "{a:?}");
    let text = stdout(&a);
    assert!(
        text.starts_with("tern-sim run: seed 5 (first of 3), 3 agents"),
        "{text}"
    );
    assert!(text.contains("│ violations        │ 0"), "{text}");
    assert!(
        text.contains("no violation in 3 run(s). Reproduce one with: tern-sim run --seed 5"),
        "{text}"
    );
    let b = run(&args, dir.path());
    assert_eq!(a.stdout, b.stdout, "same seed, same output");
}

#[test]
fn json_output_is_one_document() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(
        &[
            "run", "--agents", "2", "--drop", "--crash", "--seeds", "2", "--steps", "40", "--seed",
            "9", "--format", "json",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(0));
    let v: Value = serde_json::from_str(stdout(&o).trim()).expect("one JSON document");
    assert_eq!(v["seed"], 9);
    assert_eq!(v["runs"], 2);
    assert_eq!(v["faults"], "drop,crash");
    assert!(v["stats"]["deliveries"].as_u64().unwrap() > 0);
    assert!(v["violation"].is_null());
}

#[test]
fn a_mutant_fails_with_a_small_replayable_counterexample() {
    let dir = tempfile::tempdir().unwrap();
    let traces = dir.path().join("traces");
    let o = run(
        &[
            "run",
            "--agents",
            "3",
            "--faults",
            "--seed",
            "1",
            "--seeds",
            "20",
            "--steps",
            "120",
            "--mutant",
            "trusts-from",
            "--trace-dir",
            traces.to_str().unwrap(),
            "--format",
            "json",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["violation"]["invariant"], "identity-bound");
    let shrunk = v["counterexample"]["shrunk_steps"].as_u64().unwrap();
    assert!(shrunk <= 3, "shrunk to {shrunk} steps");
    let shorthand = v["counterexample"]["shorthand"].to_string();
    assert!(
        shorthand.contains(" | REQUEST | ") || shorthand.contains(" | "),
        "{shorthand}"
    );
    let trace = v["trace"].as_str().unwrap().to_owned();
    assert!(
        std::path::Path::new(&dir.path().join(&trace)).exists()
            || std::path::Path::new(&trace).exists()
    );
    let trace_path = if std::path::Path::new(&trace).is_absolute() {
        trace.clone()
    } else {
        dir.path().join(&trace).display().to_string()
    };

    // Replay reproduces it exactly, against the mutant the trace names...
    let r = run(&["replay", &trace_path, "--format", "json"], dir.path());
    assert_eq!(r.status.code(), Some(1));
    let rv: Value = serde_json::from_str(stdout(&r).trim()).unwrap();
    assert_eq!(rv["violation"]["invariant"], "identity-bound");
    assert_eq!(rv["shorthand"], v["counterexample"]["shorthand"]);
    // ...and the reference passes the same run.
    let r = run(&["replay", &trace_path, "--reference"], dir.path());
    assert_eq!(r.status.code(), Some(0), "{}", stdout(&r));
    assert!(stdout(&r).contains("no violation: the run passes"));
}

#[test]
fn bad_arguments_and_bad_traces_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        vec!["run", "--agents", "0"],
        vec!["run", "--agents", "17"],
        vec!["run", "--mutant", "no-such-mutant"],
        vec!["run", "--seeds", "0"],
        vec!["replay", "missing.jsonl"],
    ] {
        let o = run(&args, dir.path());
        assert_eq!(o.status.code(), Some(2), "{args:?}: {o:?}");
    }
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"hello\": 1}\n").unwrap();
    let o = run(&["replay", bad.to_str().unwrap()], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8(o.stderr)
        .unwrap()
        .contains("line 1: not a tern-sim trace"));
    std::fs::write(&bad, "{\"tern_sim_trace\":6,\"seed\":1,\"agents\":2,\"faults\":\"none\",\"mix\":{\"talk\":1,\"attacks\":0,\"crashes\":false,\"partitions\":false}}\n{\"do\":{\"nonsense\":1}}\n").unwrap();
    let o = run(&["replay", bad.to_str().unwrap()], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8(o.stderr)
        .unwrap()
        .contains("line 2: bad step"));
}

/// The harness proves its own power: every mutant of the zoo is killed, by
/// the invariant meant for it, and the reference passes.
#[test]
#[ignore = "a selftest of the whole zoo: run in release (.ci/run does)"]
fn selftest_kills_every_mutant_by_its_invariant() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(
        &[
            "selftest",
            "--seeds",
            "120",
            "--reference-seeds",
            "20",
            "--format",
            "json",
        ],
        dir.path(),
    );
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let mutants = v["mutants"].as_array().unwrap();
    assert!(mutants.len() >= 20);
    for m in mutants {
        assert_eq!(m["killed"], true, "{m}");
        assert_eq!(m["invariant"], m["target"], "{m}");
        assert!(!m["needs"].as_str().unwrap().is_empty(), "{m}");
        if m["killed_in"] == "simulation" {
            // Aimed requests depend on the state the earlier steps built,
            // so some counterexamples keep more context than they did; with
            // boasts aimed at what a real grant would sway (trace format 6),
            // executes-pending and executes-rejected shrink to 62 and 63.
            assert!(m["shrunk_length"].as_u64().unwrap() <= 70, "{m}");
            assert_eq!(m["runs_to_kill"], m["seeds_needed"], "{m}");
        } else {
            // Only what the workload does not reach falls to the corpus.
            assert_eq!(m["killed_in"], "corpus", "{m}");
            assert!(m["corpus_case"].is_string(), "{m}");
            assert!(m["runs_to_kill"].is_null(), "{m}");
        }
    }
    assert_eq!(v["simulation_only"], false);
    assert_eq!(v["reference"]["clean"], true);
    assert_eq!(o.status.code(), Some(0));
}

/// `--simulation-only`: 20 runs of 3 agents and no corpus. The workload
/// reaches every mutant's situation, so each dies in the simulation, by the
/// invariant meant for it; the summary counts the runs to kill. With one run
/// each, some survive, and the status says so.
#[test]
#[ignore = "a selftest of the whole zoo: run in release (.ci/run does)"]
fn selftest_simulation_only_kills_every_mutant_and_reports_the_spread() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(
        &[
            "selftest",
            "--simulation-only",
            "--reference-seeds",
            "2",
            "--format",
            "json",
        ],
        dir.path(),
    );
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["simulation_only"], true);
    assert_eq!(v["budget"]["seeds"], 20);
    assert_eq!(v["budget"]["agents"], 3);
    let mutants = v["mutants"].as_array().unwrap();
    for m in mutants {
        assert_eq!(m["killed"], true, "{m}");
        assert_eq!(m["killed_in"], "simulation", "{m}");
        assert_eq!(m["invariant"], m["target"], "{m}");
    }
    let runs: Vec<u64> = mutants
        .iter()
        .filter_map(|m| m["runs_to_kill"].as_u64())
        .collect();
    assert_eq!(runs.len(), mutants.len());
    assert!(runs.iter().all(|&r| (1..=20).contains(&r)), "{runs:?}");
    let summary = &v["summary"];
    assert_eq!(summary["killed_by_simulation"], runs.len());
    assert_eq!(summary["min"], *runs.iter().min().unwrap());
    assert_eq!(summary["max"], *runs.iter().max().unwrap());
    let counted: u64 = summary["counts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["mutants"].as_u64().unwrap())
        .sum();
    assert_eq!(counted, runs.len() as u64);
    assert_eq!(summary["survived"], Value::Array(Vec::new()));
    assert_eq!(o.status.code(), Some(0));

    let o = run(
        &[
            "selftest",
            "--simulation-only",
            "--seeds",
            "1",
            "--reference-seeds",
            "1",
            "--format",
            "json",
        ],
        dir.path(),
    );
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let survived = v["summary"]["survived"].as_array().unwrap();
    assert!(!survived.is_empty(), "{v}");
    for name in survived {
        let m = v["mutants"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["mutant"] == *name)
            .unwrap();
        assert_eq!(m["killed"], false, "{m}");
        assert!(m["killed_in"].is_null(), "{m}");
        assert_eq!(m["seeds_needed"], 1, "{m}");
    }
    assert_eq!(o.status.code(), Some(1));
}

/// A batch that stopped at its first violation did not run its budget:
/// it says so, and lists no situation as missed by the budget.
#[test]
fn a_batch_stopped_early_lists_no_missed_situation() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(
        &[
            "run",
            "--mutant",
            "trusts-from",
            "--seed",
            "1",
            "--seeds",
            "20",
            "--steps",
            "120",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let out = stdout(&o);
    assert!(
        out.contains("the batch stopped early, at its first violation"),
        "{out}"
    );
    assert!(!out.contains("never reached"), "{out}");
    // A batch that ran its budget still names what it missed.
    let o = run(
        &["run", "--seed", "1", "--seeds", "1", "--steps", "20"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(stdout(&o).contains("situation(s) never reached: "));
}
