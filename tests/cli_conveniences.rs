//! `--color`, `--quiet`, `completions` and `man`: what people expect of a
//! command line.

mod common;

use std::process::{Command, Output};

use common::{stdout, BIN};

fn tern_sim(args: &[&str], env: &[(&str, &str)]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Command::new(BIN);
    c.args(args).current_dir(dir.path()).env_remove("NO_COLOR");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// A quick certification whose verdict line and tables can be coloured.
const CERTIFY: [&str; 7] = [
    "certify",
    "--only",
    "acts.ask-can",
    "--seeds",
    "0",
    "--no-explore",
    "--jobs",
];

fn certify(extra: &[&str], env: &[(&str, &str)]) -> Output {
    let mut a = CERTIFY.to_vec();
    a.push("1");
    a.extend(extra);
    tern_sim(&a, env)
}

#[test]
fn colour_is_asked_for_or_given_on_a_terminal_only_and_never_to_json_or_files() {
    let plain = certify(&[], &[]);
    assert!(!stdout(&plain).contains('\x1b'), "a pipe gets no colour");
    let coloured = certify(&["--color", "always"], &[]);
    let text = stdout(&coloured);
    assert!(
        text.contains("\x1b[1m\x1b[31m✘"),
        "the verdict is red: {text}"
    );
    assert!(
        text.contains("\x1b[1m│ seed section"),
        "the table header is bold"
    );
    // The same text once the colour is taken off.
    let stripped = text
        .replace("\x1b[1m\x1b[31m", "")
        .replace("\x1b[1m", "")
        .replace("\x1b[0m", "");
    assert_eq!(stripped, stdout(&plain));
    assert_eq!(coloured.status.code(), plain.status.code());
    let never = certify(&["--color", "never"], &[]);
    assert!(!stdout(&never).contains('\x1b'));
    // NO_COLOR only speaks for `auto`.
    let no_color = certify(&["--color", "auto"], &[("NO_COLOR", "1")]);
    assert!(!stdout(&no_color).contains('\x1b'));
    let json = certify(&["--color", "always", "--format", "json"], &[]);
    assert!(!stdout(&json).contains('\x1b'), "JSON is never coloured");
    serde_json::from_str::<serde_json::Value>(&stdout(&json)).unwrap();
    let bad = certify(&["--color", "sometimes"], &[]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn quiet_leaves_results_and_errors_and_drops_the_notes() {
    let loud = certify(&[], &[]);
    assert!(String::from_utf8_lossy(&loud.stderr).contains("corpus in"));
    let quiet = certify(&["--quiet"], &[]);
    assert!(
        quiet.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&quiet.stderr)
    );
    assert_eq!(stdout(&quiet), stdout(&loud));
    assert_eq!(quiet.status.code(), loud.status.code());
    // Errors still come through.
    let o = tern_sim(&["-q", "merge", "absent.json"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("absent.json: cannot read"));
}

#[test]
fn completion_scripts_and_manual_pages_name_every_command() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let o = tern_sim(&["completions", shell], &[]);
        assert_eq!(o.status.code(), Some(0), "{shell}");
        let script = stdout(&o);
        for command in ["certify", "merge", "explore", "shard", "color"] {
            assert!(script.contains(command), "{shell} completes {command}");
        }
    }
    assert_eq!(
        tern_sim(&["completions", "tcsh"], &[]).status.code(),
        Some(2)
    );
    let page = tern_sim(&["man"], &[]);
    assert_eq!(page.status.code(), Some(0));
    let page = stdout(&page);
    assert!(page.contains(".TH tern-sim 1"), "a roff page");
    assert!(page.contains("merge") && page.contains("certify"));
    let page = stdout(&tern_sim(&["man", "certify"], &[]));
    assert!(
        page.contains(".TH tern-sim-certify 1"),
        "{}",
        &page[..200.min(page.len())]
    );
    assert!(page.contains("shard") && page.contains("duration"));
    let unknown = tern_sim(&["man", "certfy"], &[]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no command `certfy`"));
}

/// A CI log is not a terminal: no bar is drawn there, but a plain line says
/// how far the work is, now and then, and it never reaches standard output.
#[test]
fn a_log_gets_plain_progress_lines_and_a_quiet_or_json_run_none() {
    let every = [("TERN_SIM_PROGRESS_EVERY", "20ms")];
    let args = [
        "run", "--seeds", "12", "--faults", "--seed", "3", "--jobs", "1",
    ];
    let logged = tern_sim(&args, &every);
    assert_eq!(logged.status.code(), Some(0));
    let log = String::from_utf8_lossy(&logged.stderr);
    let lines: Vec<&str> = log
        .lines()
        .filter(|l| l.starts_with("progress: "))
        .collect();
    assert!(!lines.is_empty(), "no progress line in:\n{log}");
    assert!(
        lines.iter().all(|l| l.contains("/12 done in ")),
        "lines without the count of runs:\n{log}"
    );
    assert!(
        !log.contains('\r') && !log.contains('\u{1b}'),
        "redraws in a log:\n{log}"
    );
    let unwatched = tern_sim(&args, &[]);
    assert_eq!(stdout(&logged), stdout(&unwatched));

    let mut quiet = vec!["--quiet"];
    quiet.extend(args);
    let quiet = tern_sim(&quiet, &every);
    assert!(
        quiet.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&quiet.stderr)
    );

    let mut json = args.to_vec();
    json.extend(["--format", "json"]);
    let json = tern_sim(&json, &every);
    assert!(
        !String::from_utf8_lossy(&json.stderr).contains("progress: "),
        "progress beside JSON"
    );
}
