//! The reports of a site gathered into implementations × versions.
//!
//! A report holds no date (its bytes depend only on the version, corpus
//! and seed), so the order of versions is the order in which the reports
//! are given: the publisher lists them oldest first. An implementation is
//! what it calls itself at `init` (`name`), not its label, since the
//! label of an implementation over the protocol is its command line,
//! which moves from one release to the next; a version is the `version`
//! it gives at `init`.

use std::collections::BTreeMap;

use tern_harness::certify::SimVerdict;
use tern_harness::corpus::play::Status;
use tern_harness::corpus::Level;

use crate::certify::baseline::{broken_clause_ids, compare, ImplChanges};
use crate::certify::{ClauseText, ImplReport, Report};

/// One report given to the site, with the folder its page goes to.
#[derive(Debug)]
pub struct Source<'a> {
    /// As named on the command line.
    pub path: &'a str,
    pub report: &'a Report,
    /// The site's folder for this report (`reports/01-…`), relative to
    /// the site's root.
    pub folder: String,
}

/// One implementation in one report: a column of the matrix, a row of
/// the index, a step of a history.
#[derive(Debug)]
pub struct Entry<'a> {
    /// Index into [`Site::sources`].
    pub source: usize,
    pub imp: &'a ImplReport,
    /// Index into [`Site::implementations`].
    pub implementation: usize,
    /// The version as the site shows it: from `init`, `unversioned`
    /// without one, and followed by ` #2`, ` #3`… when the same
    /// implementation and version come more than once, so that every
    /// column has a name of its own.
    pub version: String,
    /// The highest level certified.
    pub level: Option<Level>,
    pub certified: bool,
    pub simulation: Option<SimVerdict>,
    /// None for a report written before certification explored scopes.
    pub exploration: Option<SimVerdict>,
    pub failing_cases: usize,
    /// Clauses a failing case cites or a violation breaks, as `certify
    /// --baseline` counts them.
    pub broken_clauses: Vec<String>,
}

/// Every entry of one implementation, oldest first.
#[derive(Debug)]
pub struct Implementation {
    pub name: String,
    /// Its page's file name without `.html`, unique within the site.
    pub slug: String,
    /// Indexes into [`Site::entries`], in the order the reports were given.
    pub entries: Vec<usize>,
}

#[derive(Debug)]
pub struct Site<'a> {
    pub sources: Vec<Source<'a>>,
    /// In the order the reports were given, then each report's order.
    pub entries: Vec<Entry<'a>>,
    /// Sorted by name (byte order), so that the index reads the same
    /// whatever order the implementations first appear in.
    pub implementations: Vec<Implementation>,
    /// Every clause of every report, the first report's order first;
    /// clauses only a later corpus has follow in that corpus's order.
    pub clauses: Vec<&'a ClauseText>,
}

/// What one column says about one clause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cell<'a> {
    /// A failing case cites it (those cases, in report order), or a
    /// violation of the simulation or exploration breaks it (`by_run`).
    Broken { cases: Vec<&'a str>, by_run: bool },
    /// No failure, and this many citing cases passed.
    Passed(usize),
    /// Every case citing it needs a capability not claimed.
    NotApplicable,
    /// No case citing it ran in this report (`--only`, an interrupt).
    NotRun,
    /// Not a clause of this report's corpus.
    Absent,
}

/// `text` reduced to what a file name may hold (letters, digits, `.`,
/// `_`, `-`), at most 60 characters; never empty and never a dot name.
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-' {
            c
        } else {
            '-'
        };
        if !(c == '-' && out.ends_with('-')) {
            out.push(c);
        }
        if out.len() >= 60 {
            break;
        }
    }
    let out = out.trim_matches(|c| c == '-' || c == '.').to_owned();
    if out.is_empty() {
        "implementation".to_owned()
    } else {
        out
    }
}

impl<'a> Site<'a> {
    /// Gathers `reports` (path as given, report), in the order given.
    pub fn gather(reports: impl IntoIterator<Item = (&'a str, &'a Report)>) -> Site<'a> {
        let reports: Vec<(&str, &Report)> = reports.into_iter().collect();
        let sources: Vec<Source> = reports
            .iter()
            .enumerate()
            .map(|(n, &(path, report))| Source {
                path,
                report,
                folder: format!(
                    "reports/{:02}-{}",
                    n + 1,
                    report
                        .implementations
                        .first()
                        .map_or_else(|| "empty".to_owned(), |i| slug(&i.title()))
                ),
            })
            .collect();
        let mut names: Vec<&str> = reports
            .iter()
            .flat_map(|(_, r)| r.implementations.iter().map(|i| i.name.as_str()))
            .collect();
        names.sort_unstable();
        names.dedup();
        let mut taken = std::collections::BTreeSet::new();
        let mut implementations: Vec<Implementation> = names
            .iter()
            .map(|name| {
                let base = slug(name);
                let mut slug = base.clone();
                let mut n = 1;
                while !taken.insert(slug.clone()) {
                    n += 1;
                    slug = format!("{base}-{n}");
                }
                Implementation {
                    name: (*name).to_owned(),
                    slug,
                    entries: Vec::new(),
                }
            })
            .collect();
        let mut seen: BTreeMap<(usize, Option<&str>), usize> = BTreeMap::new();
        let mut entries = Vec::new();
        for (source, &(_, report)) in reports.iter().enumerate() {
            for imp in &report.implementations {
                let implementation = names.binary_search(&imp.name.as_str()).unwrap_or(0);
                let times = seen
                    .entry((implementation, imp.version.as_deref()))
                    .or_insert(0);
                *times += 1;
                let mut version = imp
                    .version
                    .clone()
                    .unwrap_or_else(|| "unversioned".to_owned());
                if *times > 1 {
                    version.push_str(&format!(" #{times}"));
                }
                implementations[implementation].entries.push(entries.len());
                entries.push(Entry {
                    source,
                    imp,
                    implementation,
                    version,
                    level: imp.verdict.level,
                    certified: imp.verdict.certified,
                    simulation: Some(imp.verdict.simulation),
                    exploration: imp.verdict.exploration,
                    failing_cases: imp.cases.iter().filter(|c| c.failed()).count(),
                    broken_clauses: broken_clause_ids(imp),
                });
            }
        }
        let mut clauses: Vec<&ClauseText> = Vec::new();
        let mut known = std::collections::BTreeSet::new();
        for &(_, report) in &reports {
            for c in &report.clauses {
                if known.insert(c.id.as_str()) {
                    clauses.push(c);
                }
            }
        }
        Site {
            sources,
            entries,
            implementations,
            clauses,
        }
    }

    /// The entries of `implementation`, oldest first.
    pub fn history(&self, implementation: &Implementation) -> Vec<&Entry<'a>> {
        implementation
            .entries
            .iter()
            .map(|&e| &self.entries[e])
            .collect()
    }

    /// Every entry, grouped by implementation (by name), each group
    /// oldest first: the index's rows and the matrix's columns.
    pub fn columns(&self) -> Vec<&Entry<'a>> {
        self.implementations
            .iter()
            .flat_map(|i| self.history(i))
            .collect()
    }

    pub fn source(&self, entry: &Entry) -> &Source<'a> {
        &self.sources[entry.source]
    }

    /// What `entry` says about the clause `id`.
    pub fn cell(&self, entry: &Entry<'a>, id: &str) -> Cell<'a> {
        let report = self.source(entry).report;
        if !report.clauses.iter().any(|c| c.id == id) {
            return Cell::Absent;
        }
        let citing: Vec<_> = entry
            .imp
            .cases
            .iter()
            .filter(|c| c.clauses.iter().any(|x| x.id == id))
            .collect();
        let failing: Vec<&str> = citing
            .iter()
            .filter(|c| c.failed())
            .map(|c| c.id.as_str())
            .collect();
        if entry.broken_clauses.iter().any(|b| b == id) {
            return Cell::Broken {
                cases: failing,
                by_run: violation_breaks(entry.imp, id),
            };
        }
        let passed = citing.iter().filter(|c| c.status == Status::Pass).count();
        if passed > 0 {
            Cell::Passed(passed)
        } else if !citing.is_empty() && citing.iter().all(|c| c.status == Status::NotApplicable) {
            Cell::NotApplicable
        } else {
            Cell::NotRun
        }
    }

    /// What changed at step `step` of `implementation`'s history since
    /// the step before, as `certify --baseline` would classify it; None
    /// for the first step.
    pub fn changes(&self, implementation: &Implementation, step: usize) -> Option<ImplChanges> {
        let before = *implementation.entries.get(step.checked_sub(1)?)?;
        let now = *implementation.entries.get(step)?;
        Some(compare(
            Some(self.entries[before].imp),
            self.entries[now].imp,
        ))
    }
}

/// Whether the simulation's or the exploration's violation breaks `id`.
fn violation_breaks(imp: &ImplReport, id: &str) -> bool {
    let sim = imp.simulation.violation.iter().flat_map(|v| &v.clauses);
    let explore = imp.exploration.violation.iter().flat_map(|v| &v.clauses);
    sim.chain(explore).any(|c| c.id == id)
}

impl Entry<'_> {
    /// The implementation's name and the version shown.
    pub fn title(&self) -> String {
        format!("{} {}", self.imp.name, self.version)
    }
}

/// How a level reads on the site.
pub fn level_text(level: Option<Level>) -> &'static str {
    level.map_or("none", Level::as_str)
}

/// How a verdict of the simulation or exploration reads on the site.
pub fn verdict_text(v: Option<SimVerdict>) -> &'static str {
    match v {
        Some(SimVerdict::Clean) => "clean",
        Some(SimVerdict::Violation) => "violation",
        Some(SimVerdict::NotRun) => "not run",
        Some(SimVerdict::Incomplete) => "incomplete",
        Some(SimVerdict::Nondeterministic) => "nondeterministic",
        None => "—",
    }
}
