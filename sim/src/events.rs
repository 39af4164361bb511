//! What the engines tell while they work, as one typed stream.
//!
//! The corpus player, the simulation's batches, the hunt for a batch's
//! first violation, the mutant zoo and a sweep of exploration scopes
//! each take one [`Listener`] and tell it two things: which piece of work
//! a worker takes up, from that worker's thread (for displays that show
//! every worker), and each piece that ends, on the caller's thread and in
//! the work's own order whatever the number of workers (so what a
//! listener makes of the ends is the same for one job or many). A
//! certification also tells when each of its parts starts and ends, and a
//! hunt what it found and how its shrinking goes. Progress bars, a
//! shard's run counts, a trace printed as runs end and the tests all
//! listen to this one stream, instead of each engine taking a callback
//! per thing it tells.

use std::time::Duration;

use crate::corpus::play::CaseRun;
use crate::corpus::Case;
use crate::explore::sweep::ExploredScope;
use crate::implementations::mutants::Mutant;
use crate::simulator::runner::{Played, RunConfig, Stats, Violation};
use crate::zoo::Fate;

/// One thing an engine tells.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// A part of the certification of the implementation `label` starts,
    /// with `len` pieces of work (0 when it will not run) for up to
    /// `workers` workers.
    PartStarted {
        label: &'a str,
        part: Part,
        len: u64,
        workers: usize,
    },
    /// That part ended, after `took`.
    PartEnded {
        label: &'a str,
        part: Part,
        took: Duration,
    },
    /// `worker` (counted from 0) takes up `work`. Told from that worker's
    /// thread, so in no particular order between workers.
    Started { worker: usize, work: Work<'a> },
    /// A case was judged. Cases the give-up rule left unplayed are told
    /// too, as the errors they are reported as.
    Case(&'a CaseRun),
    /// The `n`th run of a batch (counted from 1) was played, under
    /// `config`; `totals` are the counts of the runs so far, its own
    /// included.
    Run {
        n: u64,
        config: &'a RunConfig,
        played: &'a Played,
        totals: &'a Stats,
    },
    /// A batch found its first violation, in the run of `config`; its
    /// shrinking starts.
    Found {
        config: &'a RunConfig,
        violation: &'a Violation,
    },
    /// A line the shrinker reports, for people.
    Shrinking(&'a str),
    /// A mutant of the zoo met its fate.
    Mutant(&'a Fate),
    /// A scope was explored.
    Scope(&'a ExploredScope),
}

/// The parts of a certification, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Corpus,
    Simulation,
    /// Seeds of the simulation played twice (`--check-determinism`).
    Determinism,
    Exploration,
}

impl Part {
    pub fn name(self) -> &'static str {
        match self {
            Part::Corpus => "corpus",
            Part::Simulation => "simulation",
            Part::Determinism => "determinism",
            Part::Exploration => "exploration",
        }
    }
}

/// A piece of work a worker takes up.
#[derive(Debug, Clone, Copy)]
pub enum Work<'a> {
    Case(&'a Case),
    Seed(u64),
    Mutant(Mutant),
    /// A scope to explore, by its ID.
    Scope(&'a str),
}

/// Who hears the events: called from the workers' threads as well as the
/// caller's, hence `Sync`. A listener that keeps what it hears keeps it
/// behind a lock. `'a` is what the listener borrows.
pub type Listener<'a> = dyn Fn(Event<'_>) + Sync + 'a;

/// The listener that hears nothing, for callers that want only the
/// outcome.
pub fn quiet(_: Event<'_>) {}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::simulator::driver::{first_violation, Batch, Jobs};

    fn batch(seeds: u64) -> Batch {
        Batch::with_every_fault(3, seeds, 3, 30)
    }

    /// What a listener hears of a batch: every seed taken up once, and
    /// the runs' ends in seed order with running totals, the same for one
    /// job as for two.
    #[test]
    fn a_batch_tells_every_start_and_its_ends_in_order_whatever_the_jobs() {
        let heard = |jobs: Jobs| {
            let started = Mutex::new(Vec::new());
            let ended = Mutex::new(Vec::new());
            let listener = |e: Event<'_>| match e {
                Event::Started {
                    work: Work::Seed(seed),
                    worker,
                } => {
                    assert!(worker < jobs.0.get(), "worker {worker} of {jobs:?}");
                    started.lock().unwrap().push(seed);
                }
                Event::Run {
                    n,
                    config,
                    played,
                    totals,
                } => ended.lock().unwrap().push((
                    n,
                    config.seed,
                    played.stats.deliveries,
                    totals.deliveries,
                )),
                other => panic!("a batch told {other:?}"),
            };
            let out = first_violation(
                &batch(6),
                &crate::implementations::reference::ReferenceImpl,
                jobs,
                false,
                &listener,
                || false,
            );
            assert_eq!(out.runs, 6);
            let mut started = started.into_inner().unwrap();
            started.sort_unstable();
            assert_eq!(started, (3..9).collect::<Vec<u64>>());
            ended.into_inner().unwrap()
        };
        let one = heard(Jobs::ONE);
        assert_eq!(
            one.iter()
                .map(|(n, seed, ..)| (*n, *seed))
                .collect::<Vec<_>>(),
            (1..=6).map(|n| (n, n + 2)).collect::<Vec<_>>()
        );
        let mut sum = 0;
        for (_, _, own, total) in &one {
            sum += own;
            assert_eq!(*total, sum);
        }
        assert!(sum > 0, "the runs delivered nothing");
        assert_eq!(heard(Jobs(std::num::NonZeroUsize::new(2).unwrap())), one);
    }
}
