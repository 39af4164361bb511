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
use tern_model::message::{GrantRef, MessageRef, Principal, ThreadId};
use tern_model::WireError;

use super::faults::{Fault, FaultSet};
use super::network::{Fate, InFlight, Network};
use super::resolve::{Outgoing, Resolver};
use super::scenario::{epoch_of, Scenario};
pub use super::stats::Stats;
use super::workload::{Mix, Step};
use crate::catalogue::reach::{Reach, Sent};
use crate::catalogue::situations::{power_moments, Moment, Situation};
use crate::contract::plugin::{Capability, ImplError, Implementation, InitParams, Receiver, View};
use crate::contract::storage::{CrashPoint, Loss, PowerNote, Storage};
use crate::contract::world::World;
use crate::judge::delivery::{self, Breach, Call, Delivery};
use crate::judge::invariants::{self as inv, Invariant};
use crate::judge::oracle::{self, Mismatch};
use crate::judge::replies::KnownAcks;
use crate::shorthand;

use super::happening::{FaultEvent, Happening};
use crate::judge::compare::execution_text;
use crate::judge::compare::RejectNames;

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

/// A broken invariant: which, where, and expected against actual.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub invariant: Invariant,
    /// Index of the step being played (`steps` for the final quiescence).
    pub step: usize,
    pub agent: Option<String>,
    pub expected: String,
    pub actual: String,
    /// The implementation did not answer in time: a hang, which shrinking
    /// need not wait out in full again.
    pub timed_out: bool,
}

/// The result of playing steps.
#[derive(Debug, Clone)]
pub struct Played {
    pub stats: Stats,
    pub violation: Option<Violation>,
    /// The run in shorthand, one line per event (only when recording),
    /// rendered from `happenings`.
    pub notes: Vec<String>,
    /// The run's record, as data (only when recording).
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

struct Agent {
    name: String,
    /// What every start of this agent is given, made once: its
    /// configuration lists every thread and grant of the run, so making it
    /// at each restart cost a run the square of its length.
    init: InitParams,
    receiver: Option<Box<dyn Receiver>>,
    /// Whether the receiver claims `pipeline`: only such a receiver is told
    /// which views follow a delivery ([`Receiver::views_follow`]).
    pipelines: bool,
    storage: Storage,
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
    oracle: Ledger,
    down_until: Option<u64>,
    /// Frames whose delivery crashed before the outcome was reported, with
    /// their principal and the crash point: redelivered first thing after a
    /// restart.
    unreported: Vec<Unreported>,
    /// The last frame delivered and answered: a crash between operations
    /// loses the transport's acknowledgement of it, so it comes again.
    last_answered: Option<Unreported>,
    /// A crash scheduled for the next start-up, at its first sync.
    recovery_crash: Option<CrashPoint>,
    /// Per thread: IDs the implementation's view has shown (history check)
    /// and frames stored (order-independence check).
    seen_ids: BTreeMap<String, BTreeSet<String>>,
    /// Per thread: IDs the oracle's events named since the last view that
    /// matched the oracle's. A view equal to the oracle's shows exactly
    /// the oracle's IDs, so these (those the oracle shows) join `seen_ids`
    /// without reading the view.
    unconfirmed: BTreeMap<String, Vec<MessageRef>>,
    stored: BTreeMap<String, BTreeSet<Vec<u8>>>,
}

/// A frame whose delivery crashed before its outcome was reported.
#[derive(Debug, Clone)]
struct Unreported {
    frame: Vec<u8>,
    principal: Principal,
    sent: usize,
    point: Option<CrashPoint>,
}

/// Whether a commitment whose grant is about to expire is kept for the
/// timed requests: a stable function of its ID, so that shrinking keeps it.
fn reserved_for_timing(c: &Value) -> bool {
    c["id"]
        .as_str()
        .is_some_and(|id| id.bytes().map(u32::from).sum::<u32>() % 2 == 0)
}

/// The thread and ID of a COMMIT the workload said, if both are valid names.
fn commitment_of(c: &Value) -> Option<(ThreadId, MessageRef)> {
    let thread = ThreadId::new(c["thread"].as_str()?).ok()?;
    let id = MessageRef::new(c["id"].as_str()?).ok()?;
    Some((thread, id))
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
    implementation: &'a dyn Implementation,
    scenario: Arc<Scenario>,
    /// Resolves the steps' indices against what has been said. Taken out
    /// while a step is played, which borrows it and the run both.
    resolver: Option<Resolver>,
    world: World,
    agents: Vec<Agent>,
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
            implementation,
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
            let storage = Storage::new();
            let init = run.scenario.init_for(&name);
            let oracle = Ledger::new(init.config.clone());
            run.agents.push(Agent {
                name,
                init,
                receiver: None,
                pipelines: false,
                storage,
                pending_crash: None,
                crash_after: 0,
                oracle,
                down_until: None,
                unreported: Vec::new(),
                last_answered: None,
                recovery_crash: None,
                seen_ids: BTreeMap::new(),
                unconfirmed: BTreeMap::new(),
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

    fn violation(
        &self,
        invariant: Invariant,
        agent: Option<usize>,
        expected: String,
        actual: String,
    ) -> Box<Violation> {
        Box::new(Violation {
            invariant,
            step: self.step,
            agent: agent.map(|a| self.agents[a].name.clone()),
            expected,
            actual,
            timed_out: false,
        })
    }

    /// A difference from the oracle at agent `a`.
    fn mismatch(&self, a: usize, m: Mismatch) -> Box<Violation> {
        self.violation(m.invariant, Some(a), m.expected, m.actual)
    }

    /// A call that broke a rule of [`delivery`], as the violation of its
    /// invariant; a call the implementation failed on its own is
    /// `implementation-sound`, `answering` saying what was awaited.
    fn breach(&self, agent: usize, answering: &str, breach: Breach) -> Box<Violation> {
        match breach {
            Breach::Failed(e) => self.unsound(agent, answering, e),
            breach => self.violation(
                breach.invariant(),
                Some(agent),
                breach.expected(),
                breach.actual(),
            ),
        }
    }

    /// An implementation that failed a call: `implementation-sound`.
    fn unsound(&self, agent: usize, expected: &str, e: ImplError) -> Box<Violation> {
        let mut v = self.violation(inv::ALIVE, Some(agent), expected.to_owned(), e.to_string());
        v.timed_out = matches!(e, ImplError::TimedOut(_));
        v
    }

    fn local(&self, a: usize) -> LocalTime {
        LocalTime(self.now as i64 + self.scenario.skew[a])
    }

    /// Starts (or restarts) an agent's implementation on its storage.
    fn start(&mut self, a: usize) -> Checked {
        let init = self.agents[a].init.clone();
        let before = self.world.len();
        let world = self
            .world
            .for_agent(&self.agents[a].name, &self.agents[a].storage);
        // A crash scheduled for this recovery fires at its next sync.
        let point = self.agents[a].recovery_crash.take();
        let storage = self.agents[a].storage.clone();
        let (started, fired) = storage.with_crash(point, || {
            self.implementation.start(&init, storage.clone(), world)
        });
        match delivery::crash_judged(Call::StartUp, started, fired) {
            Ok(None) => {
                self.stats
                    .situations
                    .reach(Situation::Moment(Moment::crashed_in_recovery(point)));
                self.crash(a, "during its recovery");
                return Ok(());
            }
            Ok(Some(r)) => {
                self.agents[a].pipelines = r.identity().claims(Capability::Pipeline);
                self.agents[a].receiver = Some(r);
            }
            Err(breach) => return Err(self.breach(a, "the implementation starts", breach)),
        }
        if self.world.len() != before {
            return Err(self.violation(
                inv::AUTHORITY,
                Some(a),
                "no effect while starting".into(),
                format!(
                    "{} effect(s) performed during start-up",
                    self.world.len() - before
                ),
            ));
        }
        self.agents[a].down_until = None;
        Ok(())
    }

    /// A crash while agent `a` is idle. Its last answer's acknowledgement
    /// is lost with it, so the sender delivers that frame again.
    fn crash_between_operations(&mut self, a: usize, why: &str) {
        self.agents[a].pending_crash = None;
        self.stats
            .situations
            .reach(Situation::Moment(Moment::CrashIdle));
        if let Some(last) = self.agents[a].last_answered.take() {
            if !self.agents[a]
                .unreported
                .iter()
                .any(|u| u.frame == last.frame)
            {
                self.agents[a].unreported.push(last);
            }
        }
        self.crash(a, why);
    }

    fn crash(&mut self, a: usize, why: &str) {
        self.fault(Fault::Crash);
        self.reach.on_crash(a);
        let agent = &mut self.agents[a];
        if let Some(r) = agent.receiver.as_mut() {
            r.kill();
        }
        agent.receiver = None;
        agent.storage.crash();
        agent.down_until = Some(self.now + DOWNTIME_MS);
        let name = agent.name.clone();
        // Over a power-loss state directory, how the crash fell: where in
        // the request, and what it takes (at the restart).
        let cut = agent.storage.cut();
        let at = self.power_notes(a);
        let why = match cut {
            Some(cut) => {
                if cut.loss != Loss::Kill {
                    self.fault(Fault::PowerLoss);
                }
                format!("{why}{at}; {}", cut.loss.describe())
            }
            None => why.to_owned(),
        };
        self.happen(|at| Happening::Fault {
            at,
            agent: name,
            fault: FaultEvent::Crash { why },
        });
    }

    /// Counts the situations of what the state directory of agent `a` told
    /// of its crashes since last asked, and says where a crash inside a
    /// request fell (empty if it did not).
    fn power_notes(&mut self, a: usize) -> String {
        let mut at = String::new();
        for note in self.agents[a].storage.take_notes() {
            for moment in power_moments(&note) {
                self.stats.situations.reach(Situation::Moment(moment));
            }
            match note {
                PowerNote::Held { op, earlier } => {
                    at = format!(
                        ", at its {} file operation of the request ({}, after {})",
                        shorthand::ordinal(earlier.len() + 1),
                        op.name(),
                        if earlier.is_empty() {
                            "none".to_owned()
                        } else {
                            earlier
                                .iter()
                                .map(|o| o.name())
                                .collect::<Vec<_>>()
                                .join(", ")
                        }
                    )
                }
                PowerNote::Answered { last } => {
                    at = format!(
                        ", right after the request answered{}",
                        last.map(|o| format!(" (its last file operation: {})", o.name()))
                            .unwrap_or_default()
                    )
                }
                PowerNote::Lost { .. } => {}
            }
        }
        at
    }

    fn restart_due(&mut self) -> Checked {
        for a in 0..self.agents.len() {
            if self.agents[a].down_until.is_some_and(|t| t <= self.now) {
                self.restart(a)?;
            }
        }
        Ok(())
    }

    fn restart(&mut self, a: usize) -> Checked {
        let name = self.agents[a].name.clone();
        self.happen(|at| Happening::Fault {
            at,
            agent: name,
            fault: FaultEvent::Restart,
        });
        let started = self.start(a);
        // What the power loss of the restart took.
        self.power_notes(a);
        started?;
        // The senders retransmit what was never acknowledged: first the
        // frames whose delivery a crash cut (until they are settled, the
        // receiver may hold what the model does not), then, once the views
        // are compared, the frame whose acknowledgement a crash between
        // operations lost. So a receiver that lost a message it had
        // answered shows it in its view (history), before the redelivery
        // can make it look like a duplicate taken for new.
        let (cut, answered): (Vec<_>, Vec<_>) = self.agents[a]
            .unreported
            .clone()
            .into_iter()
            .partition(|u| u.point.is_some());
        self.redeliver(a, cut)?;
        if !answered.is_empty() {
            self.check_views(a)?;
        }
        self.redeliver(a, answered)?;
        self.check_views(a)
    }

    /// Delivers frames again to agent `a`, while it stays up.
    fn redeliver(&mut self, a: usize, frames: Vec<Unreported>) -> Checked {
        for u in frames {
            if self.agents[a].receiver.is_none() {
                break;
            }
            self.deliver_to(a, &u.frame, &u.principal, u.sent, false)?;
        }
        Ok(())
    }

    /// Compares agent `a`'s view of every thread of the conversation under
    /// way, if it is up.
    fn check_views(&mut self, a: usize) -> Checked {
        let threads = self.scenario.threads_of(epoch_of(self.step));
        let threads: Vec<&str> = threads.iter().map(String::as_str).collect();
        self.check_views_in(a, &threads)
    }

    /// Puts a frame on the network, with the faults its seed draws.
    fn send(&mut self, out: Outgoing, net: u64) {
        self.stats.messages += 1;
        let claimed = out.claimed.clone();
        let spoofed = out.spoofed;
        let index = self.sent.len();
        // The one parse of this frame: the catalogue, the ACK-of-ACK rule
        // and every oracle that receives it read this message.
        let parsed = tern_model::parse_frame(&out.frame).map(SharedMessage::new);
        if self.record {
            let line = shorthand::line(&out.frame, Some(&claimed));
            let to = out
                .recipients
                .iter()
                .map(|r| self.agents[*r].name.clone())
                .collect();
            let gloss = line.clone();
            let frame = out.frame.clone();
            self.happen(|at| Happening::Send {
                at,
                index,
                from: claimed,
                to,
                gloss,
                frame,
                spoofed,
            });
        }
        let actor = out.actor;
        let recipients = out.recipients.clone();
        let message = parsed.as_ref().ok().map(|m| m.message());
        if let Some(m) = message {
            self.acks.note(m);
        }
        let mut facts = self.reach.on_send(message, out.malformed);
        facts.boast = out.boast.clone();
        self.facts.push(facts);
        self.parsed.push(parsed);
        self.sent.push(out);
        let added = self.network.add_frame();
        debug_assert_eq!(added, index, "the network numbers frames as they are sent");
        if let Some(a) = actor {
            self.network.enqueue(self.now, a, index, false);
        }
        for r in recipients {
            let fate = Fate::draw(net, r, self.now, &self.config.faults);
            if fate.reordered {
                self.fault(Fault::Reorder);
            }
            if fate.delayed {
                self.fault(Fault::Delay);
            }
            self.network.enqueue(fate.at, r, index, fate.lost);
            if let Some(later) = fate.second_copy {
                self.network.enqueue(later, r, index, false);
                self.fault(Fault::Duplicate);
                let to = self.agents[r].name.clone();
                self.happen(|at| Happening::SecondCopy { at, index, to });
            }
        }
    }

    fn cut(&self, from: Option<usize>, to: usize) -> bool {
        self.network.cut(from, to, self.now)
    }

    /// Delivers everything due by now, in time order.
    fn deliver_due(&mut self) -> Checked {
        // Each agent's last copy due now that will reach it. Nothing is sent
        // while copies are delivered, so this set is final; the views that
        // follow can go out with that delivery (`Receiver::views_follow`).
        let mut last: BTreeMap<usize, (u64, u64)> = BTreeMap::new();
        for (key, copy) in self.network.due(self.now) {
            if self.agents[copy.to].pipelines
                && !copy.lost
                && !self.cut(self.sent[copy.sent].actor, copy.to)
            {
                last.insert(copy.to, key);
            }
        }
        while let Some(due) = self.network.take_due(self.now) {
            let sent = due.copy.sent;
            let views_follow = last.get(&due.copy.to) == Some(&due.key);
            self.deliver_copy(due.copy, views_follow)?;
            // (Delivering may have put a copy back: a retransmission.)
            if self.network.copies_of(sent) == 0 {
                self.sent[sent].frame = Vec::new();
            }
        }
        Ok(())
    }

    fn deliver_copy(&mut self, copy: InFlight, views_follow: bool) -> Checked {
        let to = copy.to;
        let actor = self.sent[copy.sent].actor;
        if copy.lost {
            self.fault(Fault::Drop);
            let name = self.agents[to].name.clone();
            // Say whose copy it is: a misrouted frame or a replay also goes
            // to agents its `to` does not name.
            let whose = if self.record {
                self.facts[copy.sent].copy_to(&name)
            } else {
                String::new()
            };
            self.happen(|at| Happening::Lost {
                at,
                index: copy.sent,
                whose,
                to: name,
            });
            self.network
                .enqueue(self.now + RETRANSMIT_MS, to, copy.sent, false);
            return Ok(());
        }
        if self.agents[to].receiver.is_none() || self.cut(actor, to) {
            // Unreachable: retransmitted later.
            self.network
                .enqueue(self.now + RETRANSMIT_MS, to, copy.sent, false);
            return Ok(());
        }
        let frame = self.sent[copy.sent].frame.clone();
        let principal = self.sent[copy.sent].principal.clone();
        self.deliver_to(to, &frame, &principal, copy.sent, views_follow)
    }

    /// The threads whose views [`Run::check_dirty`] will ask of agent `a`
    /// if delivering frame `sent` touches the thread it names, in the order
    /// it asks them.
    fn views_after(&self, a: usize, sent: usize) -> Vec<ThreadId> {
        let mut threads: BTreeSet<&str> = self
            .dirty
            .range((a, String::new())..(a + 1, String::new()))
            .map(|(_, t)| t.as_str())
            .collect();
        if let Ok(m) = &self.parsed[sent] {
            threads.insert(m.message().thread.as_str());
        }
        threads
            .into_iter()
            .filter_map(|t| ThreadId::new(t).ok())
            .collect()
    }

    /// One delivery to one agent, with every check.
    fn deliver_to(
        &mut self,
        a: usize,
        frame: &[u8],
        principal: &Principal,
        sent: usize,
        views_follow: bool,
    ) -> Checked {
        self.stats.deliveries += 1;
        let local = self.local(a);
        let before = self.world.len();
        if self.agents[a].receiver.is_none() {
            return Ok(());
        }
        let point = self.agents[a].pending_crash;
        let sync_point = matches!(point, Some(CrashPoint::BeforeSync | CrashPoint::AfterSync));
        let armed = sync_point && self.agents[a].crash_after == 0;
        if sync_point && !armed {
            self.agents[a].crash_after -= 1;
        }
        // The last delivery of the round to this agent, with no crash
        // armed: say which views come next (a guess from the frame's
        // thread; a receiver that was told wrong just answers more views).
        let follow = if views_follow && !armed {
            self.views_after(a, sent)
        } else {
            Vec::new()
        };
        let agent = &mut self.agents[a];
        let receiver = agent.receiver.as_mut().expect("checked above");
        if !follow.is_empty() {
            receiver.views_follow(&follow);
        }
        let answer = delivery::deliver(
            receiver.as_mut(),
            &agent.storage,
            if armed { point } else { None },
            frame,
            principal,
            local,
        );
        if armed && agent.storage.fired() {
            agent.pending_crash = None;
        }
        let reply = match answer {
            Err(breach) => return Err(self.breach(a, "an answer to deliver", breach)),
            Ok(Delivery::Crashed) => {
                self.stats
                    .situations
                    .reach(Situation::Moment(Moment::crashed_in_delivery(point)));
                let agent = &mut self.agents[a];
                if let Some(u) = agent.unreported.iter_mut().find(|u| u.frame == frame) {
                    u.point = point;
                } else {
                    agent.unreported.push(Unreported {
                        frame: frame.to_vec(),
                        principal: principal.clone(),
                        sent,
                        point,
                    });
                }
                self.crash(a, "during a delivery, before reporting its outcome");
                return Ok(());
            }
            Ok(Delivery::Answered(reply)) => reply,
        };
        let unreported = self.agents[a].unreported.iter().find(|u| u.frame == frame);
        let was_unreported = unreported.is_some();
        if let Some(u) = unreported {
            self.stats
                .situations
                .reach(Situation::Moment(Moment::redelivered(u.point)));
        }
        self.agents[a].unreported.retain(|u| u.frame != frame);
        // (A redelivery after the last copy on the network was delivered
        // carries the agent's own record of the frame.)
        debug_assert!(
            self.sent[sent].frame.is_empty() || self.sent[sent].frame == frame,
            "a delivery names the frame it carries"
        );
        let expected =
            self.agents[a]
                .oracle
                .deliver_shared(self.parsed[sent].clone(), principal, local);
        self.stats.checks += 1;
        for e in &expected {
            if let (Some(t), Some(id)) = (&e.thread, &e.id) {
                let agent = &mut self.agents[a];
                match agent.unconfirmed.get_mut(t.as_str()) {
                    Some(ids) => ids.push(id.clone()),
                    None => {
                        agent
                            .unconfirmed
                            .insert(t.as_str().to_owned(), vec![id.clone()]);
                    }
                }
            }
        }
        let name = self.agents[a].name.clone();
        self.reach.on_delivery(
            &mut self.stats.situations,
            a,
            &name,
            local.0,
            &self.facts[sent],
            &expected,
        );
        self.reach.on_revision_conflict(
            &mut self.stats.situations,
            &self.facts[sent],
            &self.agents[a].oracle,
        );
        if let Err(breach) = delivery::no_effects(before, self.world.len()) {
            return Err(self.breach(a, "an answer to deliver", breach));
        }
        let first = oracle::first_outcome(&expected);
        let actual_first = oracle::first_outcome(&reply.events);
        self.happen(|at| Happening::Deliver {
            at,
            index: sent,
            to: name.clone(),
            outcome: oracle::outcome_summary(&actual_first),
        });
        if let Err(m) =
            oracle::delivery_events(&expected, &reply.events, was_unreported, self.config.names)
        {
            let m = self.lost_release(a, &expected, &reply.events, m);
            return Err(self.mismatch(a, m));
        }
        if !reply.outgoing.is_empty() {
            self.stats.checks += 1;
            let me = &self.agents[a].name;
            if let Err(breach) = delivery::outgoing(&first, &reply.outgoing, me, &mut self.acks) {
                return Err(self.breach(a, "an answer to deliver", breach));
            }
        }
        let thread = expected
            .first()
            .and_then(|e| e.thread.as_ref())
            .map(|t| t.to_string());
        if let Some(thread) = thread {
            if oracle::stores(&first) {
                self.agents[a]
                    .stored
                    .entry(thread.clone())
                    .or_default()
                    .insert(frame.to_vec());
            }
            // Views are compared once per step for every (agent, thread) a
            // delivery touched: the same check, without rebuilding a view
            // per delivery.
            self.dirty.insert((a, thread));
        }
        self.agents[a].last_answered = Some(Unreported {
            frame: frame.to_vec(),
            principal: principal.clone(),
            sent,
            point: None,
        });
        Ok(())
    }

    /// An agent's view of a thread (`None` while it is down). Asking for a
    /// view is a read: an effect performed while answering one bypasses
    /// every authority check, so it is a violation like an effect during a
    /// delivery or at start-up (only `execute` may act on the world).
    fn view_of(&mut self, a: usize, t: &ThreadId) -> Result<Option<View>, Box<Violation>> {
        let before = self.world.len();
        let Some(receiver) = self.agents[a].receiver.as_mut() else {
            return Ok(None);
        };
        let answer = receiver.view(t);
        self.stats.checks += 1;
        oracle::no_effect_in_views(before, self.world.len(), &[t.as_str()])
            .map_err(|m| self.mismatch(a, m))?;
        match answer {
            Ok(v) => Ok(Some(v)),
            Err(e) => Err(self.unsound(a, "a view", e)),
        }
    }

    /// Agent `a`'s views of the threads `wanted` names, each asked against
    /// the oracle's view it is paired with (`None` while it is down): asked
    /// together, so that over the protocol they cost one round trip.
    fn views_of(
        &mut self,
        a: usize,
        wanted: &[(ThreadId, View)],
    ) -> Result<Option<Vec<View>>, Box<Violation>> {
        let before = self.world.len();
        let Some(receiver) = self.agents[a].receiver.as_mut() else {
            return Ok(None);
        };
        let answer = receiver.views_against(wanted);
        self.stats.checks += wanted.len() as u64;
        let threads: Vec<&str> = wanted.iter().map(|(t, _)| t.as_str()).collect();
        oracle::no_effect_in_views(before, self.world.len(), &threads)
            .map_err(|m| self.mismatch(a, m))?;
        match answer {
            Ok(v) => Ok(Some(v)),
            Err(e) => Err(self.unsound(a, "a view", e)),
        }
    }

    /// The implementation's view of a thread against the oracle's, plus the
    /// invariants that hold of any view on its own.
    fn check_view(&mut self, a: usize, thread: &str) -> Checked {
        self.check_views_in(a, &[thread])
    }

    /// [`Run::check_view`] for several threads of agent `a`, whose views
    /// are asked together and judged in order.
    fn check_views_in(&mut self, a: usize, threads: &[&str]) -> Checked {
        // A receiver that is down shows nothing: no oracle view is built.
        if self.agents[a].receiver.is_none() {
            return Ok(());
        }
        let wanted: Vec<(ThreadId, View)> = threads
            .iter()
            .filter_map(|t| ThreadId::new(t).ok())
            .map(|t| {
                let expected = self.agents[a].oracle.view_text(&t);
                (t, expected)
            })
            .collect();
        let Some(actual) = self.views_of(a, &wanted)? else {
            return Ok(());
        };
        for ((t, expected), actual) in wanted.into_iter().zip(actual) {
            self.judge_view(a, &t, expected, actual)?;
        }
        Ok(())
    }

    /// One view against the oracle's.
    fn judge_view(&mut self, a: usize, t: &ThreadId, expected: View, actual: View) -> Checked {
        let thread = t.as_str();
        if actual == expected {
            // The oracle's own view: it keeps every ID it ever showed and
            // lists commitments from COMMITs only, so the history and
            // commitment checks below hold of it. What it newly shows
            // joins the IDs seen.
            let agent = &mut self.agents[a];
            if let Some(new) = agent.unconfirmed.remove(thread) {
                let oracle = &agent.oracle;
                let seen = agent.seen_ids.entry(thread.to_owned()).or_default();
                for id in new.iter().filter(|id| oracle.shows(t, id)) {
                    if !seen.contains(id.as_str()) {
                        seen.insert(id.as_str().to_owned());
                    }
                }
            }
            return Ok(());
        }
        self.explain_view(a, thread, expected.to_value(), actual.to_value())
    }

    /// A view that differs from the oracle's by its text: the checks on
    /// the view as a tree, and the name of the difference.
    fn explain_view(&mut self, a: usize, thread: &str, expected: Value, actual: Value) -> Checked {
        let seen = self.agents[a]
            .seen_ids
            .entry(thread.to_owned())
            .or_default();
        oracle::view_tree(
            thread,
            &expected,
            &actual,
            seen,
            &self.world,
            self.config.names,
        )
        .map_err(|m| self.mismatch(a, m))
    }

    /// A release the model expects and the receiver did not report, of a
    /// message the receiver had shown in a view and no longer holds: it
    /// lost that message (`history-preserved`), which is why it could not
    /// release it. Otherwise the disagreement `m` as it was.
    fn lost_release(
        &mut self,
        a: usize,
        expected: &[Event],
        actual: &[Event],
        m: Mismatch,
    ) -> Mismatch {
        if m.invariant != inv::OUTCOMES {
            return m;
        }
        let released = |events: &[Event]| -> Vec<(ThreadId, MessageRef)> {
            events
                .iter()
                .filter(|e| e.kind == EventKind::Released)
                .filter_map(|e| Some((e.thread.clone()?, e.id.clone()?)))
                .collect()
        };
        let reported = released(actual);
        for (thread, id) in released(expected) {
            let agent = &mut self.agents[a];
            let shown = agent
                .seen_ids
                .get(thread.as_str())
                .is_some_and(|s| s.contains(id.as_str()));
            if reported.contains(&(thread.clone(), id.clone())) || !shown {
                continue;
            }
            let Some(Ok(view)) = agent.receiver.as_mut().map(|r| r.view(&thread)) else {
                continue;
            };
            let held = view.to_value()["messages"]
                .as_array()
                .is_some_and(|ms| ms.iter().any(|x| x["id"] == id.as_str()));
            if !held {
                return Mismatch::new(
                    inv::HISTORY,
                    format!("{id} released, and still in the view of {thread}"),
                    format!("{id} not released, and missing from the view of {thread}, which showed it before"),
                );
            }
        }
        m
    }

    /// The expiry of the grant a COMMIT the workload said cites, if any.
    fn grant_expiry(&self, commit: &Value) -> Option<i64> {
        let grant = GrantRef::new(commit["body"]["authority_ref"].as_str()?).ok()?;
        Some(self.scenario.grants.get(&grant)?.expires_at?.0)
    }

    /// Agent `a`'s commitments the model would let it execute now.
    fn executable<'v>(&self, a: usize, resolver: &'v Resolver) -> Vec<&'v Value> {
        let oracle = &self.agents[a].oracle;
        let local = self.local(a);
        resolver
            .said
            .commitments_of(&self.agents[a].name)
            .into_iter()
            .filter(|c| {
                commitment_of(c).is_some_and(|(t, id)| {
                    matches!(
                        oracle.would_execute(&t, &id, local),
                        Execution::Executed { .. }
                    )
                })
            })
            .collect()
    }

    /// Agent `a`'s commitments among `own` that the model would refuse now,
    /// by the reason it would give.
    fn refused_by_reason<'v>(
        &self,
        a: usize,
        own: &[&'v Value],
    ) -> BTreeMap<Refusal, Vec<&'v Value>> {
        let oracle = &self.agents[a].oracle;
        let local = self.local(a);
        let mut by_reason: BTreeMap<_, Vec<&Value>> = BTreeMap::new();
        for c in own {
            if let Some((t, id)) = commitment_of(c) {
                if let Execution::Refused(r) = oracle.would_execute(&t, &id, local) {
                    by_reason.entry(r).or_default().push(*c);
                }
            }
        }
        by_reason
    }

    /// A commitment the model would refuse, the reason drawn first and
    /// evenly among those it would give, so that every refusal is tried.
    fn refused_pick<'v>(
        &self,
        a: usize,
        pick: u16,
        resolver: &'v Resolver,
    ) -> Option<(usize, &'v Value, Option<i64>)> {
        let n = self.agents.len();
        let mut by_reason: BTreeMap<Refusal, Vec<(usize, &Value)>> = BTreeMap::new();
        for b in (0..n)
            .map(|i| (a + i) % n)
            .filter(|b| self.agents[*b].receiver.is_some())
        {
            let own = resolver.said.commitments_of(&self.agents[b].name);
            for (r, cs) in self.refused_by_reason(b, &own) {
                by_reason
                    .entry(r)
                    .or_default()
                    .extend(cs.into_iter().map(|c| (b, c)));
            }
        }
        let pool = by_reason
            .values()
            .nth((pick as usize / 20) % by_reason.len().max(1))?;
        let (b, c) = pool[pick as usize % pool.len()];
        Some((b, c, None))
    }

    /// What an execute step asks, from its pick: which agent executes
    /// which commitment, and whether the clock is first moved to the
    /// commitment's grant expiry (by this many milliseconds from it).
    /// `None` when the step's kind of request has nothing to ask.
    ///
    /// Requests are aimed, so that every decision is reached often and
    /// where it is the only thing at stake; each kind goes to the first
    /// agent, from `a` on, that has something of its kind:
    /// - 11 in 20: a commitment the model would execute now (effects, and
    ///   the crashes around them, are common instead of rare), except half
    ///   of those whose grant is about to expire, kept for the next kind;
    /// - 2 in 20: the one a boast was last about, of those the model would
    ///   refuse for want of authority, by its committer whatever `a` (where
    ///   a receiver that took the boast for authority acts); when no boast
    ///   was made, one of these is of the kind above, and the other half
    ///   the time of that kind and half the time one of the refusals
    ///   below;
    /// - 4 in 20: one the model would execute now under a grant that
    ///   expires, with the clock moved to 1 ms before the expiry, to it
    ///   (half the time), or 1 ms after it;
    /// - 2 in 20: one the model would refuse, the reason drawn first and
    ///   evenly among those it would give, so that every refusal is tried;
    /// - 1 in 40 any commitment, and 1 in 40 a message that is no COMMIT.
    ///
    /// The pick is among the candidates, so it stays the same commitment
    /// when shrinking removes unrelated steps.
    fn choose<'v>(
        &self,
        a: usize,
        pick: u16,
        resolver: &'v Resolver,
    ) -> Option<(usize, &'v Value, Option<i64>)> {
        let n = self.agents.len();
        let up = |b: &usize| self.agents[*b].receiver.is_some();
        let at = |pool: &[&'v Value]| (!pool.is_empty()).then(|| pool[pick as usize % pool.len()]);
        let from_a = (0..n).map(|i| (a + i) % n).filter(up);
        match pick % 20 {
            // Half the time a message that is no COMMIT, half the time any
            // commitment (so also other agents').
            0 if (pick / 20) % 2 == 0 => {
                let talk: Vec<&Value> = resolver
                    .said
                    .messages
                    .iter()
                    .filter(|m| m["act"] != "COMMIT")
                    .collect();
                Some((a, at(&talk)?, None))
            }
            0 => Some((a, at(&resolver.said.all_commitments())?, None)),
            // A boast's commitment when a boast was made; else (as in most
            // runs before any) half the time a refusal, half the time one
            // ready, so that each keeps most of its share.
            1 => self.boasted(resolver).or_else(|| {
                if (pick / 20) % 2 == 0 {
                    self.refused_pick(a, pick, resolver)
                } else {
                    self.ready(a, pick, resolver)
                }
            }),
            2 | 3 => self.refused_pick(a, pick, resolver),
            5..=8 => {
                // The instant itself is the boundary most often got wrong.
                let delta = [-1i64, 0, 0, 1][(pick as usize / 20) % 4];
                from_a
                    .map(|b| {
                        let reachable = |e: i64| {
                            let at = e + delta - self.scenario.skew[b];
                            at >= self.now as i64 && at - self.now as i64 <= MAX_CLOCK_JUMP_MS
                        };
                        let ready: Vec<(&Value, i64)> = self
                            .executable(b, resolver)
                            .into_iter()
                            .filter_map(|c| Some((c, self.grant_expiry(c)?)))
                            .filter(|&(_, e)| reachable(e))
                            .collect();
                        // The nearest instant: the jump expires as few other
                        // grants as it can.
                        let first = ready.iter().map(|&(_, e)| e).min();
                        let nearest: Vec<&Value> = ready
                            .into_iter()
                            .filter(|&(_, e)| Some(e) == first)
                            .map(|(c, _)| c)
                            .collect();
                        (b, nearest)
                    })
                    .find(|(_, ready)| !ready.is_empty())
                    .and_then(|(b, ready)| Some((b, at(&ready)?, Some(delta))))
            }
            4 => self
                .boasted(resolver)
                .or_else(|| self.ready(a, pick, resolver)),
            _ => self.ready(a, pick, resolver),
        }
    }

    /// The commitment a boast was last about, of those whose committer is
    /// up and whose model would refuse them now for want of authority, and
    /// its committer: what a receiver that took the boast for authority
    /// would perform.
    fn boasted<'v>(&self, resolver: &'v Resolver) -> Option<(usize, &'v Value, Option<i64>)> {
        let unauthorised = |b: usize, c: &Value| {
            let (oracle, local) = (&self.agents[b].oracle, self.local(b));
            commitment_of(c).is_some_and(|(t, id)| {
                matches!(oracle.would_execute(&t, &id, local),
                    Execution::Refused(r) if inv::by_refusal(r) == inv::AUTHORITY)
            })
        };
        resolver
            .said
            .boasted
            .iter()
            .rev()
            .filter_map(|id| resolver.said.find(id.as_str()?))
            .find_map(|c| {
                let b = self
                    .agents
                    .iter()
                    .position(|x| c["from"] == x.name.as_str())?;
                (self.agents[b].receiver.is_some() && unauthorised(b, c)).then_some((b, c, None))
            })
    }

    /// A commitment the model would execute now, of the first agent from
    /// `a` that has one.
    fn ready<'v>(
        &self,
        a: usize,
        pick: u16,
        resolver: &'v Resolver,
    ) -> Option<(usize, &'v Value, Option<i64>)> {
        let n = self.agents.len();
        let at = |pool: &[&'v Value]| (!pool.is_empty()).then(|| pool[pick as usize % pool.len()]);
        (0..n)
            .map(|i| (a + i) % n)
            .filter(|b| self.agents[*b].receiver.is_some())
            // Half the commitments whose grant expires within reach of a
            // timed request (by their ID) are left to those, which meet the
            // expiry instant; the other half are executed while valid.
            .map(|b| {
                let soon = |c: &&Value| {
                    reserved_for_timing(c)
                        && self.grant_expiry(c).is_some_and(|e| {
                            let until = e - self.local(b).0;
                            (0..=RESERVE_WINDOW_MS).contains(&until)
                        })
                };
                let ready = self.executable(b, resolver);
                (
                    b,
                    ready.into_iter().filter(|c| !soon(c)).collect::<Vec<_>>(),
                )
            })
            .find(|(_, ready)| !ready.is_empty())
            .and_then(|(b, ready)| Some((b, at(&ready)?, None)))
    }

    fn execute(&mut self, a: usize, pick: u16, resolver: &mut Resolver) -> Checked {
        let Some((a, chosen, timed)) = self.choose(a, pick, resolver) else {
            return Ok(());
        };
        if self.agents[a].receiver.is_none() {
            return Ok(());
        }
        let name = self.agents[a].name.clone();
        let Some((thread, id)) = commitment_of(chosen) else {
            return Ok(());
        };
        let expiry = self.grant_expiry(chosen);
        // Clocks only move forward, and by at most a few seconds.
        if let (Some(expires), Some(delta)) = (expiry, timed) {
            let at = expires + delta - self.scenario.skew[a];
            if at >= self.now as i64 && at - (self.now as i64) <= MAX_CLOCK_JUMP_MS {
                self.now = at as u64;
                self.happen(|at| Happening::Clock {
                    at,
                    agent: name.clone(),
                    text: format!("{delta:+} ms from the grant's expiry"),
                });
            }
        }
        let local = self.local(a);
        self.stats.executions += 1;
        let before = self.world.len();
        // The crash points of an execution: around its effect.
        let point = self.agents[a]
            .pending_crash
            .filter(|p| matches!(p, CrashPoint::AfterEffect | CrashPoint::BeforeEffect));
        let agent = &mut self.agents[a];
        let receiver = agent.receiver.as_mut().expect("checked above");
        let (result, fired) = agent
            .storage
            .with_crash(point, || receiver.execute(&thread, &id, local));
        if let Some(point) = point.filter(|_| fired) {
            agent.pending_crash = None;
            self.stats
                .situations
                .reach(Situation::Moment(Moment::crashed_in_execution(point)));
        }
        let new_effects: Vec<(String, tern_model::ledger::EffectKey)> =
            self.world.log_since(before);
        self.stats.effects += new_effects.len() as u64;
        self.stats.checks += 1;
        let expected_decision = self.agents[a].oracle.would_execute(&thread, &id, local);
        self.reach.on_execution(
            &mut self.stats.situations,
            a,
            id.as_str(),
            local.0,
            self.scenario.skew[a] != 0,
            expiry,
            &expected_decision,
        );
        if !new_effects.is_empty() {
            self.reach.on_effect(thread.as_str(), id.as_str());
            resolver.said.note_executed(id.as_str());
        }
        if let Err(m) = oracle::effects(&expected_decision, &new_effects, &name, &self.world) {
            return Err(self.mismatch(a, m));
        }
        match delivery::crash_judged(Call::Execution, result, fired) {
            Err(breach) => Err(self.breach(a, "an answer to execute", breach)),
            Ok(None) => {
                // The effect counts as done exactly when the world saw it.
                if !new_effects.is_empty() {
                    self.agents[a].oracle.execute(&thread, &id, local);
                }
                self.happen(|at| Happening::Execute {
                    at,
                    agent: name.clone(),
                    id: id.to_string(),
                    result: "crashed before answering".into(),
                });
                self.crash(a, "during an execution");
                Ok(())
            }
            Ok(Some(actual)) => {
                let expected = self.agents[a].oracle.execute(&thread, &id, local);
                self.happen(|at| Happening::Execute {
                    at,
                    agent: name.clone(),
                    id: id.to_string(),
                    result: execution_text(&actual),
                });
                if let Err(m) =
                    oracle::decision(&expected, &actual, new_effects.len(), self.config.names)
                {
                    return Err(self.mismatch(a, m));
                }
                self.check_view(a, thread.as_str())
            }
        }
    }

    fn play_step(&mut self, step: &Step, resolver: &mut Resolver) -> Checked {
        let n = self.agents.len();
        resolver.now = self.now as i64;
        match step {
            Step::Say { talk, net } => {
                if let Some(out) = resolver.talk(talk) {
                    self.send(out, *net);
                }
            }
            Step::Attack { attack, net } => {
                if let Some(out) = resolver.attack(attack) {
                    self.send(out, *net);
                }
            }
            Step::Execute { agent, pick } => self.execute(*agent as usize % n, *pick, resolver)?,
            Step::Crash { agent, point, cut } => {
                let a = *agent as usize % n;
                if self.agents[a].receiver.is_some() {
                    self.agents[a].storage.set_cut(*cut);
                    match point % 7 {
                        // Now, and again at the recovery's first sync:
                        // before what it writes is durable, or after.
                        5 | 6 => {
                            self.agents[a].recovery_crash = Some(if point % 7 == 5 {
                                CrashPoint::BeforeSync
                            } else {
                                CrashPoint::AfterSync
                            });
                            self.crash_between_operations(
                                a,
                                "between operations; it will crash again while recovering",
                            );
                        }
                        0 => self.crash_between_operations(a, "between operations"),
                        p => {
                            // Half the sync crashes fall at the second
                            // delivery from now.
                            let later = p <= 2 && (point / 7) % 2 == 1;
                            let point = [
                                CrashPoint::BeforeSync,
                                CrashPoint::AfterSync,
                                CrashPoint::AfterEffect,
                                CrashPoint::BeforeEffect,
                            ][(p - 1) as usize];
                            self.agents[a].pending_crash = Some(point);
                            self.agents[a].crash_after = u8::from(later);
                            let when = if later {
                                " of its second delivery from now"
                            } else {
                                ""
                            };
                            let name = self.agents[a].name.clone();
                            self.happen(|at| Happening::Fault {
                                at,
                                agent: name,
                                fault: FaultEvent::WillCrash {
                                    point: format!("{point:?}"),
                                    when,
                                },
                            });
                        }
                    }
                }
            }
            Step::Partition { a, b, one_way, ms } => {
                let (a, b) = (*a as usize % n, *b as usize % n);
                if a != b {
                    let until = self.now + u64::from(*ms);
                    self.network.partition(a, b, *one_way, until);
                    self.fault(Fault::Partition);
                    let (x, y) = (self.agents[a].name.clone(), self.agents[b].name.clone());
                    let arrow = if *one_way { "↛" } else { "↮" };
                    self.happen(|at| Happening::Fault {
                        at,
                        agent: x,
                        fault: FaultEvent::Partition {
                            to: y,
                            arrow,
                            ms: *ms,
                        },
                    });
                }
            }
            Step::Wait { ms } => self.now += u64::from(*ms),
        }
        Ok(())
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
            if let Some(r) = agent.receiver.as_mut() {
                r.dismiss();
            }
            self.implementation.release(&agent.storage);
        }
        if let Err(v) = &result {
            let text = format!(
                "✘ {} (section {}): expected {}; got {}",
                v.invariant.name, v.invariant.section, v.expected, v.actual
            );
            let agent = v.agent.clone();
            self.happen(|at| Happening::Violation { at, agent, text });
        }
        Played {
            stats: self.stats,
            violation: result.err().map(|v| *v),
            notes: self.happenings.iter().map(Happening::note).collect(),
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
            if self.agents[a].receiver.is_none() {
                self.restart(a)?;
            }
        }
        let mut budget = MAX_QUIESCE_DELIVERIES;
        while let Some(at) = self.network.next_arrival() {
            budget = budget.saturating_sub(1);
            if budget == 0 {
                return Err(self.violation(
                    inv::ALIVE,
                    None,
                    "the network drains".into(),
                    "deliveries never settle".into(),
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
                            inv::ORDER_INDEPENDENCE,
                            Some(a),
                            format!("the view of {} for {thread}: {other}", self.agents[b].name),
                            view.to_string(),
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}
