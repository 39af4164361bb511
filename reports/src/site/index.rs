//! `index.html`: a row per implementation and version, grouped by
//! implementation, each version oldest first, with the level it reached
//! and a link to its full report. The reader starts here to see who is
//! where, then follows a row to its report or its history.

use std::collections::BTreeSet;
use std::fmt::Write;

use super::model::{verdict_text, Entry, Site};
use super::page::{level_badge, page};
use crate::certify::diagram::esc;

/// The link from the site's root to `entry`'s report page.
pub fn report_link(site: &Site, entry: &Entry) -> String {
    format!("{}/report.html", site.source(entry).folder)
}

pub fn render(site: &Site) -> String {
    let mut body = String::new();
    let corpora: BTreeSet<&str> = site
        .sources
        .iter()
        .map(|s| s.report.corpus.hash.as_str())
        .collect();
    let _ = write!(
        body,
        r#"<p class="meta">{} report(s), {} implementation(s), {} version(s). A report holds no date, so each implementation's versions are listed in the order the reports were given, oldest first.{}</p>"#,
        site.sources.len(),
        site.implementations.len(),
        site.entries.len(),
        if corpora.len() > 1 {
            format!(
                " These reports ran {} different corpora: a clause's results compare only between reports of the same corpus.",
                corpora.len()
            )
        } else {
            String::new()
        }
    );
    body.push_str(r#"<div class="scroll"><table class="index"><tr><th>Implementation</th><th>Version</th><th>Level certified</th><th>At the level asked</th><th>Failing cases</th><th>Broken clauses</th><th>Simulation</th><th>Exploration</th><th>tern-sim</th><th>Corpus</th><th>Report</th></tr>"#);
    for implementation in &site.implementations {
        let history = site.history(implementation);
        for (n, entry) in history.iter().enumerate() {
            body.push_str("<tr>");
            if n == 0 {
                let _ = write!(
                    body,
                    r#"<td class="name" rowspan="{}"><a href="implementations/{}.html">{}</a></td>"#,
                    history.len(),
                    esc(&implementation.slug),
                    esc(&implementation.name)
                );
            }
            row(&mut body, site, entry);
            body.push_str("</tr>");
        }
    }
    body.push_str("</table></div>");
    body.push_str(r#"<p><a href="matrix.html">The clause matrix</a>: every clause of the corpus, and each implementation and version's result on it.</p>"#);
    page(
        "Tern 0.1 conformance: implementations and versions",
        "",
        &body,
    )
}

fn row(body: &mut String, site: &Site, entry: &Entry) {
    let source = site.source(entry);
    let report = source.report;
    let mut level = level_badge(entry.level);
    if report.interrupted {
        level.push_str(r#" <span class="na">(interrupted)</span>"#);
    } else if report.corpus.filter.is_some() {
        level.push_str(r#" <span class="na">(partial run)</span>"#);
    }
    let _ = write!(
        body,
        r#"<td><code>{}</code></td><td>{level}</td><td class="{}">{} <code>{}</code></td><td class="n{}">{}</td><td class="n{}">{}</td><td class="{}">{}</td><td class="{}">{}</td><td>{}</td><td><code title="{}">{}</code></td><td class="src"><a href="{}">report</a><br><span class="meta">{}</span></td>"#,
        esc(&entry.version),
        if entry.certified { "pass" } else { "fail" },
        if entry.certified {
            "✔ certified at"
        } else {
            "✘ not certified at"
        },
        esc(report.level_requested.as_str()),
        if entry.failing_cases > 0 { " fail" } else { "" },
        entry.failing_cases,
        if entry.broken_clauses.is_empty() {
            ""
        } else {
            " fail"
        },
        entry.broken_clauses.len(),
        verdict_class(entry.simulation),
        verdict_text(entry.simulation),
        verdict_class(entry.exploration),
        verdict_text(entry.exploration),
        esc(&report.tern_sim_version),
        esc(&report.corpus.hash),
        esc(report.corpus.version()),
        esc(&report_link(site, entry)),
        esc(source.path),
    );
}

/// The class that colours a verdict: a violation or two answers to one
/// request in red, what did not run muted.
pub fn verdict_class(v: Option<tern_harness::certify::SimVerdict>) -> &'static str {
    use tern_harness::certify::SimVerdict;
    match v {
        Some(SimVerdict::Clean) => "pass",
        Some(SimVerdict::Violation | SimVerdict::Nondeterministic) => "fail",
        _ => "na",
    }
}
