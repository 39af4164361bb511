//! The output of `tern-sim run`, `replay` and `selftest`: tables for people,
//! one JSON document for machines.

use serde_json::{json, Value};
use tabled::builder::Builder;
use tabled::settings::Style;
use tern_harness::catalogue::situations::{Coverage, Situation};
use tern_harness::judge::invariants::ALL as INVARIANTS;
use tern_harness::simulator::driver::{Counterexample, ShrinkEnd};
use tern_harness::simulator::happening::notes;
use tern_harness::simulator::runner::{Sessions, Stats, Violation};

use crate::differences;
use crate::escape::t;
pub use tern_harness::simulator::trace::violation_json;

/// A rounded table for the terminal.
pub fn table(rows: Vec<Vec<String>>) -> String {
    let mut b = Builder::default();
    for r in rows {
        b.push_record(r);
    }
    b.build().with(Style::rounded()).to_string()
}

/// The seeds `runs` runs from `first` played, in words: what a soak says
/// so that it can be run again.
pub fn seed_range(first: u64, runs: u64) -> String {
    match runs {
        0 => "no seed".to_owned(),
        n => format!("seeds {first} to {}", first + (n - 1)),
    }
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
    out.push_str(&situations_table(stats, violations > 0));
    out
}

/// The situation catalogue with how often a batch reached each, and the
/// ones it never reached. (`run` always judges by the profile, so every
/// situation applies, but those only a power loss reaches are left out of
/// runs without one.)
pub fn situations_table(stats: &Stats, stopped_early: bool) -> String {
    situations_table_of(&stats.situations, |s| stats.shows(s), stopped_early)
}

/// The situation table of the situations `shown` keeps.
pub fn situations_table_of(
    coverage: &Coverage,
    shown: impl Fn(Situation) -> bool,
    stopped_early: bool,
) -> String {
    let rows: Vec<SituationRow> = coverage
        .iter()
        .filter(|(s, _)| shown(*s))
        .map(|(s, n)| SituationRow {
            name: s.name(),
            count: n,
            clauses: s.clauses().join(" "),
        })
        .collect();
    situation_rows_table(&rows, stopped_early)
}

/// One row of a situation table.
pub struct SituationRow {
    pub name: String,
    pub count: u64,
    pub clauses: String,
}

/// Situation rows as a table, then the ones never reached. A batch that
/// stopped early (at its first violation) did not run its budget, so what
/// it missed says nothing of the budget: only the count is given.
pub fn situation_rows_table(rows: &[SituationRow], stopped_early: bool) -> String {
    let mut table_rows = vec![vec![
        "situation".to_owned(),
        "reached".to_owned(),
        "clauses".to_owned(),
    ]];
    for r in rows {
        table_rows.push(vec![t(&r.name), r.count.to_string(), r.clauses.clone()]);
    }
    let missed: Vec<&str> = rows
        .iter()
        .filter(|r| r.count == 0)
        .map(|r| r.name.as_str())
        .collect();
    let mut out = table(table_rows);
    if missed.is_empty() {
        out.push_str("\nevery situation was reached");
    } else if stopped_early {
        out.push_str(&format!(
            "\nthe batch stopped early, at its first violation: {} situation(s) not reached by then, which its whole budget might have reached",
            missed.len()
        ));
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
pub fn situations_json(stats: &Stats) -> Value {
    situations_json_of(&stats.situations, |s| stats.shows(s))
}

/// The same, of the situations `shown` keeps.
pub fn situations_json_of(coverage: &Coverage, shown: impl Fn(Situation) -> bool) -> Value {
    let kept: Vec<(Situation, u64)> = coverage.iter().filter(|(s, _)| shown(*s)).collect();
    json!({
        "reached": kept
            .iter()
            .map(|(s, n)| json!({"situation": s.name(), "family": s.family(), "count": n, "clauses": s.clauses()}))
            .collect::<Vec<_>>(),
        "missed": kept.iter().filter(|(_, n)| *n == 0).map(|(s, _)| s.name()).collect::<Vec<_>>(),
    })
}

/// A violation for people: what broke, where, expected against actual.
pub fn violation_text(v: &Violation) -> String {
    let mut text = format!(
        "violation of {} (seed section {}) at step {}{}\n  rule: {}\n{}",
        v.failure.invariant.name,
        v.failure.invariant.section,
        v.step,
        v.agent
            .as_ref()
            .map(|a| format!(", agent {}", t(a)))
            .unwrap_or_default(),
        v.failure.invariant.says,
        expected_actual("  ", &v.failure.expected, &v.failure.actual),
    );
    text.truncate(text.trim_end().len());
    text
}

/// Expected against actual for the terminal, each clipped, then the paths
/// where they differ when both are JSON (a view).
pub(crate) fn expected_actual(indent: &str, expected: &str, actual: &str) -> String {
    let mut out = format!(
        "{indent}expected: {}\n{indent}actual:   {}\n",
        clip(expected),
        clip(actual)
    );
    let found = differences::of_texts(expected, actual);
    if !found.is_empty() {
        out.push_str(&format!("{indent}differs at:\n"));
        for d in &found {
            out.push_str(&format!("{indent}  {}\n", t(&differences::line(d))));
        }
    }
    out
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
    let mut out = String::new();
    match c.config.sessions {
        Sessions::Once => {}
        Sessions::AfterItself => out.push_str(
            "the violation shows only on processes kept from an earlier session (the implementation claims `reinit`): the run is played once to warm its processes up, then again on the processes it kept, and that second play fails; the trace replays it so. A receiver must start each session afresh at `init`.\n",
        ),
        Sessions::AfterEarlierRuns => out.push_str(
            "the violation needed what an earlier run of the batch left in a kept process (the implementation claims `reinit`): the run does not fail on fresh processes, nor after itself, so it was not shrunk and its trace does not reproduce the failure. A receiver must start each session afresh at `init`; run with --jobs 1 to find an order of runs that shows it.\n",
        ),
    }
    out.push_str(&format!(
        "shrunk from {} to {} steps ({} runs); {shorthand}\n",
        c.original_len,
        c.steps.len(),
        c.shrink_runs
    ));
    for n in &notes(&c.happenings) {
        out.push_str("  ");
        out.push_str(&t(n));
        out.push('\n');
    }
    out
}

/// Where a mutant was killed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub enum KilledIn {
    /// In simulation run number `runs` (the first failing seed's index + 1).
    Simulation { runs: u64 },
    /// By a corpus case, after the simulation budget ran out.
    Corpus { case: String },
}

/// One row of the selftest table (also kept in a shard's part).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MutantRow {
    pub name: String,
    pub target: String,
    /// What a run must do before the defect shows (`Mutant::needs`).
    pub needs: String,
    /// The catalogue's situation it needs (`Mutant::situation`).
    pub situation: String,
    pub killed_by: Option<String>,
    pub killed_in: Option<KilledIn>,
    /// Simulation runs played: the runs to kill, or the whole budget.
    pub seeds_needed: u64,
    pub shrunk_len: Option<usize>,
    /// Wall-clock time until the simulation found its violation (or spent
    /// its budget), shrinking excluded.
    pub kill_millis: u128,
    pub shrink_millis: u128,
}

impl MutantRow {
    /// Runs to the simulation's kill, if the simulation killed it.
    pub fn runs_to_kill(&self) -> Option<u64> {
        match self.killed_in {
            Some(KilledIn::Simulation { runs }) => Some(runs),
            _ => None,
        }
    }

    /// Killed, and by the invariant meant for it.
    pub fn as_intended(&self) -> bool {
        self.killed_by.as_deref() == Some(self.target.as_str())
    }
}

pub fn selftest_table(rows: &[MutantRow]) -> String {
    let mut t = vec![vec![
        "mutant".to_owned(),
        "killed".to_owned(),
        "invariant that caught it".to_owned(),
        "as intended".to_owned(),
        "runs to kill".to_owned(),
        "shrunk length".to_owned(),
        "kill (ms)".to_owned(),
        "situation it needs".to_owned(),
    ]];
    for r in rows {
        t.push(vec![
            r.name.clone(),
            match &r.killed_in {
                Some(KilledIn::Simulation { .. }) => "yes".to_owned(),
                Some(KilledIn::Corpus { case }) => format!("corpus ({case})"),
                None => "NO".to_owned(),
            },
            r.killed_by.clone().unwrap_or_else(|| "-".to_owned()),
            match &r.killed_by {
                Some(_) if r.as_intended() => "yes".to_owned(),
                Some(_) => format!("no ({})", r.target),
                None => "-".to_owned(),
            },
            r.runs_to_kill()
                .map_or_else(|| format!("> {}", r.seeds_needed), |n| n.to_string()),
            r.shrunk_len.map_or("-".to_owned(), |n| n.to_string()),
            r.kill_millis.to_string(),
            r.situation.clone(),
        ]);
    }
    table(t)
}

/// The spread of runs-to-kill over the mutants the simulation killed (by
/// any invariant), the figure that tells how far a workload must reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KillSpread {
    /// Runs to kill, ascending.
    pub runs: Vec<u64>,
    /// Mutants the simulation did not kill.
    pub survived: Vec<String>,
    /// Mutants killed, but by another invariant than their target.
    pub wrong_invariant: Vec<String>,
}

impl KillSpread {
    pub fn of(rows: &[MutantRow]) -> KillSpread {
        let mut runs: Vec<u64> = rows.iter().filter_map(MutantRow::runs_to_kill).collect();
        runs.sort_unstable();
        KillSpread {
            runs,
            survived: rows
                .iter()
                .filter(|r| r.runs_to_kill().is_none())
                .map(|r| r.name.clone())
                .collect(),
            wrong_invariant: rows
                .iter()
                .filter(|r| r.killed_by.is_some() && !r.as_intended())
                .map(|r| r.name.clone())
                .collect(),
        }
    }

    /// The nearest-rank `p`th percentile (`p` in 1..=100).
    pub fn percentile(&self, p: usize) -> Option<u64> {
        let n = self.runs.len();
        let rank = (p * n).div_ceil(100).max(1);
        self.runs.get(rank - 1).copied()
    }

    /// How many mutants took each number of runs.
    pub fn counts(&self) -> std::collections::BTreeMap<u64, usize> {
        let mut out = std::collections::BTreeMap::new();
        for &r in &self.runs {
            *out.entry(r).or_insert(0) += 1;
        }
        out
    }

    /// min/median/p90/max and the counts; no times, so it is the same for
    /// every `--jobs`.
    pub fn json(&self) -> Value {
        json!({
            "killed_by_simulation": self.runs.len(),
            "min": self.runs.first(),
            "median": self.percentile(50),
            "p90": self.percentile(90),
            "max": self.runs.last(),
            "counts": self.counts().iter().map(|(r, n)| json!({"runs": r, "mutants": n})).collect::<Vec<_>>(),
            "survived": self.survived,
            "wrong_invariant": self.wrong_invariant,
        })
    }

    /// The same for people, with the times of the kills.
    pub fn text(&self, rows: &[MutantRow]) -> String {
        let show = |v: Option<u64>| v.map_or("-".to_owned(), |n| n.to_string());
        let mut kill_ms: Vec<u128> = rows
            .iter()
            .filter(|r| r.runs_to_kill().is_some())
            .map(|r| r.kill_millis)
            .collect();
        kill_ms.sort_unstable();
        let counts: Vec<String> = self
            .counts()
            .iter()
            .map(|(r, n)| format!("{r}: {n}"))
            .collect();
        let list = |v: &[String]| {
            if v.is_empty() {
                "none".to_owned()
            } else {
                v.join(", ")
            }
        };
        format!(
            "runs to kill over {} simulation kills: min {}, median {}, p90 {}, max {}\n\
             mutants per runs to kill: {}\n\
             time per kill: total {} ms, median {} ms\n\
             survived the simulation: {}\n\
             killed by another invariant: {}",
            self.runs.len(),
            show(self.runs.first().copied()),
            show(self.percentile(50)),
            show(self.percentile(90)),
            show(self.runs.last().copied()),
            if counts.is_empty() {
                "-".to_owned()
            } else {
                counts.join(", ")
            },
            kill_ms.iter().sum::<u128>(),
            kill_ms.get(kill_ms.len() / 2).copied().unwrap_or(0),
            list(&self.survived),
            list(&self.wrong_invariant),
        )
    }
}

/// Wall-clock times are left out: the document is a function of the
/// options alone, the same for any `--jobs` (the human table has the times).
pub fn selftest_json(rows: &[MutantRow]) -> Value {
    json!(rows
        .iter()
        .map(|r| json!({
            "mutant": r.name,
            "target": r.target,
            "needs": r.needs,
            "situation": r.situation,
            "killed": r.killed_by.is_some(),
            "invariant": r.killed_by,
            "killed_in": match &r.killed_in {
                Some(KilledIn::Simulation { .. }) => json!("simulation"),
                Some(KilledIn::Corpus { .. }) => json!("corpus"),
                None => Value::Null,
            },
            "corpus_case": match &r.killed_in {
                Some(KilledIn::Corpus { case }) => json!(case),
                _ => Value::Null,
            },
            "runs_to_kill": r.runs_to_kill(),
            "seeds_needed": r.seeds_needed,
            "shrunk_length": r.shrunk_len,
        }))
        .collect::<Vec<_>>())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, killed: Option<(&str, u64)>) -> MutantRow {
        MutantRow {
            name: name.to_owned(),
            target: "t".to_owned(),
            needs: String::new(),
            situation: String::new(),
            killed_by: killed.map(|(i, _)| i.to_owned()),
            killed_in: killed.map(|(_, runs)| KilledIn::Simulation { runs }),
            seeds_needed: killed.map_or(20, |(_, r)| r),
            shrunk_len: None,
            kill_millis: 0,
            shrink_millis: 0,
        }
    }

    #[test]
    fn the_spread_counts_simulation_kills_only() {
        let mut rows: Vec<MutantRow> = (1..=10)
            .map(|r| row(&format!("m{r}"), Some(("t", r))))
            .collect();
        rows.push(row("s", None));
        rows.push(row("w", Some(("other", 3))));
        let s = KillSpread::of(&rows);
        assert_eq!(s.runs.len(), 11);
        assert_eq!(s.percentile(50), Some(5));
        assert_eq!(s.percentile(90), Some(9));
        assert_eq!(s.runs.last(), Some(&10));
        assert_eq!(s.counts()[&3], 2);
        assert_eq!(s.survived, ["s"]);
        assert_eq!(s.wrong_invariant, ["w"]);
        assert_eq!(KillSpread::of(&[]).percentile(90), None);
    }
}
