//! Playing a run: the deterministic scheduler, the faulty network, crashes and
//! restarts, and every check after every operation.
//!
//! Each agent's implementation under test is paired with a reference ledger
//! (the oracle) that receives exactly the inputs the implementation reported
//! on. Everything is driven by the step list and virtual time; containers are
//! ordered; nothing reads a clock or an unseeded random source. The same
//! steps on the same version give the same run, byte for byte.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rand_chacha::rand_core::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::Value;
use tern_model::ledger::{Event, EventKind, Execution, Ledger, LocalTime, Refusal, SharedMessage};
use tern_model::message::{Act, MessageRef, Principal, ThreadId};
use tern_model::WireError;

use super::faults::{Fault, FaultSet};
use super::network::{Fate, InFlight, Network};
use super::resolve::{picked, Outgoing, Resolver, Spoken};
use super::scenario::{epoch_of, Scenario};
pub use super::stats::Stats;
use super::workload::{Mix, Step};
use crate::catalogue::reach::{Reach, Sent};
use crate::catalogue::situations::{power_moments, Moment, Situation};
use crate::contract::plugin::{Capability, Implementation, View};
use crate::contract::storage::{CrashPoint, Loss, PowerNote, Storage};
use crate::contract::world::World;
use crate::judge::delivery::{self, Came, Judged};
use crate::judge::failure::Failure;
use crate::judge::invariants as inv;
use crate::judge::no_effect;
use crate::judge::oracle;
use crate::judge::replies::KnownAcks;
use crate::judge::under_test::{Asked, Executed, Unacked, UnderTest};

use super::happening::{
    CrashWhen, ExecutionResult, FaultEvent, Happening, InRequest, PowerCrash, Reported,
};
use crate::judge::compare::RejectNames;

mod delivering;
mod execution;
mod lifecycle;
mod steps;
mod traffic;
mod views;

/// How a run meets the processes of an implementation that keeps them
/// between sessions (`reinit`). In a batch, a fresh start may take a
/// process an earlier run left, so a failure may depend on what that run
/// did; a counterexample says how it replays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sessions {
    /// Played once, on processes as they come (in a counterexample: fresh
    /// ones only).
    #[default]
    Once,
    /// Played once to warm the processes up, then again on the processes
    /// the first play kept; the second play is the one judged. A failure
    /// that needed a process with a past, reproduced from the run itself.
    AfterItself,
    /// The failure needed what an earlier run of the batch left in a kept
    /// process, and neither a fresh play nor one after itself shows it:
    /// the steps are kept for the record, but do not reproduce it.
    AfterEarlierRuns,
}

impl Sessions {
    /// The name a trace's header gives it (absent for `Once`).
    pub fn as_str(self) -> &'static str {
        match self {
            Sessions::Once => "once",
            Sessions::AfterItself => "after-itself",
            Sessions::AfterEarlierRuns => "after-earlier-runs",
        }
    }

    pub fn from_name(name: &str) -> Option<Sessions> {
        [
            Sessions::Once,
            Sessions::AfterItself,
            Sessions::AfterEarlierRuns,
        ]
        .into_iter()
        .find(|s| s.as_str() == name)
    }
}

/// Everything that defines a run besides its steps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunConfig {
    pub seed: u64,
    pub agents: usize,
    pub steps: usize,
    pub faults: FaultSet,
    pub mix: Mix,
    pub names: RejectNames,
    pub sessions: Sessions,
}

impl RunConfig {
    /// The world of the run: its agents, their identities, grants and
    /// clock skews, all drawn from the seed.
    pub fn scenario(&self) -> Scenario {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        Scenario::new(self.agents, self.steps, self.faults.has(Fault::Skew), |n| {
            rng.next_u64() % n.max(1)
        })
    }
}

/// A broken invariant, where in the run: the step and the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Index of the step being played (`steps` for the final quiescence).
    pub step: usize,
    pub agent: Option<String>,
    pub failure: Failure,
}

/// The result of playing steps.
#[derive(Debug, Clone)]
pub struct Played {
    pub stats: Stats,
    pub violation: Option<Violation>,
    /// The run's record, as data (only when recording): its shorthand is
    /// [`notes`](crate::simulator::happening::notes) of it.
    pub happenings: Vec<Happening>,
}

const TICK_MS: u64 = 10;
const RETRANSMIT_MS: u64 = 80;
const DOWNTIME_MS: u64 = 60;
/// The furthest an execution timed to a grant's expiry moves the clock:
/// enough for any grant of the run under any skew (±5 s), so that a timed
/// request never needs earlier ones to bring its instant within reach (and
/// a shrunk run keeps only the one that fails).
const MAX_CLOCK_JUMP_MS: i64 = 10_000;
/// Commitments whose grant expires this soon are the ones half of which
/// are kept for timed requests.
const RESERVE_WINDOW_MS: i64 = 4_000;
/// Bounds the final quiescence, so that an implementation that never
/// settles cannot hang the harness.
const MAX_QUIESCE_DELIVERIES: usize = 200_000;

/// An agent of the run: its receiver under test, with what the run
/// decides of it (its crashes and when it comes back) and what it stored,
/// for the agreement check. The frames it owes are tagged with the index
/// of their send.
struct Agent<'i> {
    name: String,
    under_test: UnderTest<'i, usize>,
    /// Whether the receiver claims `pipeline`: only such a receiver is told
    /// which views follow a delivery
    /// ([`crate::contract::plugin::Receiver::views_follow`]).
    pipelines: bool,
    /// A crash scheduled for this agent's next operation of the kind it
    /// concerns: a delivery for the sync points, an execution for the effect
    /// point. Armed on the storage only for the length of that operation, so
    /// the same operation crashes whatever the implementation's internals.
    pending_crash: Option<CrashPoint>,
    /// Deliveries to let pass before a sync crash point is armed: a crash
    /// at the second delivery from now falls right after another answer,
    /// often with no view asked in between (what a receiver that answers
    /// before its record is durable gets wrong).
    crash_after: u8,
    down_until: Option<u64>,
    /// A crash scheduled for the next start-up, at its first sync.
    recovery_crash: Option<CrashPoint>,
    /// Per thread: frames stored (order-independence check).
    stored: BTreeMap<String, BTreeSet<Vec<u8>>>,
}

impl Agent<'_> {
    fn is_up(&self) -> bool {
        self.under_test.is_up()
    }

    fn oracle(&self) -> &Ledger {
        self.under_test.oracle()
    }

    fn storage(&self) -> &Storage {
        self.under_test.storage()
    }
}

/// Whether a commitment whose grant is about to expire is kept for the
/// timed requests: a stable function of its ID, so that shrinking keeps it.
fn reserved_for_timing(c: &Spoken) -> bool {
    c.id.as_deref()
        .is_some_and(|id| id.bytes().map(u32::from).sum::<u32>() % 2 == 0)
}

/// The view without this agent's own effects, for comparing agents.
fn shared_part(view: &Value) -> Value {
    let mut v = view.clone();
    if let Some(o) = v.as_object_mut() {
        o.remove("effects");
    }
    v
}

/// A run under way: the implementation's receivers, each paired with its
/// oracle, the network, storage and clock. [`Run::play`] plays a whole step
/// list; [`Run::step`] and [`Run::finish`] play it one step at a time, for
/// drivers that choose each step themselves (the proptest state machine of
/// [`crate::conformance`]), with the same checks and the same result.
pub struct Run<'a> {
    config: RunConfig,
    scenario: Arc<Scenario>,
    /// Resolves the steps' indices against what has been said. Taken out
    /// while a step is played, which borrows it and the run both.
    resolver: Option<Resolver>,
    world: World,
    agents: Vec<Agent<'a>>,
    now: u64,
    /// Copies of `sent` on their way, and the partitions. When the last
    /// copy of a frame is delivered its bytes are let go: a copy that a
    /// crash cut, or whose answer a crash lost, is redelivered from the
    /// agent's own record of it, and a long run would otherwise keep every
    /// frame ever sent (megabyte frames among them).
    network: Network,
    sent: Vec<Outgoing>,
    /// Each of `sent`, parsed once when it was sent.
    parsed: Vec<Result<Arc<SharedMessage>, WireError>>,
    /// What the situation catalogue knows of each of `sent`.
    facts: Vec<Sent>,
    reach: Reach,
    /// The ACKs among `sent`, for the ACK-of-ACK rule.
    acks: KnownAcks,
    stats: Stats,
    record: bool,
    happenings: Vec<Happening>,
    step: usize,
    /// Steps begun so far: the index of the next one.
    begun: usize,
    dirty: BTreeSet<(usize, String)>,
}

type Checked = Result<(), Box<Violation>>;

impl<'a> Run<'a> {
    /// Starts a run: every agent's implementation, on fresh storage, each
    /// paired with its oracle. An implementation that fails to start, or
    /// acts while starting, is the run's violation. With `record`, the run
    /// keeps its events, for the shorthand and traces.
    pub fn new(
        config: RunConfig,
        implementation: &'a dyn Implementation,
        record: bool,
    ) -> Result<Run<'a>, Box<Violation>> {
        let scenario = Arc::new(config.scenario());
        let resolver = Some(Resolver::new(scenario.clone(), config.mix));
        let world = World::new();
        let power_loss = config.faults.has(Fault::PowerLoss);
        let mut run = Run {
            config,
            scenario,
            resolver,
            world,
            agents: Vec::new(),
            now: 0,
            network: Network::default(),
            sent: Vec::new(),
            parsed: Vec::new(),
            facts: Vec::new(),
            reach: Reach::default(),
            acks: KnownAcks::default(),
            stats: Stats {
                power_loss,
                ..Stats::default()
            },
            record,
            happenings: Vec::new(),
            step: 0,
            begun: 0,
            dirty: BTreeSet::new(),
        };
        for name in run.scenario.agents.clone() {
            let init = run.scenario.init_for(&name);
            run.agents.push(Agent {
                name,
                under_test: UnderTest::new(implementation, init),
                pipelines: false,
                pending_crash: None,
                crash_after: 0,
                down_until: None,
                recovery_crash: None,
                stored: BTreeMap::new(),
            });
        }
        for a in 0..run.agents.len() {
            if run.scenario.skew[a] != 0 {
                run.fault(Fault::Skew);
            }
            run.start(a)?;
        }
        Ok(run)
    }

    fn happen(&mut self, h: impl FnOnce(u64) -> Happening) {
        if self.record {
            let now = self.now;
            self.happenings.push(h(now));
        }
    }

    fn fault(&mut self, f: Fault) {
        *self.stats.faults.entry(f.as_str()).or_default() += 1;
    }

    /// `failure` at this step, at agent `agent` (`None`: of the run as a
    /// whole).
    fn violation(&self, agent: Option<usize>, failure: Failure) -> Box<Violation> {
        Box::new(Violation {
            step: self.step,
            agent: agent.map(|a| self.agents[a].name.clone()),
            failure,
        })
    }

    fn local(&self, a: usize) -> LocalTime {
        LocalTime(self.now as i64 + self.scenario.skew[a])
    }

    /// Compares agent `a`'s view of every thread of the conversation under
    /// way, if it is up.
    fn check_views(&mut self, a: usize) -> Checked {
        let threads = self.scenario.threads_of(epoch_of(self.step));
        let threads: Vec<&str> = threads.iter().map(String::as_str).collect();
        self.check_views_in(a, &threads)
    }

    /// Plays every step, then lets the network drain, then checks that
    /// receivers that stored the same messages agree.
    pub fn play(mut self, steps: &[Step]) -> Played {
        match steps.iter().try_for_each(|s| self.step(s)) {
            Ok(()) => self.finish(),
            Err(v) => self.failed(v),
        }
    }

    /// Plays the next step: time moves on a tick, agents due restart, the
    /// step happens, what is due is delivered, and every view it touched is
    /// compared. After a violation the run is only good for
    /// [`Run::failed`].
    pub fn step(&mut self, step: &Step) -> Result<(), Box<Violation>> {
        let mut resolver = self.resolver.take().expect("a step puts it back");
        let result = self.step_with(step, &mut resolver);
        self.resolver = Some(resolver);
        result
    }

    fn step_with(&mut self, step: &Step, resolver: &mut Resolver) -> Checked {
        let i = self.begun;
        self.begun += 1;
        self.step = i;
        self.stats.steps += 1;
        resolver.enter_epoch(epoch_of(i));
        self.now += TICK_MS;
        self.restart_due()?;
        self.play_step(step, resolver)?;
        self.deliver_due()?;
        self.check_dirty()
    }

    /// Ends a run whose steps all passed: lets the network drain, compares
    /// every view once more, then checks that receivers that stored the
    /// same messages agree.
    pub fn finish(mut self) -> Played {
        let result = self.end();
        self.concluded(result)
    }

    /// Ends a run at the violation [`Run::step`] returned: the record, if
    /// kept, closes with it.
    pub fn failed(self, violation: Box<Violation>) -> Played {
        self.concluded(Err(violation))
    }

    fn concluded(mut self, result: Checked) -> Played {
        for agent in &mut self.agents {
            agent.under_test.dismiss();
        }
        if let Err(v) = &result {
            let (agent, failure) = (v.agent.clone(), v.failure.clone());
            self.happen(|at| Happening::Violation { at, agent, failure });
        }
        Played {
            stats: self.stats,
            violation: result.err().map(|v| *v),
            happenings: self.happenings,
        }
    }

    fn end(&mut self) -> Checked {
        self.step = self.begun;
        self.quiesce()?;
        // Every view of every agent, once more, now that nothing is in flight.
        let threads = self.scenario.threads();
        let threads: Vec<&str> = threads.iter().map(String::as_str).collect();
        for a in 0..self.agents.len() {
            self.check_views_in(a, &threads)?;
        }
        self.check_agreement()
    }

    /// Heals every fault and delivers what is in flight.
    fn quiesce(&mut self) -> Checked {
        self.network.heal();
        for a in 0..self.agents.len() {
            self.agents[a].pending_crash = None;
            self.agents[a].recovery_crash = None;
            if !self.agents[a].is_up() {
                self.restart(a)?;
            }
        }
        let mut budget = MAX_QUIESCE_DELIVERIES;
        while let Some(at) = self.network.next_arrival() {
            budget = budget.saturating_sub(1);
            if budget == 0 {
                return Err(self.violation(
                    None,
                    Failure::new(inv::ALIVE, "the network drains", "deliveries never settle"),
                ));
            }
            self.now = self.now.max(at);
            self.deliver_due()?;
            self.check_dirty()?;
        }
        Ok(())
    }

    /// Compares the views touched since the last comparison.
    fn check_dirty(&mut self) -> Checked {
        let dirty: Vec<(usize, String)> = std::mem::take(&mut self.dirty).into_iter().collect();
        // In (agent, thread) order, each agent's threads asked together.
        for mine in dirty.chunk_by(|x, y| x.0 == y.0) {
            let threads: Vec<&str> = mine.iter().map(|(_, t)| t.as_str()).collect();
            self.check_views_in(mine[0].0, &threads)?;
        }
        Ok(())
    }

    /// Order independence: receivers that stored the same frames of a thread
    /// derive the same view.
    fn check_agreement(&mut self) -> Checked {
        for thread in self.scenario.threads() {
            let thread = thread.as_str();
            let mut groups: BTreeMap<Vec<Vec<u8>>, Vec<usize>> = BTreeMap::new();
            for a in 0..self.agents.len() {
                let set: Vec<Vec<u8>> = self.agents[a]
                    .stored
                    .get(thread)
                    .map(|s| s.iter().cloned().collect())
                    .unwrap_or_default();
                if !set.is_empty() {
                    groups.entry(set).or_default().push(a);
                }
            }
            for members in groups.values().filter(|m| m.len() > 1) {
                let t = ThreadId::new(thread).expect("valid");
                let mut first: Option<(usize, View)> = None;
                for &a in members {
                    let Some(view) = self.view_of(a, &t)? else {
                        continue;
                    };
                    let Some((b, first_view)) = &first else {
                        first = Some((a, view));
                        continue;
                    };
                    // Equal texts share every part; only views that differ
                    // are read as trees, to compare what they must share.
                    if *first_view == view {
                        continue;
                    }
                    let (other, view) = (
                        shared_part(&first_view.to_value()),
                        shared_part(&view.to_value()),
                    );
                    if other != view {
                        let b = *b;
                        return Err(self.violation(
                            Some(a),
                            Failure::new(
                                inv::ORDER_INDEPENDENCE,
                                format!(
                                    "the view of {} for {thread}: {other}",
                                    self.agents[b].name
                                ),
                                view.to_string(),
                            ),
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}
