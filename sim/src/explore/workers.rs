//! The explorer's workers: threads that live as long as one exploration,
//! each playing its share of every round of children, in order.
//!
//! A state is the implementation's state too. When the receiver can be
//! copied (`Receiver::fork`), a worker keeps the subjects of the children
//! it reached while they may be expanded in the next layer, and copies a
//! held state for each of its moves; a state it does not hold (another
//! worker reached it, or it was met again by another schedule) is replayed
//! once and copied for each move. A receiver that cannot be copied, a
//! subprocess, is replayed from a fresh start for every move. The children
//! are the same either way: debug builds check forked children against
//! replayed ones.
//!
//! Subjects hold the receiver's storage and world, which are not `Send`:
//! they stay in the thread that made them, which is why the threads live
//! as long as the exploration and why a state is held by one worker only.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::{Scope, ScopedJoinHandle};

use super::moves::Move;
use super::search::{Child, Harness, Prepared, Watch};
use super::subject::Subject;
use crate::contract::plugin::Implementation;
use crate::judge::compare::RejectNames;

/// Which child of which round reached a state: the key under which its
/// worker holds the subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct Origin {
    round: u32,
    index: u32,
}

impl Origin {
    /// The `index`-th child of round `round`.
    pub fn of(round: u32, index: usize) -> Origin {
        Origin {
            round,
            index: index as u32,
        }
    }
}

/// One child to play: the move `mv` from the state of the layer at
/// `parent` (its place in the layer), reached by `schedule`.
pub(super) struct Job {
    pub parent: usize,
    pub origin: Option<Origin>,
    pub schedule: Vec<Move>,
    pub mv: Move,
}

/// A worker's share of a round: the jobs from `start` on.
struct Task {
    round: u32,
    start: usize,
    jobs: Vec<Job>,
    /// The states still wanted: those of the layer being expanded, and
    /// those reached from round `since` on (the layer being made).
    keep: Arc<HashSet<Origin>>,
    since: u32,
    /// The first job that broke a rule, over all workers: none after it
    /// is played, so a receiver that hangs costs one timeout per worker.
    first_bad: Arc<AtomicUsize>,
}

/// States a worker holds at most: beyond, children are not kept, and
/// their moves replay them.
const MAX_HELD: usize = 16_384;

/// What the workers share of the exploration.
#[derive(Clone, Copy)]
pub(super) struct Context<'a> {
    pub prepared: &'a Prepared<'a>,
    pub implementation: &'a dyn Implementation,
    pub names: RejectNames,
    pub keep_oracle: bool,
    pub watch: &'a Watch,
    pub stop: &'a (dyn Fn() -> bool + Sync),
}

pub(super) struct Workers<'scope> {
    tasks: Vec<mpsc::Sender<Task>>,
    results: Vec<mpsc::Receiver<Vec<Option<Child>>>>,
    handles: Vec<Option<ScopedJoinHandle<'scope, ()>>>,
    round: u32,
}

impl<'scope> Workers<'scope> {
    /// `jobs` workers (at least one), started in `scope`.
    pub fn start<'env: 'scope>(
        scope: &'scope Scope<'scope, 'env>,
        jobs: usize,
        context: Context<'env>,
    ) -> Workers<'scope> {
        let mut pool = Workers {
            tasks: Vec::new(),
            results: Vec::new(),
            handles: Vec::new(),
            round: 0,
        };
        for _ in 0..jobs.max(1) {
            let (task_tx, task_rx) = mpsc::channel::<Task>();
            let (result_tx, result_rx) = mpsc::channel();
            pool.handles
                .push(Some(scope.spawn(move || work(context, task_rx, result_tx))));
            pool.tasks.push(task_tx);
            pool.results.push(result_rx);
        }
        pool
    }

    /// The number the next round will get.
    pub fn next_round(&self) -> u32 {
        self.round
    }

    /// Plays a round, the workers in contiguous shares: `None` for the
    /// children left unplayed, past the first that breaks a rule or after
    /// `stop`. The children's origins are this round's number and their
    /// places in `jobs`. The workers let go of every state they hold but
    /// those in `keep` and those reached from round `since` on.
    pub fn play(
        &mut self,
        jobs: Vec<Job>,
        keep: &Arc<HashSet<Origin>>,
        since: u32,
    ) -> (u32, Vec<Option<Child>>) {
        let round = self.round;
        self.round += 1;
        let share = jobs.len().div_ceil(self.tasks.len()).max(1);
        let first_bad = Arc::new(AtomicUsize::new(usize::MAX));
        let mut jobs = jobs.into_iter();
        for (w, tasks) in self.tasks.iter().enumerate() {
            let task = Task {
                round,
                start: w * share,
                jobs: jobs.by_ref().take(share).collect(),
                keep: Arc::clone(keep),
                since,
                first_bad: Arc::clone(&first_bad),
            };
            if tasks.send(task).is_err() {
                self.rethrow(w);
            }
        }
        let mut out = Vec::new();
        for w in 0..self.results.len() {
            match self.results[w].recv() {
                Ok(children) => out.extend(children),
                Err(_) => self.rethrow(w),
            }
        }
        (round, out)
    }

    /// A worker that is gone panicked: its panic is the exploration's.
    fn rethrow(&mut self, w: usize) -> ! {
        if let Some(Err(payload)) = self.handles[w].take().map(ScopedJoinHandle::join) {
            std::panic::resume_unwind(payload);
        }
        unreachable!("a worker stops only when the pool does, or by a panic")
    }
}

/// The state a worker expands when it does not hold it: replayed once
/// into `base` and forked for each of its moves.
#[derive(Default)]
struct Expanding<'i> {
    parent: Option<usize>,
    /// `None` when the replay broke a rule: each move replays it again,
    /// and meets the same violation.
    base: Option<(Subject<'i>, Harness)>,
    /// The receiver cannot be copied: every move is replayed.
    unforkable: bool,
    /// Children forked so far (debug builds check one in
    /// [`DEBUG_CHECK_EVERY`] against its replay).
    #[cfg(debug_assertions)]
    forked: usize,
}

/// Debug builds check the first forked child of each worker and one in
/// this many after it against the same child replayed: all of them
/// doubled the explorer's tests in debug, and a wrong fork shows in many
/// children, not one.
#[cfg(debug_assertions)]
const DEBUG_CHECK_EVERY: usize = 4;

fn work<'i>(
    cx: Context<'i>,
    tasks: mpsc::Receiver<Task>,
    results: mpsc::Sender<Vec<Option<Child>>>,
) {
    let mut held: HashMap<Origin, (Subject<'i>, Harness)> = HashMap::new();
    let mut expanding = Expanding::default();
    for task in tasks {
        held.retain(|origin, _| origin.round >= task.since || task.keep.contains(origin));
        // Places in a layer mean nothing in the next.
        expanding.parent = None;
        expanding.base = None;
        let mut out = Vec::with_capacity(task.jobs.len());
        for (k, job) in task.jobs.iter().enumerate() {
            let index = task.start + k;
            if index > task.first_bad.load(Ordering::Relaxed) || (cx.stop)() {
                out.push(None);
                continue;
            }
            let (child, kept) = play(&cx, &mut expanding, &held, job);
            // An interrupt that came while the child was played may have
            // ended its processes: what it came to says nothing of the
            // implementation.
            if (cx.stop)() {
                out.push(None);
                continue;
            }
            if matches!(child, Child::Violation(_)) {
                task.first_bad.fetch_min(index, Ordering::Relaxed);
            }
            if let Some(kept) = kept.filter(|_| held.len() < MAX_HELD) {
                held.insert(Origin::of(task.round, index), kept);
            }
            cx.watch.transitions.fetch_add(1, Ordering::Relaxed);
            out.push(Some(child));
        }
        if results.send(out).is_err() {
            return;
        }
    }
}

/// One child: forked from the parent's subject when this worker holds it
/// or can replay it once and copy it, replayed whole otherwise. With the
/// child, the subject it reached, when it can be kept for its own moves.
fn play<'i>(
    cx: &Context<'i>,
    expanding: &mut Expanding<'i>,
    held: &HashMap<Origin, (Subject<'i>, Harness)>,
    job: &Job,
) -> (Child, Option<(Subject<'i>, Harness)>) {
    let replay_whole = || {
        cx.prepared.child(
            cx.implementation,
            cx.names,
            &job.schedule,
            job.mv,
            cx.keep_oracle,
        )
    };
    if expanding.unforkable {
        return (replay_whole(), None);
    }
    let base = match job.origin.and_then(|o| held.get(&o)) {
        Some(base) => Some(base),
        None => {
            if expanding.parent != Some(job.parent) {
                expanding.parent = Some(job.parent);
                expanding.base = cx
                    .prepared
                    .replayed(cx.implementation, cx.names, &job.schedule)
                    .ok();
            }
            expanding.base.as_ref()
        }
    };
    let had_base = base.is_some();
    let forked = base.and_then(|(subject, h)| Some((subject.fork()?, h.clone())));
    let Some((subject, h)) = forked else {
        // A receiver that cannot be copied never will be: every later move
        // is replayed, with no state replayed in vain.
        expanding.unforkable = had_base;
        expanding.base = None;
        return (replay_whole(), None);
    };
    let (child, subject) = cx.prepared.step(subject, h, job.mv, cx.keep_oracle);
    #[cfg(debug_assertions)]
    {
        expanding.forked += 1;
        if expanding.forked % DEBUG_CHECK_EVERY == 1 {
            child.assert_same_as(&replay_whole());
        }
    }
    let kept = match &child {
        Child::State { harness, .. } => Some((subject, harness.clone())),
        Child::Violation(_) => None,
    };
    (child, kept)
}
