//! The output of `tern-sim explore`: a table of scopes for people, one
//! JSON document for machines. Times appear only in the table, so the
//! document is the same for any `--jobs`.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tern_harness::explore::search::{Counts, Exploration, ScopeVerdict};

use crate::escape::t;
use crate::run::{situations_json_of, situations_table_of, table};
use tern_harness::catalogue::situations::{Coverage, Moment, Situation};

/// One scope's exploration as reported: everything the table, the
/// document and a shard's part need, without the search's own types.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Explored {
    pub scope: String,
    pub clauses: Vec<String>,
    pub verdict: ScopeVerdict,
    pub exhausted: bool,
    pub counts: Counts,
    pub situations: Coverage,
    /// Wall-clock seconds, for the table only.
    pub seconds: f64,
    pub violation: Option<FoundReport>,
    /// Its crashes were power losses, some inside requests (a subprocess
    /// whose state directories tern-sim served).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub power_loss: bool,
}

/// A scope's counterexample as reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FoundReport {
    pub invariant: String,
    pub section: String,
    pub clauses: Vec<String>,
    pub says: String,
    pub expected: String,
    pub actual: String,
    pub moves: usize,
    /// The shortest schedule's moves in words.
    pub shorthand: Vec<String>,
    /// Where its trace was saved.
    pub trace: Option<String>,
}

impl Explored {
    pub fn new(
        scope: &str,
        clauses: &[String],
        e: &Exploration,
        elapsed: Duration,
        shorthand: Vec<String>,
        trace: Option<String>,
    ) -> Explored {
        Explored {
            scope: scope.to_owned(),
            clauses: clauses.to_vec(),
            verdict: e.verdict(),
            exhausted: e.exhausted,
            counts: e.counts,
            situations: e.situations.clone(),
            seconds: elapsed.as_secs_f64(),
            power_loss: e.power_loss,
            violation: e.violation.as_ref().map(|ce| {
                let inv = ce.failure.invariant;
                FoundReport {
                    invariant: inv.name.to_owned(),
                    section: inv.section.to_owned(),
                    clauses: inv.clauses.iter().map(|c| (*c).to_owned()).collect(),
                    says: inv.says.to_owned(),
                    expected: ce.failure.expected.clone(),
                    actual: ce.failure.actual.clone(),
                    moves: ce.schedule.len(),
                    shorthand,
                    trace,
                }
            }),
        }
    }
}

/// A scope's verdict as the table and the document spell it.
fn verdict(x: &Explored) -> &'static str {
    match x.verdict {
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
        "slept",
        "depth",
        "time",
        "states/s",
    ]
    .map(str::to_owned)
    .to_vec()];
    for x in explored {
        let c = &x.counts;
        let secs = x.seconds;
        rows.push(vec![
            t(&x.scope),
            verdict(x).to_owned(),
            c.schedules.to_string(),
            c.states.to_string(),
            c.transitions.to_string(),
            c.merged.to_string(),
            c.slept.to_string(),
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
        let sum = |f: fn(&Counts) -> u64| explored.iter().map(|x| f(&x.counts)).sum::<u64>();
        let secs: f64 = explored.iter().map(|x| x.seconds).sum();
        let states = sum(|c| c.states);
        let clean = explored
            .iter()
            .filter(|x| x.verdict == ScopeVerdict::Exhausted)
            .count();
        rows.push(vec![
            format!("total ({} scopes)", explored.len()),
            format!("{clean} exhausted"),
            sum(|c| c.schedules).to_string(),
            states.to_string(),
            sum(|c| c.transitions).to_string(),
            sum(|c| c.merged).to_string(),
            sum(|c| c.slept).to_string(),
            explored
                .iter()
                .map(|x| x.counts.depth)
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
pub fn counterexample_text(scope: &str, f: &FoundReport) -> String {
    let mut out = format!(
        "{scope}: violation of {} (seed §{}; {})\n  {}\n  shortest schedule ({} moves):\n",
        f.invariant,
        f.section,
        f.clauses.join(", "),
        f.says,
        f.moves
    );
    for (i, line) in f.shorthand.iter().enumerate() {
        out.push_str(&format!("    {:>2}. {}\n", i + 1, t(line)));
    }
    out.push_str(&crate::run::expected_actual("  ", &f.expected, &f.actual));
    out
}

/// The situations every scope reached, added up.
pub fn situations(explored: &[Explored]) -> Coverage {
    let mut total = Coverage::default();
    for x in explored {
        total.add(&x.situations);
    }
    total
}

/// What a scope can be seen to reach: every situation but the ways of
/// breaking a frame and the shapes of boasts, which name what the
/// simulator's workload did to a frame and which a scope's fixed frames do
/// not say; and the power-loss situations only if some scope's crashes
/// were power losses, but for the torn write: the search crashes at file
/// operations, each write whole or not at all, and leaves cuts inside a
/// write to the simulation.
fn recognised(power_loss: bool) -> impl Fn(Situation) -> bool {
    move |s| {
        !matches!(
            s,
            Situation::Malformed(_) | Situation::Boast(_) | Situation::Moment(Moment::TornWrite)
        ) && (power_loss || !s.needs_power_loss())
    }
}

/// Whether some scope's crashes were power losses.
pub fn any_power_loss(explored: &[Explored]) -> bool {
    explored.iter().any(|x| x.power_loss)
}

/// The situations table for people.
pub fn situations_table(explored: &[Explored], stopped_early: bool) -> String {
    situations_table_of(
        &situations(explored),
        recognised(any_power_loss(explored)),
        stopped_early,
    )
}

/// The whole exploration as one document.
pub fn document(implementation: &str, merge: bool, explored: &[Explored]) -> Value {
    json!({
        "implementation": implementation,
        "merge": merge,
        "situations": situations_json_of(&situations(explored), recognised(any_power_loss(explored))),
        "scopes": explored.iter().map(|x| {
            let c = &x.counts;
            let mut v = json!({
                "scope": x.scope,
                "clauses": x.clauses,
                "verdict": verdict(x),
                "exhausted": x.exhausted,
                "schedules": c.schedules,
                "states": c.states,
                "transitions": c.transitions,
                "merged": c.merged,
                "slept": c.slept,
                "depth": c.depth,
                "moves_played": c.played,
                "actions_unclaimed": c.unclaimed,
                "violation": x.violation.as_ref().map(|f| json!({
                    "invariant": f.invariant,
                    "clauses": f.clauses,
                    "expected": f.expected,
                    "actual": f.actual,
                    "moves": f.moves,
                    "shorthand": f.shorthand,
                    "trace": f.trace,
                })),
            });
            if x.power_loss {
                v["power_loss"] = json!(true);
            }
            v
        }).collect::<Vec<_>>(),
    })
}
