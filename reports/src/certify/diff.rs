//! Regression between two reports: which cases, invariants and verdicts
//! changed outcome. A regression is anything that got worse: a case that
//! passed (or did not apply) and now fails, a new case that fails, a case
//! that passed and is now absent, an implementation that is missing from
//! the new report, a simulation that was clean and is not, a level lost.

use std::collections::{BTreeMap, BTreeSet};
use tern_harness::certify::SimVerdict;
use tern_harness::corpus::play::Status;
use tern_harness::corpus::Level;

use super::{ImplReport, Report};
use crate::escape::t;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub implementation: String,
    pub what: String,
    pub old: String,
    pub new: String,
    pub regression: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Diff {
    pub changes: Vec<Change>,
    /// Facts worth knowing that are not changes of outcome.
    pub notes: Vec<String>,
}

impl Diff {
    pub fn regressions(&self) -> usize {
        self.changes.iter().filter(|c| c.regression).count()
    }
}

/// Invariants with a failing case, a simulation or an exploration violation.
fn failing_invariants(i: &ImplReport) -> BTreeSet<String> {
    let mut set: BTreeSet<String> = i
        .cases
        .iter()
        .filter(|c| c.failed())
        .flat_map(|c| c.invariants.iter().cloned())
        .collect();
    if let Some(v) = &i.simulation.violation {
        set.insert(v.invariant.clone());
    }
    if let Some(v) = &i.exploration.violation {
        set.insert(v.invariant.clone());
    }
    set
}

fn compare(label: &str, old: &ImplReport, new: &ImplReport, out: &mut Diff) {
    let mut push = |what: String, o: String, n: String, regression: bool| {
        out.changes.push(Change {
            implementation: label.to_owned(),
            what,
            old: o,
            new: n,
            regression,
        })
    };
    let old_cases: BTreeMap<&str, Status> = old
        .cases
        .iter()
        .map(|c| (c.id.as_str(), c.status))
        .collect();
    let new_cases: BTreeMap<&str, Status> = new
        .cases
        .iter()
        .map(|c| (c.id.as_str(), c.status))
        .collect();
    for (id, n) in &new_cases {
        match old_cases.get(id) {
            Some(o) if o != n => push(
                format!("case {id}"),
                o.as_str().to_owned(),
                n.as_str().to_owned(),
                n.is_failure() && !o.is_failure(),
            ),
            None => push(
                format!("case {id}"),
                "absent".into(),
                n.as_str().to_owned(),
                n.is_failure(),
            ),
            _ => {}
        }
    }
    // A pass that is no longer there is a pass lost: a gate that let it
    // through would accept a new report that simply ran fewer cases.
    for (id, o) in &old_cases {
        if !new_cases.contains_key(id) {
            push(
                format!("case {id}"),
                o.as_str().to_owned(),
                "absent".into(),
                *o == Status::Pass,
            );
        }
    }
    let (oi, ni) = (failing_invariants(old), failing_invariants(new));
    for inv in ni.difference(&oi) {
        push(
            format!("invariant {inv}"),
            "holds".into(),
            "broken".into(),
            true,
        );
    }
    for inv in oi.difference(&ni) {
        push(
            format!("invariant {inv}"),
            "broken".into(),
            "holds".into(),
            false,
        );
    }
    if old.simulation.verdict != new.simulation.verdict {
        let regression = old.simulation.verdict == SimVerdict::Clean
            && matches!(
                new.simulation.verdict,
                SimVerdict::Violation | SimVerdict::Nondeterministic
            );
        push(
            "simulation".into(),
            old.simulation.verdict.as_str().into(),
            new.simulation.verdict.as_str().into(),
            regression,
        );
    }
    if let (Some(o), n) = (old.exploration.verdict, new.exploration.verdict) {
        if Some(o) != n {
            let regression = o == SimVerdict::Clean && n == Some(SimVerdict::Violation);
            push(
                "exploration".into(),
                o.as_str().into(),
                n.map_or("", SimVerdict::as_str).into(),
                regression,
            );
        }
    }
    let level = |i: &ImplReport| i.verdict.level.map_or("none", Level::as_str).to_owned();
    let rank = |l: &str| match l {
        "profile" => 2,
        "core" => 1,
        _ => 0,
    };
    if level(old) != level(new) {
        let regression = rank(&level(new)) < rank(&level(old));
        push(
            "conformance level".into(),
            level(old),
            level(new),
            regression,
        );
    }
    if old.verdict.certified != new.verdict.certified {
        push(
            "certified".into(),
            old.verdict.certified.to_string(),
            new.verdict.certified.to_string(),
            old.verdict.certified,
        );
    }
}

pub fn diff(old: &Report, new: &Report) -> Diff {
    let mut out = Diff::default();
    if old.corpus.hash != new.corpus.hash {
        out.notes.push(format!(
            "the corpus changed ({} → {} cases, hash {} → {})",
            old.corpus.cases,
            new.corpus.cases,
            &old.corpus.hash[..old.corpus.hash.len().min(12)],
            &new.corpus.hash[..new.corpus.hash.len().min(12)]
        ));
    }
    if old.tern_sim_version != new.tern_sim_version {
        out.notes.push(format!(
            "tern-sim {} → {}",
            old.tern_sim_version, new.tern_sim_version
        ));
    }
    if new.interrupted {
        out.notes
            .push("the new report was interrupted: it covers only part of the corpus".into());
    }
    // Paired as the baseline classification pairs them, so `diff` and
    // `certify --baseline` never disagree on who is compared with whom.
    let paired = super::baseline::pairs(old, new);
    for (o, n) in &paired {
        match o {
            Some(o) => {
                let label = if o.label == n.label {
                    n.label.clone()
                } else {
                    format!("{} → {}", o.label, n.label)
                };
                compare(&label, o, n, &mut out);
            }
            None => out
                .notes
                .push(format!("`{}` is only in the new report", n.label)),
        }
    }
    // An implementation that was certified, or even only reported, and is
    // gone says nothing more about it: a regression, not a note.
    for o in &old.implementations {
        if !paired
            .iter()
            .any(|(p, _)| p.is_some_and(|p| std::ptr::eq(p, o)))
        {
            out.changes.push(Change {
                implementation: o.label.clone(),
                what: "implementation".into(),
                old: "reported".into(),
                new: "absent".into(),
                regression: true,
            });
        }
    }
    out
}

/// For people: one line per change, regressions marked.
pub fn text(d: &Diff) -> String {
    let mut out = String::new();
    for n in &d.notes {
        out.push_str(&format!("note: {}\n", t(n)));
    }
    for c in &d.changes {
        out.push_str(&format!(
            "{} {}: {}: {} → {}\n",
            if c.regression {
                "✘ regression"
            } else {
                "  change    "
            },
            t(&c.implementation),
            t(&c.what),
            t(&c.old),
            t(&c.new)
        ));
    }
    out.push_str(&format!(
        "{} change(s), {} regression(s)\n",
        d.changes.len(),
        d.regressions()
    ));
    out
}
