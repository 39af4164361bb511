//! `extension-grant-authorises` is wrong only where a boast names a real
//! grant in the extensions of a reply to the COMMIT: the selftest budget
//! (20 runs of 3 agents from seed 0, every fault) catches it by the
//! invariant meant for it, and the very same runs, with only one axis of
//! every boast's shape moved off that spot, do not.

use tern_harness::catalogue::boast::{Answers, Named, Place, Shape};
use tern_harness::implementations::mutants::{Mutant, MutantImpl};
use tern_harness::simulator::driver::{play, steps_of, Batch};
use tern_harness::simulator::faults::FaultSet;
use tern_harness::simulator::runner::RunConfig;
use tern_harness::simulator::workload::{Attack, Step};

/// A change to every boast's shape.
type Move = fn(&mut Shape);

/// `selftest --simulation-only`'s batch.
fn batch() -> Batch {
    Batch {
        first_seed: 0,
        seeds: 20,
        agents: 3,
        steps: 200,
        faults: FaultSet::all(),
        names: Default::default(),
        swarm: true,
        shard: tern_harness::shard::Shard::WHOLE,
        deadline: None,
    }
}

/// The first of `seeds` whose run, its boasts reshaped by `change`, fails
/// against the mutant, with the invariant that caught it.
fn first_failure(seeds: u64, change: Move) -> Option<(u64, &'static str)> {
    let imp = MutantImpl(Mutant::ExtensionGrantAuthorises);
    let batch = batch();
    (0..seeds).find_map(|seed| {
        let config: RunConfig = batch.config(seed);
        let steps: Vec<Step> = steps_of(&config)
            .into_iter()
            .map(|mut step| {
                if let Step::Attack {
                    attack: Attack::Boast { shape, .. },
                    ..
                } = &mut step
                {
                    change(shape);
                }
                step
            })
            .collect();
        let played = play(&config, &steps, &imp, false);
        played.violation.map(|v| (seed, v.failure.invariant.name))
    })
}

#[test]
fn the_mutant_is_caught_only_by_a_real_grant_in_the_extensions_of_a_reply_to_the_commit() {
    let caught = first_failure(batch().seeds, |_| {});
    let Some((seed, invariant)) = caught else {
        panic!("20 runs of 3 agents did not catch extension-grant-authorises");
    };
    assert_eq!(invariant, "authority-before-effect");
    // Up to the run that caught it, the same runs with each boast moved
    // off the mutant's spot along one axis pass.
    let moved: [(&str, Move); 3] = [
        ("a forged grant", |s| s.grant = Named::Forged),
        ("replying to the REQUEST", |s| {
            if s.reply == Answers::Commit {
                s.reply = Answers::Request;
            }
        }),
        ("in evidence", |s| {
            if s.place == Place::Extensions {
                s.place = Place::Evidence;
            }
        }),
    ];
    for (what, change) in moved {
        assert_eq!(
            first_failure(seed + 1, change),
            None,
            "caught with every boast {what}"
        );
    }
}
