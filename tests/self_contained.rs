//! The tern-sim binary needs nothing of its source tree at run time: the
//! corpus is built into it. A copy run elsewhere (and, where the system
//! lets a test hide the source tree, run with it hidden) certifies with
//! the built-in corpus and writes the very report a run on the source
//! folder writes; `--scenarios` still puts another corpus in its place.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{stdout, BIN};
use serde_json::Value;

const SOURCE: &str = env!("CARGO_MANIFEST_DIR");

/// A cheap certification: a few corpus cases, no simulation, no
/// exploration.
const CHEAP: [&str; 7] = [
    "certify",
    "--only",
    "body.unknown-field",
    "--seeds",
    "0",
    "--no-explore",
    "--report-dir",
];

/// A copy of the built binary alone in a fresh folder.
fn copied_binary(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let copy = bin.join("tern-sim");
    std::fs::copy(BIN, &copy).unwrap();
    copy
}

/// Runs a freshly copied binary. While the copy was being written, another
/// test thread may have forked a child that holds the copy's file open
/// until it execs (the descriptor closes on exec): executing the copy
/// meanwhile fails with "text file busy". That window is brief, so the
/// run is tried again, a few times.
fn run_copy(command: &mut Command) -> Output {
    for _ in 0..100 {
        match command.output() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            result => return result.expect("the copied binary runs"),
        }
    }
    panic!("the copied binary stayed busy for 2 s")
}

fn report_bytes(dir: &Path) -> Vec<u8> {
    std::fs::read(dir.join("report.json")).expect("report.json written")
}

/// Runs `bin` in `cwd` with the source tree hidden behind an empty file
/// system, in a mount namespace of its own. None where the system does
/// not allow one (no `unshare`, no user namespaces).
fn with_source_hidden(bin: &Path, cwd: &Path, args: &[&str]) -> Option<Output> {
    // Status 99: the source tree could not be hidden, so nothing is known.
    let script = r#"mount -t tmpfs tmpfs "$0" 2>/dev/null && test ! -e "$0/scenarios" || exit 99; exec "$@""#;
    let out = Command::new("unshare")
        .args(["--map-root-user", "--mount", "sh", "-c", script, SOURCE])
        .arg(bin)
        .args(args)
        .current_dir(cwd)
        .output()
        .ok()?;
    match out.status.code() {
        Some(99) | None => None,
        // unshare itself refused (no user namespaces here).
        Some(_) if String::from_utf8_lossy(&out.stderr).starts_with("unshare:") => None,
        Some(_) => Some(out),
    }
}

#[test]
fn a_copied_binary_certifies_with_its_built_in_corpus() {
    let dir = tempfile::tempdir().unwrap();
    let bin = copied_binary(dir.path());
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let args: Vec<&str> = CHEAP.iter().copied().chain(["builtin"]).collect();
    let out = run_copy(Command::new(&bin).args(&args).current_dir(&work));
    // A partial run (--only) never certifies: status 1, with the reports.
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}{}",
        stdout(&out),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout(&out).contains("(built in)"), "{}", stdout(&out));

    // The same certification over the source folder gives the same bytes:
    // the built-in corpus is that folder, hash and all.
    let from_source = format!("{SOURCE}/scenarios");
    let folder_args: Vec<&str> = CHEAP
        .iter()
        .copied()
        .chain(["folder", "--scenarios", &from_source])
        .collect();
    let out = run_copy(Command::new(&bin).args(&folder_args).current_dir(&work));
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("(from "), "{}", stdout(&out));
    assert_eq!(
        report_bytes(&work.join("builtin")),
        report_bytes(&work.join("folder"))
    );
    let r: Value = serde_json::from_slice(&report_bytes(&work.join("builtin"))).unwrap();
    assert_eq!(r["implementations"][0]["cases"][0]["status"], "pass");

    // Where the source tree can be hidden, it is not needed.
    let hidden_args: Vec<&str> = CHEAP.iter().copied().chain(["hidden"]).collect();
    match with_source_hidden(&bin, &work, &hidden_args) {
        Some(out) => {
            assert_eq!(
                out.status.code(),
                Some(1),
                "{}{}",
                stdout(&out),
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(
                report_bytes(&work.join("builtin")),
                report_bytes(&work.join("hidden"))
            );
        }
        None => eprintln!("note: no mount namespace here; the source tree was not hidden"),
    }
}

/// Copies the source corpus into `to`.
fn copy_corpus(to: &Path) {
    let from = Path::new(SOURCE).join("scenarios");
    std::fs::create_dir_all(to).unwrap();
    std::fs::copy(from.join("clauses.json"), to.join("clauses.json")).unwrap();
    for section in std::fs::read_dir(&from).unwrap() {
        let section = section.unwrap().path();
        if !section.is_dir() {
            continue;
        }
        let target = to.join(section.file_name().unwrap());
        std::fs::create_dir_all(&target).unwrap();
        for case in std::fs::read_dir(&section).unwrap() {
            let case = case.unwrap().path();
            std::fs::copy(&case, target.join(case.file_name().unwrap())).unwrap();
        }
    }
}

#[test]
fn scenarios_still_overrides_the_built_in_corpus() {
    let dir = tempfile::tempdir().unwrap();
    let mine = dir.path().join("mine");
    copy_corpus(&mine);
    let case = mine.join("s1-encoding/body.unknown-field-rejected.json");
    let text = std::fs::read_to_string(&case).unwrap();
    let edited = text.replacen(
        "\"title\": \"A body field",
        "\"title\": \"Edited: a body field",
        1,
    );
    assert_ne!(
        text, edited,
        "the case's title is where the test expects it"
    );
    std::fs::write(&case, edited).unwrap();
    let run = |extra: &[&str], report: &str| {
        let mut args: Vec<&str> = CHEAP.to_vec();
        args.push(report);
        args.extend(extra);
        common::run_in(dir.path(), &args)
    };
    let builtin = run(&[], "builtin");
    let edited = run(&["--scenarios", "mine"], "edited");
    assert_eq!(edited.status.code(), Some(1), "{}", stdout(&edited));
    assert!(
        stdout(&edited).contains("(from mine)"),
        "{}",
        stdout(&edited)
    );
    let read = |name: &str| -> Value {
        serde_json::from_slice(&report_bytes(&dir.path().join(name))).unwrap()
    };
    let (b, e) = (read("builtin"), read("edited"));
    assert_ne!(b["corpus"]["hash"], e["corpus"]["hash"]);
    assert!(e["implementations"][0]["cases"][0]["title"]
        .as_str()
        .unwrap()
        .starts_with("Edited:"));
    assert!(!stdout(&builtin).contains("(from"));

    // A broken file in the given corpus is an error naming it, never a
    // silent fall back to the built-in corpus.
    std::fs::write(&case, "{ not json").unwrap();
    let broken = run(&["--scenarios", "mine"], "broken");
    assert_eq!(broken.status.code(), Some(2));
    let err = String::from_utf8_lossy(&broken.stderr);
    assert!(
        err.contains("mine/s1-encoding/body.unknown-field-rejected.json"),
        "{err}"
    );
}
