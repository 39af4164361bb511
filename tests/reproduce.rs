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
    // The simulation's shrunk run is saved in the report folder, and its
    // replay breaks the same rule.
    let v = &imp["simulation"]["violation"];
    let trace = v["trace"].as_str().unwrap();
    assert_eq!(
        trace,
        format!("traces/memory-dedup-seed-{}.jsonl", v["seed"])
    );
    assert!(dir.path().join("first").join(trace).is_file());
    let command = v["reproduce"].as_str().unwrap();
    assert_eq!(
        command,
        format!("tern-sim replay first/{trace} --mutant memory-dedup")
    );
    let args: Vec<&str> = command.split_whitespace().skip(1).collect();
    let again = run_in(dir.path(), &[&args[..], &["--format", "json"]].concat());
    assert_eq!(again.status.code(), Some(1), "{command}");
    let again: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(again["violation"]["invariant"], v["invariant"]);
    assert!(
        v.get("stderr").is_none(),
        "an implementation in process has no stderr of its own"
    );
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
    assert!(html.contains(&format!(
        r#"<a href="{trace}">the shrunk run as a trace</a>"#
    )));
}

/// A subprocess's stderr, whole, for each failing case and for the shrunk
/// run, in files of the report folder that the reports name.
#[test]
fn a_subprocess_stderr_is_kept_whole_for_each_failure() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("noisy.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"noisy start $$\" >&2\nexec '{}' agent --mutant memory-dedup\n",
            common::BIN
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = run_in(
        dir.path(),
        &[
            "certify",
            "--impl",
            "./noisy.sh",
            "--only",
            "dedup",
            "--seeds",
            "2",
            "--no-explore",
            "--format",
            "json",
            "--report-dir",
            "r",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let imp = &report["implementations"][0];
    let mut logs = 0;
    for case in imp["cases"].as_array().unwrap() {
        let Some(failure) = case["failure"].as_object() else {
            assert!(case.get("stderr").is_none());
            continue;
        };
        let path = failure["stderr"]
            .as_str()
            .expect("a failing case names its stderr");
        assert_eq!(
            path,
            format!("stderr/noisy.sh/{}.txt", case["id"].as_str().unwrap())
        );
        let text = std::fs::read_to_string(dir.path().join("r").join(path)).unwrap();
        // A case starts on a new process, or on one kept from an earlier
        // case (the agent claims `reinit`); each new process brings the
        // stderr of its start.
        assert!(
            text.starts_with("[tern-sim] `./noisy.sh` started"),
            "{text}"
        );
        assert_eq!(
            text.matches("` started for ").count(),
            text.matches("noisy start ").count(),
            "{text}"
        );
        logs += 1;
    }
    assert!(logs > 0, "memory-dedup fails dedup cases");
    let v = &imp["simulation"]["violation"];
    let path = v["stderr"]
        .as_str()
        .expect("the shrunk run names its stderr");
    let text = std::fs::read_to_string(dir.path().join("r").join(path)).unwrap();
    // Its agents' starts, and at least the restart after the crash that
    // memory-dedup fails on: a new process, with its own start on stderr.
    assert!(text.matches("` started").count() >= 2, "{text}");
    assert!(text.matches("noisy start ").count() >= 1, "{text}");
    assert_eq!(
        text.matches("` started for ").count(),
        text.matches("noisy start ").count(),
        "{text}"
    );
    let command = v["reproduce"].as_str().unwrap();
    assert!(
        command.starts_with("tern-sim replay r/traces/noisy.sh-seed-")
            && command.ends_with(" --impl './noisy.sh'"),
        "{command}"
    );
    let html = std::fs::read_to_string(dir.path().join("r/report.html")).unwrap();
    assert!(html.contains(&format!(
        r#"<a href="{path}">everything the implementation wrote on stderr</a>"#
    )));
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

/// `run --impl` names the whole replay command, `--impl` with it: run
/// through a shell, as a user pastes it, it fails the same way.
#[test]
fn run_over_the_protocol_names_the_whole_replay_command() {
    let dir = tempfile::tempdir().unwrap();
    let agent = format!("{} agent --mutant trusts-from", common::BIN);
    let out = run_in(
        dir.path(),
        &[
            "run", "--impl", &agent, "--seed", "1", "--seeds", "20", "--steps", "120",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("replay: "))
        .expect("a replay line");
    assert!(
        line.ends_with(&format!(" --impl '{agent}'")),
        "the command names the implementation: {line}"
    );
    let command = line.replacen("tern-sim", common::BIN, 1);
    let replayed = std::process::Command::new("sh")
        .args(["-c", &command])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(
        replayed.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&replayed.stderr)
    );
    // A trace whose header names no version says so in words.
    let trace = line
        .strip_prefix("tern-sim replay ")
        .and_then(|l| l.split(' ').next())
        .unwrap();
    let text = std::fs::read_to_string(dir.path().join(trace)).unwrap();
    let version = format!("\"{}\"", env!("CARGO_PKG_VERSION"));
    assert!(text.contains(&version));
    std::fs::write(
        dir.path().join("old.jsonl"),
        text.replacen(&version, "\"\"", 1),
    )
    .unwrap();
    let o = run_in(dir.path(), &["replay", "old.jsonl", "--impl", &agent]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("recorded with an unknown tern-sim version (the trace names none)"),
        "{err}"
    );
}

/// A process that leaks a session's state into the next is caught by
/// `run`, its counterexample is shrunk by playing each candidate after
/// itself on the processes it kept, and the trace replays the same way:
/// the whole replay command `run` prints fails the same way again, and a
/// correct agent passes it.
#[test]
fn a_leak_across_sessions_is_shrunk_and_replayed_after_itself() {
    let dir = tempfile::tempdir().unwrap();
    let agent = format!("{} agent --mutant leaks-session", common::BIN);
    let run = std::process::Command::new(common::BIN)
        .args([
            "run", "--impl", &agent, "--seed", "1", "--seeds", "30", "--jobs", "1",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&run.stdout).into_owned();
    assert_eq!(run.status.code(), Some(1), "{out}");
    assert!(out.contains("violation of dedup"), "{out}");
    assert!(
        out.contains("the violation shows only on processes kept from an earlier session"),
        "{out}"
    );
    let shrunk: usize = out
        .split("shrunk from 200 to ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("a shrunk counterexample");
    assert!(shrunk <= 5, "shrinking works after itself: {shrunk} steps");
    let line = out
        .lines()
        .find_map(|l| l.strip_prefix("replay: "))
        .expect("a replay command");
    let trace = line.split(' ').nth(2).unwrap();
    let header = std::fs::read_to_string(dir.path().join(trace)).unwrap();
    assert!(header
        .lines()
        .next()
        .unwrap()
        .contains(r#""sessions":"after-itself""#));
    let replay = |command: &str| {
        std::process::Command::new("sh")
            .args(["-c", command])
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    let again = replay(&line.replacen("tern-sim", common::BIN, 1));
    let text = String::from_utf8_lossy(&again.stdout);
    assert_eq!(again.status.code(), Some(1), "{text}");
    assert!(
        text.contains("played twice on the same processes"),
        "{text}"
    );
    assert!(text.contains("violation of dedup"), "{text}");
    let correct = replay(&format!(
        "{bin} replay {trace} --impl '{bin} agent'",
        bin = common::BIN
    ));
    assert_eq!(correct.status.code(), Some(0));
}
