//! What changed since an earlier certification: each failure of a report
//! is New (it did not fail in the baseline) or Ongoing (it failed there
//! too), and what failed in the baseline and passes now is Resolved. A
//! vendor fixing one defect at a time reads the New ones first, since
//! those are what their last change broke.
//!
//! `certify --baseline` records the classification in report.json, from
//! which every rendering marks its failures; `diff` prints the same
//! classification of its two reports. Both go through [`classify`].

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tern_harness::corpus::play::Status;

use super::validate::{pointer_of, validate};
use super::{ImplReport, Report};
use crate::escape::t;

/// Why a report to compare against cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{}: cannot read: {source}", path.display())]
    Unreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: not a tern-sim report: at {}: {message}", path.display(), display_pointer(pointer))]
    NotAReport {
        path: PathBuf,
        /// JSON pointer (RFC 6901) of the first value that is wrong.
        pointer: String,
        message: String,
    },
}

/// The root pointer is empty, which reads badly in a sentence.
fn display_pointer(p: &str) -> &str {
    if p.is_empty() {
        "the top level"
    } else {
        p
    }
}

/// Reads and checks a report.json, for `diff` and for `certify
/// --baseline`: a file that is not one is refused with its name and the
/// place of the first thing wrong, rather than compared wrongly.
pub fn load(path: &Path) -> Result<Report, LoadError> {
    let bytes = std::fs::read(path).map_err(|source| LoadError::Unreadable {
        path: path.to_path_buf(),
        source,
    })?;
    parse(path, &bytes)
}

/// [`load`] of bytes already read from `path`.
pub fn parse(path: &Path, bytes: &[u8]) -> Result<Report, LoadError> {
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    let report: Report =
        serde_path_to_error::deserialize(de).map_err(|e| LoadError::NotAReport {
            path: path.to_path_buf(),
            pointer: pointer_of(e.path()),
            message: e.inner().to_string(),
        })?;
    validate(&report).map_err(|e| LoadError::NotAReport {
        path: path.to_path_buf(),
        pointer: e.pointer,
        message: e.message,
    })?;
    Ok(report)
}

/// What the baseline was, and how each implementation's failures compare
/// with it: the `baseline` member of report.json.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaselineReport {
    /// The baseline's report.json as it was named on the command line.
    pub path: String,
    pub tern_sim_version: String,
    pub corpus_hash: String,
    /// One per implementation of this report, in its order.
    pub implementations: Vec<ImplChanges>,
}

/// One implementation's failures against the baseline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImplChanges {
    pub label: String,
    /// The label of the baseline's implementation it was compared with,
    /// or null when the baseline has none to match (everything is New).
    pub compared_with: Option<String>,
    /// Case IDs.
    pub cases: Changes,
    /// Clause IDs broken by a failing case, the simulation or the
    /// exploration.
    pub clauses: Changes,
}

/// New and Ongoing in this report's order; Resolved in the baseline's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Changes {
    pub new: Vec<String>,
    pub ongoing: Vec<String>,
    pub resolved: Vec<String>,
}

/// A failure's standing against the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    New,
    Ongoing,
}

impl Mark {
    pub fn as_str(self) -> &'static str {
        match self {
            Mark::New => "new",
            Mark::Ongoing => "ongoing",
        }
    }
}

impl Changes {
    /// Whether `id` is New or Ongoing here, if it is either.
    pub fn mark(&self, id: &str) -> Option<Mark> {
        if self.new.iter().any(|x| x == id) {
            Some(Mark::New)
        } else if self.ongoing.iter().any(|x| x == id) {
            Some(Mark::Ongoing)
        } else {
            None
        }
    }
}

impl BaselineReport {
    /// The changes of the implementation with this label.
    pub fn of(&self, label: &str) -> Option<&ImplChanges> {
        self.implementations.iter().find(|i| i.label == label)
    }

    /// Anything that fails now and did not in the baseline.
    pub fn has_new(&self) -> bool {
        self.implementations
            .iter()
            .any(|i| !i.cases.new.is_empty() || !i.clauses.new.is_empty())
    }

    /// Why New and Resolved may not all be the implementation's doing:
    /// the corpus or the baseline's selection differed.
    pub fn notes(&self, current_hash: &str) -> Vec<String> {
        let mut notes = Vec::new();
        if self.corpus_hash != current_hash {
            notes.push(format!(
                "the baseline was made from another corpus ({} here {}): cases may have changed, so New and Resolved may come from the corpus rather than the implementation",
                short_hash(&self.corpus_hash),
                short_hash(current_hash)
            ));
        }
        notes
    }
}

fn short_hash(h: &str) -> &str {
    h.get(..12).unwrap_or(h)
}

/// The clauses `i` breaks, in report order, each once: a failing case's,
/// the simulation violation's and the exploration violation's.
pub fn broken_clause_ids(i: &ImplReport) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let cases = i
        .cases
        .iter()
        .filter(|c| c.failed())
        .flat_map(|c| c.clauses.iter());
    let simulation = i.simulation.violation.iter().flat_map(|v| v.clauses.iter());
    let exploration = i
        .exploration
        .violation
        .iter()
        .flat_map(|v| v.clauses.iter());
    cases
        .chain(simulation)
        .chain(exploration)
        .filter(|c| seen.insert(c.id.clone()))
        .map(|c| c.id.clone())
        .collect()
}

/// Pairs each implementation of `new` with its counterpart in `old`, if
/// any: with one implementation on each side, those two whatever their
/// labels (the usual CI case, where a path in `--impl` may move);
/// otherwise the one of the same label. Labels are unique within a
/// report (validate refuses a repeated one).
pub fn pairs<'a>(
    old: &'a Report,
    new: &'a Report,
) -> Vec<(Option<&'a ImplReport>, &'a ImplReport)> {
    if let ([o], [n]) = (
        old.implementations.as_slice(),
        new.implementations.as_slice(),
    ) {
        return vec![(Some(o), n)];
    }
    new.implementations
        .iter()
        .map(|n| (old.implementations.iter().find(|o| o.label == n.label), n))
        .collect()
}

/// `new`'s failures against `old`'s. A failure is New when `old` has no
/// counterpart implementation or did not fail it; Resolved needs the case
/// to pass now (a case this run did not play, or that no longer applies,
/// is neither), and a clause to be cited by a case that passed now.
pub fn compare(old: Option<&ImplReport>, new: &ImplReport) -> ImplChanges {
    let failing_now: Vec<&str> = new
        .cases
        .iter()
        .filter(|c| c.failed())
        .map(|c| c.id.as_str())
        .collect();
    let failing_before: BTreeSet<&str> = old
        .map(|o| {
            o.cases
                .iter()
                .filter(|c| c.failed())
                .map(|c| c.id.as_str())
                .collect()
        })
        .unwrap_or_default();
    let passing_now: BTreeSet<&str> = new
        .cases
        .iter()
        .filter(|c| c.status == Status::Pass)
        .map(|c| c.id.as_str())
        .collect();
    let mut cases = Changes::default();
    for id in &failing_now {
        if failing_before.contains(id) {
            cases.ongoing.push((*id).to_owned());
        } else {
            cases.new.push((*id).to_owned());
        }
    }
    if let Some(o) = old {
        cases.resolved = o
            .cases
            .iter()
            .filter(|c| c.failed() && passing_now.contains(c.id.as_str()))
            .map(|c| c.id.clone())
            .collect();
    }
    let broken_now = broken_clause_ids(new);
    let broken_before: Vec<String> = old.map(broken_clause_ids).unwrap_or_default();
    let broken_now_set: BTreeSet<&str> = broken_now.iter().map(String::as_str).collect();
    let checked_now: BTreeSet<&str> = new
        .cases
        .iter()
        .filter(|c| c.status == Status::Pass)
        .flat_map(|c| c.clauses.iter().map(|cl| cl.id.as_str()))
        .collect();
    let mut clauses = Changes::default();
    for id in &broken_now {
        if broken_before.contains(id) {
            clauses.ongoing.push(id.clone());
        } else {
            clauses.new.push(id.clone());
        }
    }
    clauses.resolved = broken_before
        .iter()
        .filter(|id| !broken_now_set.contains(id.as_str()) && checked_now.contains(id.as_str()))
        .cloned()
        .collect();
    ImplChanges {
        label: new.label.clone(),
        compared_with: old.map(|o| o.label.clone()),
        cases,
        clauses,
    }
}

/// The classification of every implementation of `new` against `old`,
/// recorded as coming from `path`.
pub fn classify(path: &str, old: &Report, new: &Report) -> BaselineReport {
    BaselineReport {
        path: path.to_owned(),
        tern_sim_version: old.tern_sim_version.clone(),
        corpus_hash: old.corpus.hash.clone(),
        implementations: pairs(old, new)
            .into_iter()
            .map(|(o, n)| compare(o, n))
            .collect(),
    }
}

/// `ids` as one line: the first `max`, then "and N more".
fn listed(ids: &[String], max: usize) -> String {
    let mut out = ids
        .iter()
        .take(max)
        .map(|s| t(s))
        .collect::<Vec<_>>()
        .join(", ");
    if ids.len() > max {
        out.push_str(&format!(" and {} more", ids.len() - max));
    }
    out
}

/// Cases listed by name in a line of text before "and N more".
const MAX_LISTED: usize = 20;

/// For people (the terminal, summary.txt and `diff`): one implementation's
/// counts, then its Resolved cases and its New and Resolved clauses.
pub fn lines(c: &ImplChanges, indent: &str) -> String {
    let mut out = format!(
        "{indent}since the baseline{}: {} new, {} ongoing, {} resolved failing case(s); clauses: {} new, {} ongoing, {} resolved\n",
        match &c.compared_with {
            None => " (no such implementation there: everything is new)".to_owned(),
            Some(o) if *o != c.label => format!(" (compared with `{}`)", t(o)),
            Some(_) => String::new(),
        },
        c.cases.new.len(),
        c.cases.ongoing.len(),
        c.cases.resolved.len(),
        c.clauses.new.len(),
        c.clauses.ongoing.len(),
        c.clauses.resolved.len(),
    );
    let named = [
        ("new cases", &c.cases.new),
        ("resolved cases", &c.cases.resolved),
        ("new clauses", &c.clauses.new),
        ("resolved clauses", &c.clauses.resolved),
    ];
    for (what, ids) in named {
        if !ids.is_empty() {
            out.push_str(&format!("{indent}  {what}: {}\n", listed(ids, MAX_LISTED)));
        }
    }
    out
}

/// The line that says what the baseline was, then its notes.
pub fn heading(b: &BaselineReport, current_hash: &str) -> String {
    let mut out = format!(
        "baseline: {} (tern-sim {}, corpus {})\n",
        t(&b.path),
        t(&b.tern_sim_version),
        t(short_hash(&b.corpus_hash))
    );
    for n in b.notes(current_hash) {
        out.push_str(&format!("note: {}\n", t(&n)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::certify::{
        CaseReport, ClauseText, ExplorationReport, SimulationReport, VerdictReport,
    };

    fn case(id: &str, status: &str, clause: &str) -> CaseReport {
        CaseReport {
            id: id.into(),
            title: String::new(),
            level: tern_harness::corpus::Level::Core,
            section: 1,
            participant: "bob".into(),
            status: Status::from_name(status).expect("a status tern-sim writes"),
            clauses: vec![ClauseText {
                id: clause.into(),
                section: 1,
                sentence: String::new(),
            }],
            invariants: Vec::new(),
            failure: None,
            unclaimed: Vec::new(),
            transcript: Vec::new(),
        }
    }

    fn imp(label: &str, cases: Vec<CaseReport>) -> ImplReport {
        ImplReport {
            label: label.into(),
            name: label.into(),
            version: None,
            capabilities: Vec::new(),
            start_error: None,
            flag: String::new(),
            verdict: VerdictReport {
                certified: false,
                level: None,
                core: false,
                profile: false,
                simulation: tern_harness::certify::SimVerdict::NotRun,
                exploration: None,
            },
            tally: Default::default(),
            cases,
            simulation: SimulationReport::default(),
            exploration: ExplorationReport::default(),
        }
    }

    #[test]
    fn failures_are_new_ongoing_or_resolved() {
        let old = imp(
            "a",
            vec![
                case("c1", "fail", "S1.1"),
                case("c2", "error", "S1.2"),
                case("c3", "pass", "S1.3"),
                case("c4", "fail", "S1.4"),
                case("c5", "fail", "S1.5"),
            ],
        );
        let new = imp(
            "a",
            vec![
                case("c1", "pass", "S1.1"),
                case("c2", "fail", "S1.2"),
                case("c3", "false_claim", "S1.3"),
                case("c4", "not_applicable", "S1.4"),
                case("c6", "fail", "S1.6"),
            ],
        );
        let c = compare(Some(&old), &new);
        assert_eq!(c.cases.new, ["c3", "c6"]);
        assert_eq!(c.cases.ongoing, ["c2"]);
        // c4 no longer applies and c5 did not run: neither is resolved.
        assert_eq!(c.cases.resolved, ["c1"]);
        assert_eq!(c.clauses.new, ["S1.3", "S1.6"]);
        assert_eq!(c.clauses.ongoing, ["S1.2"]);
        assert_eq!(c.clauses.resolved, ["S1.1"]);
        assert_eq!(c.cases.mark("c6"), Some(Mark::New));
        assert_eq!(c.cases.mark("c2"), Some(Mark::Ongoing));
        assert_eq!(c.cases.mark("c1"), None);
    }

    #[test]
    fn an_implementation_missing_from_the_baseline_has_everything_new() {
        let new = imp("b", vec![case("c1", "fail", "S1.1")]);
        let c = compare(None, &new);
        assert_eq!(c.cases.new, ["c1"]);
        assert!(c.cases.ongoing.is_empty() && c.cases.resolved.is_empty());
        assert_eq!(c.compared_with, None);
        assert!(lines(&c, "").contains("everything is new"));
    }

    #[test]
    fn a_garbage_file_is_refused_with_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.json");
        std::fs::write(&path, b"{\"schema\": 3").unwrap();
        let e = load(&path).unwrap_err();
        assert!(matches!(e, LoadError::NotAReport { .. }), "{e}");
        assert!(e.to_string().contains("old.json"), "{e}");
        let missing = dir.path().join("absent.json");
        let e = load(&missing).unwrap_err();
        assert!(matches!(e, LoadError::Unreadable { .. }), "{e}");
        assert!(e.to_string().contains("absent.json"), "{e}");
    }
}
