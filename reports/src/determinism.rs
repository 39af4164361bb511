//! What `--check-determinism` found, as `run` and `certify` report it: one
//! record for the JSON of both, and the lines people read.

use serde::{Deserialize, Serialize};
use tern_harness::simulator::determinism::{DeterminismCheck, Divergence};

/// The seeds played twice, and the first answer that differed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeterminismReport {
    /// Every seed played twice, in the order played.
    pub seeds: Vec<u64>,
    /// False when an interrupt stopped the check before its last seed.
    pub complete: bool,
    pub divergence: Option<DivergenceReport>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DivergenceReport {
    pub seed: u64,
    /// Counted from 1, over every request of the play in the order made.
    pub request_number: usize,
    pub request: String,
    pub first: String,
    pub second: String,
}

/// Why a difference matters, said once for every format.
pub const WHY: &str = "the implementation reads something the seed does not give it (the clock, randomness, a hash order, a race between threads), so its failures cannot be reproduced";

impl DeterminismReport {
    pub fn of(check: &DeterminismCheck) -> DeterminismReport {
        DeterminismReport {
            seeds: check.seeds.clone(),
            complete: check.complete,
            divergence: check.divergence.as_ref().map(DivergenceReport::of),
        }
    }

    /// Several shards' checks as one: every seed they played, and the
    /// difference of the lowest seed (each shard stops at its first).
    pub fn merged<'a>(parts: impl IntoIterator<Item = &'a DeterminismReport>) -> DeterminismReport {
        let mut out = DeterminismReport {
            seeds: Vec::new(),
            complete: true,
            divergence: None,
        };
        for p in parts {
            out.seeds.extend(&p.seeds);
            out.complete &= p.complete;
            if let Some(d) = &p.divergence {
                if out.divergence.as_ref().is_none_or(|o| d.seed < o.seed) {
                    out.divergence = Some(d.clone());
                }
            }
        }
        out
    }

    pub fn diverged(&self) -> bool {
        self.divergence.is_some()
    }

    /// One line when the answers agreed; the difference in full when not.
    /// Input text is not escaped here: each format escapes for itself.
    pub fn lines(&self) -> Vec<String> {
        let n = self.seeds.len();
        let cut = if self.complete {
            String::new()
        } else {
            " (interrupted before the last seed)".to_owned()
        };
        match &self.divergence {
            None => vec![format!(
                "determinism: {n} seed(s) played twice on fresh state{cut}, the same answers each time"
            )],
            Some(d) => vec![
                format!(
                    "NONDETERMINISTIC: seed {} played twice on fresh state got two answers to request {}",
                    d.seed, d.request_number
                ),
                format!("  request: {}", d.request),
                format!("  first:   {}", d.first),
                format!("  second:  {}", d.second),
                format!("  {WHY}."),
            ],
        }
    }
}

impl DivergenceReport {
    fn of(d: &Divergence) -> DivergenceReport {
        DivergenceReport {
            seed: d.seed,
            request_number: d.request_number,
            request: d.request.clone(),
            first: d.first.clone(),
            second: d.second.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(seeds: &[u64], diverged_at: Option<u64>) -> DeterminismReport {
        DeterminismReport {
            seeds: seeds.to_vec(),
            complete: true,
            divergence: diverged_at.map(|seed| DivergenceReport {
                seed,
                request_number: 3,
                request: "deliver".into(),
                first: "a".into(),
                second: "b".into(),
            }),
        }
    }

    #[test]
    fn a_merge_keeps_every_seed_and_the_lowest_difference() {
        let m = DeterminismReport::merged([
            &report(&[9, 1], Some(9)),
            &report(&[4], Some(4)),
            &report(&[2], None),
        ]);
        assert_eq!(m.seeds, vec![9, 1, 4, 2]);
        assert_eq!(m.divergence.map(|d| d.seed), Some(4));
    }

    #[test]
    fn the_lines_name_the_seed_the_request_and_both_answers() {
        let text = report(&[5], Some(5)).lines().join("\n");
        for part in [
            "NONDETERMINISTIC",
            "seed 5",
            "request 3",
            "first:   a",
            "second:  b",
        ] {
            assert!(text.contains(part), "{part} missing from {text}");
        }
        let same = report(&[1, 2], None).lines().join("\n");
        assert!(
            same.contains("2 seed(s)") && same.contains("same answers"),
            "{same}"
        );
    }
}
