//! The search: every schedule of a scope, breadth-first, so that the first
//! violation found is one of the shortest. A state is rebuilt by replaying
//! its schedule from a fresh start (an implementation, in process or
//! behind a pipe, cannot be copied), and states that agree on everything
//! a later move can depend on are merged (docs/explore.md §3).
//!
//! Each layer's children are played by `jobs` threads in contiguous
//! shares and judged in order afterwards, so the outcome is the same for
//! any number of threads.
//!
//! Sleep sets cut the moves whose futures another order already covers:
//! when the oracle shows two deliveries commute from a state (each gets
//! the same events in either order, and they leave the same views), the
//! order that puts the later one first is not played again from there
//! (Godefroid's sleep sets). Every state stays reached; fewer transitions
//! are replayed to reach them (docs/explore.md §3).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use tern_model::ledger::{Event, Ledger, LocalTime, SharedMessage};
use tern_model::message::{Principal, ThreadId};

pub use super::moves::{inside_points, AtOp, Move};
use super::pool::{Context, Job, Origin, Pool};

mod describe;
use super::scope::{Action, Budget, Scope};
use super::subject::Subject;
use crate::catalogue::situations::Coverage;
use crate::contract::plugin::{Implementation, InitParams, PowerLossServed};
use crate::contract::storage::{CrashPoint, FileOp};
use crate::judge::compare::RejectNames;
use crate::judge::delivery::Came;
use crate::judge::oracle::Mismatch;

/// Options of a search.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Merge states that agree on what later moves depend on.
    pub merge: bool,
    /// Leave out the moves a sleep set covers (deliveries the oracle shows
    /// commute).
    pub sleep_sets: bool,
    /// Stop, not exhausted, once this many distinct states are known.
    pub max_states: u64,
    pub jobs: usize,
    /// Crashes are power losses, and fall inside requests too, where the
    /// implementation can have them (a subprocess, with FUSE), in scopes
    /// that crash.
    pub power_loss: bool,
}

/// Counts for the summary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Counts {
    /// Schedules played to the end: every action done, receiver up.
    pub schedules: u64,
    pub states: u64,
    /// Moves judged (each a child of a state).
    pub transitions: u64,
    /// Children that reached a state already known, whose futures were
    /// therefore not explored again.
    pub merged: u64,
    /// Moves left out because a sleep set covered them: another order of
    /// the same commuting deliveries was explored.
    #[serde(default)]
    pub slept: u64,
    /// Actions left out because they need a capability not claimed.
    pub unclaimed: u64,
    /// The longest schedule, in moves.
    pub depth: u64,
    /// Moves played in all, replays included: the cost (of the children
    /// judged; threads may play a few more past a violation).
    pub played: u64,
}

/// A violation and the schedule that leads to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counterexample {
    pub schedule: Vec<Move>,
    pub mismatch: Mismatch,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exploration {
    pub counts: Counts,
    /// How many moves judged reached each situation of the catalogue
    /// (docs/simulator.md): what the scope exercised.
    pub situations: Coverage,
    /// Every schedule was covered (none left by a bound or a violation).
    pub exhausted: bool,
    pub violation: Option<Counterexample>,
    /// Its crashes were power losses, some inside requests: the
    /// implementation's state directories were served by tern-sim.
    pub power_loss: bool,
}

/// How a scope's exploration ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScopeVerdict {
    Exhausted,
    Violation,
    /// Stopped by the bound on states or by an interrupt.
    NotExhausted,
}

impl ScopeVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            ScopeVerdict::Exhausted => "exhausted",
            ScopeVerdict::Violation => "violation",
            ScopeVerdict::NotExhausted => "not_exhausted",
        }
    }
}

impl Exploration {
    pub fn verdict(&self) -> ScopeVerdict {
        match (&self.violation, self.exhausted) {
            (Some(_), _) => ScopeVerdict::Violation,
            (None, true) => ScopeVerdict::Exhausted,
            (None, false) => ScopeVerdict::NotExhausted,
        }
    }
}

/// The part of a state the search keeps; the implementation's part is
/// rebuilt by replay.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct Harness {
    /// How many times each action is still owed.
    owed: Vec<u8>,
    /// Deliveries answered at least once, which a duplicate may repeat.
    answered: BTreeSet<u16>,
    budget: Budget,
    up: bool,
    /// Nothing happened since the last start (a crash now is pointless).
    fresh: bool,
    /// Deliveries a crash cut, sent again first thing after the restart:
    /// until then the receiver may hold what the oracle does not, so views
    /// are not compared (the simulator's rule).
    cut: Vec<u16>,
    /// The last move was a quiet delivery: the next one crashes.
    quiet: bool,
}

impl Harness {
    fn complete(&self) -> bool {
        self.up && self.owed.iter().all(|&n| n == 0)
    }
}

#[derive(Debug, Clone)]
struct Node {
    schedule: Vec<Move>,
    harness: Harness,
    /// The moves not to play from here: each leads where an order already
    /// explored leads.
    sleep: Vec<Move>,
    /// The oracle at this state, to tell which deliveries commute (kept
    /// only with sleep sets on).
    oracle: Option<Ledger>,
    /// Only these moves are played from here (`None`: all): a state met
    /// again with a smaller sleep set plays the moves it had left out.
    only: Option<Vec<Move>>,
    /// The child that reached it, whose worker may still hold its subject
    /// (`None` for the start and for a state met again).
    origin: Option<Origin>,
}

pub(super) enum Child {
    Violation(Mismatch),
    State {
        key: u128,
        harness: Harness,
        situations: Coverage,
        oracle: Option<Box<Ledger>>,
        /// The mutating file operations the move made, where tern-sim
        /// serves the state directory: its crash points inside.
        ops: Vec<FileOp>,
    },
}

impl Child {
    /// Panics unless `replayed` (the same child, its schedule replayed
    /// from a fresh start) came to what this forked child did.
    #[cfg(debug_assertions)]
    pub(super) fn assert_same_as(&self, replayed: &Child) {
        match (self, replayed) {
            (Child::Violation(a), Child::Violation(b)) => assert_eq!(a, b, "a forked violation"),
            (
                Child::State {
                    key: a,
                    harness: ha,
                    situations: sa,
                    ops: oa,
                    ..
                },
                Child::State {
                    key: b,
                    harness: hb,
                    situations: sb,
                    ops: ob,
                    ..
                },
            ) => assert!(
                a == b && ha == hb && sa == sb && oa == ob,
                "a forked state differs from its replay"
            ),
            _ => panic!("a forked child and its replay came to different ends"),
        }
    }
}

/// What the search remembers of a state it expanded, for when it meets
/// it again by another schedule.
struct Expanded {
    /// The moves it left out; meeting the state with a sleep set that
    /// lacks some of them means those must be played after all.
    sleep: Vec<Move>,
    /// The layer it was put in and its place there: while that layer is
    /// the next, it is not expanded yet.
    pending: (usize, usize),
    schedule: Vec<Move>,
    harness: Harness,
    oracle: Option<Ledger>,
}

impl Expanded {
    /// The state met again, by a schedule whose sleep set is `sleep`. The
    /// moves it left out that this schedule does not must be played from
    /// it after all: at once if it is still waiting in the next layer
    /// (`layer` is that layer's number), else by a node of its own that
    /// plays only those.
    fn meet(&mut self, sleep: &[Move], layer: usize, next: &mut Vec<Node>) {
        let missing: Vec<Move> = self
            .sleep
            .iter()
            .copied()
            .filter(|m| !sleep.contains(m))
            .collect();
        if missing.is_empty() {
            return;
        }
        self.sleep.retain(|m| sleep.contains(m));
        match self.pending {
            (l, index) if l == layer => next[index].sleep.clone_from(&self.sleep),
            _ => next.push(Node {
                schedule: self.schedule.clone(),
                harness: self.harness.clone(),
                sleep: self.sleep.clone(),
                oracle: self.oracle.clone(),
                only: Some(missing),
                origin: None,
            }),
        }
    }
}

/// The scope made ready to explore: its distinct actions, and whether the
/// implementation claims what they need.
pub struct Prepared<'s> {
    scope: &'s Scope,
    pub actions: Vec<Action>,
    owed: Vec<u8>,
    init: InitParams,
    threads: Vec<ThreadId>,
    /// Each delivery's frame, parsed once (`None` for an execution): the
    /// independence relation delivers it to copies of the oracle at every
    /// pair of moves it weighs.
    parsed: Vec<Option<Parsed>>,
    /// Executions left out because `execute` is not claimed.
    pub unclaimed: u64,
}

/// A frame as every oracle copy is given it.
pub(super) type Parsed = Result<Arc<SharedMessage>, tern_model::WireError>;

impl<'s> Prepared<'s> {
    /// The scope's distinct actions ([`Scope::grouped`]), leaving out
    /// executions when `execute` is not claimed.
    pub fn new(scope: &'s Scope, claims_execute: bool) -> Prepared<'s> {
        let mut actions: Vec<Action> = Vec::new();
        let mut owed: Vec<u8> = Vec::new();
        let mut unclaimed = 0;
        for (a, n) in scope.grouped() {
            if matches!(a, Action::Execute { .. }) && !claims_execute {
                unclaimed += u64::from(n);
            } else {
                actions.push(a);
                owed.push(n);
            }
        }
        let init = scope.setup.init();
        let threads = scope.threads();
        let parsed = actions
            .iter()
            .map(|a| match a {
                Action::Deliver { frame, .. } => {
                    Some(tern_model::parse_frame(frame).map(SharedMessage::new))
                }
                Action::Execute { .. } => None,
            })
            .collect();
        Prepared {
            scope,
            actions,
            owed,
            init,
            threads,
            parsed,
            unclaimed,
        }
    }

    fn root(&self) -> Harness {
        Harness {
            owed: self.owed.clone(),
            answered: BTreeSet::new(),
            budget: self.scope.budget,
            up: true,
            fresh: true,
            cut: Vec::new(),
            quiet: false,
        }
    }

    /// The moves open from a state, in a fixed order.
    fn moves(&self, h: &Harness) -> Vec<Move> {
        let mut out = Vec::new();
        let crash_left = h.budget.crashes > 0;
        if !h.up {
            out.push(Move::Restart {
                crash: None,
                at_op: None,
            });
            if crash_left {
                for p in [CrashPoint::BeforeSync, CrashPoint::AfterSync] {
                    out.push(Move::Restart {
                        crash: Some(p),
                        at_op: None,
                    });
                }
            }
            return out;
        }
        for (i, a) in self.actions.iter().enumerate() {
            if h.owed[i] == 0 || h.cut.first().is_some_and(|&c| c as usize != i) {
                continue;
            }
            let action = i as u16;
            match a {
                Action::Deliver { .. } => {
                    if !h.quiet {
                        out.push(Move::Deliver {
                            action,
                            crash: None,
                            at_op: None,
                        });
                    }
                    if crash_left && h.cut.is_empty() && !h.quiet {
                        out.push(Move::DeliverQuietly { action });
                    }
                    if crash_left {
                        for p in [CrashPoint::BeforeSync, CrashPoint::AfterSync] {
                            out.push(Move::Deliver {
                                action,
                                crash: Some(p),
                                at_op: None,
                            });
                        }
                    }
                }
                Action::Execute { at, .. } => {
                    for t in 0..at.len().min(u8::MAX as usize) as u8 {
                        if !h.quiet {
                            out.push(Move::Execute {
                                action,
                                at: t,
                                crash: None,
                                at_op: None,
                            });
                        }
                        if crash_left {
                            for p in [CrashPoint::BeforeEffect, CrashPoint::AfterEffect] {
                                out.push(Move::Execute {
                                    action,
                                    at: t,
                                    crash: Some(p),
                                    at_op: None,
                                });
                            }
                        }
                    }
                }
            }
        }
        if !h.cut.is_empty() {
            return out;
        }
        if h.budget.duplicates > 0 && !h.quiet {
            out.extend(h.answered.iter().map(|&action| Move::Duplicate { action }));
        }
        if crash_left && !h.fresh {
            out.push(Move::CrashIdle);
        }
        out
    }

    fn delivery(&self, action: u16) -> (&[u8], &Parsed, &Principal, LocalTime) {
        match (
            &self.actions[action as usize],
            &self.parsed[action as usize],
        ) {
            (
                Action::Deliver {
                    frame,
                    principal,
                    at,
                },
                Some(parsed),
            ) => (frame, parsed, principal, *at),
            _ => unreachable!("a delivery move names a delivery"),
        }
    }

    /// Plays one move on `subject`, updating `h`; then compares views.
    fn play(&self, subject: &mut Subject, h: &mut Harness, mv: Move) -> Result<(), Mismatch> {
        h.fresh = false;
        h.quiet = false;
        match mv {
            Move::DeliverQuietly { action } => {
                let (frame, parsed, principal, at) = self.delivery(action);
                h.owed[action as usize] -= 1;
                subject.deliver(frame, parsed, principal, at, None)?;
                h.answered.insert(action);
                h.quiet = true;
                // The oracle's views are kept for the state, the
                // receiver's are not asked.
                return subject.check_views(false);
            }
            Move::Deliver {
                action,
                crash,
                at_op,
            } => {
                let (frame, parsed, principal, at) = self.delivery(action);
                h.owed[action as usize] -= 1;
                if crash.is_some() {
                    h.budget.crashes -= 1;
                    subject.set_cut(AtOp::cut(at_op));
                }
                match subject.deliver(frame, parsed, principal, at, crash)? {
                    Came::Answered => {
                        // A crash point the delivery never reached (a
                        // frame rejected before any write) crashed nothing.
                        if crash.is_some() {
                            h.budget.crashes += 1;
                        }
                        h.answered.insert(action);
                        h.cut.retain(|&c| c != action);
                    }
                    Came::Crashed => {
                        h.owed[action as usize] += 1;
                        h.up = false;
                        if !h.cut.contains(&action) {
                            h.cut.push(action);
                        }
                    }
                }
            }
            Move::Duplicate { action } => {
                let (frame, parsed, principal, at) = self.delivery(action);
                h.budget.duplicates -= 1;
                subject.deliver(frame, parsed, principal, at, None)?;
            }
            Move::Execute {
                action,
                at,
                crash,
                at_op,
            } => {
                let Action::Execute {
                    thread,
                    commitment,
                    at: times,
                } = &self.actions[action as usize]
                else {
                    unreachable!("an execute move names an execution")
                };
                h.owed[action as usize] -= 1;
                if crash.is_some() {
                    h.budget.crashes -= 1;
                    subject.set_cut(AtOp::cut(at_op));
                }
                match subject.execute(thread, commitment, times[at as usize], crash)? {
                    Came::Crashed => {
                        // Asked again once the receiver is back.
                        h.owed[action as usize] += 1;
                        h.up = false;
                    }
                    // No effect reached: the crash point was never hit.
                    Came::Answered if crash.is_some() => h.budget.crashes += 1,
                    Came::Answered => {}
                }
            }
            Move::CrashIdle => {
                h.budget.crashes -= 1;
                subject.set_cut(AtOp::cut(None));
                h.up = false;
                if let Some(lost) = subject.crash_idle() {
                    let i = self.actions.iter().position(|a| {
                        matches!(a, Action::Deliver { frame, principal, .. }
                            if **frame == *lost.frame && *principal == lost.principal)
                    });
                    if let Some(i) = i {
                        h.owed[i] += 1;
                    }
                }
            }
            Move::Restart { crash, at_op } => {
                if crash.is_some() {
                    h.budget.crashes -= 1;
                    subject.set_recovery_crash_op(at_op);
                }
                h.fresh = true;
                h.up = subject.restart(crash)? == Came::Answered;
                if h.up && crash.is_some() {
                    h.budget.crashes += 1;
                }
            }
        }
        subject.check_views(h.cut.is_empty())
    }

    /// The state `schedule` leads to, replayed from a fresh start: the
    /// subject and the harness's part.
    pub(super) fn replayed<'i>(
        &self,
        implementation: &'i dyn Implementation,
        names: RejectNames,
        schedule: &[Move],
    ) -> Result<(Subject<'i>, Harness), Mismatch> {
        let mut h = self.root();
        let mut subject = Subject::start(implementation, &self.init, &self.threads, names)?;
        subject.check_views(true)?;
        for &m in schedule {
            self.play(&mut subject, &mut h, m)?;
        }
        Ok((subject, h))
    }

    /// The child `mv` leads to from the state of `subject` and `h`, and the
    /// subject as the move left it.
    pub(super) fn step<'i>(
        &self,
        mut subject: Subject<'i>,
        mut h: Harness,
        mv: Move,
        keep_oracle: bool,
    ) -> (Child, Subject<'i>) {
        // Only the new move counts towards the situations.
        subject.counting = true;
        let mark = subject.file_ops_mark();
        if let Err(m) = self.play(&mut subject, &mut h, mv) {
            return (Child::Violation(m), subject);
        }
        let ops = mark.map(|m| subject.file_ops_since(m)).unwrap_or_default();
        let mut a = std::collections::hash_map::DefaultHasher::new();
        let mut b = std::collections::hash_map::DefaultHasher::new();
        0xA5u8.hash(&mut b);
        for hasher in [&mut a, &mut b] {
            h.hash(hasher);
            subject.key(hasher, h.budget.crashes > 0);
        }
        let key = (u128::from(a.finish()) << 64) | u128::from(b.finish());
        let child = Child::State {
            key,
            harness: h,
            situations: std::mem::take(&mut subject.coverage),
            oracle: keep_oracle.then(|| Box::new(subject.oracle().clone())),
            ops,
        };
        subject.counting = false;
        (child, subject)
    }

    /// The child `mv` leads to from the state `schedule` leads to, the
    /// whole schedule replayed from a fresh start.
    pub(super) fn child(
        &self,
        implementation: &dyn Implementation,
        names: RejectNames,
        schedule: &[Move],
        mv: Move,
        keep_oracle: bool,
    ) -> Child {
        match self.replayed(implementation, names, schedule) {
            Err(m) => Child::Violation(m),
            Ok((subject, h)) => self.step(subject, h, mv, keep_oracle).0,
        }
    }

    /// Plays `schedule` from a fresh start, judging every move: the index
    /// of the move that broke a rule (`None` for the start) and how.
    pub fn replay(
        &self,
        implementation: &dyn Implementation,
        names: RejectNames,
        schedule: &[Move],
    ) -> Result<(), Box<(Option<usize>, Mismatch)>> {
        let mut h = self.root();
        let mut subject = Subject::start(implementation, &self.init, &self.threads, names)
            .map_err(|m| Box::new((None, m)))?;
        subject.check_views(true).map_err(|m| Box::new((None, m)))?;
        for (i, &m) in schedule.iter().enumerate() {
            if !self.moves(&h).contains(&m.at_its_point()) {
                return Err(Box::new((
                    Some(i),
                    Mismatch::new(
                        crate::judge::invariants::ALIVE,
                        "a move the scope allows here",
                        format!(
                            "{}: the receiver's state no longer allows it",
                            self.describe(m)
                        ),
                    ),
                )));
            }
            self.play(&mut subject, &mut h, m)
                .map_err(|e| (Some(i), e))?;
        }
        Ok(())
    }

    /// Whether `a` and `b` commute from the state `h`, whose oracle is
    /// `oracle`: both plain deliveries of different frames, no crash left
    /// to tell which was answered last (a crash between operations loses
    /// the last acknowledgement), and the oracle gives each the same events
    /// in either order and the same views after both. A conforming
    /// receiver then ends in the same state either way; the assumption is
    /// that the implementation under test does too (docs/explore.md §3).
    fn commute(&self, oracle: &Ledger, h: &Harness, a: Move, b: Move) -> bool {
        let (
            Move::Deliver {
                action: x,
                crash: None,
                at_op: None,
            },
            Move::Deliver {
                action: y,
                crash: None,
                at_op: None,
            },
        ) = (a, b)
        else {
            return false;
        };
        if x == y || h.budget.crashes > 0 || !h.cut.is_empty() {
            return false;
        }
        let deliver = |ledger: &mut Ledger, action: u16| -> Vec<Said> {
            let (_, parsed, principal, at) = self.delivery(action);
            ledger
                .deliver_shared(parsed.clone(), principal, at)
                .iter()
                .map(said)
                .collect()
        };
        let (mut xy, mut yx) = (oracle.clone(), oracle.clone());
        let (x1, y1) = (deliver(&mut xy, x), deliver(&mut xy, y));
        let (y2, x2) = (deliver(&mut yx, y), deliver(&mut yx, x));
        x1 == x2
            && y1 == y2
            && self
                .threads
                .iter()
                .all(|t| xy.view_digest(t) == yx.view_digest(t))
    }
}

/// What an event says, without the delivery number it came from (which
/// the order of deliveries changes).
type Said = (
    tern_model::ledger::EventKind,
    Option<tern_model::message::MessageRef>,
    Option<ThreadId>,
    tern_model::ledger::Outcome,
);

fn said(e: &Event) -> Said {
    (e.kind, e.id.clone(), e.thread.clone(), e.outcome.clone())
}

/// Progress as the search goes: moves judged, states known, layer.
#[derive(Debug, Default)]
pub struct Watch {
    pub transitions: AtomicU64,
    pub states: AtomicU64,
    pub depth: AtomicU64,
}

/// Explores every schedule of `prepared` against `implementation`. `stop`
/// is asked before each child is played (an interrupt): the scope is then
/// not exhausted.
pub fn explore(
    prepared: &Prepared,
    implementation: &dyn Implementation,
    names: RejectNames,
    limits: Limits,
    watch: &Watch,
    stop: &(dyn Fn() -> bool + Sync),
) -> Exploration {
    let power = PowerLossServed::on(
        implementation,
        limits.power_loss && prepared.scope.budget.crashes > 0,
    );
    let mut e = explore_with(prepared, implementation, names, limits, watch, stop);
    e.power_loss = power.is_on();
    e
}

fn explore_with(
    prepared: &Prepared,
    implementation: &dyn Implementation,
    names: RejectNames,
    limits: Limits,
    watch: &Watch,
    stop: &(dyn Fn() -> bool + Sync),
) -> Exploration {
    let mut counts = Counts {
        unclaimed: prepared.unclaimed,
        ..Counts::default()
    };
    let mut situations = Coverage::default();
    let root = prepared.root();
    let reduce = limits.sleep_sets;
    // The start itself, judged like any move; its oracle is the root's.
    let start = (|| {
        let mut s = Subject::start(implementation, &prepared.init, &prepared.threads, names)?;
        s.check_views(true)?;
        Ok(reduce.then(|| s.oracle().clone()))
    })();
    let root_oracle = match start {
        Ok(oracle) => oracle,
        Err(m) => {
            return Exploration {
                counts,
                situations,
                exhausted: false,
                violation: Some(Counterexample {
                    schedule: Vec::new(),
                    mismatch: m,
                }),
                power_loss: false,
            };
        }
    };
    counts.states = 1;
    let mut layer = vec![Node {
        schedule: Vec::new(),
        harness: root,
        sleep: Vec::new(),
        oracle: root_oracle,
        only: None,
        origin: None,
    }];
    let context = Context {
        prepared,
        implementation,
        names,
        keep_oracle: reduce,
        watch,
        stop,
    };
    std::thread::scope(|scope| {
        let mut pool = Pool::start(scope, limits.jobs, context);
        // Every state met, by key; with sleep sets, what it left out.
        let mut known: HashMap<u128, Option<Expanded>> = HashMap::new();
        let mut layer_no = 0usize;
        let mut exhausted = true;
        let mut violation = None;
        while !layer.is_empty() {
            layer_no += 1;
            // The workers keep the states of this layer, and those it reaches.
            let keep: Arc<HashSet<Origin>> =
                Arc::new(layer.iter().filter_map(|n| n.origin).collect());
            let since = pool.next_round();
            let mut work: Vec<(usize, Move, Vec<Move>)> = Vec::new();
            for (i, n) in layer.iter().enumerate() {
                let mut before: Vec<Move> = Vec::new();
                for mv in prepared.moves(&n.harness) {
                    if n.sleep.contains(&mv) {
                        if n.only.is_none() {
                            counts.slept += 1;
                        }
                        continue;
                    }
                    // Met again with a smaller sleep set: the moves it played
                    // the first time are not played again.
                    if n.only.as_ref().is_some_and(|only| !only.contains(&mv)) {
                        before.push(mv);
                        continue;
                    }
                    let sleep = match (&n.oracle, reduce) {
                        (Some(oracle), true) => n
                            .sleep
                            .iter()
                            .chain(&before)
                            .copied()
                            .filter(|&m| prepared.commute(oracle, &n.harness, m, mv))
                            .collect(),
                        _ => Vec::new(),
                    };
                    work.push((i, mv, sleep));
                    before.push(mv);
                }
            }
            if work.is_empty() {
                break;
            }
            // Each layer is played in two rounds: its moves, then the crashes
            // inside the requests its plain moves made (over a power-loss
            // state directory), whose number only playing the move tells.
            let mut next: Vec<Node> = Vec::new();
            let mut round = work;
            let mut inside_round = false;
            while !round.is_empty() {
                let jobs = round
                    .iter()
                    .map(|&(i, mv, _)| Job {
                        parent: i,
                        origin: layer[i].origin,
                        schedule: layer[i].schedule.clone(),
                        mv,
                    })
                    .collect();
                let (round_no, results) = pool.play(jobs, &keep, since);
                let mut inside: Vec<(usize, Move, Vec<Move>)> = Vec::new();
                for (k, ((i, mv, sleep), child)) in round.into_iter().zip(results).enumerate() {
                    // Only an interrupt leaves a child unplayed before the first
                    // that breaks a rule.
                    let Some(child) = child else {
                        exhausted = false;
                        break;
                    };
                    counts.transitions += 1;
                    counts.played += layer[i].schedule.len() as u64 + 1;
                    let mut schedule = layer[i].schedule.clone();
                    schedule.push(mv);
                    match child {
                        Child::Violation(m) => {
                            violation = Some(Counterexample {
                                schedule,
                                mismatch: m,
                            });
                            break;
                        }
                        Child::State {
                            key,
                            harness,
                            situations: reached,
                            oracle,
                            ops,
                        } => {
                            if !inside_round && layer[i].harness.budget.crashes > 0 {
                                inside.extend(
                                    inside_points(&ops)
                                        .into_iter()
                                        .filter_map(|at| mv.crashed_inside(at))
                                        .map(|m| (i, m, Vec::new())),
                                );
                            }
                            let oracle = oracle.map(|o| *o);
                            situations.add(&reached);
                            if harness.complete() {
                                counts.schedules += 1;
                            }
                            if limits.merge {
                                if let Some(met) = known.get_mut(&key) {
                                    counts.merged += 1;
                                    if let Some(met) = met {
                                        met.meet(&sleep, layer_no, &mut next);
                                    }
                                    continue;
                                }
                                let expanded = reduce.then(|| Expanded {
                                    sleep: sleep.clone(),
                                    pending: (layer_no, next.len()),
                                    schedule: schedule.clone(),
                                    harness: harness.clone(),
                                    oracle: oracle.clone(),
                                });
                                known.insert(key, expanded);
                            }
                            counts.states += 1;
                            next.push(Node {
                                schedule,
                                harness,
                                sleep,
                                oracle,
                                only: None,
                                origin: Some(Origin::of(round_no, k)),
                            });
                        }
                    }
                }
                if violation.is_some() || !exhausted || inside_round {
                    break;
                }
                round = inside;
                inside_round = true;
            }
            counts.depth = layer[0].schedule.len() as u64 + 1;
            watch.states.store(counts.states, Ordering::Relaxed);
            watch.depth.store(counts.depth, Ordering::Relaxed);
            if violation.is_some() || !exhausted {
                exhausted = false;
                break;
            }
            if counts.states >= limits.max_states && !next.is_empty() {
                exhausted = false;
                break;
            }
            layer = next;
        }
        Exploration {
            counts,
            situations,
            exhausted,
            violation,
            power_loss: false,
        }
    })
}
