//! The mutant zoo against the harness: each mutant hunted by the
//! simulation, and a mutant the simulation's budget does not kill played
//! against the corpus, so that a defect the workload does not reach yet
//! still counts only if some case catches it; and the reference through
//! a larger budget of the same simulation, which must not fail.
//! `tern-sim selftest` shows and reports what this finds.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::certify::run_corpus;
use crate::corpus::{Case, Corpus};
use crate::events::{self, quiet, Event, Listener};
use crate::implementations::locked;
use crate::implementations::mutants::{Mutant, MutantImpl};
use crate::implementations::reference::ReferenceImpl;
use crate::judge::invariants::Invariant;
use crate::pool::{Flow, Pool, Ran};
use crate::simulator::driver::{
    first_violation, Batch, Jobs, DEFAULT_HANG_WAIT, DEFAULT_SHRINK_TIME,
};
use crate::simulator::hunt::{hunt, Hunt};
use crate::simulator::runner::Violation;

/// What a mutant came to.
#[derive(Debug, Clone)]
pub struct Fate {
    pub mutant: Mutant,
    pub killed: Option<Killed>,
    /// Simulation runs played: the runs to kill, or the whole budget.
    pub runs: u64,
    /// The shrunk counterexample's steps, when the simulation killed it.
    pub shrunk_len: Option<usize>,
    /// Until the simulation found its violation (or spent its budget).
    pub kill_time: Duration,
    pub shrink_time: Duration,
}

/// What killed a mutant, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Killed {
    /// The simulation's shrunk counterexample broke `by`, in run `runs`.
    Simulation { by: Invariant, runs: u64 },
    /// The corpus's case `case` failed: the mutant's own target when a
    /// failing case names it, else the first invariant the first failing
    /// case names (`None`: a case that names none).
    Corpus { by: Option<Invariant>, case: String },
}

impl Killed {
    /// The name reports give what killed it: an invariant's, or `corpus`.
    pub fn name(&self) -> &'static str {
        match self {
            Killed::Simulation { by, .. } | Killed::Corpus { by: Some(by), .. } => by.name,
            Killed::Corpus { by: None, .. } => "corpus",
        }
    }
}

/// The reference's simulation: the first failing seed, if any.
#[derive(Debug, Clone)]
pub struct ReferenceRun {
    pub failure: Option<(u64, Violation)>,
    pub took: Duration,
}

/// Hunts each of `mutants` through `batch` (a mutant on each of `jobs`
/// workers, each hunt on one), in the zoo's order whatever the jobs.
/// `events` hears which mutant each worker takes up, and each fate in
/// order.
pub fn simulate(mutants: &[Mutant], batch: &Batch, jobs: Jobs, events: &Listener<'_>) -> Vec<Fate> {
    let fates = Mutex::new(Vec::with_capacity(mutants.len()));
    Pool::new(jobs.0.get()).ordered(
        mutants.len(),
        |worker, i| {
            events(Event::Started {
                worker: worker.0,
                work: events::Work::Mutant(mutants[i]),
            });
            Ran::Done(hunted(mutants[i], batch))
        },
        |_, fate| {
            events(Event::Mutant(&fate));
            locked(&fates).push(fate);
            Flow::Continue
        },
    );
    fates.into_inner().unwrap_or_else(|e| e.into_inner())
}

/// One mutant hunted, and shrunk if caught.
fn hunted(mutant: Mutant, batch: &Batch) -> Fate {
    let plan = Hunt {
        batch: batch.clone(),
        jobs: Jobs::ONE,
        record: false,
        shrink: true,
        shrink_time: Some(DEFAULT_SHRINK_TIME),
        hang_wait: DEFAULT_HANG_WAIT,
    };
    let started = Instant::now();
    let found_at = Mutex::new(None);
    let hunt = hunt(
        &plan,
        &MutantImpl(mutant),
        &|event| {
            if let Event::Found { .. } = event {
                *locked(&found_at) = Some(started.elapsed());
            }
        },
        &|| false,
        &|| false,
    );
    let took = started.elapsed();
    let kill_time = found_at
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .unwrap_or(took);
    let mut fate = Fate {
        mutant,
        killed: None,
        runs: hunt.runs,
        shrunk_len: None,
        kill_time,
        shrink_time: Duration::ZERO,
    };
    if let Some(found) = hunt.found {
        let ce = found.counterexample;
        fate.killed = Some(Killed::Simulation {
            by: ce.violation.failure.invariant,
            runs: hunt.runs,
        });
        fate.shrunk_len = Some(ce.steps.len());
        fate.shrink_time = took - kill_time;
    }
    fate
}

/// Plays each mutant the simulation left alive against every case of
/// `corpus`.
pub fn against_corpus(fates: &mut [Fate], corpus: &Corpus) {
    let cases: Vec<&Case> = corpus.cases.iter().collect();
    for fate in fates.iter_mut().filter(|f| f.killed.is_none()) {
        fate.killed = killed_by_corpus(fate.mutant, &cases);
    }
}

fn killed_by_corpus(m: Mutant, cases: &[&Case]) -> Option<Killed> {
    let run = run_corpus(cases, &MutantImpl(m), &quiet, || false);
    let failing: Vec<&Case> = run
        .cases
        .iter()
        .filter(|r| r.status.is_failure())
        .filter_map(|r| cases.iter().copied().find(|c| c.id == r.id))
        .collect();
    let (case, by) = match failing.iter().find(|c| c.is_about(m.target())) {
        Some(c) => (*c, Some(m.target())),
        None => {
            let c = failing.first()?;
            (*c, c.invariants.first().copied())
        }
    };
    Some(Killed::Corpus {
        by,
        case: case.id.clone(),
    })
}

/// The reference through `batch`, on `jobs` workers: `events` hears
/// which seed each takes up, and each run.
pub fn reference(batch: &Batch, jobs: Jobs, events: &Listener<'_>) -> ReferenceRun {
    let started = Instant::now();
    let failure = first_violation(batch, &ReferenceImpl, jobs, false, events, || false)
        .failure
        .map(|(c, _, v)| (c.seed, v));
    ReferenceRun {
        failure,
        took: started.elapsed(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(seeds: u64) -> Batch {
        Batch::with_every_fault(0, seeds, 3, 200)
    }

    /// Fates come in the zoo's order whatever the jobs; a mutant caught by
    /// the simulation is caught by a named invariant, with a shrunk run.
    #[test]
    fn fates_come_in_order_and_name_what_killed() {
        let mutants = &Mutant::ALL[..4];
        let heard = Mutex::new(Vec::new());
        let listener = |e: Event<'_>| {
            if let Event::Mutant(f) = e {
                heard.lock().unwrap().push(f.mutant);
            }
        };
        let two = Jobs(std::num::NonZeroUsize::new(2).unwrap());
        let fates = simulate(mutants, &batch(40), two, &listener);
        assert_eq!(heard.into_inner().unwrap(), mutants);
        assert_eq!(fates.iter().map(|f| f.mutant).collect::<Vec<_>>(), mutants);
        let caught: Vec<&Fate> = fates.iter().filter(|f| f.killed.is_some()).collect();
        assert!(!caught.is_empty(), "{fates:?}");
        for f in caught {
            assert!(matches!(f.killed, Some(Killed::Simulation { runs, .. }) if runs == f.runs));
            assert!(f.shrunk_len.is_some());
        }
        assert!(reference(&batch(5), Jobs::ONE, &quiet).failure.is_none());
    }

    /// A mutant the simulation never reaches (no runs at all) is caught by
    /// the corpus, by its own target when a failing case names it.
    #[test]
    fn the_corpus_catches_what_the_simulation_left() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
        let corpus = Corpus::load(&dir).expect("the corpus loads");
        let m = *Mutant::ALL
            .iter()
            .find(|m| m.name() == "trusts-from")
            .unwrap();
        let mut fates = simulate(&[m], &batch(0), Jobs::ONE, &quiet);
        assert_eq!(fates[0].killed, None);
        against_corpus(&mut fates, &corpus);
        match &fates[0].killed {
            Some(Killed::Corpus { by, case }) => {
                let c = corpus.cases.iter().find(|c| &c.id == case).unwrap();
                if c.is_about(m.target()) {
                    assert_eq!(*by, Some(m.target()), "{case}");
                } else {
                    assert_eq!(*by, c.invariants.first().copied(), "{case}");
                }
            }
            other => panic!("{} survived the corpus: {other:?}", m.name()),
        }
    }
}
