//! Building a report from what certification ran: each case, failure,
//! exploration and verdict turned into the report's data model, which
//! every rendering then reads. The one place results become report data,
//! so that a merged report (src/shards/) is built from the same pieces.

use std::collections::BTreeMap;

use base64::Engine;
use tern_harness::certify::{
    counts_at, reproduce, Certification, Conformance, Coverage, ExplorationRun, Judgement,
};
use tern_harness::corpus::clauses::Clause;
use tern_harness::corpus::play::{CaseRun, Exchange, Status, StepFailure};
use tern_harness::corpus::{Case, Corpus, Level};

use super::{
    files, latency, simulation_report, BudgetReport, CaseReport, ClauseText, CorpusInfo,
    ExplorationReport, ExploreViolationReport, FailureReport, ImplReport, Report, ScopeReport,
    SimulationReport, StepReport, VerdictReport, SCHEMA,
};
use crate::differences;

pub(crate) fn frame_fields(b: &[u8]) -> (Option<String>, Option<String>) {
    match std::str::from_utf8(b) {
        Ok(s) => (Some(s.to_owned()), None),
        Err(_) => (
            None,
            Some(base64::engine::general_purpose::STANDARD.encode(b)),
        ),
    }
}

fn step_report(x: &Exchange) -> StepReport {
    let (frame, frame_base64) = x.frame().map_or((None, None), frame_fields);
    StepReport {
        step: x.step,
        op: x.op().to_owned(),
        sender: x.sender().map(str::to_owned),
        gloss: x.gloss(),
        frame,
        frame_base64,
        answer: x.answer(),
        fault: x.fault().map(str::to_owned),
        ok: x.ok,
    }
}

fn case_report(case: &Case, run: &CaseRun) -> CaseReport {
    CaseReport {
        id: case.id.clone(),
        title: case.title.clone(),
        level: case.level,
        section: case.section(),
        participant: case.setup.participant.to_string(),
        status: run.status,
        clauses: case
            .clauses
            .iter()
            .map(|c| ClauseText {
                id: c.id.clone(),
                section: c.section,
                sentence: c.sentence.clone(),
            })
            .collect(),
        invariants: case.invariants.iter().map(|i| i.name.to_owned()).collect(),
        failure: run.failure.as_ref().map(|f| failure_report(f, case.level)),
        unclaimed: run
            .unclaimed
            .iter()
            .map(|c| c.as_str().to_owned())
            .collect(),
        transcript: if run.status.is_failure() {
            run.transcript.iter().map(step_report).collect()
        } else {
            Vec::new()
        },
    }
}

fn clause_text(c: &Clause) -> ClauseText {
    ClauseText {
        id: c.id.clone(),
        section: c.section,
        sentence: c.sentence.clone(),
    }
}

/// The registry's texts of the clauses `ids` names.
pub(crate) fn clause_texts(corpus: &Corpus, ids: &[&str]) -> Vec<ClauseText> {
    ids.iter()
        .filter_map(|id| corpus.clauses.get(id))
        .map(clause_text)
        .collect()
}

/// A case's failure, counted at `profile` when only names differ.
pub(crate) fn failure_report(f: &StepFailure, case_level: Level) -> FailureReport {
    FailureReport {
        step: f.step,
        op: f.op.to_owned(),
        check: f.check.name().to_owned(),
        expected: f.expected.clone(),
        actual: f.actual.clone(),
        differences: differences::of_texts(&f.expected, &f.actual),
        reproduce: String::new(),
        stderr: None,
        level: counts_at(case_level, Some(f)),
    }
}

fn exploration_report(run: &ExplorationRun, corpus: &Corpus, flag: &str) -> ExplorationReport {
    ExplorationReport {
        verdict: Some(run.verdict()),
        skipped: run.skipped.clone(),
        scopes: run
            .scopes
            .iter()
            .map(|x| {
                let e = &x.exploration;
                ScopeReport {
                    scope: x.id.clone(),
                    clauses: x.clauses.clone(),
                    verdict: e.verdict(),
                    states: e.counts.states,
                    schedules: e.counts.schedules,
                    transitions: e.counts.transitions,
                }
            })
            .collect(),
        violation: run.violation().and_then(|x| {
            let ce = x.exploration.violation.as_ref()?;
            let inv = ce.failure.invariant;
            Some(ExploreViolationReport {
                scope: x.id.clone(),
                invariant: inv.name.to_owned(),
                section: inv.section.to_owned(),
                clauses: clause_texts(corpus, inv.clauses),
                expected: ce.failure.expected.clone(),
                actual: ce.failure.actual.clone(),
                differences: differences::of_texts(&ce.failure.expected, &ce.failure.actual),
                schedule: x.shorthand.clone(),
                reproduce: reproduce::scope(&x.id, flag),
            })
        }),
    }
}

/// An implementation's verdict and tally from its conformance; the rest
/// of the report is left empty for the caller to fill.
pub(crate) fn judged(conformance: &Conformance, level: Level, coverage: Coverage) -> ImplReport {
    let tally = conformance
        .by_level
        .iter()
        .map(|(l, t)| {
            (
                l.as_str().to_owned(),
                Status::ALL
                    .iter()
                    .map(|s| (s.as_str().to_owned(), t.get(*s)))
                    .collect(),
            )
        })
        .collect();
    ImplReport {
        label: String::new(),
        name: String::new(),
        version: None,
        capabilities: Vec::new(),
        start_error: None,
        flag: String::new(),
        verdict: VerdictReport::from(conformance.judge(level, coverage)),
        tally,
        cases: Vec::new(),
        simulation: SimulationReport::default(),
        exploration: ExplorationReport::default(),
    }
}

impl Report {
    pub fn build(
        corpus: &Corpus,
        cases: &[&Case],
        filter: Option<&str>,
        level: Level,
        budget: &tern_harness::certify::Budget,
        interrupted: bool,
        results: &[Certification],
    ) -> Report {
        let by_id: BTreeMap<&str, &Case> = cases.iter().map(|c| (c.id.as_str(), *c)).collect();
        let selection = filter.is_some() || cases.len() < corpus.cases.len();
        let coverage = Coverage::of(selection, interrupted);
        let implementations = results
            .iter()
            .map(|r| {
                let conformance = Conformance::of(cases, &r.corpus, &r.simulation, &r.exploration);
                let (name, version, capabilities, start_error) = match &r.corpus.identity {
                    Ok(i) => (
                        i.name.clone(),
                        i.version.clone(),
                        i.capabilities
                            .iter()
                            .map(|c| c.as_str().to_owned())
                            .collect(),
                        None,
                    ),
                    Err(e) => (r.label.clone(), None, Vec::new(), Some(e.clone())),
                };
                ImplReport {
                    label: r.label.clone(),
                    name,
                    version,
                    capabilities,
                    start_error,
                    flag: r.flag.trim_start().to_owned(),
                    cases: r
                        .corpus
                        .cases
                        .iter()
                        .filter_map(|run| by_id.get(run.id.as_str()).map(|c| case_report(c, run)))
                        .collect(),
                    simulation: simulation_report(&r.simulation, corpus, level),
                    exploration: exploration_report(&r.exploration, corpus, &r.flag),
                    ..judged(&conformance, level, coverage)
                }
            })
            .collect();
        let mut report = Report {
            schema: SCHEMA.to_owned(),
            tern_sim_version: env!("CARGO_PKG_VERSION").to_owned(),
            corpus: CorpusInfo {
                hash: corpus.hash.clone(),
                clauses: corpus.clauses.all().len(),
                cases: cases.len(),
                filter: filter.map(str::to_owned),
            },
            level_requested: level,
            simulation_budget: BudgetReport {
                first_seed: budget.first_seed,
                seeds: budget.seeds,
                agents: budget.agents,
                steps: budget.steps,
                faults: budget.faults.names(),
                names: budget.names.as_str().to_owned(),
                duration: None,
            },
            interrupted,
            clauses: corpus.clauses.all().iter().map(clause_text).collect(),
            implementations,
            shards: None,
            scopes_left_out: Vec::new(),
            baseline: None,
            attachments: BTreeMap::new(),
            latency: None,
        };
        files::attach(&mut report, results);
        for imp in &mut report.implementations {
            imp.set_reproduce(level, budget.agents, budget.steps);
        }
        report.latency = latency::of(
            &report.implementations,
            results,
            level,
            budget.agents,
            budget.steps,
        );
        report
    }
}

impl From<Judgement> for VerdictReport {
    fn from(j: Judgement) -> VerdictReport {
        VerdictReport {
            certified: j.certified,
            level: j.level,
            core: j.core,
            profile: j.profile,
            simulation: j.simulation,
            exploration: Some(j.exploration),
        }
    }
}
