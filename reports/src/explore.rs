//! The output of `tern-sim explore`: a table of scopes for people, one
//! JSON document for machines. Times appear only in the table, so the
//! document is the same for any `--jobs`.

use std::time::Duration;

use serde_json::{json, Value};
use tern_harness::explore::search::{Counterexample, Exploration, ScopeVerdict};

use crate::escape::t;
use crate::run::{situations_json_of, situations_table_of, table};
use tern_harness::simulator::situations::{Coverage, Situation};

/// One scope's exploration, with what a reader needs beside it.
pub struct Explored {
    pub scope: String,
    pub clauses: Vec<String>,
    pub exploration: Exploration,
    pub elapsed: Duration,
    /// The counterexample's moves in words.
    pub shorthand: Vec<String>,
    /// Where its trace was saved.
    pub trace: Option<String>,
}

/// A scope's verdict as the table and the document spell it.
fn verdict(e: &Exploration) -> &'static str {
    match e.verdict() {
        ScopeVerdict::Violation => "VIOLATION",
        ScopeVerdict::Exhausted => "exhausted",
        ScopeVerdict::NotExhausted => "not exhausted",
    }
}

/// The summary table: a row per scope.
pub fn summary(explored: &[Explored]) -> String {
    let mut rows = vec![[
        "scope",
        "verdict",
        "schedules",
        "states",
        "transitions",
        "merged",
        "depth",
        "time",
        "states/s",
    ]
    .map(str::to_owned)
    .to_vec()];
    for x in explored {
        let c = &x.exploration.counts;
        let secs = x.elapsed.as_secs_f64();
        rows.push(vec![
            t(&x.scope),
            verdict(&x.exploration).to_owned(),
            c.schedules.to_string(),
            c.states.to_string(),
            c.transitions.to_string(),
            c.merged.to_string(),
            c.depth.to_string(),
            format!("{secs:.2} s"),
            if secs > 0.0 {
                format!("{:.0}", c.states as f64 / secs)
            } else {
                "-".to_owned()
            },
        ]);
    }
    if explored.len() > 1 {
        let sum =
            |f: fn(&Exploration) -> u64| explored.iter().map(|x| f(&x.exploration)).sum::<u64>();
        let secs: f64 = explored.iter().map(|x| x.elapsed.as_secs_f64()).sum();
        let states = sum(|e| e.counts.states);
        let clean = explored
            .iter()
            .filter(|x| x.exploration.verdict() == ScopeVerdict::Exhausted)
            .count();
        rows.push(vec![
            format!("total ({} scopes)", explored.len()),
            format!("{clean} exhausted"),
            sum(|e| e.counts.schedules).to_string(),
            states.to_string(),
            sum(|e| e.counts.transitions).to_string(),
            sum(|e| e.counts.merged).to_string(),
            explored
                .iter()
                .map(|x| x.exploration.counts.depth)
                .max()
                .unwrap_or(0)
                .to_string(),
            format!("{secs:.2} s"),
            if secs > 0.0 {
                format!("{:.0}", states as f64 / secs)
            } else {
                "-".to_owned()
            },
        ]);
    }
    table(rows)
}

/// A counterexample for people: the invariant, its clauses, the shortest
/// schedule that breaks it, expected against actual.
pub fn counterexample_text(scope: &str, ce: &Counterexample, shorthand: &[String]) -> String {
    let inv = ce.mismatch.invariant;
    let mut out = format!(
        "{scope}: violation of {} (seed §{}; {})\n  {}\n  shortest schedule ({} moves):\n",
        inv.name,
        inv.section,
        inv.clauses.join(", "),
        inv.says,
        ce.schedule.len()
    );
    for (i, line) in shorthand.iter().enumerate() {
        out.push_str(&format!("    {:>2}. {}\n", i + 1, t(line)));
    }
    out.push_str(&format!(
        "  expected: {}\n  actual:   {}\n",
        t(&ce.mismatch.expected),
        t(&ce.mismatch.actual)
    ));
    out
}

/// The situations every scope reached, added up.
pub fn situations(explored: &[Explored]) -> Coverage {
    let mut total = Coverage::default();
    for x in explored {
        total.add(&x.exploration.situations);
    }
    total
}

/// What a scope can be seen to reach: every situation but the ways of
/// breaking a frame, which name what the simulator's workload did to a
/// frame and which a scope's fixed frames do not say.
fn recognised(s: Situation) -> bool {
    !matches!(s, Situation::Malformed(_))
}

/// The situations table for people.
pub fn situations_table(coverage: &Coverage) -> String {
    situations_table_of(coverage, recognised)
}

/// The whole exploration as one document.
pub fn document(implementation: &str, merge: bool, explored: &[Explored]) -> Value {
    json!({
        "implementation": implementation,
        "merge": merge,
        "situations": situations_json_of(&situations(explored), recognised),
        "scopes": explored.iter().map(|x| {
            let c = &x.exploration.counts;
            json!({
                "scope": x.scope,
                "clauses": x.clauses,
                "verdict": verdict(&x.exploration),
                "exhausted": x.exploration.exhausted,
                "schedules": c.schedules,
                "states": c.states,
                "transitions": c.transitions,
                "merged": c.merged,
                "depth": c.depth,
                "moves_played": c.played,
                "actions_unclaimed": c.unclaimed,
                "violation": x.exploration.violation.as_ref().map(|ce| json!({
                    "invariant": ce.mismatch.invariant.name,
                    "clauses": ce.mismatch.invariant.clauses,
                    "expected": ce.mismatch.expected,
                    "actual": ce.mismatch.actual,
                    "moves": ce.schedule.len(),
                    "shorthand": x.shorthand,
                    "trace": x.trace,
                })),
            })
        }).collect::<Vec<_>>(),
    })
}
