//! Merging `run` parts: the runs of one batch, up to its first violation
//! in seed order, and that violation's counterexample as its shard found,
//! shrank and saved it.

use crate::determinism::DeterminismReport;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tern_harness::simulator::runner::Stats;

use super::{one_batch, MergeError, Read, Runs};

/// How a batch was played, as `run` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Setting {
    pub first_seed: u64,
    pub seeds: u64,
    /// A soak's length (`--duration`), which bounds the runs instead.
    pub duration: Option<String>,
    pub agents: usize,
    pub steps: usize,
    /// The faults' names, and the flags that ask for them.
    pub faults: String,
    pub fault_flags: String,
    pub swarm: bool,
    /// The implementation's name, and the flag that names it on a
    /// command line (`--mutant x`, `--impl 'c'`, or nothing).
    pub implementation: String,
    pub flag: String,
    /// What a crash takes, over the protocol (`Durability::label`); `None`
    /// in tern-sim's process, where storage is simulated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub durability: Option<String>,
}

/// A batch's outcome as `run` prints it; a part holds its shard's.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Body {
    pub setting: Setting,
    /// The counts of each run played, in the shard's order of seeds.
    pub runs: Vec<Stats>,
    pub finding: Option<Finding>,
    /// What `--check-determinism` found in this shard's seeds, when asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub determinism: Option<DeterminismReport>,
}

/// A violation, shrunk, in every form `run` prints it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Finding {
    pub seed: u64,
    /// The violation as first seen, before shrinking.
    pub found: String,
    /// The shrunk counterexample's violation.
    pub violation: String,
    /// Why shrinking stopped early, when it did.
    pub early: Option<String>,
    /// The counterexample in shorthand.
    pub counterexample: String,
    /// Where its trace was saved.
    pub trace: Option<String>,
    /// Why the trace could not be saved.
    pub trace_error: Option<String>,
    /// `violation` and `counterexample` of the JSON document.
    pub json_violation: Value,
    pub json_counterexample: Value,
}

/// What one machine would have printed.
#[derive(Debug, Clone)]
pub struct Merged {
    pub setting: Setting,
    pub runs: u64,
    pub totals: Stats,
    pub finding: Option<Finding>,
    pub determinism: Option<DeterminismReport>,
}

pub fn merge(parts: &[Read]) -> Result<Merged, MergeError> {
    let bodies: Vec<Body> = parts.iter().map(Read::body).collect::<Result<_, _>>()?;
    let shares: Vec<Runs> = parts
        .iter()
        .zip(&bodies)
        .map(|(read, b)| Runs {
            read,
            counts: &b.runs,
            violation: b.finding.as_ref().map(|f| f.seed),
            skipped: false,
        })
        .collect();
    let setting = bodies[0].setting.clone();
    let (runs, totals, found) = one_batch(&shares, setting.first_seed, setting.seeds)?;
    Ok(Merged {
        setting,
        runs,
        totals,
        finding: found.and_then(|i| bodies[i].finding.clone()),
        determinism: bodies.iter().any(|b| b.determinism.is_some()).then(|| {
            DeterminismReport::merged(bodies.iter().filter_map(|b| b.determinism.as_ref()))
        }),
    })
}
