//! The simulation part of a certification report: its counts, its
//! situations, what a crash took, and its counterexample drawn as a
//! sequence.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use tern_harness::certify::{SimVerdict, SimulationRun};
use tern_harness::contract::plugin::Durability;
use tern_harness::corpus::{Corpus, Level};
use tern_harness::shorthand;
use tern_harness::simulator::happening::{notes, Happening};
use tern_harness::simulator::runner::Stats;

use super::{clause_texts, frame_fields, ClauseText};
use crate::determinism::DeterminismReport;
use crate::differences::{self, Difference};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimulationReport {
    pub verdict: SimVerdict,
    pub skipped: Option<String>,
    pub runs: u64,
    pub deliveries: u64,
    pub executions: u64,
    pub effects: u64,
    pub checks: u64,
    pub faults: BTreeMap<String, u64>,
    pub violation: Option<ViolationReport>,
    /// How often the simulation reached each situation of the catalogue
    /// (docs/simulator.md), in catalogue order. Absent from reports written
    /// before the catalogue existed.
    #[serde(default)]
    pub situations: Vec<SituationCount>,
    /// The situations it never reached.
    #[serde(default)]
    pub missed: Vec<String>,
    /// Over the protocol, what a crash took: `power-loss`, or `kill-only`
    /// when FUSE was unavailable, which never checked a sync. Absent in
    /// tern-sim's process, where storage is simulated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub durability: Option<DurabilityReport>,
    /// What `--check-determinism` found; absent when not asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub determinism: Option<DeterminismReport>,
}

/// What a simulation's crashes took, for reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DurabilityReport {
    /// `power-loss` or `kill-only`.
    pub kind: String,
    /// The sentence terminals and pages show.
    pub label: String,
}

impl DurabilityReport {
    pub fn of(d: &Durability) -> Option<DurabilityReport> {
        (*d != Durability::Simulated).then(|| DurabilityReport {
            kind: d.name().to_owned(),
            label: d.label(),
        })
    }

    /// Whether syncs went unchecked: a certification made so says it.
    pub fn kill_only(&self) -> bool {
        self.kind == "kill-only"
    }
}

/// One situation and how often a simulation reached it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SituationCount {
    pub situation: String,
    pub family: String,
    pub count: u64,
    pub clauses: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ViolationReport {
    pub invariant: String,
    pub section: String,
    pub clauses: Vec<ClauseText>,
    pub seed: u64,
    pub agent: Option<String>,
    pub expected: String,
    pub actual: String,
    /// Where `expected` and `actual` differ, when both are JSON (a view):
    /// path by path. Absent when they are prose, or equal.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub differences: Vec<Difference>,
    /// The one command that plays this failure again.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reproduce: String,
    /// The file in the report folder holding the shrunk run as a trace,
    /// for `tern-sim replay`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// The file in the report folder holding everything the implementation
    /// wrote on stderr while the shrunk run played (subprocesses only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
    pub original_steps: usize,
    pub shrunk_steps: usize,
    /// The shrunk run in the seed's shorthand, one line per event, with
    /// faults (`⚡`, `↺`, `⌁`...) interleaved.
    pub shorthand: Vec<String>,
    /// The same run as events, for the sequence diagram.
    pub sequence: Vec<SeqEvent>,
}

/// One event of a shrunk run (see `tern_harness::simulator::happening`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeqEvent {
    /// Virtual milliseconds.
    pub at: u64,
    /// `send`, `deliver`, `lost`, `fault`, `execute` or `violation`.
    pub kind: String,
    /// The message, for `send`, `deliver` and `lost`.
    pub message: Option<usize>,
    /// The agent it concerns (the sender for `send`).
    pub agent: Option<String>,
    /// Recipients, for `send`.
    pub to: Vec<String>,
    pub text: String,
    /// The raw frame, for `send` (UTF-8; otherwise base64 in `frame_base64`).
    pub frame: Option<String>,
    pub frame_base64: Option<String>,
    /// A `send` forged by the adversary.
    pub spoofed: bool,
}

/// A happening as a sequence diagram's event; the notes that only say
/// what will happen next (a second copy, a clock set) have no arrow.
fn seq_event(h: &Happening) -> Option<SeqEvent> {
    let mut e = SeqEvent {
        at: 0,
        kind: String::new(),
        message: None,
        agent: None,
        to: Vec::new(),
        text: String::new(),
        frame: None,
        frame_base64: None,
        spoofed: false,
    };
    match h {
        Happening::Send {
            at,
            index,
            from,
            to,
            frame,
            spoofed,
        } => {
            let (f, b) = frame_fields(frame);
            e = SeqEvent {
                at: *at,
                kind: "send".into(),
                message: Some(*index),
                agent: Some(from.clone()),
                to: to.clone(),
                text: shorthand::line(frame, Some(from)),
                frame: f,
                frame_base64: b,
                spoofed: *spoofed,
            };
        }
        Happening::Deliver {
            at,
            index,
            to,
            outcome,
        } => {
            e.at = *at;
            e.kind = "deliver".into();
            e.message = Some(*index);
            e.agent = Some(to.clone());
            e.text = outcome.to_string();
        }
        Happening::Lost { at, index, to, .. } => {
            e.at = *at;
            e.kind = "lost".into();
            e.message = Some(*index);
            e.agent = Some(to.clone());
            e.text = "lost; retransmitted".into();
        }
        Happening::Fault { at, agent, fault } => {
            e.at = *at;
            e.kind = "fault".into();
            e.agent = Some(agent.clone());
            e.text = fault.label(agent);
        }
        Happening::Execute {
            at,
            agent,
            id,
            result,
        } => {
            e.at = *at;
            e.kind = "execute".into();
            e.agent = Some(agent.clone());
            e.text = format!("executes {id}: {result}");
        }
        Happening::SecondCopy { .. } | Happening::Clock { .. } => return None,
        Happening::Violation { at, agent, failure } => {
            e.at = *at;
            e.kind = "violation".into();
            e.agent = agent.clone();
            e.text = format!("✘ {}", failure.line());
        }
    }
    Some(e)
}

/// The situations a simulation at `level` can reach, with their counts: at
/// `core`, the broken frames only the profile reads are not sent.
fn situation_counts(stats: &Stats, level: Level) -> Vec<SituationCount> {
    let core = level == Level::Core;
    stats
        .situations
        .iter()
        .filter(|(s, _)| (!core || s.at_core()) && stats.shows(*s))
        .map(|(s, n)| SituationCount {
            situation: s.name(),
            family: s.family().to_owned(),
            count: n,
            clauses: s.clauses().iter().map(|c| (*c).to_owned()).collect(),
        })
        .collect()
}

pub(crate) fn simulation_report(
    sim: &SimulationRun,
    corpus: &Corpus,
    level: Level,
) -> SimulationReport {
    SimulationReport {
        violation: violation_report(sim, corpus),
        durability: if sim.runs == 0 {
            None
        } else {
            DurabilityReport::of(&sim.durability)
        },
        determinism: sim.determinism.as_ref().map(DeterminismReport::of),
        ..simulation_counts(
            sim.verdict(),
            sim.skipped.clone(),
            sim.runs,
            &sim.stats,
            level,
        )
    }
}

/// A simulation's report without its counterexample: what its runs add up to.
pub(crate) fn simulation_counts(
    verdict: SimVerdict,
    skipped: Option<String>,
    runs: u64,
    stats: &Stats,
    level: Level,
) -> SimulationReport {
    let situations = if runs == 0 {
        Vec::new()
    } else {
        situation_counts(stats, level)
    };
    let missed = situations
        .iter()
        .filter(|s| s.count == 0)
        .map(|s| s.situation.clone())
        .collect();
    SimulationReport {
        verdict,
        skipped,
        runs,
        deliveries: stats.deliveries,
        executions: stats.executions,
        effects: stats.effects,
        checks: stats.checks,
        faults: stats
            .faults
            .iter()
            .map(|(k, v)| ((*k).to_owned(), *v))
            .collect(),
        situations,
        missed,
        violation: None,
        durability: None,
        determinism: None,
    }
}

fn violation_report(sim: &SimulationRun, corpus: &Corpus) -> Option<ViolationReport> {
    sim.counterexample.as_ref().map(|ce| ViolationReport {
        invariant: ce.violation.failure.invariant.name.to_owned(),
        section: ce.violation.failure.invariant.section.to_owned(),
        clauses: clause_texts(corpus, ce.violation.failure.invariant.clauses),
        seed: ce.config.seed,
        agent: ce.violation.agent.clone(),
        expected: ce.violation.failure.expected.clone(),
        actual: ce.violation.failure.actual.clone(),
        differences: differences::of_texts(
            &ce.violation.failure.expected,
            &ce.violation.failure.actual,
        ),
        reproduce: String::new(),
        trace: None,
        stderr: None,
        original_steps: ce.original_len,
        shrunk_steps: ce.steps.len(),
        shorthand: notes(&ce.happenings),
        sequence: ce.happenings.iter().filter_map(seq_event).collect(),
    })
}
