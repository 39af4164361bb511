//! What certify adds when it runs as a step of a GitHub Actions job: its
//! Markdown summary appended to the job's summary page
//! (`GITHUB_STEP_SUMMARY`), and its failures as annotations
//! (`GITHUB_ACTIONS=true`). Neither can change the verdict or the exit
//! status: the reports are already written when they run.

use std::io::Write;

use tern_reports::certify::{annotations, Report};
use tern_reports::escape;

/// Appends `markdown` to the file `GITHUB_STEP_SUMMARY` names, when it
/// names one. Other steps write the same file, so it is never truncated;
/// a file that cannot be written is a warning, not a failed certification.
pub fn append_step_summary(markdown: &str) {
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) else {
        return;
    };
    let appended = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| {
            // A blank line first, so the summary starts a block of its own
            // after whatever an earlier step wrote.
            f.write_all(b"\n")?;
            f.write_all(markdown.as_bytes())
        });
    if let Err(e) = appended {
        errln!(
            "tern-sim certify: warning: cannot append the summary to GITHUB_STEP_SUMMARY ({}): {e}",
            escape::terminal(&path.to_string_lossy())
        );
    }
}

/// Whether certify runs in a GitHub Actions job.
pub fn in_actions() -> bool {
    std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true")
}

/// The annotations for `report`'s failures, one workflow command a line.
pub fn annotation_lines(report: &Report) -> String {
    annotations::render(report)
        .into_iter()
        .map(|line| line + "\n")
        .collect()
}
