//! How each crash of a run falls over a power-loss state directory (fault
//! `power-loss`): how much it takes of what was not synced, and whether it
//! falls inside the request at a mutating file operation.
//!
//! The cut is a function of the seed and the crash step's place in the
//! generated run, not a draw of the step strategy: a run without the fault
//! draws exactly the steps it always drew, and a run with it is the same
//! run with its crashes made harsher. The cut is written in the step, so
//! shrinking (which drops steps) and replay keep each crash as it was.

use proptest::strategy::ValueTree;

use super::workload::Step;
use crate::contract::storage::{Loss, PowerCut};

/// The most mutating operations into a request a crash is put: a delivery
/// of `tern-sim agent` makes up to six (create, directory sync, a record's
/// length and body, the file's sync), and an implementation's first ones
/// are where its ordering of writes and syncs shows.
pub const MAX_AT_OP: u64 = 6;

/// The same for a recovery (`init` after a crash), which does more before
/// it answers: `tern-sim agent` first writes its log afresh (create, write,
/// sync, rename, directory sync), and what a receiver writes at start-up
/// comes after that.
pub const MAX_AT_OP_RECOVERY: u64 = 12;

/// SplitMix64: a few well-mixed bits from a counter, the same everywhere.
fn mix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The cut of the crash at `point` (see [`Step::Crash`]) that is step
/// `index` of the run of `seed`: a quarter are kills, three eighths clean
/// power losses, three eighths torn ones; half of the crashes that fall in
/// a request (a delivery's sync points, an execution before its effect, a
/// recovery) fall at one of its first [`MAX_AT_OP`] file operations
/// ([`MAX_AT_OP_RECOVERY`] for a recovery).
pub fn draw(seed: u64, index: usize, point: u8) -> PowerCut {
    let mut x = seed ^ (index as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93) ^ 0x706F_7765_722D_6375;
    let loss = match mix(&mut x) % 8 {
        0 | 1 => Loss::Kill,
        2..=4 => Loss::Power,
        _ => Loss::Torn(mix(&mut x)),
    };
    let most = match point % 7 {
        1 | 2 | 4 => MAX_AT_OP,
        5 | 6 => MAX_AT_OP_RECOVERY,
        _ => 0,
    };
    let at_op = (most > 0 && mix(&mut x) % 2 == 0).then(|| 1 + (mix(&mut x) % most) as u8);
    PowerCut { loss, at_op }
}

/// A step's value tree whose crash steps carry their cut: simplifying the
/// step keeps its place, so its cut stays what it was.
pub struct WithCut {
    pub inner: Box<dyn ValueTree<Value = Step>>,
    pub seed: u64,
    pub index: usize,
}

impl ValueTree for WithCut {
    type Value = Step;

    fn current(&self) -> Step {
        let mut step = self.inner.current();
        if let Step::Crash { point, cut, .. } = &mut step {
            *cut = Some(draw(self.seed, self.index, *point));
        }
        step
    }

    fn simplify(&mut self) -> bool {
        self.inner.simplify()
    }

    fn complicate(&mut self) -> bool {
        self.inner.complicate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_cut_is_drawn_and_the_same_seed_draws_the_same() {
        let cuts: Vec<PowerCut> = (0..400).map(|i| draw(7, i, (i % 14) as u8)).collect();
        assert_eq!(
            cuts,
            (0..400)
                .map(|i| draw(7, i, (i % 14) as u8))
                .collect::<Vec<_>>()
        );
        assert!(cuts.iter().any(|c| c.loss == Loss::Kill));
        assert!(cuts.iter().any(|c| c.loss == Loss::Power));
        assert!(cuts.iter().any(|c| matches!(c.loss, Loss::Torn(_))));
        let inside: Vec<u8> = cuts.iter().filter_map(|c| c.at_op).collect();
        assert!((1..=MAX_AT_OP_RECOVERY as u8).all(|k| inside.contains(&k)));
        assert!(cuts
            .iter()
            .enumerate()
            .all(|(i, c)| c.at_op.unwrap_or(0) as u64 <= MAX_AT_OP || i % 7 >= 5));
        // A crash between operations is never put inside a request.
        assert!((0..400)
            .filter(|i| i % 7 == 0)
            .all(|i| draw(7, i, (i % 7) as u8).at_op.is_none()));
        assert_ne!(draw(7, 3, 1), draw(8, 3, 1));
    }
}
