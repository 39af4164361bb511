use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::*;

/// The worker counts every test runs under: the inline path, and threads.
const WORKERS: [usize; 4] = [1, 2, 3, 8];

/// Waits until `flag` is set.
fn wait_for(flag: &AtomicBool) {
    while !flag.load(Ordering::SeqCst) {
        std::thread::yield_now();
    }
}

#[test]
fn results_come_in_index_order_whatever_order_workers_finish_in() {
    for workers in WORKERS {
        let count = 12;
        let mut taken = Vec::new();
        // Later tasks end first: the order taken cannot be the finishing order.
        let end = Pool::new(workers).ordered(
            count,
            |_, i| {
                std::thread::sleep(Duration::from_millis(2 * (count - i) as u64));
                Ran::Done(i * 10)
            },
            |i, r| {
                taken.push((i, r));
                Flow::Continue
            },
        );
        assert_eq!(end, End::All, "{workers} workers");
        let expected: Vec<_> = (0..count).map(|i| (i, i * 10)).collect();
        assert_eq!(taken, expected, "{workers} workers");
    }
}

#[test]
fn one_worker_and_many_give_the_same_sequence() {
    // A rule over results in order, as the corpus's give-up rule is: stop
    // after the third result divisible by 3 and the first `Last` past 20.
    let run = |_: Worker, i: usize| {
        std::thread::sleep(Duration::from_micros((i as u64 * 7919) % 500));
        if i == 23 {
            Ran::Last(i)
        } else {
            Ran::Done(i)
        }
    };
    let sequence = |workers: usize, thirds: usize| {
        let mut taken = Vec::new();
        let mut seen = 0;
        let end = Pool::new(workers).ordered(40, run, |i, r| {
            taken.push((i, r));
            seen += usize::from(r % 3 == 0);
            if seen == thirds {
                Flow::Stop
            } else {
                Flow::Continue
            }
        });
        (taken, end)
    };
    for thirds in [3, 100] {
        let one = sequence(1, thirds);
        for workers in WORKERS {
            assert_eq!(sequence(workers, thirds), one, "{workers} workers");
        }
    }
    assert_eq!(sequence(1, 3).1, End::Stopped { at: 6 });
    assert_eq!(sequence(1, 100).1, End::Stopped { at: 23 });
}

/// Tasks past `stop_at` block until the result of `stop_at` is taken, so
/// none of them can finish and make room for another before the pool
/// has heard it must stop: the tasks started past it are exactly those
/// handed out before, at most one per worker that was not running it.
fn started_past_a_stop(workers: usize, by_last: bool) -> (usize, Vec<usize>, End) {
    let stop_at = 5;
    let released = AtomicBool::new(false);
    let started_past = AtomicUsize::new(0);
    let mut taken = Vec::new();
    let end = Pool::new(workers).ordered(
        200,
        |_, i| {
            if i > stop_at {
                started_past.fetch_add(1, Ordering::SeqCst);
                wait_for(&released);
            }
            if by_last && i == stop_at {
                Ran::Last(i)
            } else {
                Ran::Done(i)
            }
        },
        |i, _| {
            taken.push(i);
            if i == stop_at {
                released.store(true, Ordering::SeqCst);
                // A `Last` ends the work whatever `take` says.
                if by_last {
                    return Flow::Continue;
                }
                return Flow::Stop;
            }
            Flow::Continue
        },
    );
    (started_past.into_inner(), taken, end)
}

#[test]
fn no_task_past_a_stop_starts() {
    for workers in WORKERS {
        let (started, taken, end) = started_past_a_stop(workers, false);
        assert_eq!(end, End::Stopped { at: 5 }, "{workers} workers");
        assert_eq!(taken, (0..=5).collect::<Vec<_>>(), "{workers} workers");
        // The worker that ran task 5 may take task 6 before 5 is taken.
        assert!(
            started <= workers - 1 + usize::from(workers > 1),
            "{started} started past the stop with {workers} workers"
        );
    }
}

#[test]
fn no_task_past_a_last_result_starts() {
    for workers in WORKERS {
        let (started, taken, end) = started_past_a_stop(workers, true);
        assert_eq!(end, End::Stopped { at: 5 }, "{workers} workers");
        assert_eq!(taken, (0..=5).collect::<Vec<_>>(), "{workers} workers");
        // The worker that ran task 5 closes the hand-out before it asks
        // for more.
        assert!(
            started < workers,
            "{started} started past the last with {workers} workers"
        );
    }
}

#[test]
fn an_interrupted_task_is_not_taken_nor_any_after_it() {
    for workers in WORKERS {
        let mut taken = Vec::new();
        let end = Pool::new(workers).ordered(
            30,
            |_, i| {
                // The tasks after it end first, and are discarded all the same.
                if i == 4 {
                    std::thread::sleep(Duration::from_millis(20));
                    Ran::Interrupted
                } else {
                    Ran::Done(i)
                }
            },
            |i, _| {
                taken.push(i);
                Flow::Continue
            },
        );
        assert_eq!(end, End::Interrupted { at: 4 }, "{workers} workers");
        assert_eq!(taken, [0, 1, 2, 3], "{workers} workers");
    }
}

#[test]
fn zero_tasks_run_nothing() {
    for workers in [0, 1, 4] {
        let end = Pool::new(workers).ordered(
            0,
            |_, _| -> Ran<()> { panic!("no task to run") },
            |_, _| panic!("no result to take"),
        );
        assert_eq!(end, End::All);
    }
}

#[test]
fn nothing_starts_past_the_deadline() {
    for workers in WORKERS {
        let started = AtomicUsize::new(0);
        let end = Pool::new(workers).until(Some(Instant::now())).ordered(
            10,
            |_, _| {
                started.fetch_add(1, Ordering::SeqCst);
                Ran::Done(())
            },
            |_, _| Flow::Continue,
        );
        assert_eq!(end, End::Deadline { next: 0 }, "{workers} workers");
        assert_eq!(started.into_inner(), 0, "{workers} workers");
    }
}

#[test]
fn workers_are_numbered_from_zero_and_one_worker_is_the_caller() {
    let caller = std::thread::current().id();
    Pool::new(1).ordered(
        5,
        |worker, _| {
            assert_eq!(worker, Worker(0));
            assert_eq!(std::thread::current().id(), caller);
            Ran::Done(())
        },
        |_, _| Flow::Continue,
    );
    let mut seen = Vec::new();
    Pool::new(3).ordered(
        20,
        |worker, _| Ran::Done(worker),
        |_, worker| {
            seen.push(worker.0);
            Flow::Continue
        },
    );
    assert!(seen.iter().all(|&w| w < 3), "{seen:?}");
}
