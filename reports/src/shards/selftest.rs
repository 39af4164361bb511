//! Merging `selftest` parts: each shard tries its share of the mutants
//! (by hash of their names) and plays its share of the reference's seeds
//! (by residue); the rows go back in the zoo's order, and the reference's
//! first failing seed is the lowest of any shard.

use serde::{Deserialize, Serialize};

use super::{MergeError, Read};
use crate::run::MutantRow;

/// The budgets `selftest` was given, as it prints them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Setting {
    pub simulation_only: bool,
    pub seeds: u64,
    pub reference_seeds: u64,
    pub agents: usize,
    pub steps: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Body {
    pub setting: Setting,
    /// The shard's mutants, in the zoo's order.
    pub rows: Vec<MutantRow>,
    pub reference: Reference,
}

/// The reference's share of seeds: the first failing one, if any, and
/// the time it took (for people only; JSON has no times).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    pub failure: Option<ReferenceFailure>,
    pub millis: u128,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReferenceFailure {
    pub seed: u64,
    pub violation: String,
}

/// The rows in `order` (the zoo's names) and the reference's outcome.
pub fn merge(parts: &[Read], order: &[String]) -> Result<Body, MergeError> {
    let bodies: Vec<Body> = parts.iter().map(Read::body).collect::<Result<_, _>>()?;
    let mut by_name = std::collections::BTreeMap::new();
    for (read, b) in parts.iter().zip(&bodies) {
        if let Some(f) = &b.reference.failure {
            // The reference's seeds run from 0.
            read.owns_seed(0, f.seed)?;
        }
        for row in &b.rows {
            read.owns_name("mutant", &row.name)?;
            if by_name.insert(row.name.as_str(), row).is_some() {
                return Err(MergeError::Inconsistent {
                    path: read.path.clone(),
                    why: format!("mutant `{}` is in another part too", row.name),
                });
            }
        }
    }
    let rows = order
        .iter()
        .map(|name| {
            by_name
                .get(name.as_str())
                .map(|r| (*r).clone())
                .ok_or_else(|| MergeError::Inconsistent {
                    path: parts[0].path.clone(),
                    why: format!("mutant `{name}` is in no part"),
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let failure = bodies
        .iter()
        .filter_map(|b| b.reference.failure.clone())
        .min_by_key(|f| f.seed);
    Ok(Body {
        setting: bodies[0].setting.clone(),
        rows,
        reference: Reference {
            failure,
            millis: bodies.iter().map(|b| b.reference.millis).sum(),
        },
    })
}
