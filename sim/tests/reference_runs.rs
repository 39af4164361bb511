//! The reference implementation under the simulator: no violation, with and
//! without faults; and the same seed gives the same run.

use tern_harness::implementations::reference::ReferenceImpl;
use tern_harness::simulator::driver::{mix_for, play, steps_of};
use tern_harness::simulator::faults::FaultSet;
use tern_harness::simulator::happening::notes;
use tern_harness::simulator::runner::RunConfig;

fn config(seed: u64, agents: usize, faults: FaultSet) -> RunConfig {
    RunConfig {
        seed,
        agents,
        steps: 150,
        mix: mix_for(seed, &faults, true),
        names: Default::default(),
        sessions: Default::default(),
        faults,
    }
}

#[test]
fn the_reference_passes_with_every_fault() {
    let mut deliveries = 0;
    let mut effects = 0;
    for seed in 0..40 {
        let c = config(seed, 1 + (seed as usize % 5), FaultSet::all());
        let steps = steps_of(&c);
        let played = play(&c, &steps, &ReferenceImpl, false);
        if let Some(v) = played.violation {
            let replay = play(&c, &steps, &ReferenceImpl, true);
            panic!(
                "seed {seed}: {v:#?}\n{}",
                notes(&replay.happenings).join("\n")
            );
        }
        deliveries += played.stats.deliveries;
        effects += played.stats.effects;
    }
    assert!(deliveries > 1000, "{deliveries}");
    assert!(effects > 0, "no execution ever succeeded");
}

#[test]
fn the_reference_passes_without_faults() {
    for seed in 100..120 {
        let c = config(seed, 3, FaultSet::none());
        let steps = steps_of(&c);
        assert!(
            play(&c, &steps, &ReferenceImpl, false).violation.is_none(),
            "seed {seed}"
        );
    }
}

#[test]
fn the_same_seed_gives_the_same_run() {
    let c = config(7, 4, FaultSet::all());
    let a = play(&c, &steps_of(&c), &ReferenceImpl, true);
    let b = play(&c, &steps_of(&c), &ReferenceImpl, true);
    assert_eq!(notes(&a.happenings), notes(&b.happenings));
    assert_eq!(a.stats, b.stats);
    assert!(a.happenings.len() > 100);
}

/// Only `execute` may act on the world: an effect performed while a view is
/// answered is caught at the first view, as an authority violation, in every
/// seed (it used to pass the simulation unless an execution happened to
/// notice the extra effect).
#[test]
fn an_effect_while_answering_a_view_is_an_authority_violation() {
    use tern_harness::implementations::mutants::{Mutant, MutantImpl};
    for seed in 0..5 {
        let c = config(seed, 2, FaultSet::all());
        let played = play(&c, &steps_of(&c), &MutantImpl(Mutant::EffectInView), false);
        let v = played.violation.expect("the effect is caught");
        assert_eq!(
            v.failure.invariant.name, "authority-before-effect",
            "seed {seed}"
        );
        assert_eq!(
            v.failure.expected, "no effect while answering a view",
            "seed {seed}"
        );
    }
}
