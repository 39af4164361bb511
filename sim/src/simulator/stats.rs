//! What a batch of runs adds up to: its counts and its situations.

use std::collections::BTreeMap;

use crate::catalogue::situations::{Coverage, Situation};

/// Counts for the summary. They are kept per seed in a shard's part
/// (docs/scale.md), hence serde.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stats {
    pub steps: u64,
    pub messages: u64,
    pub deliveries: u64,
    pub executions: u64,
    pub effects: u64,
    pub checks: u64,
    #[serde(with = "super::faults::counts")]
    pub faults: BTreeMap<&'static str, u64>,
    /// How often each situation of the catalogue was reached.
    pub situations: Coverage,
    /// Whether the runs had fault `power-loss`: only then can the
    /// situations of [`Situation::needs_power_loss`] be reached, so only
    /// then do they count as missed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub power_loss: bool,
}

impl Stats {
    pub fn add(&mut self, other: &Stats) {
        self.steps += other.steps;
        self.messages += other.messages;
        self.deliveries += other.deliveries;
        self.executions += other.executions;
        self.effects += other.effects;
        self.checks += other.checks;
        for (k, v) in &other.faults {
            *self.faults.entry(k).or_default() += v;
        }
        self.situations.add(&other.situations);
        self.power_loss |= other.power_loss;
    }

    /// Whether a table of these runs shows `s`: a situation only a power
    /// loss reaches is left out of runs without one.
    pub fn shows(&self, s: Situation) -> bool {
        self.power_loss || !s.needs_power_loss()
    }
}
