//! How long an implementation over the protocol takes to answer: each
//! request's round trip, from the write of its line to the read of its
//! answer, on the monotonic clock. A vendor reads the slow kinds of
//! request and the slowest requests themselves; the verdict never depends
//! on them, since times vary from run to run.
//!
//! The adapter records into one sink for the process; the thread that
//! plays a case or a simulation run names it first ([`begin`]), so each
//! request is known by the work it belongs to and its place in it, which
//! is what reproduces it. In-process implementations record nothing.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// The work a request was made during (named apart from the event
/// stream's `Work`, which borrows what it names: this one is kept).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum During {
    /// A corpus case, by ID.
    Case(String),
    /// A simulation run, by seed.
    Seed(u64),
}

/// One request's round trip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timed {
    /// The protocol operation: `init`, `deliver`, `execute`, `view`, ….
    pub op: &'static str,
    pub took: Duration,
    /// What was being played; `None` for a request no player named.
    pub work: Option<During>,
    /// The request's place in that work, counted from 1.
    pub nth: u64,
}

static SINK: Mutex<Vec<Timed>> = Mutex::new(Vec::new());

/// Off unless a caller will [`take`] what is recorded: a long `run` or
/// `explore` over the protocol would otherwise keep every round trip.
static ON: AtomicBool = AtomicBool::new(false);

/// Starts (or stops) keeping round trips.
pub fn keep(on: bool) {
    ON.store(on, Ordering::Relaxed);
}

thread_local! {
    /// The work this thread plays, and how many requests it made so far.
    static CURRENT: RefCell<(Option<During>, u64)> = const { RefCell::new((None, 0)) };
}

/// The calling thread now plays `work`: its requests are counted from 1.
pub fn begin(work: Option<During>) {
    CURRENT.with(|c| *c.borrow_mut() = (work, 0));
}

/// Records one round trip of the calling thread's current work.
pub fn record(op: &'static str, took: Duration) {
    if !ON.load(Ordering::Relaxed) {
        return;
    }
    let (work, nth) = CURRENT.with(|c| {
        let mut c = c.borrow_mut();
        c.1 += 1;
        (c.0.clone(), c.1)
    });
    let mut sink = SINK.lock().unwrap_or_else(|e| e.into_inner());
    sink.push(Timed {
        op,
        took,
        work,
        nth,
    });
}

/// Everything recorded since the last call, by every thread.
pub fn take() -> Vec<Timed> {
    std::mem::take(&mut *SINK.lock().unwrap_or_else(|e| e.into_inner()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_counted_within_their_work() {
        keep(true);
        begin(Some(During::Seed(7)));
        record("init", Duration::from_micros(5));
        record("view", Duration::from_micros(9));
        begin(Some(During::Case("c".into())));
        record("deliver", Duration::from_micros(1));
        keep(false);
        let mine: Vec<_> = take().into_iter().map(|t| (t.op, t.work, t.nth)).collect();
        // Other tests of this crate may record at the same time: only
        // ours are looked at.
        let ours: Vec<_> = mine
            .into_iter()
            .filter(|(_, w, _)| {
                matches!(w, Some(During::Seed(7))) || *w == Some(During::Case("c".into()))
            })
            .collect();
        assert_eq!(
            ours,
            [
                ("init", Some(During::Seed(7)), 1),
                ("view", Some(During::Seed(7)), 2),
                ("deliver", Some(During::Case("c".into())), 1),
            ]
        );
    }
}
