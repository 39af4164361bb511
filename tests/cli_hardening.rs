//! The command line attacked as a hostile user would: output into a pipe
//! that closes, streams that never end, reports with lies and escape
//! sequences in them, partial and interrupted certifications.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::{run_in, stdout, BIN};
use serde_json::Value;

/// Longest a test waits for an answer that should come at once.
const PATIENCE: Duration = Duration::from_secs(30);

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn report(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap()
}

/// Runs tern-sim with its standard output a pipe whose reader has already
/// gone, so the first write meets a broken pipe.
fn with_closed_stdout(dir: &Path, args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tern-sim starts");
    drop(child.stdout.take());
    let mut input = child.stdin.take().unwrap();
    let _ = input.write_all(stdin);
    drop(input);
    child.wait_with_output().unwrap()
}

fn assert_quiet(o: &Output, code: i32, what: &str) {
    let err = stderr(o);
    assert!(
        !err.contains("panicked") && !err.contains("Broken pipe") && !err.contains("broken pipe"),
        "{what}: {err}"
    );
    assert_eq!(o.status.code(), Some(code), "{what}: {err}");
}

/// A certification report of the reference, corpus only, in `dir/name`.
fn reference_report(dir: &Path, name: &str) -> Value {
    let o = run_in(dir, &["certify", "--seeds", "0", "--report-dir", name]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    report(&dir.join(name))
}

/// A counterexample trace of a mutant, saved by `run` under `dir/folder`.
fn mutant_trace(dir: &Path, folder: &str) -> std::path::PathBuf {
    let traces = dir.join(folder);
    let o = run_in(
        dir,
        &[
            "run",
            "--agents",
            "3",
            "--seed",
            "1",
            "--seeds",
            "20",
            "--steps",
            "120",
            "--faults",
            "--mutant",
            "trusts-from",
            "--trace-dir",
            traces.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    std::fs::read_dir(&traces)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
}

fn write_json(path: &Path, v: &Value) {
    std::fs::write(path, serde_json::to_vec(v).unwrap()).unwrap();
}

#[test]
fn every_command_ends_quietly_when_its_reader_goes_away() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    reference_report(d, "good");
    let trace = mutant_trace(d, "traces");
    let trace = trace.to_str().unwrap();
    let invalid = b"[1]\n{}\n".repeat(1000);
    // Each command with its documented status when its output is cut:
    // the status of the work it did, with no word on standard error.
    let cases: Vec<(Vec<&str>, &[u8], i32)> = vec![
        (vec!["coverage"], b"", 0),
        (vec!["coverage", "--format", "json"], b"", 0),
        (vec!["run", "--seeds", "3", "--seed", "1"], b"", 0),
        (
            vec!["run", "--seeds", "3", "--seed", "1", "--format", "json"],
            b"",
            0,
        ),
        (vec!["replay", trace], b"", 1),
        (vec!["check", "-"], &invalid, 1),
        (vec!["check", "--format", "json", "-"], &invalid, 1),
        (vec!["check", "--stateful", "-"], &invalid, 1),
        (vec!["diff", "good/report.json", "good/report.json"], b"", 0),
        (
            vec!["certify", "--seeds", "0", "--report-dir", "cut"],
            b"",
            0,
        ),
        (vec!["agent"], b"{\"seq\":1,\"op\":\"shutdown\"}\n", 0),
        (vec!["--help"], b"", 0),
    ];
    for (args, input, code) in cases {
        let o = with_closed_stdout(d, &args, input);
        assert_quiet(&o, code, &args.join(" "));
    }
    // certify still wrote its reports.
    assert_eq!(
        report(&d.join("cut"))["implementations"][0]["verdict"]["certified"],
        true
    );
}

/// `run | head -1`: once the reader has gone, no more runs are played,
/// though nothing is written between the first line and the verdict that
/// could meet the broken pipe. A budget of a million long runs would take
/// hours; the command must end on its own well before the patience runs
/// out, with the status of the work it did.
#[test]
fn run_stops_its_runs_once_its_reader_has_gone() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .args([
            "run", "--seed", "1", "--seeds", "1000000", "--steps", "2000",
        ])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tern-sim starts");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    assert!(first.starts_with("tern-sim run: seed 1"), "{first}");
    drop(out);
    let deadline = std::time::Instant::now() + PATIENCE;
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("run went on playing for a reader that had gone");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = child.wait_with_output().unwrap();
    assert_quiet(&o, 0, "run | head -1");
}

#[test]
fn check_answers_each_line_of_a_slow_stream_at_once() {
    let mut child = Command::new(BIN)
        .args(["check", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(b"[1]\n").unwrap();
    input.flush().unwrap();
    let out = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(out).read_line(&mut line);
        let _ = tx.send(line);
    });
    // Standard input stays open: the verdict must come before the end.
    let line = rx.recv_timeout(PATIENCE);
    drop(input);
    let _ = child.wait();
    let line = line.expect("the verdict of line 1 came while the input was still open");
    assert!(line.starts_with("<stdin>:1:"), "{line}");
}

#[test]
fn check_document_answers_an_endless_input_at_the_frame_limit() {
    for extra in [&[][..], &["--stateful"][..]] {
        let mut child = Command::new(BIN)
            .arg("check")
            .args(extra)
            .args(["--document", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        // An endless document: it writes until tern-sim stops reading.
        let writer = std::thread::spawn(move || {
            let chunk = vec![b' '; 64 * 1024];
            let _ = input.write_all(b"[");
            while input.write_all(&chunk).is_ok() {}
        });
        let mut out = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = out.read_to_string(&mut s);
            let _ = tx.send(s);
        });
        let answer = rx.recv_timeout(PATIENCE);
        if answer.is_err() {
            let _ = child.kill();
        }
        let status = child.wait().unwrap();
        let _ = writer.join();
        let answer = answer.expect("check answers without reading the whole input");
        assert_eq!(status.code(), Some(1), "{answer}");
        assert!(answer.contains("1048576"), "{answer}");
    }
}

#[test]
fn a_partial_certification_reports_but_never_certifies() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let o = run_in(
        d,
        &[
            "certify",
            "--seeds",
            "0",
            "--only",
            "text",
            "--report-dir",
            "p",
        ],
    );
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(
        !text.contains("✔") && text.contains("NOT CERTIFIED"),
        "{text}"
    );
    assert!(text.contains("partial run"), "the reason is given: {text}");
    let r = report(&d.join("p"));
    let verdict = &r["implementations"][0]["verdict"];
    assert_eq!(verdict["certified"], false);
    assert_eq!(verdict["level"], Value::Null);
    assert_eq!(verdict["core"], false);
    let summary = std::fs::read_to_string(d.join("p/summary.txt")).unwrap();
    assert!(
        summary.contains("partial run") && !summary.contains("✔"),
        "{summary}"
    );
    let html = std::fs::read_to_string(d.join("p/report.html")).unwrap();
    assert!(html.contains("Partial run") && !html.contains("✔ Certified"));
    let json = run_in(
        d,
        &[
            "certify",
            "--seeds",
            "0",
            "--only",
            "text",
            "--report-dir",
            "q",
            "--format",
            "json",
        ],
    );
    assert_eq!(json.status.code(), Some(1));
}

#[test]
fn an_interrupt_during_the_corpus_leaves_the_simulation_incomplete() {
    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/misbehave.py");
    let pids = dir.path().join("pids");
    let imp = format!("python3 {} hang {}", script.display(), pids.display());
    let child = Command::new(BIN)
        .args([
            "certify",
            "--impl",
            &imp,
            "--timeout",
            "60000",
            "--seeds",
            "10",
            "--report-dir",
            "out",
        ])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the implementation runs (it then hangs on the first case).
    for _ in 0..300 {
        if std::fs::read_to_string(&pids).is_ok_and(|s| !s.is_empty()) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    unsafe {
        libc_kill(child.id() as i32, 2);
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let text = stdout(&out);
    // Not the reason a simulation gives when `--seeds 0` skipped it (a
    // reproduce command of a case may well say `--seeds 0`).
    assert!(!text.contains("(--seeds 0)"), "{text}");
    assert!(text.contains("simulation incomplete"), "{text}");
    let sim = &report(&dir.path().join("out"))["implementations"][0]["simulation"];
    assert_eq!(sim["verdict"], "incomplete");
    assert_eq!(sim["skipped"], Value::Null);
}

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

#[test]
fn report_files_get_the_umask_mode_and_a_bad_folder_is_refused_first() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    for (umask, mode) in [("022", 0o644), ("027", 0o640)] {
        let o = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "umask {umask}; exec \"$0\" certify --seeds 0 --only text --report-dir r{umask}"
            ))
            .arg(BIN)
            .current_dir(dir.path())
            .output()
            .unwrap();
        for f in [
            "report.json",
            "junit.xml",
            "report.html",
            "summary.txt",
            "summary.md",
            "badge.json",
            "badge.svg",
        ] {
            let m = std::fs::metadata(dir.path().join(format!("r{umask}/{f}"))).unwrap();
            assert_eq!(
                m.permissions().mode() & 0o777,
                mode,
                "{f} under umask {umask}"
            );
        }
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    }
    // A regular file as the folder: refused before the corpus runs, so
    // standard output has not even the header.
    std::fs::write(dir.path().join("taken"), "x").unwrap();
    let o = run_in(dir.path(), &["certify", "--report-dir", "taken"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    assert!(stderr(&o).contains("taken: not a folder"), "{}", stderr(&o));
}

#[test]
fn diff_counts_what_went_missing_and_refuses_a_malformed_report() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = reference_report(d, "good");
    let diff = |new: &str| run_in(d, &["diff", "good/report.json", new]);

    let mut none = good.clone();
    none["implementations"] = Value::Array(vec![]);
    write_json(&d.join("none.json"), &none);
    let o = diff("none.json");
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("implementation: reported → absent"));

    let mut fewer = good.clone();
    fewer["implementations"][0]["cases"]
        .as_array_mut()
        .unwrap()
        .truncate(32);
    write_json(&d.join("fewer.json"), &fewer);
    let o = diff("fewer.json");
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("✘ regression") && stdout(&o).contains("pass → absent"));

    let malformed: [(&str, Value, &str); 5] = [
        (
            "status",
            Value::from("passed"),
            "/implementations/0/cases/3/status",
        ),
        (
            "level",
            Value::from("gold"),
            "/implementations/0/cases/3/level",
        ),
        (
            "section",
            Value::from("one"),
            "/implementations/0/cases/3/section",
        ),
        (
            "id",
            good["implementations"][0]["cases"][0]["id"].clone(),
            "/implementations/0/cases/3/id",
        ),
        ("title", Value::from(1), "/implementations/0/cases/3/title"),
    ];
    for (field, value, pointer) in malformed {
        let mut bad = good.clone();
        bad["implementations"][0]["cases"][3][field] = value;
        write_json(&d.join("bad.json"), &bad);
        let o = diff("bad.json");
        assert_eq!(o.status.code(), Some(2), "{field}: {}", stdout(&o));
        assert!(
            stderr(&o).contains(&format!("at {pointer}:")),
            "{field}: {}",
            stderr(&o)
        );
    }
    let mut bad = good.clone();
    bad["implementations"][0]["simulation"]["verdict"] = Value::from("fine");
    write_json(&d.join("bad.json"), &bad);
    let o = diff("bad.json");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("at /implementations/0/simulation/verdict:"));
    // A hash that is not one once made diff slice a string mid-character.
    let mut bad = good.clone();
    bad["corpus"]["hash"] = Value::from(format!("a{}", "é".repeat(40)));
    write_json(&d.join("bad.json"), &bad);
    let o = diff("bad.json");
    assert_quiet(&o, 2, "a hash that is not one");
    assert!(stderr(&o).contains("at /corpus/hash:"), "{}", stderr(&o));
}

/// Nothing from the input reaches the terminal as an escape sequence or a
/// bidi control.
fn assert_inert(text: &str, what: &str) {
    let bad: Vec<char> = text
        .chars()
        .filter(|c| (c.is_control() && *c != '\n') || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}'))
        .collect();
    assert!(bad.is_empty(), "{what}: {bad:?} in {text}");
}

#[test]
fn escapes_and_bidi_controls_from_the_input_are_shown_not_obeyed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = reference_report(d, "good");
    let hostile = "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{202e}evil\n✔ CERTIFIED";
    let mut bad = good.clone();
    bad["implementations"][0]["label"] = Value::from(hostile);
    bad["implementations"][0]["name"] = Value::from(hostile);
    bad["implementations"][0]["cases"][0]["id"] = Value::from(hostile);
    bad["implementations"][0]["cases"][0]["status"] = Value::from("fail");
    write_json(&d.join("hostile.json"), &bad);
    let o = run_in(d, &["diff", "good/report.json", "hostile.json"]);
    assert_eq!(o.status.code(), Some(1));
    assert_inert(&stdout(&o), "diff");
    assert!(stdout(&o).contains("\\u{1b}]0;pwned"), "{}", stdout(&o));

    // check: the file name and the views of --stateful.
    let name = d.join("\u{1b}[31mred\u{202e}.jsonl");
    let worked = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/worked-exchange.jsonl"
    ))
    .unwrap();
    let first = worked.lines().next().unwrap();
    std::fs::write(
        &name,
        format!(
            "{}\n[1]\n",
            first.replace("Review the", "Review \\u202e\\u001b[2J the")
        ),
    )
    .unwrap();
    for args in [
        vec!["check", name.to_str().unwrap()],
        vec!["check", "--stateful", "--views", name.to_str().unwrap()],
    ] {
        let o = run_in(d, &args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert_inert(&stdout(&o), &args.join(" "));
        assert!(
            stdout(&o).contains("\\u{1b}[31mred\\u{202e}.jsonl"),
            "{}",
            stdout(&o)
        );
    }

    // certify: an implementation named with escapes (it does not start,
    // so its command is its name in the summary).
    let o = run_in(
        d,
        &[
            "certify",
            "--seeds",
            "0",
            "--startup-timeout",
            "2000",
            "--impl",
            "exit 3 # \u{1b}[2J\u{202e}",
            "--report-dir",
            "h",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_inert(&stdout(&o), "certify");
    assert!(stdout(&o).contains("\\u{1b}[2J\\u{202e}"), "{}", stdout(&o));
    assert_inert(
        &std::fs::read_to_string(d.join("h/summary.txt")).unwrap(),
        "summary.txt",
    );
    let markdown = std::fs::read_to_string(d.join("h/summary.md")).unwrap();
    assert_inert(&markdown, "summary.md");
    assert!(markdown.contains("\\u{1b}[2J\\u{202e}"), "{markdown}");
    let html = std::fs::read_to_string(d.join("h/report.html")).unwrap();
    assert!(!html.contains('\u{1b}') && !html.contains('\u{202e}'));
    let junit = std::fs::read_to_string(d.join("h/junit.xml")).unwrap();
    assert_inert(&junit, "junit.xml");
    assert!(junit.contains("\\u{202e}"), "{junit}");
    // report.json keeps the name exact: JSON is for machines.
    let json = std::fs::read_to_string(d.join("h/report.json")).unwrap();
    assert!(json.contains('\u{202e}'));
}

#[test]
fn every_command_lists_its_exit_statuses_in_its_help() {
    let dir = tempfile::tempdir().unwrap();
    for (command, statuses) in [
        ("run", &["0", "1", "2", "128+n"][..]),
        ("replay", &["0", "1", "2", "128+n"]),
        ("selftest", &["0", "1", "2", "128+n"]),
        ("check", &["0", "1", "2", "128+n"]),
        ("certify", &["0", "1", "2", "128+n"]),
        ("coverage", &["0", "1", "2"]),
        ("diff", &["0", "1", "2"]),
        ("agent", &["0", "2", "128+n"]),
    ] {
        let o = run_in(dir.path(), &[command, "--help"]);
        assert_eq!(o.status.code(), Some(0));
        let help = stdout(&o);
        let listed = help
            .split_once("Exit status:\n")
            .unwrap_or_else(|| panic!("{command} --help: {help}"))
            .1;
        for s in statuses {
            assert!(
                listed
                    .lines()
                    .any(|l| l.trim_start().starts_with(&format!("{s} "))),
                "{command} --help lists status {s}: {listed}"
            );
        }
    }
}

#[test]
fn messages_name_invalid_utf8_and_an_unsupported_trace_format() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let o = common::run_with_stdin(&["check", "-"], b"{}\n\xff{\"tern\":\"0.1\"}\n");
    assert_eq!(o.status.code(), Some(1));
    let text = stdout(&o);
    assert!(
        text.contains("<stdin>:2:1: error[parse] at the top level: invalid UTF-8 at byte offset 0"),
        "{text}"
    );

    let trace = mutant_trace(d, "t");
    let text = std::fs::read_to_string(&trace).unwrap();
    let (header, rest) = text.split_once('\n').unwrap();
    let mut header: Value = serde_json::from_str(header).unwrap();
    header["tern_sim_trace"] = Value::from(2);
    std::fs::write(d.join("v2.jsonl"), format!("{header}\n{rest}")).unwrap();
    let o = run_in(d, &["replay", "v2.jsonl"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("trace format 2 is not supported: this tern-sim reads format 6"),
        "{}",
        stderr(&o)
    );
}

/// The README promises the nesting limit the code enforces, and the
/// profile states (P-JSON-6).
#[test]
fn the_readme_states_the_nesting_limit_the_code_enforces() {
    use tern_sim::model::wire::MAX_DEPTH;
    let root = env!("CARGO_MANIFEST_DIR");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let profile = std::fs::read_to_string(format!("{root}/docs/profile.md")).unwrap();
    let promise = format!("nesting deeper than {MAX_DEPTH} levels");
    assert!(readme.contains(&promise), "README: {promise}");
    assert!(profile.contains(&promise), "profile: {promise}");
    // The boundary itself, through the command line.
    let nested = |depth: usize| {
        format!(
            "{{\"tern\":\"0.1\",\"extensions\":{{\"n\":{}0{}}}}}\n",
            "[".repeat(depth - 2),
            "]".repeat(depth - 2)
        )
    };
    let o = common::run_with_stdin(
        &["check", "--format", "json", "-"],
        nested(MAX_DEPTH).as_bytes(),
    );
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_ne!(
        v["error"]["class"], "parse",
        "{MAX_DEPTH} levels are within the limit: {v}"
    );
    let o = common::run_with_stdin(
        &["check", "--format", "json", "-"],
        nested(MAX_DEPTH + 1).as_bytes(),
    );
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["error"]["class"], "parse", "{v}");
    assert_eq!(
        v["error"]["message"],
        format!("nesting deeper than {MAX_DEPTH} levels")
    );
}

/// When the reports cannot be written at the end (a full disk, here a
/// folder where report.json goes), certify says so and prints no verdict
/// that the folder does not hold.
#[test]
fn no_verdict_is_printed_without_its_reports() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("r/report.json")).unwrap();
    for format in ["human", "json"] {
        let o = run_in(
            dir.path(),
            &[
                "certify",
                "--only",
                "identity.",
                "--seeds",
                "1",
                "--no-explore",
                "--report-dir",
                "r",
                "--format",
                format,
            ],
        );
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("no verdict is given without its reports"),
            "{}",
            stderr(&o)
        );
        let out = stdout(&o);
        assert!(
            !out.contains("CERTIFIED") && !out.contains("\"implementations\""),
            "{format}: {out}"
        );
    }
}

/// Every option's range is checked before any work: an absurd soak is a
/// usage error at once, never a panic after the corpus.
#[test]
fn absurd_durations_are_usage_errors_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let agent = format!("{BIN} agent");
    for args in [
        vec!["run", "--duration", "500000000000y"],
        vec!["run", "--duration", "366days"],
        vec!["certify", "--impl", &agent, "--duration", "500000000000y"],
    ] {
        let o = run_in(dir.path(), &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("longer than a soak may last (at most 365 days)"),
            "{args:?}: {}",
            stderr(&o)
        );
        assert!(!stderr(&o).contains("panicked"), "{args:?}");
        assert!(o.stdout.is_empty(), "{args:?}: no work was started");
    }
}

/// A full state file system is the machine's fault, not the
/// implementation's: certify stops with status 2 and says so, and gives
/// no verdict. The small file system is a tmpfs mounted in a private
/// mount namespace (`unshare`, as root or with user namespaces).
#[test]
fn a_full_state_file_system_is_the_machines_fault() {
    let dir = tempfile::tempdir().unwrap();
    let fs = dir.path().join("fs");
    std::fs::create_dir(&fs).unwrap();
    let script = format!(
        "mount -t tmpfs -o size=1m tmpfs '{fs}' || exit 97\n\
         head -c 960k /dev/zero > '{fs}/fill'\n\
         TERN_SIM_STATE_DIR='{fs}' exec '{BIN}' certify --impl '{BIN} agent' --seeds 20 --no-explore --report-dir '{dir}/r'",
        fs = fs.display(),
        dir = dir.path().display(),
    );
    let o = Command::new("unshare")
        .args(["--map-root-user", "--mount", "sh", "-c", &script])
        .current_dir(dir.path())
        .output()
        .unwrap();
    if o.status.code() == Some(97) || stderr(&o).starts_with("unshare:") {
        // No way to mount a small file system here; CI runs as root, where
        // there is.
        eprintln!("skipped: cannot mount a tmpfs: {}", stderr(&o));
        return;
    }
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("state directories") && err.contains("is full"),
        "{err}"
    );
    assert!(err.contains("TERN_SIM_STATE_DIR"), "{err}");
    let out = stdout(&o);
    assert!(!out.contains("CERTIFIED"), "no verdict: {out}");
    assert!(!dir.path().join("r/report.json").exists());
}

/// Replay's memory is bounded: a trace longer than the longest run
/// tern-sim plays, or a line longer than any trace line, is refused
/// before any step is played; `--steps` has the same bound.
#[test]
fn replay_and_runs_are_bounded_in_length() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let header = r#"{"tern_sim_trace":6,"seed":1,"agents":3,"faults":"none","mix":{"talk":1023,"attacks":0,"crashes":false,"partitions":false}}"#;
    let mut long = format!("{header}\n");
    for n in 0..100_001 {
        long.push_str(&format!(
            "{{\"step\":{n},\"do\":{{\"wait\":{{\"ms\":1}}}}}}\n"
        ));
    }
    std::fs::write(d.join("long.jsonl"), long).unwrap();
    let o = run_in(d, &["replay", "long.jsonl"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("line 100002: more than 100000 steps"),
        "{}",
        stderr(&o)
    );
    std::fs::write(d.join("line.jsonl"), "a".repeat(5 << 20)).unwrap();
    let o = run_in(d, &["replay", "line.jsonl"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("line 1: a line longer than"),
        "{}",
        stderr(&o)
    );
    let big = format!(
        r#"{{"tern_sim_trace":6,"seed":1,"agents":3,"faults":"none","mix":{{"talk":1023,"attacks":0,"crashes":false,"partitions":false}},"original_steps":{}}}"#,
        u64::MAX
    );
    std::fs::write(d.join("claims.jsonl"), big).unwrap();
    let o = run_in(d, &["replay", "claims.jsonl"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("original_steps"), "{}", stderr(&o));
    for command in ["run", "certify", "selftest"] {
        let o = run_in(d, &[command, "--steps", "100001"]);
        assert_eq!(o.status.code(), Some(2), "{command}");
        assert!(
            stderr(&o).contains("at most 100000 steps per run"),
            "{command}"
        );
    }
}
