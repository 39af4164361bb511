//! The output of `tern-sim run`, `replay` and `selftest`: tables for people,
//! one JSON document for machines.

use serde_json::{json, Value};
use tabled::builder::Builder;
use tabled::settings::Style;
use tern_harness::sim::driver::{Counterexample, ShrinkEnd};
use tern_harness::sim::invariants::ALL as INVARIANTS;
use tern_harness::sim::runner::{Stats, Violation};
use tern_harness::sim::situations::Coverage;

use crate::escape::t;
pub use tern_harness::sim::trace::violation_json;

/// A rounded table for the terminal.
pub fn table(rows: Vec<Vec<String>>) -> String {
    let mut b = Builder::default();
    for r in rows {
        b.push_record(r);
    }
    b.build().with(Style::rounded()).to_string()
}

/// The summary of a batch of runs.
pub fn summary(runs: u64, stats: &Stats, violations: u64) -> String {
    let mut rows = vec![vec!["".to_owned(), "count".to_owned()]];
    for (k, v) in [
        ("runs", runs),
        ("steps", stats.steps),
        ("messages sent", stats.messages),
        ("deliveries", stats.deliveries),
        ("executions asked", stats.executions),
        ("effects performed", stats.effects),
        ("invariants", INVARIANTS.len() as u64),
        ("checks made", stats.checks),
        ("violations", violations),
    ] {
        rows.push(vec![k.to_owned(), v.to_string()]);
    }
    let mut out = table(rows);
    if !stats.faults.is_empty() {
        let mut rows = vec![vec!["fault injected".to_owned(), "times".to_owned()]];
        for (k, v) in &stats.faults {
            rows.push(vec![(*k).to_owned(), v.to_string()]);
        }
        out.push('\n');
        out.push_str(&table(rows));
    }
    out.push('\n');
    out.push_str(&situations_table(&stats.situations, false));
    out
}

/// The situation catalogue with how often a batch reached each, and the
/// ones it never reached. With `core`, the broken frames that only the
/// profile reads are not sent, so they are shown as not applicable rather
/// than missed.
pub fn situations_table(coverage: &Coverage, core: bool) -> String {
    let rows: Vec<SituationRow> = coverage
        .iter()
        .map(|(s, n)| SituationRow {
            name: s.name(),
            count: (!core || s.at_core()).then_some(n),
            clauses: s.clauses().join(" "),
        })
        .collect();
    situation_rows_table(&rows)
}

/// One row of a situation table: `count` is `None` where the situation
/// does not apply.
pub struct SituationRow {
    pub name: String,
    pub count: Option<u64>,
    pub clauses: String,
}

/// Situation rows as a table, then the ones never reached.
pub fn situation_rows_table(rows: &[SituationRow]) -> String {
    let mut table_rows = vec![vec![
        "situation".to_owned(),
        "reached".to_owned(),
        "clauses".to_owned(),
    ]];
    for r in rows {
        table_rows.push(vec![
            t(&r.name),
            r.count.map_or("n/a at core".to_owned(), |n| n.to_string()),
            r.clauses.clone(),
        ]);
    }
    let missed: Vec<&str> = rows
        .iter()
        .filter(|r| r.count == Some(0))
        .map(|r| r.name.as_str())
        .collect();
    let mut out = table(table_rows);
    if missed.is_empty() {
        out.push_str("\nevery situation was reached");
    } else {
        out.push_str(&format!(
            "\n{} situation(s) never reached: {}",
            missed.len(),
            t(&missed.join("; "))
        ));
    }
    out
}

/// The same as data: every situation with its count, and the missed ones.
pub fn situations_json(coverage: &Coverage, core: bool) -> Value {
    let applicable = |s: &tern_harness::sim::situations::Situation| !core || s.at_core();
    json!({
        "reached": coverage
            .iter()
            .filter(|(s, _)| applicable(s))
            .map(|(s, n)| json!({"situation": s.name(), "family": s.family(), "count": n, "clauses": s.clauses()}))
            .collect::<Vec<_>>(),
        "missed": coverage
            .iter()
            .filter(|(s, n)| *n == 0 && applicable(s))
            .map(|(s, _)| s.name())
            .collect::<Vec<_>>(),
    })
}

/// A violation for people: what broke, where, expected against actual.
pub fn violation_text(v: &Violation) -> String {
    format!(
        "violation of {} (seed section {}) at step {}{}\n  rule: {}\n  expected: {}\n  actual:   {}",
        v.invariant.name,
        v.invariant.section,
        v.step,
        v.agent.as_ref().map(|a| format!(", agent {}", t(a))).unwrap_or_default(),
        v.invariant.says,
        clip(&v.expected),
        clip(&v.actual),
    )
}

/// Long JSON views are cut in the terminal; the trace keeps them whole.
/// The text comes from the implementation, so it is escaped for the
/// terminal first (see [`crate::escape`]).
pub(crate) fn clip(s: &str) -> String {
    const MAX: usize = 600;
    let bytes = s.len();
    let s = &*t(s);
    if s.len() <= MAX {
        return s.to_owned();
    }
    let mut end = MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({bytes} bytes, whole in the trace)", &s[..end])
}

/// The counterexample in shorthand.
pub fn counterexample_text(c: &Counterexample) -> String {
    let shorthand = if c.shrink_end == ShrinkEnd::Interrupted {
        "not replayed after the interrupt; `tern-sim replay` shows it"
    } else {
        "the run in shorthand:"
    };
    let mut out = format!(
        "shrunk from {} to {} steps ({} runs); {shorthand}\n",
        c.original_len,
        c.steps.len(),
        c.shrink_runs
    );
    for n in &c.notes {
        out.push_str("  ");
        out.push_str(&t(n));
        out.push('\n');
    }
    out
}

/// One row of the selftest table.
#[derive(Debug, Clone)]
pub struct MutantRow {
    pub name: String,
    pub target: String,
    pub killed_by: Option<String>,
    pub seeds_needed: u64,
    pub shrunk_len: Option<usize>,
    pub millis: u128,
}

pub fn selftest_table(rows: &[MutantRow]) -> String {
    let mut t = vec![vec![
        "mutant".to_owned(),
        "killed".to_owned(),
        "invariant that caught it".to_owned(),
        "as intended".to_owned(),
        "seeds needed".to_owned(),
        "shrunk length".to_owned(),
        "time (ms)".to_owned(),
    ]];
    for r in rows {
        t.push(vec![
            r.name.clone(),
            if r.killed_by.is_some() { "yes" } else { "NO" }.to_owned(),
            r.killed_by.clone().unwrap_or_else(|| "-".to_owned()),
            match &r.killed_by {
                Some(k) if *k == r.target => "yes".to_owned(),
                Some(_) => format!("no ({})", r.target),
                None => "-".to_owned(),
            },
            r.seeds_needed.to_string(),
            r.shrunk_len.map_or("-".to_owned(), |n| n.to_string()),
            r.millis.to_string(),
        ]);
    }
    table(t)
}

/// Wall-clock times are left out: the document is a function of the
/// options alone, the same for any `--jobs` (the human table has the times).
pub fn selftest_json(rows: &[MutantRow]) -> Value {
    json!(rows
        .iter()
        .map(|r| json!({
            "mutant": r.name,
            "target": r.target,
            "killed": r.killed_by.is_some(),
            "invariant": r.killed_by,
            "seeds_needed": r.seeds_needed,
            "shrunk_length": r.shrunk_len,
        }))
        .collect::<Vec<_>>())
}
