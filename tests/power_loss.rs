//! Power loss over the protocol: with every state directory on
//! tern-statefs, a crash can drop what the implementation never synced and
//! can fall inside a request. The reference agent passes; each mutant whose
//! log gets durability wrong survives every kill and dies by a power loss;
//! the crash points replay the same; and where FUSE is refused, every
//! report says the run was kill only.
//!
//! Where FUSE cannot be used on this machine, the tests that need it say so
//! and return (the fallback test still runs: it refuses FUSE itself).

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::{stdout, BIN};
use serde_json::Value;

/// What the tests set to refuse FUSE, as a user would.
const NO_FUSE: &str = "TERN_SIM_NO_FUSE";

fn tern(args: &[&str], dir: &Path, no_fuse: Option<&str>) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args).current_dir(dir).env_remove(NO_FUSE);
    if let Some(reason) = no_fuse {
        cmd.env(NO_FUSE, reason);
    }
    cmd.output().expect("tern-sim starts")
}

fn agent(mutant: Option<&str>) -> String {
    match mutant {
        Some(m) => format!("{BIN} agent --mutant {m}"),
        None => format!("{BIN} agent"),
    }
}

fn run_args<'a>(imp: &'a str, seeds: &'a str) -> Vec<&'a str> {
    vec![
        "run",
        "--impl",
        imp,
        "--agents",
        "5",
        "--faults",
        "--seed",
        "1",
        "--seeds",
        seeds,
        "--format",
        "json",
        "--no-shrink",
    ]
}

/// `certify --impl IMP --seeds SEEDS --no-explore` into `report`, with its
/// report.json.
fn certify(imp: &str, seeds: &str, report: &Path, no_fuse: Option<&str>) -> (Output, Value) {
    let dir = report.parent().expect("the report folder is in a folder");
    let o = tern(
        &[
            "certify",
            "--impl",
            imp,
            "--seeds",
            seeds,
            "--no-explore",
            "--report-dir",
            report.to_str().unwrap(),
        ],
        dir,
        no_fuse,
    );
    let text = std::fs::read_to_string(report.join("report.json")).unwrap_or_else(|e| {
        panic!("no report.json ({e}): {}", stdout(&o));
    });
    (o, serde_json::from_str(&text).unwrap())
}

fn json(o: &Output) -> Value {
    serde_json::from_str(&stdout(o)).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            stdout(o),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// Whether this machine serves power losses: a one-seed run says which
/// durability it had. `false` (with the reason printed) where FUSE is
/// unavailable.
fn power_loss_here(dir: &Path) -> bool {
    let imp = agent(None);
    let o = tern(&run_args(&imp, "1"), dir, None);
    let v = json(&o);
    match v["durability"].as_str() {
        Some(d) if d.starts_with("power loss") => true,
        other => {
            eprintln!("skipped: this machine cannot serve power losses ({other:?})");
            false
        }
    }
}

fn situation(v: &Value, name: &str) -> u64 {
    v["situations"]["reached"]
        .as_array()
        .and_then(|rows| {
            rows.iter()
                .find(|r| r["situation"] == name)
                .and_then(|r| r["count"].as_u64())
        })
        .unwrap_or_else(|| panic!("no situation {name} in {}", v["situations"]))
}

const POWER_SITUATIONS: [&str; 6] = [
    "power loss with unsynced data",
    "torn write",
    "crash between two writes of one request",
    "crash between a write and its sync",
    "crash between a sync and the answer",
    "crash during a rename",
];

#[test]
fn the_reference_agent_passes_power_losses_and_meets_each_of_them() {
    let dir = tempfile::tempdir().unwrap();
    if !power_loss_here(dir.path()) {
        return;
    }
    let imp = agent(None);
    let o = tern(&run_args(&imp, "40"), dir.path(), None);
    let v = json(&o);
    assert_eq!(o.status.code(), Some(0), "{v}");
    assert!(v["faults"].as_str().unwrap().contains("power-loss"), "{v}");
    assert!(v["stats"]["faults"]["power-loss"].as_u64().unwrap() > 0);
    for name in POWER_SITUATIONS {
        assert!(
            situation(&v, name) > 0,
            "{name} never reached: {}",
            v["situations"]
        );
    }
}

/// `tern-sim agent --mutant MUTANT` passes 30 seeds of kills and fails 100
/// of power losses, by its intended invariant.
fn only_a_power_loss_catches(dir: &Path, mutant: &str, intended: &str) {
    let imp = agent(Some(mutant));
    let killed = tern(&run_args(&imp, "30"), dir, Some("kills only, for the test"));
    let v = json(&killed);
    assert_eq!(killed.status.code(), Some(0), "{mutant} under kills: {v}");
    assert!(!v["faults"].as_str().unwrap().contains("power-loss"));
    let powered = tern(&run_args(&imp, "100"), dir, None);
    let v = json(&powered);
    assert_eq!(
        powered.status.code(),
        Some(1),
        "{mutant} under power loss: {v}"
    );
    assert_eq!(v["violation"]["invariant"], intended, "{mutant}: {v}");
}

#[test]
fn each_log_flaw_survives_every_kill_and_dies_by_a_power_loss() {
    let dir = tempfile::tempdir().unwrap();
    if !power_loss_here(dir.path()) {
        return;
    }
    // What each loses is what it answered: a message gone from a view.
    for mutant in [
        "skips-fsync",
        "skips-dir-fsync",
        "renames-unsynced",
        "syncs-every-second",
    ] {
        only_a_power_loss_catches(dir.path(), mutant, "history-preserved");
    }
}

#[test]
fn the_storage_mutants_of_the_zoo_die_over_the_protocol_by_power_loss() {
    let dir = tempfile::tempdir().unwrap();
    if !power_loss_here(dir.path()) {
        return;
    }
    // Each needs a crash between two file operations of one request (or of
    // a recovery), which kills between requests never make; each dies by
    // the invariant the zoo names for it.
    for (mutant, intended) in [
        ("index-before-data", "history-preserved"),
        ("stores-cut-delivery-twice", "views-agree"),
        ("distrusts-tail-after-failed-start", "history-preserved"),
    ] {
        only_a_power_loss_catches(dir.path(), mutant, intended);
    }
}

#[test]
fn crash_points_inside_requests_replay_the_same() {
    let dir = tempfile::tempdir().unwrap();
    if !power_loss_here(dir.path()) {
        return;
    }
    let imp = agent(None);
    let args = [
        "run",
        "--impl",
        &imp,
        "--agents",
        "4",
        "--faults",
        "--seed",
        "4",
        "--seeds",
        "1",
        "--steps",
        "300",
        "--show-trace",
    ];
    let first = stdout(&tern(&args, dir.path(), None));
    let second = stdout(&tern(&args, dir.path(), None));
    assert!(first.contains("file operation of the request"), "{first}");
    assert!(first.contains("power loss"), "{first}");
    assert_eq!(first, second, "one seed, one run");

    // Seed 96 crashes an execution at its effect, armed at the fourth file
    // operation of the request, which the agent reaches only after its
    // `perform` line. Whether it got there before the kill is a race; the
    // crash must be told the same way either way (it was told as falling at
    // that operation in about one run in four).
    let at_effect = [
        "run",
        "--impl",
        &imp,
        "--faults",
        "--seed",
        "96",
        "--seeds",
        "1",
        "--jobs",
        "1",
        "--show-trace",
    ];
    let told = stdout(&tern(&at_effect, dir.path(), None));
    assert!(told.contains("crashes (during an execution"), "{told}");
    for _ in 0..5 {
        let again = stdout(&tern(&at_effect, dir.path(), None));
        // The first line that differs, not two whole traces.
        let first_difference = told.lines().zip(again.lines()).find(|(a, b)| a != b);
        assert_eq!(first_difference, None, "one seed, one run");
        assert_eq!(again.len(), told.len(), "one seed, one run");
    }

    // A failure under power loss is saved with its crashes' cuts, and the
    // saved trace fails the same way.
    let mutant = agent(Some("skips-fsync"));
    let traces = dir.path().join("traces");
    let o = tern(
        &[
            "run",
            "--impl",
            &mutant,
            "--agents",
            "5",
            "--faults",
            "--seed",
            "1",
            "--seeds",
            "20",
            "--trace-dir",
            traces.to_str().unwrap(),
            "--format",
            "json",
        ],
        dir.path(),
        None,
    );
    let v = json(&o);
    assert_eq!(o.status.code(), Some(1), "{v}");
    let trace = v["trace"].as_str().expect("a trace is saved").to_owned();
    let text = std::fs::read_to_string(dir.path().join(&trace))
        .or_else(|_| std::fs::read_to_string(&trace))
        .unwrap();
    assert!(
        text.contains("\"cut\""),
        "crash steps carry their cut: {text}"
    );
    assert!(text.lines().next().unwrap().contains("power-loss"));
    let replay = tern(&["replay", &trace, "--impl", &mutant], dir.path(), None);
    let out = stdout(&replay);
    assert_eq!(replay.status.code(), Some(1), "{out}");
    assert!(
        out.contains(v["violation"]["invariant"].as_str().unwrap()),
        "{out}"
    );
}

#[test]
fn refused_fuse_is_kill_only_in_every_report() {
    let dir = tempfile::tempdir().unwrap();
    let imp = agent(None);
    let reason = "refused for the test";
    let o = tern(
        &[
            "run", "--impl", &imp, "--agents", "3", "--faults", "--seed", "1", "--seeds", "2",
        ],
        dir.path(),
        Some(reason),
    );
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains(&format!(
            "durability: kill only, FUSE unavailable: {reason}"
        )),
        "{out}"
    );
    assert!(!out.contains("power-loss"), "{out}");
    // The power-loss situations are not counted as missed where they
    // cannot be reached.
    assert!(!out.contains("torn write"), "{out}");

    let report = dir.path().join("report");
    let (o, json) = certify(&imp, "3", &report, Some(reason));
    let out = stdout(&o);
    assert!(
        out.contains("crashes kill only: syncs not checked"),
        "{out}"
    );
    let d = &json["implementations"][0]["simulation"]["durability"];
    assert_eq!(d["kind"], "kill-only", "{json}");
    assert!(d["label"].as_str().unwrap().contains(reason));
    for file in ["summary.txt", "junit.xml", "report.html"] {
        let text = std::fs::read_to_string(report.join(file)).unwrap();
        assert!(
            text.contains("kill only, FUSE unavailable: refused for the test"),
            "{file} names the crash model: {text}"
        );
    }
}

#[test]
fn certify_refuses_a_receiver_that_never_syncs() {
    let dir = tempfile::tempdir().unwrap();
    if !power_loss_here(dir.path()) {
        return;
    }
    let imp = agent(Some("skips-fsync"));
    let (o, json) = certify(&imp, "60", &dir.path().join("report"), None);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("NOT CERTIFIED"), "{out}");
    assert!(out.contains("durability: power loss"), "{out}");
    assert_eq!(
        json["implementations"][0]["simulation"]["durability"]["kind"],
        "power-loss"
    );
}

/// `explore SCOPE --impl IMP --format json`, its document and exit status.
fn explore(scope: &str, imp: &str, dir: &Path, no_fuse: Option<&str>) -> (Option<i32>, Value) {
    let traces = dir.join("traces");
    let o = tern(
        &[
            "explore",
            scope,
            "--impl",
            imp,
            "--format",
            "json",
            "--trace-dir",
            traces.to_str().unwrap(),
        ],
        dir,
        no_fuse,
    );
    (o.status.code(), json(&o))
}

#[test]
fn explore_over_the_protocol_cuts_the_power_and_catches_every_durability_mutant() {
    let dir = tempfile::tempdir().unwrap();
    if !power_loss_here(dir.path()) {
        return;
    }
    // The reference agent passes, the same way twice, and its crashes are
    // power losses, some inside requests.
    let imp = agent(None);
    for scope in ["spoofed-same-id", "crash-in-recovery"] {
        let (code, first) = explore(scope, &imp, dir.path(), None);
        assert_eq!(code, Some(0), "{first}");
        let s = &first["scopes"][0];
        assert_eq!(s["verdict"], "exhausted", "{first}");
        assert_eq!(s["power_loss"], true, "{first}");
        assert!(first["durability"]
            .as_str()
            .unwrap()
            .starts_with("power loss"));
        let mut met = vec![
            "crash between two writes of one request",
            "crash between a write and its sync",
            "crash between a sync and the answer",
        ];
        if scope == "crash-in-recovery" {
            // A recovery writes the log afresh, by a rename, and a crash
            // during it can lose its unsynced part.
            met.extend(["crash during a rename", "power loss with unsynced data"]);
        }
        for name in met {
            assert!(situation(&first, name) > 0, "{scope}: {name}: {first}");
        }
        let (_, second) = explore(scope, &imp, dir.path(), None);
        assert_eq!(first, second, "one scope, one exploration");
    }
    // Every mutant whose durability is wrong dies by its intended
    // invariant, in a built-in scope: one crash suffices for the first six;
    // the last two need a crash during or after a recovery, and so the
    // scope with two.
    for (mutant, scope, intended) in [
        ("group-commit", "spoofed-same-id", "history-preserved"),
        ("index-before-data", "spoofed-same-id", "history-preserved"),
        (
            "stores-cut-delivery-twice",
            "spoofed-same-id",
            "views-agree",
        ),
        ("skips-fsync", "spoofed-same-id", "history-preserved"),
        ("skips-dir-fsync", "spoofed-same-id", "history-preserved"),
        ("syncs-every-second", "spoofed-same-id", "history-preserved"),
        (
            "distrusts-tail-after-failed-start",
            "crash-in-recovery",
            "history-preserved",
        ),
        ("renames-unsynced", "crash-in-recovery", "history-preserved"),
    ] {
        let imp = agent(Some(mutant));
        let (code, v) = explore(scope, &imp, dir.path(), None);
        assert_eq!(code, Some(1), "{mutant}: {v}");
        assert_eq!(
            v["scopes"][0]["violation"]["invariant"], intended,
            "{mutant}: {v}"
        );
    }
    // A crash inside a request is what the storage mutants need: with
    // kills between requests only, the same scope passes them.
    for mutant in ["index-before-data", "renames-unsynced"] {
        let scope = if mutant == "renames-unsynced" {
            "crash-in-recovery"
        } else {
            "spoofed-same-id"
        };
        let (code, v) = explore(
            scope,
            &agent(Some(mutant)),
            dir.path(),
            Some("for the test"),
        );
        assert_eq!(code, Some(0), "{mutant} under kills: {v}");
        assert!(v["durability"]
            .as_str()
            .unwrap()
            .starts_with("kill only, FUSE unavailable: for the test"));
    }
    saved_trace_replays_as_explored(dir.path(), &imp);
}

/// The saved schedule says its crashes were power losses and where inside
/// a request they fell, and replays the same: it fails the mutant by the
/// same invariant and passes the reference agent (`reference`).
fn saved_trace_replays_as_explored(dir: &Path, reference: &str) {
    let mutant = agent(Some("index-before-data"));
    let (_, v) = explore("spoofed-same-id", &mutant, dir, None);
    let trace = v["scopes"][0]["violation"]["trace"]
        .as_str()
        .expect("the trace is saved")
        .to_owned();
    let text = std::fs::read_to_string(&trace).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["format"], "tern-sim explore trace 2", "{text}");
    assert_eq!(doc["power_loss"], true);
    assert!(
        doc["schedule"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["at_op"]["op"].as_u64().is_some()),
        "{text}"
    );
    let replay = tern(&["replay", &trace, "--impl", &mutant], dir, None);
    let out = stdout(&replay);
    assert_eq!(replay.status.code(), Some(1), "{out}");
    assert!(out.contains("violation of history-preserved"), "{out}");
    assert!(out.contains("file operation"), "{out}");
    let replay = tern(&["replay", &trace, "--impl", reference], dir, None);
    assert_eq!(replay.status.code(), Some(0), "{}", stdout(&replay));
    // Where FUSE is refused, the replay says it cannot cut the power.
    let replay = tern(
        &["replay", &trace, "--impl", &mutant],
        dir,
        Some("for the test"),
    );
    assert!(
        String::from_utf8_lossy(&replay.stderr).contains("explored with power-loss crashes"),
        "{}",
        String::from_utf8_lossy(&replay.stderr)
    );
}

/// `tern-sim agent` with a snapshot kept at most starts (every 8 records
/// replayed, where the default waits for 256, which runs of 200 steps
/// never reach): the crashes now fall in snapshot writes too, at every
/// file operation, and what a power loss leaves is always either the old
/// snapshot with a log that holds every record after it, or the new one.
const SNAPSHOTS: &str = "--snapshot-after 8";

#[test]
fn the_reference_agent_with_snapshots_passes_power_losses() {
    let dir = tempfile::tempdir().unwrap();
    if !power_loss_here(dir.path()) {
        return;
    }
    let imp = format!("{} {SNAPSHOTS}", agent(None));
    let o = tern(&run_args(&imp, "60"), dir.path(), None);
    let v = json(&o);
    assert_eq!(o.status.code(), Some(0), "{v}");
    assert!(v["stats"]["faults"]["power-loss"].as_u64().unwrap() > 0);
    for name in POWER_SITUATIONS {
        assert!(
            situation(&v, name) > 0,
            "{name} never reached: {}",
            v["situations"]
        );
    }
}

#[test]
fn a_snapshot_renamed_unsynced_survives_every_kill_and_dies_by_a_power_loss() {
    let dir = tempfile::tempdir().unwrap();
    if !power_loss_here(dir.path()) {
        return;
    }
    // After a power loss the snapshot is torn and the log begins after
    // it: the start refuses, naming both files.
    let mutant = format!("renames-snapshot-unsynced {SNAPSHOTS}");
    only_a_power_loss_catches(dir.path(), &mutant, "implementation-sound");
    let imp = agent(Some(&mutant));
    let o = tern(&run_args(&imp, "100"), dir.path(), None);
    let out = stdout(&o);
    assert!(
        out.contains("tern-agent.snapshot is not a whole snapshot"),
        "{out}"
    );
    // Without snapshots it is the reference.
    let never = agent(Some("renames-snapshot-unsynced --snapshot-after 0"));
    let o = tern(&run_args(&never, "100"), dir.path(), None);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

#[test]
fn each_log_flaw_still_dies_by_a_power_loss_with_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    if !power_loss_here(dir.path()) {
        return;
    }
    for mutant in [
        "skips-fsync",
        "skips-dir-fsync",
        "renames-unsynced",
        "syncs-every-second",
    ] {
        let imp = agent(Some(&format!("{mutant} {SNAPSHOTS}")));
        let o = tern(&run_args(&imp, "100"), dir.path(), None);
        let v = json(&o);
        assert_eq!(o.status.code(), Some(1), "{mutant} with snapshots: {v}");
        let caught = v["violation"]["invariant"].as_str().unwrap_or_default();
        assert!(
            ["history-preserved", "implementation-sound"].contains(&caught),
            "{mutant} with snapshots: {v}"
        );
    }
}

/// `explore` crashes each request at each of its file operations in turn:
/// with a snapshot kept at every start that replays a record, every file
/// operation of every snapshot write (and of the log begun again after it)
/// is a crash point, each with a power loss, and the reference passes them
/// all; the mutant that renames its snapshot unsynced dies.
#[test]
fn explore_crashes_every_snapshot_write_at_each_file_operation() {
    let dir = tempfile::tempdir().unwrap();
    if !power_loss_here(dir.path()) {
        return;
    }
    let imp = format!("{} --snapshot-after 1", agent(None));
    let (code, v) = explore("crash-in-recovery", &imp, dir.path(), None);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["scopes"][0]["verdict"], "exhausted", "{v}");
    let mutant = agent(Some("renames-snapshot-unsynced --snapshot-after 1"));
    let (code, v) = explore("crash-in-recovery", &mutant, dir.path(), None);
    assert_eq!(code, Some(1), "{v}");
}
