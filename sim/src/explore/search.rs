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

use std::collections::hash_map::DefaultHasher;
use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use tern_model::ledger::{Ledger, SharedMessage};
use tern_model::message::ThreadId;

pub use super::moves::{inside_points, AtOp, Move};
use super::workers::Origin;

mod breadth;
mod describe;
mod rules;
mod sleep;
use super::scope::{Action, FaultBudget, Scope};
use super::subject::Subject;
use crate::catalogue::situations::Coverage;
use crate::contract::plugin::{Implementation, InitParams, PowerLossServed};
use crate::contract::storage::{CrashPoint, FileOp};
use crate::judge::compare::RejectNames;
use crate::judge::delivery::Came;
use crate::judge::failure::Failure;

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
    /// the same commuting deliveries was explored; or, while a crash is
    /// left, the move does not read the last frame answered and a state
    /// that differs only in that frame plays it; or it is a crash at the
    /// effect of an execution the oracle refuses, which the execution
    /// without a crash covers.
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
pub struct FailingSchedule {
    pub schedule: Vec<Move>,
    pub failure: Failure,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exploration {
    pub counts: Counts,
    /// How many moves judged reached each situation of the catalogue
    /// (docs/simulator.md): what the scope exercised.
    pub situations: Coverage,
    /// Every schedule was covered (none left by a bound or a violation).
    pub exhausted: bool,
    pub violation: Option<FailingSchedule>,
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
    budget: FaultBudget,
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
    oracle: Option<KeptOracle>,
    /// Only these moves are played from here (`None`: all): a state met
    /// again with a smaller sleep set plays the moves it had left out.
    only: Option<Vec<Move>>,
    /// A state already known but for the last frame answered (the same
    /// `core`): only the moves that read that frame are played from here,
    /// since every other move leads where it leads from the state known.
    twin: bool,
    /// The child that reached it, whose worker may still hold its subject
    /// (`None` for the start and for a state met again).
    origin: Option<Origin>,
}

/// The oracle at a state, kept to weigh moves from it, and the digest of
/// its views, which names it as the state key does.
#[derive(Debug, Clone)]
pub(super) struct KeptOracle {
    ledger: Ledger,
    views: u128,
}

impl KeptOracle {
    fn of(subject: &Subject) -> KeptOracle {
        let mut views = Key::new();
        for hasher in views.hashers() {
            subject.hash_oracle_views(hasher);
        }
        KeptOracle {
            ledger: subject.oracle().clone(),
            views: views.finish(),
        }
    }
}

/// A 128-bit key: two hashers side by side, the second told apart by a
/// first byte of its own.
struct Key {
    low: DefaultHasher,
    high: DefaultHasher,
}

impl Key {
    fn new() -> Key {
        let mut high = DefaultHasher::new();
        0xA5u8.hash(&mut high);
        Key {
            low: DefaultHasher::new(),
            high,
        }
    }

    fn hashers(&mut self) -> [&mut DefaultHasher; 2] {
        [&mut self.low, &mut self.high]
    }

    fn finish(&self) -> u128 {
        (u128::from(self.low.finish()) << 64) | u128::from(self.high.finish())
    }
}

pub(super) enum Child {
    Violation(Failure),
    State {
        key: u128,
        /// The key without the last frame answered, while a crash is left
        /// (`None` when the key leaves it out already): the states that
        /// differ only in that frame share it, and reach the same child by
        /// any move that does not read it ([`Move::reads_last_answered`]).
        core: Option<u128>,
        harness: Harness,
        situations: Coverage,
        oracle: Option<Box<KeptOracle>>,
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
                    core: ca,
                    harness: ha,
                    situations: sa,
                    ops: oa,
                    ..
                },
                Child::State {
                    key: b,
                    core: cb,
                    harness: hb,
                    situations: sb,
                    ops: ob,
                    ..
                },
            ) => assert!(
                a == b && ca == cb && ha == hb && sa == sb && oa == ob,
                "a forked state differs from its replay"
            ),
            _ => panic!("a forked child and its replay came to different ends"),
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
                Action::Deliver { frame, .. } => Some(tern_model::ledger::parse_shared(frame)),
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

    /// The state `schedule` leads to, replayed from a fresh start: the
    /// subject and the harness's part.
    pub(super) fn replayed<'i>(
        &self,
        implementation: &'i dyn Implementation,
        names: RejectNames,
        schedule: &[Move],
    ) -> Result<(Subject<'i>, Harness), Failure> {
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
        let mut key = Key::new();
        for hasher in key.hashers() {
            h.hash(hasher);
            subject.key(hasher);
        }
        // While a crash is left, the last frame answered is part of the
        // state: a crash between operations loses its acknowledgement.
        let core = (h.budget.crashes > 0).then(|| {
            let core = key.finish();
            for hasher in key.hashers() {
                subject.last_answered().hash(hasher);
            }
            core
        });
        let child = Child::State {
            key: key.finish(),
            core,
            harness: h,
            situations: std::mem::take(&mut subject.coverage),
            oracle: keep_oracle.then(|| Box::new(KeptOracle::of(&subject))),
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
    ) -> Result<(), Box<(Option<usize>, Failure)>> {
        let mut h = self.root();
        let mut subject = Subject::start(implementation, &self.init, &self.threads, names)
            .map_err(|m| Box::new((None, m)))?;
        subject.check_views(true).map_err(|m| Box::new((None, m)))?;
        for (i, &m) in schedule.iter().enumerate() {
            if !self.moves(&h).contains(&m.at_its_point()) {
                return Err(Box::new((
                    Some(i),
                    Failure::new(
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
    let mut e = breadth::explore_with(prepared, implementation, names, limits, watch, stop);
    e.power_loss = power.is_on();
    e
}
