//! From a seed to a verdict: generating a run's steps, playing them, and
//! shrinking a failure to a minimal counterexample.

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use rand_chacha::rand_core::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::{Duration, Instant};

use super::crash_cut;
use super::faults::{Fault, FaultSet};
use super::runner::{Played, Run, RunConfig, Sessions, Stats, Violation};
use super::workload::{step_strategy, Mix, Step};
use crate::contract::plugin::Implementation;
use crate::events::{Event, Listener, Work};
use crate::judge::compare::RejectNames;
use crate::pool::{End, Flow, Pool, Ran};
use crate::shard::Shard;

mod shrinking;
pub use shrinking::shrink;

/// The step list of a seed, with the value trees that can shrink each step.
pub struct Generated {
    pub steps: Vec<Step>,
    trees: Vec<Box<dyn ValueTree<Value = Step>>>,
}

/// The mix of a seed: with `swarm`, each kind of talk and attack is on with
/// probability 3/4 (requests, commitments and reports always), so that every
/// run explores a different corner.
pub fn mix_for(seed: u64, faults: &FaultSet, swarm: bool) -> Mix {
    let mut mix = Mix::everything(faults.has(Fault::Crash), faults.has(Fault::Partition));
    if swarm {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5EED_5A4A_3000_0001);
        let bits = |rng: &mut ChaCha8Rng, n: u32| -> u16 {
            (0..n)
                .filter(|_| rng.next_u64() % 4 != 0)
                .fold(0u16, |m, i| m | (1 << i))
        };
        mix.talk = bits(&mut rng, 10) | 0b11_1000;
        mix.attacks = bits(&mut rng, Mix::ATTACK_KINDS);
    }
    mix
}

fn runner_for(seed: u64) -> TestRunner {
    let mut bytes = [0u8; 32];
    for (i, chunk) in bytes.chunks_mut(8).enumerate() {
        chunk.copy_from_slice(
            &(seed ^ (i as u64).wrapping_mul(0xA076_1D64_78BD_642F)).to_le_bytes(),
        );
    }
    TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
    )
}

/// The value trees of a run's steps, one after another, from its seed.
fn step_trees(config: &RunConfig) -> impl Iterator<Item = Box<dyn ValueTree<Value = Step>>> {
    let mut runner = runner_for(config.seed);
    let strategy = step_strategy(config.mix);
    let (seed, cuts) = (config.seed, config.faults.has(Fault::PowerLoss));
    (0..config.steps).map_while(move |index| {
        strategy.new_tree(&mut runner).ok().map(|tree| {
            let tree = Box::new(tree) as Box<dyn ValueTree<Value = Step>>;
            if cuts {
                Box::new(crash_cut::WithCut {
                    inner: tree,
                    seed,
                    index,
                }) as Box<dyn ValueTree<Value = Step>>
            } else {
                tree
            }
        })
    })
}

/// The steps of a run, a pure function of its configuration, with the
/// value trees that shrinking simplifies them through.
pub fn generate(config: &RunConfig) -> Generated {
    let trees: Vec<_> = step_trees(config).collect();
    Generated {
        steps: trees.iter().map(|t| t.current()).collect(),
        trees,
    }
}

/// The same steps as [`generate`], without keeping their value trees,
/// which weigh several times the steps: what a run plays. A failing run's
/// trees are made again, from the same seed, for shrinking.
pub fn steps_of(config: &RunConfig) -> Vec<Step> {
    step_trees(config).map(|t| t.current()).collect()
}

/// Runs one after another, one per seed from `first_seed`, each configured
/// the same way: what `run`, `selftest` and `certify` all play.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    pub first_seed: u64,
    /// How many runs; 0 plays none.
    pub seeds: u64,
    pub agents: usize,
    pub steps: usize,
    pub faults: FaultSet,
    pub names: RejectNames,
    /// Each run enables a random subset of message kinds (see [`mix_for`]).
    pub swarm: bool,
    /// The share of the seeds played: by residue of their offset from
    /// `first_seed` (docs/scale.md).
    pub shard: Shard,
    /// No run starts after this instant (`--duration`); the runs already
    /// under way end and count, so the seeds played stay a prefix.
    pub deadline: Option<Instant>,
}

impl Batch {
    /// `seeds` runs from `first_seed` of `agents` agents and `steps` steps,
    /// with every fault and swarm mixes, reject names compared, all of the
    /// seeds and no deadline: the batch every command starts from.
    pub fn with_every_fault(first_seed: u64, seeds: u64, agents: usize, steps: usize) -> Batch {
        Batch {
            first_seed,
            seeds,
            agents,
            steps,
            faults: FaultSet::all(),
            names: RejectNames::Compared,
            swarm: true,
            shard: Shard::WHOLE,
            deadline: None,
        }
    }

    /// How many runs this batch's shard plays when nothing stops it.
    pub fn share(&self) -> u64 {
        self.shard.positions_of(self.seeds)
    }

    /// The seed of this shard's `nth` run (counted from 0).
    pub fn seed_of(&self, nth: u64) -> u64 {
        self.shard.seed(self.first_seed, nth)
    }

    pub fn config(&self, seed: u64) -> RunConfig {
        let mix = mix_for(seed, &self.faults, self.swarm);
        RunConfig {
            seed,
            agents: self.agents,
            steps: self.steps,
            // Judging by the seed alone (`--level core`, names ignored)
            // leaves out what only the profile says.
            mix: match self.names {
                RejectNames::Ignored => mix.seed_rules_only(),
                RejectNames::Compared => mix,
            },
            faults: self.faults.clone(),
            names: self.names,
            sessions: Sessions::Once,
        }
    }
}

/// How a batch ended.
pub struct BatchOutcome {
    /// Runs played to the end (the failing one included).
    pub runs: u64,
    pub stats: Stats,
    /// The first failing run, ready to shrink.
    pub failure: Option<(RunConfig, Generated, Violation)>,
    /// False when `stop` cut the batch short.
    pub complete: bool,
}

/// How many runs a batch plays at once: one per core unless told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Jobs(pub std::num::NonZeroUsize);

impl Jobs {
    pub const ONE: Jobs = Jobs(std::num::NonZeroUsize::MIN);

    /// One job per core this process may use.
    pub fn per_core() -> Jobs {
        Jobs(std::thread::available_parallelism().unwrap_or(std::num::NonZeroUsize::MIN))
    }
}

impl Default for Jobs {
    fn default() -> Jobs {
        Jobs::per_core()
    }
}

/// Plays a batch until its first violation. `events` hears which seed
/// each worker takes up, and every run played, in seed order, with the
/// totals so far; `stop` is polled before and after each run, and a run it
/// interrupted is not counted (an interrupt kills subprocesses, which
/// would otherwise read as the implementation's failure).
///
/// With several jobs, runs are played on worker threads and their results
/// merged in seed order: the outcome, the totals and every run told to
/// `events` are exactly those of one job. The first violation is the
/// lowest failing seed; runs past it that were already under way are
/// discarded.
pub fn first_violation(
    batch: &Batch,
    implementation: &dyn Implementation,
    jobs: Jobs,
    record: bool,
    events: &Listener<'_>,
    stop: impl Fn() -> bool + Sync,
) -> BatchOutcome {
    let mut out = BatchOutcome {
        runs: 0,
        stats: Stats::default(),
        failure: None,
        complete: true,
    };
    // Runs are counted in the shard's own order: its `n`th run plays
    // `batch.seed_of(n)`.
    let share = usize::try_from(batch.share()).unwrap_or(usize::MAX);
    let pool = Pool::new(jobs.0.get()).until(batch.deadline);
    let end = pool.ordered(
        share,
        |worker, nth| {
            let seed = batch.seed_of(nth as u64);
            events(Event::Started {
                worker: worker.0,
                work: Work::Seed(seed),
            });
            if stop() {
                return Ran::Interrupted;
            }
            let config = batch.config(seed);
            let played = play(&config, &steps_of(&config), implementation, record);
            if stop() {
                Ran::Interrupted
            } else if played.violation.is_some() {
                Ran::Last(played)
            } else {
                Ran::Done(played)
            }
        },
        |nth, played| {
            let config = batch.config(batch.seed_of(nth as u64));
            out.stats.add(&played.stats);
            out.runs += 1;
            events(Event::Run {
                n: out.runs,
                config: &config,
                played: &played,
                totals: &out.stats,
            });
            if let Some(v) = played.violation {
                // The steps again, with their value trees, for shrinking.
                let generated = generate(&config);
                out.failure = Some((config, generated, v));
            }
            Flow::Continue
        },
    );
    out.complete = !matches!(end, End::Interrupted { .. });
    out
}

/// Plays steps under a configuration.
pub fn play(
    config: &RunConfig,
    steps: &[Step],
    implementation: &dyn Implementation,
    record: bool,
) -> Played {
    if config.sessions == Sessions::AfterItself {
        // The warm-up starts from no kept process, so the processes the
        // judged play takes are those of this warm-up, in the same order
        // at every replay.
        implementation.set_process_reuse(true);
        let _ = play_once(config, steps, implementation, false);
    }
    play_once(config, steps, implementation, record)
}

/// How a failing run of a batch replays: on fresh processes, after itself,
/// or (when neither shows the failure) not at all, since it needed what an
/// earlier run left in a kept process. Only an implementation that reused
/// a process can need more than a fresh play; from here on, process reuse
/// is as the answer needs it, so shrinking and the final recording play
/// the same way.
pub fn reproduction(
    config: &RunConfig,
    steps: &[Step],
    violation: &Violation,
    implementation: &dyn Implementation,
) -> RunConfig {
    let reused = implementation.processes_reused() > 0;
    implementation.set_process_reuse(false);
    let once = RunConfig {
        sessions: Sessions::Once,
        ..config.clone()
    };
    if !reused {
        return once;
    }
    let same = |played: Played| {
        played
            .violation
            .is_some_and(|v| v.failure.invariant.name == violation.failure.invariant.name)
    };
    if same(play(&once, steps, implementation, false)) {
        return once;
    }
    let twice = RunConfig {
        sessions: Sessions::AfterItself,
        ..config.clone()
    };
    if same(play(&twice, steps, implementation, false)) {
        return twice;
    }
    implementation.set_process_reuse(false);
    RunConfig {
        sessions: Sessions::AfterEarlierRuns,
        ..config.clone()
    }
}

fn play_once(
    config: &RunConfig,
    steps: &[Step],
    implementation: &dyn Implementation,
    record: bool,
) -> Played {
    match Run::new(config.clone(), implementation, record) {
        Ok(run) => run.play(steps),
        Err(v) => Played {
            stats: Default::default(),
            violation: Some(*v),
            happenings: Vec::new(),
        },
    }
}

/// A failure reduced to a minimal run.
#[derive(Debug, Clone)]
pub struct Counterexample {
    pub config: RunConfig,
    pub steps: Vec<Step>,
    pub violation: Violation,
    pub original_len: usize,
    /// The shrunk run's record; its shorthand is [`notes`](super::happening::notes) of it.
    pub happenings: Vec<super::happening::Happening>,
    pub shrink_runs: usize,
    /// Whether shrinking finished, or stopped early with the smallest
    /// failing run found so far.
    pub shrink_end: ShrinkEnd,
}

/// How shrinking ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShrinkEnd {
    /// Every reduction was tried.
    Complete,
    /// Not shrunk on purpose (`--no-shrink`).
    Skipped,
    /// The time budget ran out; the run is the smallest found by then.
    OutOfTime,
    /// Interrupted (a signal); the run is the smallest found by then, and it
    /// was not replayed, so it has no shorthand.
    Interrupted,
}

impl ShrinkEnd {
    /// A phrase for people, or `None` when shrinking did all it could;
    /// `time_limit` is the shrinking's (see [`ShrinkBudget::time`]).
    pub fn describe(self, time_limit: Option<Duration>) -> Option<String> {
        match self {
            ShrinkEnd::Complete | ShrinkEnd::Skipped => None,
            ShrinkEnd::OutOfTime => Some(format!(
                "shrinking stopped at its time limit ({} s): the smallest failing run found by then",
                time_limit.map_or(0, |t| t.as_secs())
            )),
            ShrinkEnd::Interrupted => {
                Some("shrinking interrupted: the smallest failing run found by then".to_owned())
            }
        }
    }
}

/// How much shrinking may cost.
#[derive(Clone, Copy)]
pub struct ShrinkBudget<'a> {
    /// Wall-clock limit for the whole shrink, the final replay excluded.
    pub time: Option<Duration>,
    /// Asked before each attempt; `true` stops at once (an interrupt).
    pub stop: &'a dyn Fn() -> bool,
    /// When the failure is a timeout, the wait per request while shrinking:
    /// a candidate that times out fails the same way, so it need not be
    /// waited on for the full timeout again. The result is confirmed with
    /// the full timeout.
    pub hang_wait: Duration,
    /// Candidates tried at once. The shrink takes the first that fails in
    /// the order one worker would try them, so the result, and the count of
    /// runs it reports, do not depend on this.
    pub jobs: usize,
}

impl Default for ShrinkBudget<'_> {
    fn default() -> Self {
        ShrinkBudget {
            time: Some(DEFAULT_SHRINK_TIME),
            stop: &|| false,
            hang_wait: DEFAULT_HANG_WAIT,
            jobs: 1,
        }
    }
}

/// The default time budget for shrinking one failure.
pub const DEFAULT_SHRINK_TIME: Duration = Duration::from_secs(120);
/// The default wait per request while shrinking a timeout.
pub const DEFAULT_HANG_WAIT: Duration = Duration::from_millis(500);

/// A failure found in a batch, made a counterexample: how it replays is
/// decided first ([`reproduction`]); then it is shrunk, unless it cannot
/// be replayed at all, when it is kept whole for the record.
pub fn shrink_found(
    config: &RunConfig,
    generated: Generated,
    violation: Violation,
    implementation: &dyn Implementation,
    budget: ShrinkBudget,
    mut progress: impl FnMut(&str),
) -> Counterexample {
    let config = reproduction(config, &generated.steps, &violation, implementation);
    match config.sessions {
        Sessions::AfterEarlierRuns => {
            progress("shrink: not tried, since the run does not fail when replayed alone");
            unshrunk(&config, generated.steps, violation, implementation)
        }
        Sessions::AfterItself => {
            progress("shrink: the run fails when played after itself on the processes it kept");
            shrink(
                &config,
                generated,
                violation,
                implementation,
                budget,
                progress,
            )
        }
        Sessions::Once => shrink(
            &config,
            generated,
            violation,
            implementation,
            budget,
            progress,
        ),
    }
}

/// A failing run kept whole, replayed once to record it.
pub fn unshrunk(
    config: &RunConfig,
    steps: Vec<Step>,
    violation: Violation,
    implementation: &dyn Implementation,
) -> Counterexample {
    let replay = play(config, &steps, implementation, true);
    Counterexample {
        config: config.clone(),
        violation: replay.violation.unwrap_or(violation),
        original_len: steps.len(),
        steps,
        happenings: replay.happenings,
        shrink_runs: 0,
        shrink_end: ShrinkEnd::Skipped,
    }
}

/// The frames a run's steps put on the network, without playing them: for
/// measuring the cost of the checks against the cost of parsing.
pub fn frames_sent(config: &RunConfig, steps: &[Step]) -> Vec<Vec<u8>> {
    let scenario = std::sync::Arc::new(config.scenario());
    let mut resolver = super::resolve::Resolver::new(scenario, config.mix);
    steps
        .iter()
        .filter_map(|s| match s {
            Step::Say { talk, .. } => resolver.talk(talk),
            Step::Attack { attack, .. } => resolver.attack(attack),
            _ => None,
        })
        .map(|o| o.frame)
        .collect()
}
