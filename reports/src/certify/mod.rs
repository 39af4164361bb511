//! The certification report: one data model (`report.json`, documented in
//! docs/certify.md) from which every rendering is made, and which `diff`
//! reads back. Nothing in it depends on the clock or the machine, so the
//! same seed, corpus and version give the same bytes.

pub mod annotations;
pub mod badge;
pub mod baseline;
pub mod diagram;
pub mod diff;
pub mod files;
pub mod html;
pub mod junit;
pub mod latency;
pub mod markdown;
pub mod simulation;
pub mod terminal;
pub mod validate;
pub mod write;

mod build;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use tern_harness::certify::{reproduce, Coverage, SimVerdict};
use tern_harness::corpus::play::Status;
use tern_harness::corpus::Level;
use tern_harness::explore::search::ScopeVerdict;

use crate::differences::Difference;
pub(crate) use build::{clause_texts, failure_report, frame_fields, judged};
pub(crate) use simulation::{simulation_counts, simulation_report};
pub use simulation::{
    DurabilityReport, SeqEvent, SimulationReport, SituationCount, ViolationReport,
};

pub const SCHEMA: &str = "tern-sim/report/1";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Report {
    pub schema: String,
    pub tern_sim_version: String,
    pub corpus: CorpusInfo,
    /// The level asked for with `--level`.
    pub level_requested: Level,
    pub simulation_budget: BudgetReport,
    /// True when Ctrl-C (or SIGTERM) cut the run short: what is here is
    /// complete for what ran, and nothing more is claimed.
    pub interrupted: bool,
    /// Every clause of the registry, so the report stands alone.
    pub clauses: Vec<ClauseText>,
    pub implementations: Vec<ImplReport>,
    /// Present only in a report merged from shards (docs/scale.md): the
    /// rest is byte for byte what one machine would have written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shards: Option<ShardsRecord>,
    /// Built-in scopes not explored because the corpus lacks the case
    /// each is drawn from (a corpus of one's own, `--scenarios`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes_left_out: Vec<ScopeLeftOut>,
    /// Present only with `certify --baseline`: how each failure compares
    /// with the earlier report named there (New, Ongoing, Resolved).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<baseline::BaselineReport>,
    /// The files written beside the reports ([`files`]), by their path in
    /// the report folder: the members of report.json that name them are
    /// the record.
    #[serde(skip)]
    pub attachments: BTreeMap<String, String>,
    /// How fast the implementations over the protocol answered: written
    /// to latency.json, never into report.json, since times vary.
    #[serde(skip)]
    pub latency: Option<latency::LatencyReport>,
}

/// A built-in scope the corpus could not serve, as the explorer names it.
pub use tern_harness::explore::builtin::LeftOut as ScopeLeftOut;

/// The note that says which scopes were left out, and why.
pub fn scopes_left_out_note(left_out: &[ScopeLeftOut]) -> Option<String> {
    if left_out.is_empty() {
        return None;
    }
    let named: Vec<String> = left_out
        .iter()
        .map(|l| format!("{} (case `{}`)", l.scope, l.case))
        .collect();
    Some(format!(
        "exploration: {} built-in scope(s) left out, since this corpus lacks the case each is drawn from: {}",
        left_out.len(),
        named.join(", ")
    ))
}

/// How a merged report was made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardsRecord {
    /// N: the parts merged, one per shard.
    pub count: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CorpusInfo {
    pub hash: String,
    pub clauses: usize,
    pub cases: usize,
    /// The `--only` filter, when one was given.
    pub filter: Option<String>,
}

impl CorpusInfo {
    /// The corpus as people name it: the first 12 hexadecimal digits of its
    /// hash, as certify's first line and the badges print it.
    pub fn version(&self) -> &str {
        self.hash.get(..12).unwrap_or(&self.hash)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetReport {
    pub first_seed: u64,
    pub seeds: u64,
    pub agents: usize,
    pub steps: usize,
    pub faults: String,
    /// `compared` or `ignored`: whether the simulation held reject classes
    /// and refusal reasons to the model's (ignored for a `core` certification).
    pub names: String,
    /// A soak (`--duration`): each simulation played seeds from
    /// `first_seed` for this long, and `seeds` is the least it must have
    /// played to certify. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<String>,
}

impl BudgetReport {
    /// What a simulation of `runs` under this budget ran, said so that it
    /// can be run again.
    pub fn soak_line(&self, runs: u64) -> Option<String> {
        let d = self.duration.as_ref()?;
        let range = crate::run::seed_range(self.first_seed, runs);
        Some(format!(
            "soak of {d}: {runs} runs ({range}; again with --seed {} --seeds {runs}); certification needs at least {}",
            self.first_seed, self.seeds
        ))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImplReport {
    /// How it was named on the command line: `reference`, a mutant's
    /// name, or the `--impl` command.
    pub label: String,
    pub name: String,
    pub version: Option<String>,
    pub capabilities: Vec<String>,
    /// Why it could not start, when it could not.
    pub start_error: Option<String>,
    /// How a command line names it (`--mutant x`, `--impl 'c'`; nothing
    /// for the reference): what the reproduce commands use.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub flag: String,
    pub verdict: VerdictReport,
    /// Level → outcome → count.
    pub tally: BTreeMap<String, BTreeMap<String, usize>>,
    pub cases: Vec<CaseReport>,
    pub simulation: SimulationReport,
    /// Absent from reports written before certification explored scopes.
    #[serde(default)]
    pub exploration: ExplorationReport,
}

/// What exploring the built-in scopes found (docs/explore.md).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExplorationReport {
    /// `None` only in a report from before certification explored.
    #[serde(with = "absent_as_empty")]
    pub verdict: Option<SimVerdict>,
    pub skipped: Option<String>,
    /// One per scope explored, in order (the last one found the violation).
    pub scopes: Vec<ScopeReport>,
    pub violation: Option<ExploreViolationReport>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScopeReport {
    pub scope: String,
    pub clauses: Vec<String>,
    pub verdict: ScopeVerdict,
    pub states: u64,
    pub schedules: u64,
    pub transitions: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExploreViolationReport {
    pub scope: String,
    pub invariant: String,
    pub section: String,
    pub clauses: Vec<ClauseText>,
    pub expected: String,
    pub actual: String,
    /// Where `expected` and `actual` differ, when both are JSON (a view):
    /// path by path. Absent when they are prose, or equal.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub differences: Vec<Difference>,
    /// The shortest schedule that breaks it, one move per line.
    pub schedule: Vec<String>,
    /// The command that explores the scope again.
    pub reproduce: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerdictReport {
    /// Certified at the requested level.
    pub certified: bool,
    /// The highest level certified.
    pub level: Option<Level>,
    pub core: bool,
    pub profile: bool,
    pub simulation: SimVerdict,
    /// Absent from reports written before certification explored scopes.
    #[serde(default, with = "absent_as_empty")]
    pub exploration: Option<SimVerdict>,
}

/// The exploration's verdict, which a report from before certification
/// explored lacks: such a report reads it as `""`, and an absent verdict is
/// written so, which keeps every report the bytes it had.
mod absent_as_empty {
    use serde::{Deserialize, Deserializer, Serializer};
    use tern_harness::certify::SimVerdict;

    pub fn serialize<S: Serializer>(v: &Option<SimVerdict>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(v.map_or("", SimVerdict::as_str))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<SimVerdict>, D::Error> {
        let text = String::deserialize(d)?;
        if text.is_empty() {
            return Ok(None);
        }
        SimVerdict::from_name(&text).map(Some).ok_or_else(|| {
            let names: Vec<&str> = SimVerdict::ALL.iter().map(|v| v.as_str()).collect();
            serde::de::Error::custom(format!(
                "unknown verdict `{text}`, expected one of {}",
                names.join(", ")
            ))
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClauseText {
    pub id: String,
    pub section: u8,
    pub sentence: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseReport {
    pub id: String,
    pub title: String,
    pub level: Level,
    pub section: u8,
    /// The participant whose receiver was under test.
    pub participant: String,
    pub status: Status,
    pub clauses: Vec<ClauseText>,
    pub invariants: Vec<String>,
    pub failure: Option<FailureReport>,
    /// For `not_applicable`: the capabilities not claimed.
    pub unclaimed: Vec<String>,
    /// Every step as it happened: kept for failures only.
    pub transcript: Vec<StepReport>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FailureReport {
    pub step: usize,
    pub op: String,
    pub check: String,
    pub expected: String,
    pub actual: String,
    /// Where `expected` and `actual` differ, when both are JSON (a view):
    /// path by path. Absent when they are prose, or equal.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub differences: Vec<Difference>,
    /// The one command that plays this failure again.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reproduce: String,
    /// The file in the report folder holding everything the implementation
    /// wrote on stderr during the case (subprocesses only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
    /// `core` or `profile`: the level this failure counts at. A core case
    /// that fails only on a reject class or refusal name counts at
    /// `profile`, since those names are the profile's.
    pub level: Level,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepReport {
    pub step: usize,
    pub op: String,
    pub sender: Option<String>,
    pub gloss: String,
    /// The raw frame when it is UTF-8, otherwise in `frame_base64`.
    pub frame: Option<String>,
    pub frame_base64: Option<String>,
    pub answer: String,
    pub fault: Option<String>,
    pub ok: bool,
}

impl Report {
    /// How much of the work this report covers, as the harness judges it.
    pub fn coverage(&self) -> Coverage {
        Coverage::of(self.corpus.filter.is_some(), self.interrupted)
    }

    /// Why this report certifies nothing whatever its results, when it
    /// is cut short: a selection of cases (`--only`), or an interrupt.
    pub fn not_certifiable(&self) -> Option<String> {
        match self.coverage() {
            Coverage::Whole => None,
            Coverage::Interrupted => Some(
                "the run was interrupted: it covers only what ran before the signal".to_owned(),
            ),
            Coverage::Selection => Some(format!(
                "partial run: only the {} case(s) whose ID contains `{}` ran; certification needs every case of the corpus",
                self.corpus.cases,
                self.corpus.filter.as_deref().unwrap_or_default()
            )),
        }
    }

    /// A failing case's standing against the baseline, when there is one.
    pub fn case_mark(&self, label: &str, case: &str) -> Option<baseline::Mark> {
        self.baseline.as_ref()?.of(label)?.cases.mark(case)
    }

    /// Every implementation certified at the requested level.
    pub fn all_certified(&self) -> bool {
        !self.implementations.is_empty() && self.implementations.iter().all(|i| i.verdict.certified)
    }

    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
}

/// The seed sections that hold clauses, in order.
pub const SECTIONS: [u8; 6] = [1, 2, 3, 4, 5, 8];

/// How a section's cases ended for one implementation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SectionCounts {
    pub passed: usize,
    pub failed: usize,
    pub not_applicable: usize,
    pub total: usize,
}

impl CaseReport {
    pub fn failed(&self) -> bool {
        self.status.is_failure()
    }
}

impl ImplReport {
    /// Writes into each failure the one command that plays it again: a
    /// corpus case on its own, or the failing simulation run (which `run`
    /// shrinks and saves as a trace for `replay`). A `core` certification
    /// ignores names, which only certify can do, so its run is replayed
    /// through certify.
    pub fn set_reproduce(&mut self, level: Level, agents: usize, steps: usize) {
        let flag = self.flag_suffix();
        let commands: Vec<Option<String>> = self
            .cases
            .iter()
            .map(|c| c.failure.as_ref().map(|_| self.case_command(&c.id, level)))
            .collect();
        for (c, command) in self.cases.iter_mut().zip(commands) {
            if let (Some(f), Some(command)) = (&mut c.failure, command) {
                f.reproduce = command;
            }
        }
        let command = self
            .simulation
            .violation
            .as_ref()
            .map(|v| self.seed_command(v.seed, level, agents, steps));
        if let Some(v) = &mut self.simulation.violation {
            if let Some(trace) = &v.trace {
                // The shrunk run itself, played again exactly; `publish`
                // puts the report folder in front of the trace's path.
                v.reproduce = reproduce::replay(trace, &flag);
                return;
            }
            v.reproduce = command.unwrap_or_default();
        }
    }

    /// The one command that plays corpus case `id` again.
    pub fn case_command(&self, id: &str, level: Level) -> String {
        reproduce::case(id, level, &self.flag_suffix())
    }

    /// The one command that plays simulation run `seed` again.
    pub fn seed_command(&self, seed: u64, level: Level, agents: usize, steps: usize) -> String {
        reproduce::seed(seed, level, agents, steps, &self.flag_suffix())
    }

    /// ` --mutant x`, ` --impl '…'`, or nothing for the reference: what a
    /// reproduce command adds to name this implementation.
    pub fn flag_suffix(&self) -> String {
        if self.flag.is_empty() {
            String::new()
        } else {
            format!(" {}", self.flag)
        }
    }

    /// The files in the report folder that this implementation's failures
    /// name.
    pub fn files(&self) -> impl Iterator<Item = &str> {
        let cases = self
            .cases
            .iter()
            .filter_map(|c| c.failure.as_ref()?.stderr.as_deref());
        let run = self
            .simulation
            .violation
            .iter()
            .flat_map(|v| v.trace.iter().chain(&v.stderr))
            .map(String::as_str);
        cases.chain(run)
    }

    /// The highest level at which the corpus found the implementation
    /// conformant (`verdict.core`, `verdict.profile`), which every rendering
    /// states the same way. Certification also needs the simulation.
    pub fn conformant_level(&self) -> Option<&'static str> {
        if self.verdict.profile {
            Some("profile")
        } else if self.verdict.core {
            Some("core")
        } else {
            None
        }
    }

    /// The name reports print: name and version from `init`.
    pub fn title(&self) -> String {
        match &self.version {
            Some(v) => format!("{} {v}", self.name),
            None => self.name.clone(),
        }
    }

    pub fn section_counts(&self, section: u8) -> SectionCounts {
        let cases = self.cases.iter().filter(|c| c.section == section);
        let mut n = SectionCounts {
            passed: 0,
            failed: 0,
            not_applicable: 0,
            total: 0,
        };
        for c in cases {
            n.total += 1;
            match c.status {
                Status::Pass => n.passed += 1,
                Status::NotApplicable => n.not_applicable += 1,
                s if s.is_failure() => n.failed += 1,
                _ => {}
            }
        }
        n
    }
}

/// Seed section names, for headings.
pub fn section_title(n: u8) -> &'static str {
    match n {
        1 => "1. Encoding and grammar",
        2 => "2. Vocabulary: speech acts",
        3 => "3. Epistemics",
        4 => "4. Commitments and revision",
        5 => "5. Permission and trust",
        8 => "8. Conformance checklist",
        _ => "other",
    }
}
