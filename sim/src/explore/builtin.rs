//! The built-in scopes: the hard parts of the seed, each a small world
//! drawn from a corpus case with a fault budget, traced to its clauses.
//! Their files live in `scopes/` and are built into the binary; those
//! drawn from a case need the corpus to be read.

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
];

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

pub fn by_name(name: &str, corpus: Option<&Corpus>) -> Result<Scope, ScopeError> {
    let (name, text) = FILES
        .iter()
        .find(|(n, _)| *n == name)
        .ok_or_else(|| ScopeError::UnknownScope(name.to_owned()))?;
    read(name, text, corpus)
}

/// Each built-in scope's name and title, without reading the corpus.
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
        .collect()
}
