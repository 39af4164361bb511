//! `summary.md`: the certification in a few lines of Markdown, short
//! enough for a pull-request comment or a CI job's summary page. It states
//! what summary.txt states (the verdict, the levels reached, what failed
//! and how to play it again) from the same report, and leaves the detail
//! to the other reports: long lists stop with "and N more".
//!
//! Every text that comes from an implementation or a corpus (labels,
//! names, case IDs, checks, commands) is written as a code span
//! ([`markdown_code`]), so none of it can become a link, an image, markup
//! or a mention on the page that shows it.

use tern_harness::corpus::play::Status;
use tern_harness::corpus::Level;

use super::{ImplReport, Report};
use crate::escape::markdown_code as code;

/// Failing cases listed per implementation before "and N more".
const MAX_CASES: usize = 10;
/// Clauses listed per implementation before "and N more".
const MAX_CLAUSES: usize = 20;
/// Characters of one check or command before it is cut.
const MAX_TEXT: usize = 200;

/// `text` cut to [`MAX_TEXT`] characters, said so when it is.
fn short(text: &str) -> String {
    if text.chars().count() <= MAX_TEXT {
        return text.to_owned();
    }
    let cut: String = text.chars().take(MAX_TEXT).collect();
    format!("{cut}…")
}

/// `items` joined with ", ", at most `max` of them, then "and N more".
fn capped(items: &[String], max: usize) -> String {
    let mut out = items
        .iter()
        .take(max)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > max {
        out.push_str(&format!(" and {} more", items.len() - max));
    }
    out
}

/// The verdict of one implementation, as its heading says it.
fn verdict(i: &ImplReport, level: &str) -> String {
    if i.verdict.certified {
        format!("✔ certified at {}", code(level))
    } else {
        format!("✘ not certified at {}", code(level))
    }
}

/// An outcome name as prose: `not_run` is "not run".
fn words(outcome: &str) -> String {
    outcome.replace('_', " ")
}

/// The clauses a failure of `i` breaks, in report order, each once.
fn broken_clauses(i: &ImplReport) -> Vec<String> {
    super::baseline::broken_clause_ids(i)
        .iter()
        .map(|id| code(id))
        .collect()
}

/// One implementation's failures against the baseline, and what it
/// resolved, each list capped like the others.
fn since_baseline(ch: &super::baseline::ImplChanges, out: &mut String) {
    let codes = |ids: &[String]| ids.iter().map(|id| code(id)).collect::<Vec<_>>();
    out.push_str(&format!(
        "- since the baseline{}: {} new, {} ongoing, {} resolved failing case(s)\n",
        if ch.compared_with.is_none() {
            " (not in it: everything is new)"
        } else {
            ""
        },
        ch.cases.new.len(),
        ch.cases.ongoing.len(),
        ch.cases.resolved.len()
    ));
    if !ch.cases.resolved.is_empty() {
        out.push_str(&format!(
            "- resolved: {}\n",
            capped(&codes(&ch.cases.resolved), MAX_CASES)
        ));
    }
    if !ch.clauses.new.is_empty() {
        out.push_str(&format!(
            "- clauses newly broken: {}\n",
            capped(&codes(&ch.clauses.new), MAX_CLAUSES)
        ));
    }
}

fn one(report: &Report, i: &ImplReport, out: &mut String) {
    out.push_str(&format!(
        "### {} {}\n\n",
        code(&i.label),
        verdict(i, report.level_requested.as_str())
    ));
    facts(i, out);
    if let Some(ch) = report.baseline.as_ref().and_then(|b| b.of(&i.label)) {
        since_baseline(ch, out);
    }
    failing_cases(report, i, out);
    violations(i, out);
    out.push('\n');
}

/// The list under an implementation's heading: what it is, the level
/// certified and what each part of the certification found.
fn facts(i: &ImplReport, out: &mut String) {
    out.push_str(&format!("- implementation: {}\n", code(&i.title())));
    if let Some(e) = &i.start_error {
        out.push_str(&format!("- did not start: {}\n", code(&short(e))));
    }
    let reached = match i.verdict.level.map(Level::as_str) {
        Some(l) => code(l),
        None => "none".to_owned(),
    };
    let conformant = match i.conformant_level() {
        Some(l) => format!("conformant at `{l}`"),
        None => "not conformant at any level".to_owned(),
    };
    out.push_str(&format!(
        "- level certified: {reached} (corpus: {conformant})\n"
    ));
    let failed = i.cases.iter().filter(|c| c.failed()).count();
    let passed = i.cases.iter().filter(|c| c.status == Status::Pass).count();
    out.push_str(&format!(
        "- corpus: {} case(s), {passed} passed, {failed} failed\n",
        i.cases.len()
    ));
    let kill_only = i
        .simulation
        .durability
        .as_ref()
        .is_some_and(|d| d.kill_only());
    out.push_str(&format!(
        "- simulation: {}{}\n",
        i.verdict.simulation.words(),
        if kill_only {
            " (crashes kill only: syncs not checked)"
        } else {
            ""
        }
    ));
    if let Some(d) = &i.simulation.determinism {
        let cut = if d.complete { "" } else { ", interrupted" };
        out.push_str(&format!(
            "- determinism: {} seed(s) played twice{cut}, {}\n",
            d.seeds.len(),
            if d.diverged() {
                "**answers differed**"
            } else {
                "the same answers"
            }
        ));
    }
    if let Some(v) = i.verdict.exploration {
        out.push_str(&format!("- exploration: {}\n", v.words()));
    }
    let clauses = broken_clauses(i);
    if !clauses.is_empty() {
        out.push_str(&format!(
            "- clauses broken ({}): {}\n",
            clauses.len(),
            capped(&clauses, MAX_CLAUSES)
        ));
    }
}

/// The failing cases, at most [`MAX_CASES`] of them, each with its mark
/// against the baseline and the command that plays it again.
fn failing_cases(report: &Report, i: &ImplReport, out: &mut String) {
    let failing: Vec<_> = i.cases.iter().filter(|c| c.failed()).collect();
    if !failing.is_empty() {
        out.push_str(&format!("\nFailing cases ({}):\n\n", failing.len()));
        for c in failing.iter().take(MAX_CASES) {
            let clause = c
                .clauses
                .first()
                .map(|cl| format!(", breaks {}", code(&cl.id)))
                .unwrap_or_default();
            let mark = report
                .case_mark(&i.label, &c.id)
                .map(|m| format!("**{}** ", m.as_str()))
                .unwrap_or_default();
            out.push_str(&format!(
                "- {mark}{} ({}, {}{clause})",
                code(&c.id),
                code(c.level.as_str()),
                words(c.status.as_str())
            ));
            if let Some(f) = &c.failure {
                out.push_str(&format!(": {}", code(&short(&f.check))));
                if !f.reproduce.is_empty() {
                    out.push_str(&format!("\n  reproduce: {}", code(&f.reproduce)));
                }
            }
            out.push('\n');
        }
        if failing.len() > MAX_CASES {
            out.push_str(&format!(
                "- and {} more: see `summary.txt` or `report.html`\n",
                failing.len() - MAX_CASES
            ));
        }
    }
}

/// What the simulation, the determinism check and the exploration found
/// wrong, each with how to play it again.
fn violations(i: &ImplReport, out: &mut String) {
    if let Some(v) = &i.simulation.violation {
        out.push_str(&format!(
            "\nSimulation: {} violated (seed {}, shrunk to {} steps)\n",
            code(&v.invariant),
            v.seed,
            v.shrunk_steps
        ));
        if !v.reproduce.is_empty() {
            out.push_str(&format!("  reproduce: {}\n", code(&v.reproduce)));
        }
    }
    if let Some(d) = i
        .simulation
        .determinism
        .as_ref()
        .and_then(|d| d.divergence.as_ref())
    {
        out.push_str(&format!(
            "\nNondeterministic: seed {} played twice got two answers to request {}: {}\n",
            d.seed,
            d.request_number,
            code(&short(&d.request))
        ));
        out.push_str(&format!("  first: {}\n", code(&short(&d.first))));
        out.push_str(&format!("  second: {}\n", code(&short(&d.second))));
    }
    if let Some(v) = &i.exploration.violation {
        out.push_str(&format!(
            "\nExploration: {} violated in scope {}, a schedule of {} moves\n",
            code(&v.invariant),
            code(&v.scope),
            v.schedule.len()
        ));
        out.push_str(&format!("  reproduce: {}\n", code(&v.reproduce)));
    }
}

/// The whole of summary.md.
pub fn render(report: &Report) -> String {
    let certified = report
        .implementations
        .iter()
        .filter(|i| i.verdict.certified)
        .count();
    let mut out = format!(
        "## Tern 0.1 certification: {} of {} certified at {}\n\n",
        certified,
        report.implementations.len(),
        code(report.level_requested.as_str())
    );
    out.push_str(&format!(
        "tern-sim {} · corpus {} ({} case(s), {} clauses) · {} simulation run(s) from seed {}\n\n",
        code(&report.tern_sim_version),
        code(report.corpus.version()),
        report.corpus.cases,
        report.corpus.clauses,
        report.simulation_budget.seeds,
        report.simulation_budget.first_seed
    ));
    if let Some(why) = report.not_certifiable() {
        out.push_str(&format!("> **Certifies nothing:** {}\n\n", code(&why)));
    }
    if let Some(note) = super::scopes_left_out_note(&report.scopes_left_out) {
        out.push_str(&format!("> {}\n\n", code(&note)));
    }
    if let Some(b) = &report.baseline {
        out.push_str(&format!(
            "Compared with the baseline {} (tern-sim {}, corpus {})\n\n",
            code(&b.path),
            code(&b.tern_sim_version),
            code(b.corpus_hash.get(..12).unwrap_or(&b.corpus_hash))
        ));
        for n in b.notes(&report.corpus.hash) {
            out.push_str(&format!("> {}\n\n", code(&n)));
        }
    }
    for i in &report.implementations {
        one(report, i, &mut out);
    }
    out.push_str(
        "Details: `summary.txt`, `report.html`, `report.json` and `junit.xml` in the report folder.\n",
    );
    out
}
