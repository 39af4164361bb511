//! Merging `certify` parts into the report one machine would have written.
//!
//! Each shard's report holds its share of the corpus cases (by hash of
//! their ID), of the simulation seeds (by residue) and of the exploration
//! scopes (by hash), every implementation judged on that share. The merge
//! puts cases and scopes back in order, applies the give-up rule to the
//! whole, keeps the simulation's first violation in seed order with the
//! counts of the runs up to it (each part keeps its counts per seed for
//! that), and judges again with the same code as an unsharded run.

use std::collections::{BTreeMap, BTreeSet};

use crate::determinism::DeterminismReport;
use serde::{Deserialize, Serialize};
use tern_harness::certify::{give_up_point, given_up_failure, Conformance, SimVerdict};
use tern_harness::corpus::play::Status;
use tern_harness::corpus::Level;
use tern_harness::explore::search::ScopeVerdict;
use tern_harness::simulator::runner::Stats;

use super::{one_batch, MergeError, Read, Runs};
use crate::certify::files::is_attachment_path;
use crate::certify::{
    failure_report, judged, simulation_counts, CaseReport, ExplorationReport, ImplReport, Report,
    ShardsRecord, SimulationReport,
};

/// What a `certify` shard adds to its report for the merge.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Body {
    /// The shard's report: its share of the cases, runs and scopes.
    pub report: Report,
    /// `--give-up-after`, applied again to the merged cases.
    pub give_up_after: usize,
    /// Per implementation, in report order: the counts of each simulation
    /// run the shard played, in its order of seeds.
    pub runs: Vec<Vec<Stats>>,
    /// The files the shard's report names (traces, stderr), by path: the
    /// merged report keeps those its failures still name.
    #[serde(default)]
    pub attachments: BTreeMap<String, String>,
}

/// The merged report of `parts` (checked, in shard order).
pub fn merge(parts: &[Read]) -> Result<Report, MergeError> {
    let bodies: Vec<Body> = parts.iter().map(Read::body).collect::<Result<_, _>>()?;
    let (first, base) = (&parts[0], &bodies[0].report);
    let bad = |r: &Read, why: String| MergeError::Inconsistent {
        path: r.path.clone(),
        why,
    };
    let labels = |rep: &Report| {
        rep.implementations
            .iter()
            .map(|i| i.label.clone())
            .collect::<Vec<_>>()
    };
    let named = labels_of(&first.header.options).ok_or_else(|| {
        bad(
            first,
            "its options do not name the implementations".to_owned(),
        )
    })?;
    for (r, b) in parts.iter().zip(&bodies) {
        if labels(&b.report) != named {
            return Err(bad(
                r,
                format!(
                    "its report judges {} where its options name {}",
                    list(&labels(&b.report)),
                    list(&named)
                ),
            ));
        }
        owns_its_share(r, b)?;
        if b.runs.len() != b.report.implementations.len() {
            return Err(bad(
                r,
                "it does not hold the runs of every implementation".to_owned(),
            ));
        }
    }
    let level = base.level_requested;
    let no_names = Vec::new();
    let cases_order = first.header.work.get("cases").unwrap_or(&no_names);
    let scopes_order = first.header.work.get("scopes").unwrap_or(&no_names);
    let mut implementations = Vec::new();
    for (i, imp) in base.implementations.iter().enumerate() {
        let shares: Vec<Share> = parts
            .iter()
            .zip(&bodies)
            .map(|(r, b)| Share {
                read: r,
                report: &b.report.implementations[i],
                runs: &b.runs[i],
            })
            .collect();
        let cases = merged_cases(&shares, cases_order, bodies[0].give_up_after)?;
        let simulation = merged_simulation(
            &shares,
            base.simulation_budget.first_seed,
            base.simulation_budget.seeds,
            level,
        )?;
        let exploration = merged_exploration(&shares, scopes_order)?;
        let conformance = Conformance::of_outcomes(
            cases.iter().map(outcome),
            imp.start_error.is_none(),
            simulation.verdict,
            exploration.verdict.unwrap_or(SimVerdict::Incomplete),
        );
        let mut merged = ImplReport {
            label: imp.label.clone(),
            name: imp.name.clone(),
            version: imp.version.clone(),
            capabilities: imp.capabilities.clone(),
            start_error: imp.start_error.clone(),
            flag: imp.flag.clone(),
            cases,
            simulation,
            exploration,
            ..judged(&conformance, level, base.coverage())
        };
        let budget = &base.simulation_budget;
        merged.set_reproduce(level, budget.agents, budget.steps);
        implementations.push(merged);
    }
    let mut attachments: BTreeMap<String, String> =
        bodies.iter().flat_map(|b| b.attachments.clone()).collect();
    let named: BTreeSet<&str> = implementations.iter().flat_map(ImplReport::files).collect();
    attachments.retain(|path, _| named.contains(path.as_str()));
    Ok(Report {
        implementations,
        shards: Some(ShardsRecord {
            count: first.header.shard.count(),
        }),
        attachments,
        ..base.clone()
    })
}

/// The implementations a certify run with these options judges, by
/// label, in report order: the reference (asked for, or nothing else
/// given), then the mutants, then the commands.
fn labels_of(options: &BTreeMap<String, String>) -> Option<Vec<String>> {
    let listed =
        |flag: &str| -> Option<Vec<String>> { serde_json::from_str(options.get(flag)?).ok() };
    let (mutants, commands) = (listed("--mutant")?, listed("--impl")?);
    let reference = options.get("--reference")? == "true";
    let mut labels = Vec::new();
    if reference || (mutants.is_empty() && commands.is_empty()) {
        labels.push("reference".to_owned());
    }
    labels.extend(mutants);
    labels.extend(commands);
    Some(labels)
}

fn list(labels: &[String]) -> String {
    let quoted: Vec<String> = labels.iter().map(|l| format!("`{l}`")).collect();
    quoted.join(", ")
}

/// Every case, scope and seed in the part is one its shard takes, and
/// every file it carries lies where certify writes files.
fn owns_its_share(r: &Read, b: &Body) -> Result<(), MergeError> {
    let first_seed = b.report.simulation_budget.first_seed;
    for imp in &b.report.implementations {
        for c in &imp.cases {
            r.owns_name("case", &c.id)?;
        }
        for x in &imp.exploration.scopes {
            r.owns_name("scope", &x.scope)?;
        }
        if let Some(v) = &imp.simulation.violation {
            r.owns_seed(first_seed, v.seed)?;
        }
    }
    for path in b.attachments.keys() {
        if !is_attachment_path(path) {
            return Err(MergeError::Inconsistent {
                path: r.path.clone(),
                why: format!(
                    "it carries a file at `{}`, where certify writes only traces/NAME and stderr/[IMPLEMENTATION/]NAME",
                    crate::escape::terminal(path)
                ),
            });
        }
    }
    Ok(())
}

/// One implementation's results in one part.
struct Share<'a> {
    read: &'a Read,
    report: &'a ImplReport,
    runs: &'a [Stats],
}

/// The level a case's outcome counts at, as its report says, and the
/// outcome.
fn outcome(c: &CaseReport) -> (Level, Status) {
    (c.failure.as_ref().map_or(c.level, |f| f.level), c.status)
}

fn merged_cases(
    shares: &[Share],
    order: &[String],
    give_up_after: usize,
) -> Result<Vec<CaseReport>, MergeError> {
    let mut by_id = std::collections::BTreeMap::new();
    for s in shares {
        for c in &s.report.cases {
            if let Some((earlier, _)) = by_id.insert(c.id.as_str(), (s.read, c)) {
                return Err(MergeError::Inconsistent {
                    path: s.read.path.clone(),
                    why: format!("case `{}` is also in {}", c.id, earlier.path.display()),
                });
            }
        }
    }
    let mut cases = Vec::with_capacity(order.len());
    for id in order {
        let (_, c) = by_id
            .remove(id.as_str())
            .ok_or_else(|| MergeError::Inconsistent {
                path: shares[0].read.path.clone(),
                why: format!("case `{id}` is in no part"),
            })?;
        cases.push(c.clone());
    }
    if let Some((_, c)) = by_id.into_values().next() {
        return Err(MergeError::Inconsistent {
            path: shares[0].read.path.clone(),
            why: format!("case `{}` is not in the work to split", c.id),
        });
    }
    let statuses = cases.iter().map(|c| c.status);
    if let Some((from, in_a_row)) = give_up_point(statuses, give_up_after) {
        for c in &mut cases[from..] {
            c.status = Status::Error;
            c.failure = Some(failure_report(&given_up_failure(in_a_row), c.level));
            c.unclaimed = Vec::new();
            c.transcript = Vec::new();
        }
    }
    Ok(cases)
}

fn merged_simulation(
    shares: &[Share],
    first_seed: u64,
    seeds: u64,
    level: Level,
) -> Result<SimulationReport, MergeError> {
    let base = &shares[0].report.simulation;
    let runs: Vec<Runs> = shares
        .iter()
        .map(|s| Runs {
            read: s.read,
            counts: s.runs,
            violation: s.report.simulation.violation.as_ref().map(|v| v.seed),
            skipped: base.skipped.is_some(),
        })
        .collect();
    let (played, totals, found) = one_batch(&runs, first_seed, seeds)?;
    // Each shard checked its own seeds (`--check-determinism`): together,
    // every seed any of them played twice.
    let checks: Vec<&DeterminismReport> = shares
        .iter()
        .filter_map(|s| s.report.simulation.determinism.as_ref())
        .collect();
    let determinism = (!checks.is_empty()).then(|| DeterminismReport::merged(checks));
    let verdict = SimVerdict::of(base.skipped.is_some(), found.is_some(), true)
        .unless_nondeterministic(determinism.as_ref().is_some_and(|d| d.diverged()));
    // A part whose crashes could only kill makes the whole kill-only:
    // a weaker check is never reported as the full one.
    let durability = shares
        .iter()
        .filter_map(|s| s.report.simulation.durability.clone())
        .max_by_key(|d| d.kill_only());
    Ok(SimulationReport {
        violation: found.and_then(|i| shares[i].report.simulation.violation.clone()),
        durability,
        determinism,
        ..simulation_counts(verdict, base.skipped.clone(), played, &totals, level)
    })
}

fn merged_exploration(shares: &[Share], order: &[String]) -> Result<ExplorationReport, MergeError> {
    let base = &shares[0].report.exploration;
    if base.skipped.is_some() {
        return Ok(base.clone());
    }
    let mut by_scope = std::collections::BTreeMap::new();
    for s in shares {
        for x in &s.report.exploration.scopes {
            by_scope.insert(x.scope.as_str(), (s, x));
        }
    }
    // Scopes are explored in order up to the first violation.
    let mut scopes = Vec::new();
    let mut violation = None;
    for id in order {
        let (s, x) = by_scope
            .get(id.as_str())
            .ok_or_else(|| MergeError::Inconsistent {
                path: shares[0].read.path.clone(),
                why: format!("scope `{id}` is in no part"),
            })?;
        scopes.push((*x).clone());
        if x.verdict == ScopeVerdict::Violation {
            violation = s.report.exploration.violation.clone();
            break;
        }
    }
    let complete = scopes
        .iter()
        .all(|x| x.verdict != ScopeVerdict::NotExhausted);
    let verdict = SimVerdict::of(false, violation.is_some(), complete);
    Ok(ExplorationReport {
        verdict: Some(verdict),
        skipped: None,
        scopes,
        violation,
    })
}
