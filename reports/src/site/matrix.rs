//! `matrix.html`: every clause against every implementation and version,
//! side by side, so that a reader sees at once which clause one
//! implementation breaks and the others keep, and when a version broke or
//! mended it. A failing cell links to the failure in that report's page.

use std::fmt::Write;

use super::index::report_link;
use super::model::{Cell, Entry, Site};
use super::page::page;
use crate::certify::diagram::esc;
use crate::certify::section_title;

pub fn render(site: &Site) -> String {
    let columns = site.columns();
    let mut body = String::new();
    body.push_str(r#"<p class="meta">Rows are the clauses of the corpus, columns each implementation and version (oldest first). <span class="fail">✘ N</span>: N failing cases cite the clause (the link opens the first); <span class="fail">✘ run</span>: the simulation's or the exploration's violation breaks it; <span class="pass">✔</span>: every case citing it that ran passed; <span class="na">n/a</span>: those cases need a capability not claimed; <span class="na">not run</span>: no case citing it ran; <span class="na">—</span>: not a clause of that report's corpus.</p>"#);
    broken_summary(&mut body, site, &columns);
    body.push_str(r#"<div class="scroll"><table class="matrix"><tr><th class="clause" rowspan="2">Clause</th>"#);
    for implementation in &site.implementations {
        let _ = write!(
            body,
            r#"<th class="impl" colspan="{}"><a href="implementations/{}.html">{}</a></th>"#,
            implementation.entries.len(),
            esc(&implementation.slug),
            esc(&implementation.name)
        );
    }
    body.push_str("</tr><tr>");
    for entry in &columns {
        let _ = write!(
            body,
            r#"<th><a href="{}">{}</a></th>"#,
            esc(&report_link(site, entry)),
            esc(&entry.version)
        );
    }
    body.push_str("</tr>");
    let mut section = None;
    for clause in &site.clauses {
        if section != Some(clause.section) {
            section = Some(clause.section);
            let _ = write!(
                body,
                r#"<tr class="section"><td colspan="{}">{}</td></tr>"#,
                columns.len() + 1,
                esc(section_title(clause.section))
            );
        }
        let _ = write!(
            body,
            r#"<tr id="{}"><td class="clause"><code>{}</code><small>{}</small></td>"#,
            esc(&clause.id),
            esc(&clause.id),
            esc(&clause.sentence)
        );
        for entry in &columns {
            cell(&mut body, site, entry, &clause.id);
        }
        body.push_str("</tr>");
    }
    body.push_str("</table></div>");
    page("Tern 0.1 conformance: clause matrix", "", &body)
}

fn cell(body: &mut String, site: &Site, entry: &Entry, clause: &str) {
    let who = entry.title();
    let (class, title, text) = match site.cell(entry, clause) {
        Cell::Broken { cases, by_run } => {
            let page = report_link(site, entry);
            let anchor = entry.imp.label_anchor();
            let mut broken_by: Vec<String> = cases.iter().map(|c| (*c).to_owned()).collect();
            if by_run {
                broken_by.push("a violation found by a run".to_owned());
            }
            let text = match cases.first() {
                Some(first) => format!(
                    r##"<a href="{}#{}-{}">✘ {}</a>"##,
                    esc(&page),
                    esc(&anchor),
                    esc(first),
                    cases.len()
                ),
                None => {
                    let by_simulation = entry
                        .imp
                        .simulation
                        .violation
                        .iter()
                        .any(|v| v.clauses.iter().any(|c| c.id == clause));
                    let part = if by_simulation {
                        "simulation"
                    } else {
                        "exploration"
                    };
                    format!(
                        r##"<a href="{}#{}-{part}">✘ run</a>"##,
                        esc(&page),
                        esc(&anchor)
                    )
                }
            };
            (
                "fail",
                format!("{who}: broken by {}", broken_by.join(", ")),
                text,
            )
        }
        Cell::Passed(n) => (
            "pass",
            format!("{who}: {n} case(s) citing it passed"),
            "✔".to_owned(),
        ),
        Cell::NotApplicable => (
            "na",
            format!("{who}: its cases need a capability not claimed"),
            "n/a".to_owned(),
        ),
        Cell::NotRun => (
            "na",
            format!("{who}: no case citing it ran"),
            "not run".to_owned(),
        ),
        Cell::Absent => (
            "na",
            format!("{who}: not a clause of this report's corpus"),
            "—".to_owned(),
        ),
    };
    let _ = write!(
        body,
        r#"<td class="cell {class}" title="{}">{text}</td>"#,
        esc(&title)
    );
}

/// The clauses broken in at least one column, linked to their rows, so
/// that a reader finds them without scrolling through every clause.
fn broken_summary(body: &mut String, site: &Site, columns: &[&Entry]) {
    let broken: Vec<String> = site
        .clauses
        .iter()
        .filter_map(|c| {
            let n = columns
                .iter()
                .filter(|e| e.broken_clauses.contains(&c.id))
                .count();
            (n > 0).then(|| {
                format!(
                    r##"<a href="#{}"><code>{}</code></a> ({n})"##,
                    esc(&c.id),
                    esc(&c.id)
                )
            })
        })
        .collect();
    if broken.is_empty() {
        body.push_str(r#"<p class="pass">No column breaks any clause.</p>"#);
    } else {
        let _ = write!(
            body,
            r#"<p class="broken"><span class="fail">{} clause(s) broken</span> (in how many columns): {}</p>"#,
            broken.len(),
            broken.join(", ")
        );
    }
}
