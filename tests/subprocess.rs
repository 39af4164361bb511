//! The subprocess path end to end: the reference over the protocol passes
//! with real kills and restarts and plays the same run as in process;
//! mutants served over the protocol are caught; and every way an
//! implementation can misbehave gets a precise verdict, in bounded time,
//! with no process left behind.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::{stdout, BIN};
use serde_json::Value;

fn run(args: &[&str], dir: &Path) -> Output {
    common::run_in(dir, args)
}

fn agent(extra: &str) -> String {
    format!("{BIN} agent{extra}")
}

#[test]
fn the_reference_over_the_protocol_plays_the_same_run_as_in_process() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "run",
        "--agents",
        "3",
        "--faults",
        "--seed",
        "7",
        "--seeds",
        "1",
        "--steps",
        "120",
        "--show-trace",
    ];
    let inproc = run(&args, dir.path());
    let cmd = agent("");
    let mut sub_args = args.to_vec();
    sub_args.extend(["--impl", &cmd]);
    let sub = run(&sub_args, dir.path());
    assert_eq!(inproc.status.code(), Some(0), "{}", stdout(&inproc));
    assert_eq!(sub.status.code(), Some(0), "{}", stdout(&sub));
    let body = |o: &Output| -> Vec<String> {
        stdout(o)
            .lines()
            .filter(|l| !l.starts_with("tern-sim run:") && !l.starts_with("no violation"))
            .map(str::to_owned)
            .collect()
    };
    let (a, b) = (body(&inproc), body(&sub));
    assert!(
        a.iter().any(|l| l.contains("crashes")),
        "the run has crashes"
    );
    assert!(a.iter().any(|l| l.contains("restarts from its storage")));
    assert_eq!(
        a, b,
        "same seed, same run, in process and over the protocol"
    );
}

#[test]
fn the_reference_over_the_protocol_passes_several_faulty_runs() {
    let dir = tempfile::tempdir().unwrap();
    let cmd = agent("");
    let o = run(
        &[
            "run", "--impl", &cmd, "--agents", "3", "--faults", "--seed", "100", "--seeds", "4",
            "--steps", "100", "--format", "json",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert!(v["stats"]["faults"]["crash"].as_u64().unwrap() > 0);
}

#[test]
fn mutants_served_over_the_protocol_are_caught_and_shrunk() {
    for (mutant, invariant) in [
        ("memory-dedup", "at-most-once-effects"),
        ("trusts-from", "identity-bound"),
        ("acks-acks", "no-ack-of-ack"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let cmd = agent(&format!(" --mutant {mutant}"));
        let o = run(
            &[
                "run", "--impl", &cmd, "--agents", "3", "--faults", "--seed", "0", "--seeds", "30",
                "--steps", "120", "--format", "json",
            ],
            dir.path(),
        );
        assert_eq!(o.status.code(), Some(1), "{mutant}: {}", stdout(&o));
        let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
        assert_eq!(v["violation"]["invariant"], invariant, "{mutant}");
        assert!(
            v["counterexample"]["shrunk_steps"].as_u64().unwrap() <= 12,
            "{mutant}: {v}"
        );
        assert!(v["trace"].is_string());
    }
}

/// Runs the misbehaving fixture in `mode` and returns the output and the
/// PIDs it ran under.
fn misbehave(mode: &str) -> (Output, Vec<u32>) {
    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/misbehave.py");
    let pids = dir.path().join("pids");
    let cmd = format!("python3 {} {mode} {}", script.display(), pids.display());
    let o = run(
        &[
            "run",
            "--impl",
            &cmd,
            "--agents",
            "2",
            "--seed",
            "3",
            "--seeds",
            "1",
            "--steps",
            "8",
            "--timeout",
            "400",
            "--startup-timeout",
            "800",
            "--no-shrink",
            "--format",
            "json",
        ],
        dir.path(),
    );
    let pids = std::fs::read_to_string(&pids)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect();
    (o, pids)
}

fn alive(pid: u32) -> bool {
    // A zombie has been killed; only a process still running counts.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| s.split_whitespace().nth(2).is_none_or(|state| state != "Z"))
        .unwrap_or(false)
}

#[test]
fn every_misbehaviour_gets_a_precise_verdict_and_no_process_survives() {
    let cases = [
        ("never-init", "did not answer `init`"),
        ("exit-at-init", "boom: cannot read the configuration"),
        ("hang", "did not answer `deliver`"),
        ("crash-mid-answer", "segmentation fault (pretend)"),
        ("garbage", "printed something that is not a JSON line"),
        ("wrong-seq", "answered with seq"),
        ("flood", "flooded its output"),
        ("huge-line", "printed a line of"),
        ("error", "answered `deliver` with an error"),
    ];
    for (mode, verdict) in cases {
        let (o, pids) = misbehave(mode);
        assert_eq!(o.status.code(), Some(1), "{mode}: {o:?}");
        let v: Value = serde_json::from_str(stdout(&o).trim())
            .unwrap_or_else(|e| panic!("{mode}: {e}: {o:?}"));
        assert_eq!(
            v["violation"]["invariant"], "implementation-sound",
            "{mode}"
        );
        let actual = v["violation"]["actual"].as_str().unwrap();
        assert!(actual.contains(verdict), "{mode}: {actual}");
        assert!(!pids.is_empty(), "{mode}: the fixture never started");
        for pid in pids {
            // SIGKILL is delivered at once but takes effect asynchronously.
            let gone = (0..200).any(|_| {
                let dead = !alive(pid);
                if !dead {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                dead
            });
            assert!(gone, "{mode}: process {pid} survived");
        }
    }
}

#[test]
fn an_interrupted_run_leaves_no_process_behind() {
    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/misbehave.py");
    let pids = dir.path().join("pids");
    let cmd = format!("python3 {} hang {}", script.display(), pids.display());
    let mut child = Command::new(BIN)
        .args([
            "run",
            "--impl",
            &cmd,
            "--agents",
            "2",
            "--seeds",
            "1",
            "--steps",
            "8",
            "--timeout",
            "60000",
        ])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the implementation runs, then interrupt tern-sim as Ctrl-C would.
    for _ in 0..500 {
        if std::fs::read_to_string(&pids).is_ok_and(|s| s.lines().count() >= 2) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = child.wait().unwrap();
    assert_eq!(exit.code(), Some(130), "{exit:?}");
    let started: Vec<u32> = std::fs::read_to_string(&pids)
        .unwrap()
        .lines()
        .filter_map(|l| l.parse().ok())
        .collect();
    assert!(!started.is_empty());
    for pid in started {
        let gone = (0..200).any(|_| {
            let dead = !alive(pid);
            if !dead {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            dead
        });
        assert!(gone, "process {pid} survived the interrupt");
    }
}
