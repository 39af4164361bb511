//! One ordered worker pool, for work whose report must not depend on how
//! many workers did it: the simulation's seeds, the corpus's cases and
//! `selftest`'s mutants.
//!
//! Tasks are indexed `0..count` and handed out in that order to whichever
//! worker is free, but their results reach the caller strictly in index
//! order, on the calling thread, whatever order the workers finish in. So
//! the caller folds results exactly as one worker would, and a rule over
//! them (the first failure, errors in a row) cuts the work at the same
//! task however many ran. What a worker had under way past that point is
//! discarded: it is work one worker would never have started.
//!
//! One worker runs the tasks inline, on the calling thread, through the
//! same delivery rules: no thread is started for work that cannot overlap.

use std::collections::BTreeMap;
use std::sync::mpsc;
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

#[cfg(test)]
mod tests;

/// The worker that runs a task, counted from 0: for progress displays that
/// show what every worker is doing. Always 0 on the inline path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Worker(pub usize);

/// What a task came to, as its worker sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ran<R> {
    /// A result; the tasks after it are still wanted.
    Done(R),
    /// A result that makes every later task pointless (a failure): no
    /// task past it starts from now on, without waiting for the tasks
    /// before it to be taken.
    Last(R),
    /// Cut short (an interrupt): what it did says nothing, so neither it
    /// nor any task after it is taken, and none past it starts.
    Interrupted,
}

/// Whether the caller wants results past the one it has just taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    /// No task past this one starts, and the results of those already
    /// under way are discarded.
    Stop,
}

/// Why results stopped coming.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// Every task was taken.
    All,
    /// Task `at` was the last taken: it ran as [`Ran::Last`], or the
    /// caller said [`Flow::Stop`] on it.
    Stopped { at: usize },
    /// The deadline passed before task `next` was handed out; every task
    /// before it was taken.
    Deadline { next: usize },
    /// Task `at` was interrupted; every task before it was taken.
    Interrupted { at: usize },
}

/// How tasks are run: on how many workers, and until when one may start.
#[derive(Debug, Clone, Copy)]
pub struct Pool {
    workers: usize,
    deadline: Option<Instant>,
}

impl Pool {
    /// A pool of `workers` (0 counts as 1) and no deadline.
    pub fn new(workers: usize) -> Pool {
        Pool {
            workers: workers.max(1),
            deadline: None,
        }
    }

    /// No task starts once `deadline` has passed; the tasks under way
    /// then end and are taken, so the tasks taken stay a prefix.
    pub fn until(self, deadline: Option<Instant>) -> Pool {
        Pool { deadline, ..self }
    }

    /// Runs tasks `0..count` with `run` and gives their results to `take`
    /// in index order, until one ends the work (see [`Ran`] and [`Flow`]).
    /// `take` runs on the calling thread, so it may borrow mutably.
    pub fn ordered<R: Send>(
        &self,
        count: usize,
        run: impl Fn(Worker, usize) -> Ran<R> + Sync,
        mut take: impl FnMut(usize, R) -> Flow,
    ) -> End {
        let workers = self.workers.min(count);
        if workers <= 1 {
            return self.inline(count, run, take);
        }
        let handout = Handout::new(count, self.deadline);
        std::thread::scope(|scope| {
            let (done, results) = mpsc::channel::<(usize, Ran<R>)>();
            for worker in 0..workers {
                let (done, handout, run) = (done.clone(), &handout, &run);
                scope.spawn(move || {
                    while let Some(index) = handout.start() {
                        let ran = run(Worker(worker), index);
                        if !matches!(ran, Ran::Done(_)) {
                            handout.none_after(index);
                        }
                        // A closed channel: the caller has stopped taking.
                        if done.send((index, ran)).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(done);
            let mut waiting = BTreeMap::new();
            let mut due = 0;
            for (index, ran) in results {
                waiting.insert(index, ran);
                while let Some(ran) = waiting.remove(&due) {
                    // Held while `take` decides, so that no task past one
                    // it stops at starts in the meantime.
                    let mut open = handout.lock();
                    if let Some(end) = deliver(due, ran, &mut take) {
                        open.end = open.end.min(due + 1);
                        return end;
                    }
                    due += 1;
                }
            }
            // Nothing ended the work, so only the deadline can have cut
            // the hand-out short.
            if due == count {
                End::All
            } else {
                End::Deadline { next: due }
            }
        })
    }

    fn inline<R>(
        &self,
        count: usize,
        run: impl Fn(Worker, usize) -> Ran<R>,
        mut take: impl FnMut(usize, R) -> Flow,
    ) -> End {
        for index in 0..count {
            if past(self.deadline) {
                return End::Deadline { next: index };
            }
            if let Some(end) = deliver(index, run(Worker(0), index), &mut take) {
                return end;
            }
        }
        End::All
    }
}

/// Gives task `index`'s result to `take`: how the work ends, or `None` when
/// it goes on. The one place both paths decide it, so they cannot differ.
fn deliver<R>(index: usize, ran: Ran<R>, take: &mut impl FnMut(usize, R) -> Flow) -> Option<End> {
    match ran {
        Ran::Done(result) => match take(index, result) {
            Flow::Continue => None,
            Flow::Stop => Some(End::Stopped { at: index }),
        },
        Ran::Last(result) => {
            // Nothing past it was started to be taken, whatever `take` says.
            let _ = take(index, result);
            Some(End::Stopped { at: index })
        }
        Ran::Interrupted => Some(End::Interrupted { at: index }),
    }
}

fn past(deadline: Option<Instant>) -> bool {
    deadline.is_some_and(|d| Instant::now() >= d)
}

/// The tasks still to hand out: from `next`, and none from `end` on.
struct Open {
    next: usize,
    end: usize,
}

/// The hand-out the workers share, behind a lock rather than atomics so
/// that the caller can hold it still while it decides whether to stop.
struct Handout {
    open: Mutex<Open>,
    deadline: Option<Instant>,
}

impl Handout {
    fn new(count: usize, deadline: Option<Instant>) -> Handout {
        Handout {
            open: Mutex::new(Open {
                next: 0,
                end: count,
            }),
            deadline,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Open> {
        // A panic elsewhere reaches the caller through the thread scope;
        // the two numbers behind the lock are whole either way.
        crate::implementations::locked(&self.open)
    }

    /// The next task to start, or `None` when no more may.
    fn start(&self) -> Option<usize> {
        let mut open = self.lock();
        if past(self.deadline) {
            open.end = open.end.min(open.next);
        }
        (open.next < open.end).then(|| {
            open.next += 1;
            open.next - 1
        })
    }

    /// No task past `index` starts.
    fn none_after(&self, index: usize) {
        let mut open = self.lock();
        open.end = open.end.min(index + 1);
    }
}
