//! What certify gives for publishing: summary.md, badge.json and
//! badge.svg in every report folder, the Markdown summary appended to a
//! GitHub Actions job's summary, and failures as workflow annotations.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::{stdout, BIN};
use serde_json::Value;

/// Runs certify in `dir` as a GitHub Actions step would, with the job's
/// summary file `summary` and annotations on (`actions`).
fn certify_in_actions(dir: &Path, summary: Option<&Path>, actions: bool, args: &[&str]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.arg("certify")
        .args(args)
        .current_dir(dir)
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_ACTIONS");
    if let Some(s) = summary {
        cmd.env("GITHUB_STEP_SUMMARY", s);
    }
    if actions {
        cmd.env("GITHUB_ACTIONS", "true");
    }
    cmd.output().expect("tern-sim starts")
}

fn read(dir: &Path, file: &str) -> String {
    std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// The Markdown left once every code span is taken out: what a page
/// renders as Markdown rather than as text. Valid for spans fenced by
/// single backticks, which text without backticks gets.
fn outside_code(md: &str) -> String {
    md.split('`').step_by(2).collect()
}

/// The badge states the level report.json records, with the versions.
fn check_badges(folder: &Path) {
    let report: Value = serde_json::from_str(&read(folder, "report.json")).unwrap();
    let level = report["implementations"][0]["verdict"]["level"]
        .as_str()
        .unwrap_or("not certified");
    let badge: Value = serde_json::from_str(&read(folder, "badge.json")).unwrap();
    let keys: Vec<&String> = badge.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["color", "label", "message", "schemaVersion"]);
    assert_eq!(badge["schemaVersion"], 1);
    assert_eq!(badge["label"], "tern 0.1");
    let hash = report["corpus"]["hash"].as_str().unwrap();
    let message = format!(
        "{level} · tern-sim {} · corpus {}",
        report["tern_sim_version"].as_str().unwrap(),
        &hash[..12]
    );
    assert_eq!(badge["message"], message.as_str());
    let color = match level {
        "profile" => "brightgreen",
        "core" => "green",
        _ => "red",
    };
    assert_eq!(badge["color"], color);
    let svg = read(folder, "badge.svg");
    assert!(
        svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""),
        "{svg}"
    );
    assert!(svg.trim_end().ends_with("</svg>"), "{svg}");
    assert!(svg.contains(&format!(">{message}</text>")), "{svg}");
}

#[test]
fn a_passing_and_a_failing_certification_publish_their_summary_badges_and_annotations() {
    let dir = tempfile::tempdir().unwrap();
    let job_summary = dir.path().join("step-summary.md");
    std::fs::write(&job_summary, "# an earlier step\n").unwrap();

    let pass = certify_in_actions(
        dir.path(),
        Some(&job_summary),
        true,
        &["--seeds", "0", "--no-explore", "--report-dir", "pass"],
    );
    assert_eq!(pass.status.code(), Some(0), "{}", stdout(&pass));
    assert!(!stdout(&pass).contains("::error"), "{}", stdout(&pass));
    let md = read(&dir.path().join("pass"), "summary.md");
    assert!(
        md.starts_with("## Tern 0.1 certification: 1 of 1 certified at `profile`\n"),
        "{md}"
    );
    assert!(
        md.contains("### `reference` ✔ certified at `profile`"),
        "{md}"
    );
    assert!(md.contains("- level certified: `profile`"), "{md}");
    assert!(!md.contains("Failing cases"), "{md}");
    check_badges(&dir.path().join("pass"));

    let fail = certify_in_actions(
        dir.path(),
        Some(&job_summary),
        true,
        &[
            "--mutant",
            "trusts-from",
            "--seeds",
            "0",
            "--no-explore",
            "--report-dir",
            "fail",
        ],
    );
    assert_eq!(fail.status.code(), Some(1), "{}", stdout(&fail));
    let folder = dir.path().join("fail");
    let md = read(&folder, "summary.md");
    let report: Value = serde_json::from_str(&read(&folder, "report.json")).unwrap();
    let failing: Vec<&Value> = report["implementations"][0]["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "fail")
        .collect();
    assert!(!failing.is_empty());
    assert!(
        md.contains("### `trusts-from` ✘ not certified at `profile`"),
        "{md}"
    );
    assert!(
        md.contains(&format!("Failing cases ({}):", failing.len())),
        "{md}"
    );
    let first = &failing[0];
    assert!(
        md.contains(&format!("- `{}`", first["id"].as_str().unwrap())),
        "{md}"
    );
    let reproduce = first["failure"]["reproduce"].as_str().unwrap();
    assert!(md.contains(&format!("reproduce: `{reproduce}`")), "{md}");
    let clause = first["clauses"][0]["id"].as_str().unwrap();
    assert!(md.contains("- clauses broken ("), "{md}");
    assert!(md.contains(&format!("`{clause}`")), "{md}");
    if failing.len() > 10 {
        assert!(
            md.contains(&format!("- and {} more", failing.len() - 10)),
            "{md}"
        );
    }
    check_badges(&folder);
    // One annotation a failing case, up to ten, titled by its clause.
    let printed = stdout(&fail);
    let annotations: Vec<&str> = printed
        .lines()
        .filter(|l| l.starts_with("::error "))
        .collect();
    assert_eq!(
        annotations.iter().filter(|l| l.contains("::case ")).count(),
        failing.len().min(10),
        "{annotations:?}"
    );
    assert!(
        annotations[0].starts_with(&format!(
            "::error title={clause}::case {}",
            first["id"].as_str().unwrap()
        )),
        "{annotations:?}"
    );

    // The job's summary keeps what was there and gains both, in order.
    let job = std::fs::read_to_string(&job_summary).unwrap();
    assert!(job.starts_with("# an earlier step\n"), "{job}");
    let first_at = job.find("1 of 1 certified").expect("the passing summary");
    let second_at = job.find("0 of 1 certified").expect("the failing summary");
    assert!(first_at < second_at, "{job}");
}

/// An implementation's label is text, whatever it holds: no Markdown in
/// summary.md, no workflow command or broken annotation on stdout.
#[test]
fn a_hostile_label_stays_text_in_the_summary_and_the_annotations() {
    let dir = tempfile::tempdir().unwrap();
    let hostile =
        "sh -c 'exit 3' # [pwn](https://x.invalid) <b>bold</b> @all 100%0A::warning::forged";
    let out = certify_in_actions(
        dir.path(),
        None,
        true,
        &[
            "--impl",
            hostile,
            "--only",
            "body.unknown-field",
            "--seeds",
            "0",
            "--report-dir",
            "r",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let md = read(&dir.path().join("r"), "summary.md");
    assert!(md.contains(&format!("### `{hostile}` ✘")), "{md}");
    let rendered = outside_code(&md);
    for markup in ["[pwn]", "<b>", "@all", "https://"] {
        assert!(
            !rendered.contains(markup),
            "{markup} outside a code span: {md}"
        );
    }
    let text = stdout(&out);
    assert!(text.contains("::error title="), "{text}");
    assert!(
        !text.lines().any(|l| l.starts_with("::warning")),
        "a forged command: {text}"
    );
    assert!(text.contains("100%250A::warning::forged"), "{text}");

    // Outside GitHub Actions, no annotation.
    let quiet = certify_in_actions(
        dir.path(),
        None,
        false,
        &[
            "--impl",
            hostile,
            "--only",
            "body.unknown-field",
            "--seeds",
            "0",
            "--report-dir",
            "r2",
        ],
    );
    assert_eq!(quiet.status.code(), Some(1));
    assert!(!stdout(&quiet).contains("::error"), "{}", stdout(&quiet));
}

/// A job summary that cannot be written is a warning: the certification
/// and its exit status stand.
#[test]
fn an_unwritable_job_summary_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let nowhere = dir.path().join("no-such-folder/summary.md");
    let out = certify_in_actions(
        dir.path(),
        Some(&nowhere),
        false,
        &[
            "--only",
            "body.unknown-field",
            "--seeds",
            "0",
            "--no-explore",
            "--report-dir",
            "r",
        ],
    );
    // A partial run: status 1, as without the summary.
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning: cannot append the summary to GITHUB_STEP_SUMMARY"),
        "{err}"
    );
    assert!(dir.path().join("r/summary.md").is_file());
}
