//! `implementations/NAME.html`: one implementation across its versions,
//! oldest first, and what changed from each version to the next, told as
//! `certify --baseline` tells it (New, Resolved), so that a vendor sees
//! when a defect came and when it went.

use std::fmt::Write;

use super::index::{report_link, verdict_class};
use super::model::{verdict_text, Entry, Implementation, Site};
use super::page::{level_badge, page};
use crate::certify::baseline::ImplChanges;
use crate::certify::diagram::esc;

/// The page's path from the site's root.
pub fn path(implementation: &Implementation) -> String {
    format!("implementations/{}.html", implementation.slug)
}

pub fn render(site: &Site, implementation: &Implementation) -> String {
    let history = site.history(implementation);
    let mut body = String::new();
    let _ = write!(
        body,
        r#"<p class="meta">{} version(s), in the order their reports were given.</p><div class="scroll"><table><tr><th>Version</th><th>Level certified</th><th>At the level asked</th><th>Failing cases</th><th>Broken clauses</th><th>Simulation</th><th>Exploration</th><th>tern-sim</th><th>Corpus</th><th>Report</th></tr>"#,
        history.len()
    );
    for entry in &history {
        let report = site.source(entry).report;
        let _ = write!(
            body,
            r#"<tr><td><code>{}</code></td><td>{}</td><td class="{}">{} <code>{}</code></td><td class="n">{}</td><td class="n">{}</td><td class="{}">{}</td><td class="{}">{}</td><td>{}</td><td><code title="{}">{}</code></td><td><a href="../{}">report</a></td></tr>"#,
            esc(&entry.version),
            level_badge(entry.level),
            if entry.certified { "pass" } else { "fail" },
            if entry.certified { "✔" } else { "✘" },
            esc(report.level_requested.as_str()),
            entry.failing_cases,
            entry.broken_clauses.len(),
            verdict_class(entry.simulation),
            verdict_text(entry.simulation),
            verdict_class(entry.exploration),
            verdict_text(entry.exploration),
            esc(&report.tern_sim_version),
            esc(&report.corpus.hash),
            esc(report.corpus.version()),
            esc(&report_link(site, entry)),
        );
    }
    body.push_str("</table></div><h2>From version to version</h2>");
    for (step, entry) in history.iter().enumerate() {
        match (
            step.checked_sub(1).map(|b| history[b]),
            site.changes(implementation, step),
        ) {
            (Some(before), Some(changes)) => {
                transition(&mut body, site, before, entry, &changes);
            }
            _ => first(&mut body, site, entry),
        }
    }
    page(&implementation.name, "../", &body)
}

/// The first version: what failed there, since nothing came before.
fn first(body: &mut String, site: &Site, entry: &Entry) {
    let _ = write!(
        body,
        r#"<h3><code>{}</code> (first)</h3><ul class="changes"><li>{} failing case(s){}</li><li>{} broken clause(s){}</li></ul>"#,
        esc(&entry.version),
        entry.failing_cases,
        listed(
            &entry
                .imp
                .cases
                .iter()
                .filter(|c| c.failed())
                .map(|c| case_link(site, entry, &c.id))
                .collect::<Vec<_>>()
        ),
        entry.broken_clauses.len(),
        listed(
            &entry
                .broken_clauses
                .iter()
                .map(|c| clause_link(c))
                .collect::<Vec<_>>()
        ),
    );
}

/// From `before` to `after`: New and Resolved cases and clauses, and how
/// many failures go on.
fn transition(body: &mut String, site: &Site, before: &Entry, after: &Entry, c: &ImplChanges) {
    let _ = write!(
        body,
        r#"<h3><code>{}</code> → <code>{}</code></h3><ul class="changes">"#,
        esc(&before.version),
        esc(&after.version)
    );
    let (old, new) = (site.source(before).report, site.source(after).report);
    if old.corpus.hash != new.corpus.hash {
        let _ = write!(
            body,
            r#"<li class="na">The corpus changed ({} → {}): cases may have changed, so New and Resolved may come from the corpus rather than the implementation.</li>"#,
            esc(old.corpus.version()),
            esc(new.corpus.version())
        );
    }
    let cases = |ids: &[String], entry: &Entry| -> Vec<String> {
        ids.iter().map(|id| case_link(site, entry, id)).collect()
    };
    let clauses =
        |ids: &[String]| -> Vec<String> { ids.iter().map(|id| clause_link(id)).collect() };
    let lines = [
        ("fail", "new failing case(s)", cases(&c.cases.new, after)),
        (
            "pass",
            "resolved case(s)",
            c.cases
                .resolved
                .iter()
                .map(|id| case_link(site, before, id))
                .collect(),
        ),
        (
            "na",
            "case(s) still failing",
            cases(&c.cases.ongoing, after),
        ),
        ("fail", "newly broken clause(s)", clauses(&c.clauses.new)),
        ("pass", "resolved clause(s)", clauses(&c.clauses.resolved)),
        ("na", "clause(s) still broken", clauses(&c.clauses.ongoing)),
    ];
    let mut any = false;
    for (class, what, ids) in lines {
        if ids.is_empty() {
            continue;
        }
        any = true;
        let _ = write!(
            body,
            r#"<li><span class="{class}">{} {what}</span>{}</li>"#,
            ids.len(),
            listed(&ids)
        );
    }
    if !any {
        body.push_str(r#"<li class="na">Nothing failed in either version.</li>"#);
    }
    body.push_str("</ul>");
}

/// `links` after a colon, or nothing.
fn listed(links: &[String]) -> String {
    if links.is_empty() {
        String::new()
    } else {
        format!(": {}", links.join(", "))
    }
}

/// A case, linked to its failure in `entry`'s report page.
fn case_link(site: &Site, entry: &Entry, id: &str) -> String {
    format!(
        r##"<a href="../{}#{}-{}"><code>{}</code></a>"##,
        esc(&report_link(site, entry)),
        esc(&entry.imp.label_anchor()),
        esc(id),
        esc(id)
    )
}

/// A clause, linked to its row of the matrix.
fn clause_link(id: &str) -> String {
    format!(
        r##"<a href="../matrix.html#{}"><code>{}</code></a>"##,
        esc(id),
        esc(id)
    )
}
