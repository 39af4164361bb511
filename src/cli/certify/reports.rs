//! The end of a certification: every report written atomically into the
//! report folder, and only then the verdict printed, with what a GitHub
//! Actions job shows. Shared with `tern-sim merge`, which publishes a
//! merged report the same way.

use std::path::Path;

use tern_harness::implementations::adapter::interrupted;
use tern_reports::certify::badge::Badge;
use tern_reports::certify::{html, junit, latency, markdown, terminal, write, Report};
use tern_reports::escape;

use crate::cli::{github, Exit};

/// Writes the reports and prints the summary (or report.json), then what
/// a GitHub Actions job shows (src/cli/github.rs); the status is the
/// verdict's. `merge` publishes a merged report the same way.
pub fn publish(report: &Report, report_dir: &Path, human: bool) -> Exit {
    let mut report = report.clone();
    for imp in &mut report.implementations {
        imp.locate_files(report_dir);
    }
    let report = &report;
    let summary = terminal::summary(report);
    let json = report.to_json();
    let junit = match junit::render(report) {
        Ok(x) => x,
        Err(e) => {
            errln!("tern-sim certify: cannot render junit.xml: {e}");
            return Exit::Trouble;
        }
    };
    let page = html::render(report);
    let markdown = markdown::render(report);
    let badge = Badge::of(report);
    let (badge_json, badge_svg) = (badge.to_json(), badge.to_svg());
    let mut files: Vec<(&str, &[u8])> = vec![
        ("report.json", json.as_bytes()),
        ("junit.xml", junit.as_bytes()),
        ("report.html", page.as_bytes()),
        ("summary.txt", summary.as_bytes()),
        ("summary.md", markdown.as_bytes()),
        ("badge.json", badge_json.as_bytes()),
        ("badge.svg", badge_svg.as_bytes()),
    ];
    // Times vary from run to run: they go to a file of their own, so
    // that every other report stays the same bytes for the same seed.
    let latency = report.latency.as_ref().map(|l| l.to_json());
    if let Some(l) = &latency {
        files.push(("latency.json", l.as_bytes()));
    }
    files.extend(
        report
            .attachments
            .iter()
            .map(|(path, text)| (path.as_str(), text.as_bytes())),
    );
    // The verdict is printed only once the reports that hold it are in
    // place: a verdict on the terminal that the folder does not hold
    // would be one nobody can publish or check.
    let names: Vec<&str> = files.iter().map(|(name, _)| *name).collect();
    if let Err(e) =
        write::write_all(report_dir, &files).and_then(|_| write::clear_stale(report_dir, &names))
    {
        errln!(
            "tern-sim certify: {}; no verdict is given without its reports",
            escape::terminal(&e.to_string())
        );
        return Exit::Trouble;
    }
    // An earlier run's times beside this run's reports would be read as
    // this implementation's.
    if latency.is_none() {
        if let Err(e) = remove_stale(&report_dir.join("latency.json")) {
            errln!(
                "tern-sim certify: {}; no verdict is given without its reports",
                escape::terminal(&e.to_string())
            );
            return Exit::Trouble;
        }
    }
    github::append_step_summary(&markdown);
    // Annotations go where GitHub reads workflow commands, standard
    // output, except under --format json, whose standard output is
    // report.json alone; GitHub reads standard error as well.
    let annotations = if github::in_actions() {
        github::annotation_lines(report)
    } else {
        String::new()
    };
    if human {
        out!("{summary}");
        if let Some(l) = &report.latency {
            out!("{}", latency::text(l));
        }
        outln!(
            "reports: {}/{{report.json, junit.xml, report.html, summary.txt, summary.md, badge.json, badge.svg{}}}",
            report_dir.display(),
            if latency.is_some() { ", latency.json" } else { "" }
        );
        out!("{annotations}");
    } else {
        out!("{json}");
        crate::cli::output::err(format_args!("{annotations}"));
    }
    if let Some(signal) = interrupted() {
        errln!("tern-sim certify: interrupted by signal {signal}; the reports cover what ran");
        return Exit::Interrupted(signal);
    }
    if report.all_certified() {
        Exit::Ok
    } else {
        Exit::Violation
    }
}

/// Removes `path` if it is there.
fn remove_stale(path: &Path) -> Result<(), write::WriteError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(write::WriteError {
            path: path.to_path_buf(),
            source: e,
        }),
        _ => Ok(()),
    }
}
