//! An interrupt loses nothing: `run` interrupted while it shrinks saves the
//! smallest failing run found so far, atomically, then exits 128+n.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::{run_in, BIN};

/// Interrupts `run` while it shrinks with `signals` (each sent after its
/// pause), and checks that it exits `128 + signals[0]` with the smallest
/// failing run found saved, and that the saved run still fails.
fn interrupt_while_shrinking(signals: &[(&str, Duration)], status: i32) {
    let dir = tempfile::tempdir().unwrap();
    // Over the protocol, every shrinking attempt starts processes, so
    // shrinking lasts long enough to be interrupted in the middle.
    let agent = format!("{BIN} agent --mutant memory-dedup");
    let mut child = Command::new(BIN)
        .args([
            "run", "--impl", &agent, "--faults", "--agents", "3", "--seed", "1", "--seeds", "50",
        ])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        for line in BufReader::new(stdout).lines() {
            let line = line.unwrap();
            if line == "shrinking..." {
                let _ = tx.send(());
            }
            text.push_str(&line);
            text.push('\n');
        }
        text
    });
    rx.recv_timeout(Duration::from_secs(120))
        .expect("the run finds the mutant's violation and starts shrinking");
    std::thread::sleep(Duration::from_millis(300));
    for (signal, pause) in signals {
        std::thread::sleep(*pause);
        let sent = Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
    }
    let exit = child.wait().unwrap();
    let text = reader.join().unwrap();
    assert_eq!(exit.code(), Some(status), "{signals:?}: {text}");
    assert!(
        text.contains("shrinking interrupted: the smallest failing run found by then"),
        "{signals:?}: {text}"
    );
    let traces: Vec<_> = std::fs::read_dir(dir.path().join("tern-sim-traces"))
        .expect("a trace folder")
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    // One file, the failing seed's, and no partial one beside it.
    assert_eq!(traces.len(), 1, "no partial file is left: {traces:?}");
    let trace = &traces[0];
    assert!(
        trace.starts_with("counterexample-") && trace.ends_with(".jsonl"),
        "{trace}"
    );
    assert!(
        text.contains(&format!("tern-sim-traces/{trace}")),
        "the run names the file it saved: {text}"
    );
    // The saved run still fails, the same way (the mutant in process: the
    // trace names the subprocess command).
    let path = format!("tern-sim-traces/{trace}");
    let replay = run_in(
        dir.path(),
        &[
            "replay",
            &path,
            "--mutant",
            "memory-dedup",
            "--format",
            "json",
        ],
    );
    assert_eq!(replay.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&replay.stdout).unwrap();
    assert_eq!(v["violation"]["invariant"], "at-most-once-effects");
}

#[test]
fn an_interrupt_while_shrinking_saves_the_best_counterexample() {
    interrupt_while_shrinking(&[("INT", Duration::ZERO)], 130);
}

/// GNU `timeout` signals the process, then its group: two SIGTERMs
/// milliseconds apart are one interrupt, and nothing is lost.
#[test]
fn two_signals_together_are_one_interrupt() {
    interrupt_while_shrinking(
        &[
            ("TERM", Duration::ZERO),
            ("TERM", Duration::from_millis(10)),
        ],
        143,
    );
}

#[test]
fn a_shrinking_time_limit_keeps_the_run_found_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "run",
            "--mutant",
            "memory-dedup",
            "--faults",
            "--agents",
            "3",
            "--seed",
            "1",
            "--seeds",
            "50",
            "--shrink-time",
            "0",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ce = &v["counterexample"];
    assert_eq!(ce["shrink_end"], "out-of-time");
    assert_eq!(ce["shrunk_steps"], ce["original_steps"]);
    assert_eq!(v["violation"]["invariant"], "at-most-once-effects");
}
