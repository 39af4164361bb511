//! Playing the corpus for a certification: the implementation identified
//! once, the cases on workers that take them in order, and the give-up
//! rule that spares a hanging implementation a timeout per case, applied
//! the same way whatever the number of workers or shards.

use std::collections::BTreeMap;
use std::sync::Mutex;

use super::{CorpusRun, Timing};
use crate::contract::plugin::{Identity, Implementation};
use crate::corpus::play::{identify, play, CaseRun, Status, StepFailure};
use crate::corpus::Case;
use crate::events::{self, Event, Listener};
use crate::implementations::latency::{self, During};
use crate::judge::failure::Failure;
use crate::judge::invariants as inv;
use crate::pool::{Flow, Pool, Ran};
use crate::shard::Shard;
use crate::simulator::driver::Jobs;

/// After this many cases in a row end in an error, the rest are not run.
pub const GIVE_UP_AFTER: usize = 10;

/// Runs every case in order, on one worker. `events` hears each case
/// taken up and each judged; `stop` is polled between cases (an
/// interrupt).
pub fn run_corpus(
    cases: &[&Case],
    implementation: &dyn Implementation,
    events: &Listener<'_>,
    stop: impl Fn() -> bool + Sync,
) -> CorpusRun {
    run_corpus_with(
        cases,
        Shard::WHOLE,
        implementation,
        GIVE_UP_AFTER,
        Jobs::ONE,
        events,
        stop,
    )
}

/// [`run_corpus`] for `shard`'s share of `cases` (the implementation is
/// still started with the first case of them all, so that every shard
/// reports the same identity), giving up after `give_up_after` errors in a
/// row of the share (0: never), with cases played on `jobs` workers. An
/// implementation that hangs would otherwise cost the request timeout for
/// every case; the cases not run are reported as errors that say why. The
/// report is the same whatever `jobs`: cases are judged in order, and a
/// case played past the point where one worker would have given up is
/// reported as not run. `events` hears which case each worker takes up,
/// and every case judged, in case order.
pub fn run_corpus_with(
    cases: &[&Case],
    shard: Shard,
    implementation: &dyn Implementation,
    give_up_after: usize,
    jobs: Jobs,
    events: &Listener<'_>,
    stop: impl Fn() -> bool + Sync,
) -> CorpusRun {
    let Some(first) = cases.first() else {
        return CorpusRun {
            identity: Err("no case selected".to_owned()),
            cases: Vec::new(),
            complete: true,
            logs: BTreeMap::new(),
            latency: Vec::new(),
        };
    };
    let _timing = Timing::start();
    latency::begin(Some(During::Case(first.id.clone())));
    let identity = identify(implementation, first);
    latency::begin(None);
    let mine: Vec<&Case> = cases
        .iter()
        .copied()
        .filter(|c| shard.takes_name(&c.id))
        .collect();
    let cases = mine.as_slice();
    let claimed = match &identity {
        Ok(i) => i.clone(),
        // It does not start: every case is an error, without starting it
        // once per case (an implementation that hangs at start-up would
        // otherwise cost the start-up timeout for every case).
        Err(why) => {
            let cases = cases
                .iter()
                .map(|c| not_run(c, not_run_failure("a started receiver", why.clone())))
                .collect();
            return CorpusRun {
                identity,
                cases,
                complete: true,
                logs: BTreeMap::new(),
                latency: latency::take(),
            };
        }
    };
    let logs = Mutex::new(BTreeMap::new());
    let played = play_all(
        cases,
        implementation,
        &claimed,
        give_up_after,
        jobs,
        Watch {
            events,
            logs: &logs,
        },
        &stop,
    );
    let mut logs = logs.into_inner().unwrap_or_else(|e| e.into_inner());
    let mut runs = Vec::with_capacity(cases.len());
    let mut complete = true;
    let mut errors_in_a_row = 0;
    for (case, run) in cases.iter().zip(played) {
        if give_up_after > 0 && errors_in_a_row >= give_up_after {
            let run = given_up(case, errors_in_a_row);
            events(Event::Case(&run));
            // A worker may have played it before the give-up was seen;
            // it is reported as not run, so its stderr goes too.
            logs.remove(&case.id);
            runs.push(run);
            continue;
        }
        // A case cut short by the interrupt (or never started after it)
        // says nothing about the implementation; it is left out rather
        // than reported as an error.
        let Some(run) = run else {
            complete = false;
            break;
        };
        errors_in_a_row = in_a_row_after(errors_in_a_row, run.status);
        runs.push(run);
    }
    logs.retain(|id: &String, _| runs.iter().any(|r| &r.id == id && r.status.is_failure()));
    CorpusRun {
        identity,
        cases: runs,
        complete,
        logs,
        latency: latency::take(),
    }
}

/// Who hears of the cases as they are played, and where their stderr
/// goes.
struct Watch<'a> {
    events: &'a Listener<'a>,
    /// The stderr of each failing case, by ID.
    logs: &'a Mutex<BTreeMap<String, String>>,
}

/// Plays the cases, on `jobs` workers that take them in order, telling
/// `watch` of each in case order: `None` for a case the interrupt cut
/// short, or that was never started. No case starts once the ones before
/// it show `give_up_after` errors in a row (what follows is reported as
/// not run anyway).
fn play_all(
    cases: &[&Case],
    implementation: &dyn Implementation,
    claimed: &Identity,
    give_up_after: usize,
    jobs: Jobs,
    watch: Watch<'_>,
    stop: &(impl Fn() -> bool + Sync),
) -> Vec<Option<CaseRun>> {
    let Watch { events, logs } = watch;
    let mut results: Vec<Option<CaseRun>> = cases.iter().map(|_| None).collect();
    let mut in_a_row = 0;
    Pool::new(jobs.0.get()).ordered(
        cases.len(),
        |worker, i| {
            if stop() {
                return Ran::Interrupted;
            }
            events(Event::Started {
                worker: worker.0,
                work: events::Work::Case(cases[i]),
            });
            let run = play_logged(cases[i], implementation, claimed, logs);
            if stop() {
                Ran::Interrupted
            } else {
                Ran::Done(run)
            }
        },
        |i, run| {
            events(Event::Case(&run));
            in_a_row = in_a_row_after(in_a_row, run.status);
            results[i] = Some(run);
            if give_up_after > 0 && in_a_row >= give_up_after {
                Flow::Stop
            } else {
                Flow::Continue
            }
        },
    );
    results
}

/// Plays one case, keeping what the implementation wrote on stderr if it
/// fails: the log of this thread is emptied first, so it is this case's.
fn play_logged(
    case: &Case,
    implementation: &dyn Implementation,
    claimed: &Identity,
    logs: &Mutex<BTreeMap<String, String>>,
) -> CaseRun {
    let _ = implementation.take_log();
    latency::begin(Some(During::Case(case.id.clone())));
    let run = play(case, implementation, claimed);
    latency::begin(None);
    if run.status.is_failure() {
        if let Some(log) = implementation.take_log() {
            logs.lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(run.id.clone(), String::from_utf8_lossy(&log).into_owned());
        }
    }
    run
}

/// Where the give-up rule cuts outcomes in case order: the index of the
/// first case it reports as not run, and the errors in a row before it.
/// `tern-sim merge` applies it again to the shards' outcomes put in order,
/// so that a merged certification gives up where one machine would have.
pub fn give_up_point(
    statuses: impl IntoIterator<Item = Status>,
    give_up_after: usize,
) -> Option<(usize, usize)> {
    if give_up_after == 0 {
        return None;
    }
    let mut in_a_row = 0;
    for (i, status) in statuses.into_iter().enumerate() {
        if in_a_row >= give_up_after {
            return Some((i, in_a_row));
        }
        in_a_row = in_a_row_after(in_a_row, status);
    }
    None
}

/// A case not run because the `in_a_row` cases before it all ended in an
/// error.
pub fn given_up(case: &Case, in_a_row: usize) -> CaseRun {
    not_run(case, given_up_failure(in_a_row))
}

/// The failure of a case given up on (see [`given_up`]).
pub fn given_up_failure(in_a_row: usize) -> StepFailure {
    not_run_failure(
        "an implementation that answers",
        format!("not run: the {in_a_row} cases before it all ended in an error"),
    )
}

/// The count of errors in a row once a case ends with `status`. A case
/// not applicable says nothing either way.
fn in_a_row_after(count: usize, status: Status) -> usize {
    match status {
        Status::Error => count + 1,
        Status::NotApplicable => count,
        _ => 0,
    }
}

/// A case that could not be run because of the implementation: an error.
fn not_run(case: &Case, failure: StepFailure) -> CaseRun {
    CaseRun {
        id: case.id.clone(),
        status: Status::Error,
        failure: Some(failure),
        unclaimed: Vec::new(),
        transcript: Vec::new(),
    }
}

fn not_run_failure(expected: &str, why: String) -> StepFailure {
    StepFailure::of(0, "start", Failure::new(inv::ALIVE, expected, why))
}
