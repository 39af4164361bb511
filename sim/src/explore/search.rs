//! The search: every schedule of a scope, breadth-first, so that the first
//! violation found is one of the shortest. A state is rebuilt by replaying
//! its schedule from a fresh start (an implementation, in process or
//! behind a pipe, cannot be copied), and states that agree on everything
//! a later move can depend on are merged (docs/explore.md §3).
//!
//! Each layer's children are played by `jobs` threads in contiguous
//! shares and judged in order afterwards, so the outcome is the same for
//! any number of threads.

use std::collections::{BTreeSet, HashSet};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use tern_model::message::ThreadId;

use super::scope::{Action, Budget, Scope};
use super::subject::{Came, Subject};
use crate::contract::plugin::{Implementation, InitParams};
use crate::contract::storage::CrashPoint;
use crate::judge::compare::RejectNames;
use crate::judge::oracle::Mismatch;
use crate::shorthand;
use crate::simulator::situations::Coverage;

/// One move of a schedule. Actions are named by their index among the
/// scope's distinct actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Move {
    /// A delivery of a frame still owed, cut by `crash` if set.
    Deliver {
        action: u16,
        crash: Option<CrashPoint>,
    },
    /// An ask to execute, at the action's clock value `at`.
    Execute {
        action: u16,
        at: u8,
        crash: Option<CrashPoint>,
    },
    /// A delivery with no view asked after it, so that the crash that must
    /// come next finds whatever the receiver left undone once it answered.
    DeliverQuietly { action: u16 },
    /// A frame delivered again after it was answered.
    Duplicate { action: u16 },
    /// A crash between operations.
    CrashIdle,
    /// A start after a crash, cut at its first sync by `crash` if set.
    Restart { crash: Option<CrashPoint> },
}

/// Options of a search.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Merge states that agree on what later moves depend on.
    pub merge: bool,
    /// Stop, not exhausted, once this many distinct states are known.
    pub max_states: u64,
    pub jobs: usize,
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
struct Harness {
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
}

enum Child {
    Violation(Mismatch),
    State {
        key: u128,
        harness: Harness,
        situations: Coverage,
    },
}

/// The scope made ready to explore: its distinct actions, and whether the
/// implementation claims what they need.
pub struct Prepared<'s> {
    scope: &'s Scope,
    pub actions: Vec<Action>,
    owed: Vec<u8>,
    init: InitParams,
    threads: Vec<ThreadId>,
    /// Executions left out because `execute` is not claimed.
    pub unclaimed: u64,
}

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
        Prepared {
            scope,
            actions,
            owed,
            init,
            threads,
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
            out.push(Move::Restart { crash: None });
            if crash_left {
                out.push(Move::Restart {
                    crash: Some(CrashPoint::BeforeSync),
                });
                out.push(Move::Restart {
                    crash: Some(CrashPoint::AfterSync),
                });
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
                            });
                        }
                        if crash_left {
                            for p in [CrashPoint::BeforeEffect, CrashPoint::AfterEffect] {
                                out.push(Move::Execute {
                                    action,
                                    at: t,
                                    crash: Some(p),
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

    fn delivery(
        &self,
        action: u16,
    ) -> (
        &[u8],
        &tern_model::message::Principal,
        tern_model::ledger::LocalTime,
    ) {
        match &self.actions[action as usize] {
            Action::Deliver {
                frame,
                principal,
                at,
            } => (frame, principal, *at),
            Action::Execute { .. } => unreachable!("a delivery move names a delivery"),
        }
    }

    /// Plays one move on `subject`, updating `h`; then compares views.
    fn play(&self, subject: &mut Subject, h: &mut Harness, mv: Move) -> Result<(), Mismatch> {
        h.fresh = false;
        h.quiet = false;
        match mv {
            Move::DeliverQuietly { action } => {
                let (frame, principal, at) = self.delivery(action);
                h.owed[action as usize] -= 1;
                subject.deliver(frame, principal, at, None)?;
                h.answered.insert(action);
                h.quiet = true;
                // The oracle's views are kept for the state, the
                // receiver's are not asked.
                return subject.check_views(false);
            }
            Move::Deliver { action, crash } => {
                let (frame, principal, at) = self.delivery(action);
                h.owed[action as usize] -= 1;
                if crash.is_some() {
                    h.budget.crashes -= 1;
                }
                match subject.deliver(frame, principal, at, crash)? {
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
                let (frame, principal, at) = self.delivery(action);
                h.budget.duplicates -= 1;
                subject.deliver(frame, principal, at, None)?;
            }
            Move::Execute { action, at, crash } => {
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
            Move::Restart { crash } => {
                if crash.is_some() {
                    h.budget.crashes -= 1;
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

    /// Replays `schedule` on a fresh subject, then plays `mv`: the child's
    /// state, or the violation it reaches.
    fn child(
        &self,
        implementation: &dyn Implementation,
        names: RejectNames,
        schedule: &[Move],
        mv: Move,
    ) -> Child {
        let mut h = self.root();
        let result = (|| {
            let mut subject = Subject::start(implementation, &self.init, &self.threads, names)?;
            subject.check_views(true)?;
            for &m in schedule {
                self.play(&mut subject, &mut h, m)?;
            }
            // Only the new move counts towards the situations.
            subject.counting = true;
            self.play(&mut subject, &mut h, mv)?;
            Ok(subject)
        })();
        match result {
            Err(m) => Child::Violation(m),
            Ok(mut subject) => {
                let mut a = std::collections::hash_map::DefaultHasher::new();
                let mut b = std::collections::hash_map::DefaultHasher::new();
                0xA5u8.hash(&mut b);
                for hasher in [&mut a, &mut b] {
                    h.hash(hasher);
                    subject.key(hasher, h.budget.crashes > 0);
                }
                let key = (u128::from(a.finish()) << 64) | u128::from(b.finish());
                Child::State {
                    key,
                    harness: h,
                    situations: std::mem::take(&mut subject.coverage),
                }
            }
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
            if !self.moves(&h).contains(&m) {
                return Err(Box::new((
                    Some(i),
                    Mismatch::new(
                        crate::judge::invariants::ALIVE,
                        "a move the scope allows here",
                        format!("{m}: the receiver's state no longer allows it"),
                    ),
                )));
            }
            self.play(&mut subject, &mut h, m)
                .map_err(|e| (Some(i), e))?;
        }
        Ok(())
    }

    /// A schedule in words, a move per line.
    pub fn describe_schedule(&self, schedule: &[Move]) -> Vec<String> {
        schedule.iter().map(|&m| self.describe(m)).collect()
    }

    /// A move in words, for traces and people.
    pub fn describe(&self, mv: Move) -> String {
        let crash = |p: Option<CrashPoint>| match p {
            None => String::new(),
            Some(CrashPoint::BeforeSync) => ", crash before it is durable".into(),
            Some(CrashPoint::AfterSync) => ", crash once it is durable".into(),
            Some(CrashPoint::BeforeEffect) => ", crash at the effect, before it".into(),
            Some(CrashPoint::AfterEffect) => ", crash right after the effect".into(),
        };
        match mv {
            Move::Deliver { action, crash: c } => {
                let (frame, principal, _) = self.delivery(action);
                format!(
                    "deliver {}{}",
                    shorthand::line(frame, Some(principal.as_str())),
                    crash(c)
                )
            }
            Move::DeliverQuietly { action } => {
                let (frame, principal, _) = self.delivery(action);
                format!(
                    "deliver {}, no view asked after it",
                    shorthand::line(frame, Some(principal.as_str()))
                )
            }
            Move::Duplicate { action } => {
                let (frame, principal, _) = self.delivery(action);
                format!(
                    "deliver again {}",
                    shorthand::line(frame, Some(principal.as_str()))
                )
            }
            Move::Execute {
                action,
                at,
                crash: c,
            } => match &self.actions[action as usize] {
                Action::Execute {
                    thread,
                    commitment,
                    at: times,
                } => format!(
                    "execute {thread}/{commitment} at {} ms{}",
                    times[at as usize].0,
                    crash(c)
                ),
                Action::Deliver { .. } => unreachable!("an execute move names an execution"),
            },
            Move::CrashIdle => "crash between operations".into(),
            Move::Restart { crash: c } => format!("restart{}", crash(c)),
        }
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
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
    let mut counts = Counts {
        unclaimed: prepared.unclaimed,
        ..Counts::default()
    };
    let mut situations = Coverage::default();
    let mut seen: HashSet<u128> = HashSet::new();
    // The start itself, judged like any move.
    let root = prepared.root();
    let start = (|| {
        let mut s = Subject::start(implementation, &prepared.init, &prepared.threads, names)?;
        s.check_views(true)
    })();
    if let Err(m) = start {
        return Exploration {
            counts,
            situations,
            exhausted: false,
            violation: Some(Counterexample {
                schedule: Vec::new(),
                mismatch: m,
            }),
        };
    }
    counts.states = 1;
    let mut layer = vec![Node {
        schedule: Vec::new(),
        harness: root,
    }];
    let mut exhausted = true;
    let mut violation = None;
    while !layer.is_empty() {
        let work: Vec<(usize, Move)> = layer
            .iter()
            .enumerate()
            .flat_map(|(i, n)| prepared.moves(&n.harness).into_iter().map(move |m| (i, m)))
            .collect();
        if work.is_empty() {
            break;
        }
        let jobs = limits.jobs.clamp(1, work.len());
        let share = work.len().div_ceil(jobs);
        // The first child (in order) known to break a rule: children after
        // it are not played, since the one reported is the first in order
        // (so a receiver that hangs costs one timeout per thread, not one
        // per child).
        let first_bad = AtomicUsize::new(usize::MAX);
        let results: Vec<Option<Child>> = std::thread::scope(|s| {
            let handles: Vec<_> = work
                .chunks(share)
                .enumerate()
                .map(|(c, chunk)| {
                    let layer = &layer;
                    let first_bad = &first_bad;
                    s.spawn(move || {
                        chunk
                            .iter()
                            .enumerate()
                            .map(|(k, &(i, mv))| {
                                let index = c * share + k;
                                if index > first_bad.load(Ordering::Relaxed) || stop() {
                                    return None;
                                }
                                let child =
                                    prepared.child(implementation, names, &layer[i].schedule, mv);
                                if matches!(child, Child::Violation(_)) {
                                    first_bad.fetch_min(index, Ordering::Relaxed);
                                }
                                watch.transitions.fetch_add(1, Ordering::Relaxed);
                                Some(child)
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        });
        let mut next = Vec::new();
        for ((i, mv), child) in work.iter().zip(results) {
            // Only an interrupt leaves a child unplayed before the first
            // that breaks a rule.
            let Some(child) = child else {
                exhausted = false;
                break;
            };
            counts.transitions += 1;
            counts.played += layer[*i].schedule.len() as u64 + 1;
            match child {
                Child::Violation(m) => {
                    let mut schedule = layer[*i].schedule.clone();
                    schedule.push(*mv);
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
                } => {
                    situations.add(&reached);
                    if harness.complete() {
                        counts.schedules += 1;
                    }
                    if limits.merge && !seen.insert(key) {
                        counts.merged += 1;
                        continue;
                    }
                    counts.states += 1;
                    let mut schedule = layer[*i].schedule.clone();
                    schedule.push(*mv);
                    next.push(Node { schedule, harness });
                }
            }
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
    }
}
