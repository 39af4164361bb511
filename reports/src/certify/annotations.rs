//! GitHub Actions workflow annotations for a certification's failures:
//! one `::error title=CLAUSE::message` line per failing case (and per
//! violation of the simulation or the exploration), which GitHub shows on
//! the run's page and its pull request. Lines are escaped by GitHub's
//! rules, so an implementation's text cannot end an annotation early or
//! issue a workflow command of its own.

use super::{ClauseText, ImplReport, Report};
use crate::escape::terminal;

/// Failing cases annotated per implementation; the rest are counted in
/// one more annotation.
const MAX_CASES: usize = 10;

/// A message's text, escaped as GitHub's workflow commands read it: `%`,
/// CR and LF as `%25`, `%0D` and `%0A` (GitHub shows the line breaks),
/// then every other control made visible ([`terminal`]), so the command
/// is one line whatever the text held.
pub fn message(s: &str) -> String {
    let s = s
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A");
    terminal(&s).into_owned()
}

/// A property's value (`title=`), escaped: as a message, and `:` and `,`
/// too, which would end the property.
pub fn property(s: &str) -> String {
    message(s).replace(':', "%3A").replace(',', "%2C")
}

fn error(title: &str, text: &str) -> String {
    format!("::error title={}::{}", property(title), message(text))
}

/// The clause a failure names in its title, else `fallback`.
fn title(clauses: &[ClauseText], fallback: &str) -> String {
    clauses
        .first()
        .map_or_else(|| fallback.to_owned(), |c| c.id.clone())
}

fn one(i: &ImplReport, several: bool, out: &mut Vec<String>) {
    let who = if several {
        format!("{}: ", i.label)
    } else {
        String::new()
    };
    let failing: Vec<_> = i.cases.iter().filter(|c| c.failed()).collect();
    for c in failing.iter().take(MAX_CASES) {
        let mut text = format!(
            "{who}case {} {} ({} case)",
            c.id,
            c.status.as_str().replace('_', " "),
            c.level
        );
        if let Some(f) = &c.failure {
            text.push_str(&format!(" at step {}: {}", f.step, f.check));
            if !f.reproduce.is_empty() {
                text.push_str(&format!("; reproduce: {}", f.reproduce));
            }
        }
        out.push(error(&title(&c.clauses, &c.id), &text));
    }
    if failing.len() > MAX_CASES {
        out.push(error(
            "tern-sim certify",
            &format!(
                "{who}{} more failing case(s): see summary.txt in the report folder",
                failing.len() - MAX_CASES
            ),
        ));
    }
    if let Some(v) = &i.simulation.violation {
        out.push(error(
            &title(&v.clauses, &v.invariant),
            &format!(
                "{who}simulation: {} violated (seed {}); reproduce: {}",
                v.invariant, v.seed, v.reproduce
            ),
        ));
    }
    if let Some(d) = i
        .simulation
        .determinism
        .as_ref()
        .and_then(|d| d.divergence.as_ref())
    {
        out.push(error(
            "nondeterministic",
            &format!(
                "{who}seed {} played twice got two answers to request {}: {}",
                d.seed, d.request_number, d.request
            ),
        ));
    }
    if let Some(v) = &i.exploration.violation {
        out.push(error(
            &title(&v.clauses, &v.invariant),
            &format!(
                "{who}exploration: {} violated in scope {}; reproduce: {}",
                v.invariant, v.scope, v.reproduce
            ),
        ));
    }
}

/// Every annotation of `report`, in report order; none when nothing
/// failed.
pub fn render(report: &Report) -> Vec<String> {
    let several = report.implementations.len() > 1;
    let mut out = Vec::new();
    for i in &report.implementations {
        one(i, several, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_cannot_end_an_annotation_or_start_a_command() {
        assert_eq!(message("100% done"), "100%25 done");
        assert_eq!(message("a\r\n::warning::x"), "a%0D%0A::warning::x");
        assert_eq!(message("\u{1b}[31m"), "\\u{1b}[31m");
        assert_eq!(property("S1.2: a, b"), "S1.2%3A a%2C b");
        let line = error("S1.1", "x\n::error::forged %0A");
        assert_eq!(line.lines().count(), 1);
        assert_eq!(line, "::error title=S1.1::x%0A::error::forged %250A");
    }
}
