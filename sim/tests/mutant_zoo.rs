//! The mutant zoo: every deliberately broken implementation is caught, by
//! the invariant meant for it, and its counterexample shrinks.

use tern_harness::mutants::{Mutant, MutantImpl};
use tern_harness::sim::driver::{generate, mix_for, play, shrink};
use tern_harness::sim::faults::FaultSet;
use tern_harness::sim::runner::RunConfig;

fn config(seed: u64) -> RunConfig {
    let faults = FaultSet::all();
    RunConfig {
        seed,
        agents: 3,
        steps: 120,
        mix: mix_for(seed, &faults, true),
        faults,
    }
}

#[test]
fn every_mutant_is_killed_by_its_invariant() {
    let mut report = Vec::new();
    for &m in Mutant::ALL {
        let imp = MutantImpl(m);
        let mut killed = None;
        for seed in 0..300u64 {
            let c = config(seed);
            let g = generate(&c);
            if let Some(v) = play(&c, &g.steps, &imp, false).violation {
                let ce = shrink(&c, g, v, &imp, |_| {});
                killed = Some((seed, ce));
                break;
            }
        }
        match killed {
            None => report.push(format!("SURVIVED {}", m.name())),
            Some((seed, ce)) => {
                let ok = ce.violation.invariant.name == m.target();
                report.push(format!(
                    "{} {} seed {} by {} (target {}), {} -> {} steps",
                    if ok { "ok" } else { "WRONG" },
                    m.name(),
                    seed,
                    ce.violation.invariant.name,
                    m.target(),
                    ce.original_len,
                    ce.steps.len()
                ));
            }
        }
    }
    let text = report.join("\n");
    assert!(
        !text.contains("SURVIVED") && !text.contains("WRONG"),
        "{text}"
    );
}
