//! The seed's normative sentences, listed once (`scenarios/clauses.json`)
//! with stable IDs, so that every case, invariant and report can point at
//! the words it rests on.

use std::path::Path;

use serde::Deserialize;

use super::{Case, CorpusError};

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Clause {
    /// `Sn.m`: the m-th sentence of seed section n.
    pub id: String,
    pub section: u8,
    /// The seed's words, verbatim.
    pub sentence: String,
    /// What example the sentence introduces, when it introduces one.
    #[serde(default)]
    pub shown_with: Option<String>,
    pub enforced_by: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    schema: String,
    seed: String,
    clauses: Vec<Clause>,
}

const SCHEMA: &str = "tern-sim/clauses/1";

/// The registry.
#[derive(Debug, Clone)]
pub struct Clauses {
    list: Vec<Clause>,
}

impl Clauses {
    pub fn from_json(file: &Path, bytes: &[u8]) -> Result<Clauses, CorpusError> {
        let invalid = |pointer: String, message: String| CorpusError::Invalid {
            file: file.to_path_buf(),
            pointer,
            message,
        };
        let de = &mut serde_json::Deserializer::from_slice(bytes);
        let parsed: File = serde_path_to_error::deserialize(de)
            .map_err(|e| invalid(e.path().to_string(), e.into_inner().to_string()))?;
        if parsed.schema != SCHEMA {
            return Err(invalid(
                "/schema".into(),
                format!("this tern-sim reads `{SCHEMA}`, not `{}`", parsed.schema),
            ));
        }
        if parsed.seed != "Tern 0.1" {
            return Err(invalid("/seed".into(), "must be \"Tern 0.1\"".into()));
        }
        let mut seen = std::collections::BTreeSet::new();
        for (i, c) in parsed.clauses.iter().enumerate() {
            let well_formed = c
                .id
                .strip_prefix('S')
                .and_then(|rest| rest.split_once('.'))
                .is_some_and(|(s, m)| {
                    s.parse::<u8>().ok() == Some(c.section) && m.parse::<u32>().is_ok_and(|m| m > 0)
                });
            if !well_formed {
                return Err(invalid(
                    format!("/clauses/{i}/id"),
                    format!(
                        "`{}` is not `S<section>.<n>` with section {}",
                        c.id, c.section
                    ),
                ));
            }
            if !seen.insert(c.id.clone()) {
                return Err(invalid(
                    format!("/clauses/{i}/id"),
                    format!("`{}` is listed twice", c.id),
                ));
            }
        }
        Ok(Clauses {
            list: parsed.clauses,
        })
    }

    pub fn all(&self) -> &[Clause] {
        &self.list
    }

    pub fn get(&self, id: &str) -> Option<&Clause> {
        self.list.iter().find(|c| c.id == id)
    }

    /// A case must cite clauses that exist, with the registry's words: a
    /// case cannot quietly paraphrase the seed.
    pub fn check_citations(&self, case: &Case) -> Result<(), CorpusError> {
        for (i, cited) in case.clauses.iter().enumerate() {
            let invalid = |message: String| CorpusError::Invalid {
                file: case.file.clone(),
                pointer: format!("/clauses/{i}"),
                message,
            };
            let Some(clause) = self.get(&cited.id) else {
                return Err(invalid(format!(
                    "cites `{}`, which is not in clauses.json",
                    cited.id
                )));
            };
            if clause.section != cited.section || clause.sentence != cited.sentence {
                return Err(invalid(format!(
                    "cites `{}` with other words than clauses.json: section {} \"{}\"",
                    cited.id, clause.section, clause.sentence
                )));
            }
        }
        Ok(())
    }
}
