//! The built-in scopes: the hard parts of the seed, each a small world
//! drawn from a corpus case with a fault budget, traced to its clauses.
//! Their files live in `scopes/` and are built into the binary; those
//! drawn from a case need the corpus to be read. Beside them, the corpus
//! family makes every small corpus case a scope: what the wire rules and
//! the single-message rules need is an order, not a fault.

use std::path::Path;

use super::scope::{Scope, ScopeError};
use crate::corpus::Corpus;

macro_rules! scopes {
    ($($name:literal),* $(,)?) => {
        /// Every built-in scope's name and file text, in a fixed order.
        const FILES: &[(&str, &str)] = &[$(($name, include_str!(concat!("../../../scopes/", $name, ".json")))),*];
    };
}

scopes![
    "revision-race",
    "commit-execute-crash",
    "grant-expiry",
    "spoofed-same-id",
    "pending-chain",
    "late-id-conflict",
    "renewal",
    "report-revision-conflict",
    "crash-in-recovery",
];

/// The name that stands for the corpus family in `tern-sim explore`.
pub const CORPUS: &str = "corpus";

fn read(name: &str, text: &str, corpus: Option<&Corpus>) -> Result<Scope, ScopeError> {
    let file = format!("scopes/{name}.json");
    let mut scope = Scope::from_json(Path::new(&file), text, corpus)?;
    scope.origin = format!("built-in ({file})");
    Ok(scope)
}

/// Every built-in scope, in order.
pub fn all(corpus: Option<&Corpus>) -> Result<Vec<Scope>, ScopeError> {
    FILES
        .iter()
        .map(|(name, text)| read(name, text, corpus))
        .collect()
}

/// A built-in scope that a corpus cannot serve: the case it is drawn from
/// is not in that corpus. Reports carry it as it is.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeftOut {
    pub scope: String,
    /// The corpus case the scope is drawn from, which the corpus lacks.
    pub case: String,
}

/// The built-in scopes `corpus` can serve, in order, and those it cannot:
/// a corpus of one's own need not hold the cases the scopes are drawn
/// from, and it is still explored where it can be. Any other fault of a
/// scope is an error.
pub fn usable(corpus: &Corpus) -> Result<(Vec<Scope>, Vec<LeftOut>), ScopeError> {
    let mut scopes = Vec::new();
    let mut left_out = Vec::new();
    for (name, text) in FILES {
        match read(name, text, Some(corpus)) {
            Ok(scope) => scopes.push(scope),
            Err(ScopeError::UnknownCase { id, .. }) => left_out.push(LeftOut {
                scope: (*name).to_owned(),
                case: id,
            }),
            Err(e) => return Err(e),
        }
    }
    Ok((scopes, left_out))
}

pub fn by_name(name: &str, corpus: Option<&Corpus>) -> Result<Scope, ScopeError> {
    let (name, text) = FILES
        .iter()
        .find(|(n, _)| *n == name)
        .ok_or_else(|| ScopeError::UnknownScope(name.to_owned()))?;
    read(name, text, corpus)
}

/// Each built-in scope's name and title, without reading the corpus (the
/// corpus family last).
pub fn list() -> Vec<(&'static str, String)> {
    FILES
        .iter()
        .map(|(name, text)| {
            let title = serde_json::from_str::<serde_json::Value>(text)
                .ok()
                .and_then(|v| v["title"].as_str().map(str::to_owned))
                .unwrap_or_default();
            (*name, title)
        })
        .chain(std::iter::once((
            CORPUS,
            "Every corpus case with at most --max-actions distinct actions: every order, and one crash anywhere in the cases that crash".to_owned(),
        )))
        .collect()
}

/// The corpus family: every case with at most `max_actions` distinct
/// actions, as [`corpus_scope`] makes it.
pub fn corpus_family(corpus: &Corpus, max_actions: usize) -> Vec<Scope> {
    corpus
        .cases
        .iter()
        .map(corpus_scope)
        .filter(|s| s.distinct_actions() <= max_actions)
        .collect()
}

/// A corpus case as a scope of `--corpus`: every order of its actions,
/// and one crash if the case itself crashes the receiver.
pub fn corpus_scope(case: &crate::corpus::case::Case) -> Scope {
    use crate::corpus::case::Step;
    let crashes = case.steps.iter().any(|s| {
        matches!(
            s,
            Step::Crash
                | Step::Restart { .. }
                | Step::Deliver { crash: Some(_), .. }
                | Step::Execute { crash: Some(_), .. }
        )
    });
    Scope::from_case(
        case,
        super::scope::FaultBudget {
            crashes: u8::from(crashes),
            duplicates: 0,
        },
    )
}
