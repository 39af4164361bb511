//! Certification: the whole corpus, then a budget of faulty simulations,
//! against one implementation, and the conformance levels that follow from
//! the outcomes (never from percentages).

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::contract::plugin::{Capability, Durability, Identity, Implementation, PowerLossServed};
use crate::corpus::play::{identify, play, CaseRun, Failure, Status};
use crate::corpus::{Case, Level};
use crate::explore::scope::Scope;
use crate::explore::search::{self, explore, Exploration, Limits, Prepared, ScopeVerdict};
use crate::implementations::latency::{self, Timed, Work};
use crate::judge::compare::RejectNames;
use crate::shard::Shard;
use crate::simulator::determinism::{self, DeterminismCheck};
use crate::simulator::driver::{
    first_violation_watched, play as driver_play, shrink_found, Batch, Counterexample, Jobs,
    ShrinkBudget,
};
use crate::simulator::faults::Fault;
use crate::simulator::runner::Stats;

/// The simulation budget: a batch of runs. Certification always uses every
/// fault and swarm mixes, and ignores names for a `core` certification (the
/// seed does not name reject classes or refusal reasons).
pub type Budget = Batch;

/// `certify`'s default simulation budget, named once so that the test of
/// situation coverage measures the budget users get.
pub const DEFAULT_SEEDS: u64 = 1000;
pub const DEFAULT_FIRST_SEED: u64 = 1;
pub const DEFAULT_AGENTS: usize = 5;
pub const DEFAULT_STEPS: usize = 200;
/// How often the default budget must reach every situation against the
/// reference (docs/simulator.md, situations).
pub const MIN_REACHED: u64 = 20;

/// The corpus part of a certification.
#[derive(Debug, Clone)]
pub struct CorpusRun {
    /// What the implementation said at its first start, or why it could not start.
    pub identity: Result<Identity, String>,
    /// One per case run, in case order.
    pub cases: Vec<CaseRun>,
    /// False when interrupted before the last case.
    pub complete: bool,
    /// What a subprocess wrote on stderr while each failing case ran, by
    /// case ID (see [`Implementation::take_log`]).
    pub logs: BTreeMap<String, String>,
    /// Each request's round trip, over the protocol only (see
    /// [`latency`]); in no particular order.
    pub latency: Vec<Timed>,
}

/// The simulation part.
#[derive(Debug, Clone)]
pub struct SimulationRun {
    /// The budget played: with fault `power-loss` added where the
    /// implementation's crashes are power losses.
    pub budget: Budget,
    /// What a crash of the implementation took.
    pub durability: Durability,
    pub runs: u64,
    pub stats: Stats,
    pub counterexample: Option<Counterexample>,
    /// What a subprocess wrote on stderr while the shrunk counterexample
    /// played once more.
    pub log: Option<String>,
    /// Why the simulation did not run at all, when it did not.
    pub skipped: Option<String>,
    pub complete: bool,
    /// Each request's round trip in the runs played (not in shrinking),
    /// over the protocol only; in no particular order.
    pub latency: Vec<Timed>,
    /// What `--check-determinism` found, when asked.
    pub determinism: Option<DeterminismCheck>,
}

impl SimulationRun {
    pub fn verdict(&self) -> SimVerdict {
        SimVerdict::of(
            self.skipped.is_some(),
            self.counterexample.is_some(),
            self.complete,
        )
        .unless_nondeterministic(
            self.determinism
                .as_ref()
                .is_some_and(|d| d.divergence.is_some()),
        )
    }
}

/// Reports write it by its name (`clean`, `not_run`...), and read only
/// those names back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SimVerdict {
    Clean,
    Violation,
    /// What a report holds before anything is judged.
    #[default]
    NotRun,
    Incomplete,
    /// The same seed, played twice on fresh state, got different answers
    /// (`--check-determinism`): whatever else was found cannot be
    /// reproduced, so this verdict comes before a violation.
    Nondeterministic,
}

impl SimVerdict {
    pub const ALL: [SimVerdict; 5] = [
        SimVerdict::Clean,
        SimVerdict::Violation,
        SimVerdict::NotRun,
        SimVerdict::Incomplete,
        SimVerdict::Nondeterministic,
    ];

    /// This verdict, or [`SimVerdict::Nondeterministic`] when a
    /// determinism check found two answers to one request.
    pub fn unless_nondeterministic(self, diverged: bool) -> SimVerdict {
        if diverged {
            SimVerdict::Nondeterministic
        } else {
            self
        }
    }

    /// A part that was skipped says so first; then a violation, found
    /// even in a part cut short; then whether it ran to its end.
    pub fn of(skipped: bool, violation: bool, complete: bool) -> SimVerdict {
        if skipped {
            SimVerdict::NotRun
        } else if violation {
            SimVerdict::Violation
        } else if !complete {
            SimVerdict::Incomplete
        } else {
            SimVerdict::Clean
        }
    }

    pub fn from_name(name: &str) -> Option<SimVerdict> {
        SimVerdict::ALL.into_iter().find(|v| v.as_str() == name)
    }

    /// The name as prose reads it: `not run`.
    pub fn words(self) -> &'static str {
        match self {
            SimVerdict::NotRun => "not run",
            other => other.as_str(),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            SimVerdict::Clean => "clean",
            SimVerdict::Violation => "violation",
            SimVerdict::NotRun => "not_run",
            SimVerdict::Incomplete => "incomplete",
            SimVerdict::Nondeterministic => "nondeterministic",
        }
    }
}

/// After this many cases in a row end in an error, the rest are not run.
pub const GIVE_UP_AFTER: usize = 10;

/// Runs every case in order. `stop` is polled between cases (an interrupt).
pub fn run_corpus(
    cases: &[&Case],
    implementation: &dyn Implementation,
    progress: impl FnMut(&CaseRun),
    stop: impl Fn() -> bool + Sync,
) -> CorpusRun {
    run_corpus_with(
        cases,
        Shard::WHOLE,
        implementation,
        GIVE_UP_AFTER,
        Jobs::ONE,
        progress,
        &|_, _| {},
        stop,
    )
}

/// [`run_corpus`] for `shard`'s share of `cases` (the implementation is
/// still started with the first case of them all, so that every shard
/// reports the same identity), giving up after `give_up_after` errors in a
/// row of the share (0: never), with cases played on `jobs` workers. An implementation that hangs would
/// otherwise cost the request timeout for every case; the cases not run
/// are reported as errors that say why. The report is the same whatever
/// `jobs`: cases are judged in order, and a case played past the point
/// where one worker would have given up is reported as not run. `started`
/// hears which case each worker (counted from 0) takes up, from that
/// worker's thread, for displays that show every worker.
#[allow(clippy::too_many_arguments)]
pub fn run_corpus_with(
    cases: &[&Case],
    shard: Shard,
    implementation: &dyn Implementation,
    give_up_after: usize,
    jobs: Jobs,
    mut progress: impl FnMut(&CaseRun),
    started: &(dyn Fn(usize, &Case) + Sync),
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
    latency::begin(Some(Work::Case(first.id.clone())));
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
            ended: &mut progress,
            started,
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
            // A case a worker played anyway was counted as it ended.
            let counted = run.is_some();
            let run = given_up(case, errors_in_a_row);
            if !counted {
                progress(&run);
            }
            // Played by a worker past the point, but reported as not run.
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

/// Who hears of the cases as they are played: each case that ends, and
/// which case each worker takes up.
struct Watch<'a> {
    ended: &'a mut dyn FnMut(&CaseRun),
    started: &'a (dyn Fn(usize, &Case) + Sync),
    /// The stderr of each failing case, by ID.
    logs: &'a Mutex<BTreeMap<String, String>>,
}

/// Plays the cases, on `jobs` workers that take them in order, telling
/// `progress` of each as it ends: `None` for a case the interrupt cut short
/// or that was never started. Workers stop taking cases once the ones done
/// in order show `give_up_after` errors in a row (what follows is reported
/// as not run anyway).
fn play_all(
    cases: &[&Case],
    implementation: &dyn Implementation,
    claimed: &Identity,
    give_up_after: usize,
    jobs: Jobs,
    watch: Watch<'_>,
    stop: &(impl Fn() -> bool + Sync),
) -> Vec<Option<CaseRun>> {
    let Watch {
        ended: progress,
        started,
        logs,
    } = watch;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    let mut results: Vec<Option<CaseRun>> = cases.iter().map(|_| None).collect();
    // Whether the cases done so far, in order from the first, end in
    // `give_up_after` errors in a row.
    let gives_up = |results: &[Option<CaseRun>]| {
        let mut in_a_row = 0;
        for run in results.iter().map_while(Option::as_ref) {
            in_a_row = in_a_row_after(in_a_row, run.status);
            if give_up_after > 0 && in_a_row >= give_up_after {
                return true;
            }
        }
        false
    };
    let workers = jobs.0.get().min(cases.len()).max(1);
    if workers == 1 {
        for (i, case) in cases.iter().enumerate() {
            if stop() || gives_up(&results) {
                break;
            }
            started(0, case);
            let run = play_logged(case, implementation, claimed, logs);
            if stop() {
                break;
            }
            progress(&run);
            results[i] = Some(run);
        }
        return results;
    }
    let next = AtomicUsize::new(0);
    let given_up = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let (done, finished) = std::sync::mpsc::channel();
        for worker in 0..workers {
            let done = done.clone();
            let (next, given_up) = (&next, &given_up);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= cases.len() || stop() || given_up.load(Ordering::SeqCst) {
                    return;
                }
                started(worker, cases[i]);
                let run = play_logged(cases[i], implementation, claimed, logs);
                if stop() || done.send((i, run)).is_err() {
                    return;
                }
            });
        }
        drop(done);
        for (i, run) in finished {
            progress(&run);
            results[i] = Some(run);
            if gives_up(&results) {
                given_up.store(true, Ordering::SeqCst);
            }
        }
    });
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
    latency::begin(Some(Work::Case(case.id.clone())));
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
pub fn given_up_failure(in_a_row: usize) -> Failure {
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
fn not_run(case: &Case, failure: Failure) -> CaseRun {
    CaseRun {
        id: case.id.clone(),
        status: Status::Error,
        failure: Some(failure),
        unclaimed: Vec::new(),
        transcript: Vec::new(),
    }
}

fn not_run_failure(expected: &str, why: String) -> Failure {
    Failure {
        step: 0,
        op: "start",
        check: "implementation-sound".to_owned(),
        expected: expected.to_owned(),
        actual: why,
        names_only: false,
    }
}

/// Plays the budget's runs until the first violation, which is shrunk.
pub fn run_simulation(
    budget: &Budget,
    implementation: &dyn Implementation,
    jobs: Jobs,
    identity: Option<&Identity>,
    mut progress: impl FnMut(u64, &Stats),
    stop: impl Fn() -> bool + Sync,
) -> SimulationRun {
    run_simulation_watched(
        budget,
        implementation,
        jobs,
        identity,
        |n, _, totals| progress(n, totals),
        |_, _| {},
        stop,
    )
}

/// [`run_simulation`], telling `progress` of each run with its own counts
/// and the totals so far, in seed order, and `started` which seed each
/// worker (counted from 0) takes up, from that worker's thread.
pub fn run_simulation_watched(
    budget: &Budget,
    implementation: &dyn Implementation,
    jobs: Jobs,
    identity: Option<&Identity>,
    mut progress: impl FnMut(u64, &Stats, &Stats),
    started: impl Fn(usize, u64) + Sync,
    stop: impl Fn() -> bool + Sync,
) -> SimulationRun {
    // Crashes over the protocol are power losses wherever FUSE serves them,
    // for the simulation's runs only (the corpus crashes by kills; the
    // exploration asks for power losses itself).
    let mut budget = budget.clone();
    budget.faults.0.remove(&Fault::PowerLoss);
    let power = PowerLossServed::on(implementation, budget.faults.has(Fault::Crash));
    if power.is_on() {
        budget.faults.0.insert(Fault::PowerLoss);
    }
    let budget = &budget;
    let mut out = SimulationRun {
        budget: budget.clone(),
        durability: implementation.durability(),
        runs: 0,
        stats: Stats::default(),
        counterexample: None,
        log: None,
        skipped: None,
        complete: true,
        latency: Vec::new(),
        determinism: None,
    };
    if budget.seeds == 0 {
        out.skipped = Some("no simulation budget (--seeds 0)".to_owned());
        return out;
    }
    match identity {
        None => {
            out.skipped = Some("the implementation did not start".to_owned());
            return out;
        }
        Some(i) if !i.claims(Capability::Execute) => {
            out.skipped = Some(
                "the implementation does not claim `execute`, which the simulation needs"
                    .to_owned(),
            );
            return out;
        }
        Some(_) => {}
    }
    let mut runs = 0;
    let timing = Timing::start();
    let batch = first_violation_watched(
        budget,
        implementation,
        jobs,
        false,
        |_, played, totals| {
            runs += 1;
            progress(runs, &played.stats, totals)
        },
        |worker, seed| {
            latency::begin(Some(Work::Seed(seed)));
            started(worker, seed)
        },
        &stop,
    );
    // Shrinking replays pieces of a run: its requests are no run's.
    out.latency = latency::take();
    drop(timing);
    out.runs = batch.runs;
    out.stats = batch.stats;
    out.complete = batch.complete;
    out.counterexample = batch.failure.map(|(config, generated, v)| {
        let budget = ShrinkBudget {
            stop: &stop,
            jobs: jobs.0.get(),
            ..ShrinkBudget::default()
        };
        shrink_found(&config, generated, v, implementation, budget, |_| {})
    });
    // The shrunk run once more, on this thread, for its stderr whole.
    if let Some(ce) = &out.counterexample {
        if implementation.take_log().is_some() {
            let _ = driver_play(&ce.config, &ce.steps, implementation, false);
            out.log = implementation
                .take_log()
                .map(|log| String::from_utf8_lossy(&log).into_owned());
        }
    }
    out
}

/// Plays the simulation's failing seed and up to `sample` of its passing
/// ones twice each, on fresh state and with the crashes its runs had
/// (`--check-determinism`). A simulation that did not run is not checked.
pub fn check_determinism(
    sim: &mut SimulationRun,
    implementation: &dyn Implementation,
    sample: u64,
    stop: impl Fn() -> bool,
) {
    if sim.skipped.is_some() {
        return;
    }
    let _power = PowerLossServed::on(implementation, sim.budget.faults.has(Fault::PowerLoss));
    let failing = sim.counterexample.as_ref().map(|c| c.config.seed);
    let seeds = determinism::seeds_to_check(&sim.budget, sim.runs, failing, sample);
    sim.determinism = Some(determinism::check(
        &sim.budget,
        &seeds,
        implementation,
        stop,
    ));
}

/// Round trips are kept while this lives, and what is left over is
/// dropped at both ends, so one part of a certification never counts
/// another's requests.
struct Timing;

impl Timing {
    fn start() -> Timing {
        let _ = latency::take();
        latency::keep(true);
        Timing
    }
}

impl Drop for Timing {
    fn drop(&mut self) {
        latency::keep(false);
        latency::begin(None);
    }
}

/// The exploration part: every schedule of the built-in scopes.
#[derive(Debug, Clone)]
pub struct ExplorationRun {
    /// Each scope explored, in order, until the first violation.
    pub scopes: Vec<ExploredScope>,
    /// Why it did not run at all, when it did not.
    pub skipped: Option<String>,
    /// False when interrupted, or a scope was not exhausted.
    pub complete: bool,
}

#[derive(Debug, Clone)]
pub struct ExploredScope {
    pub id: String,
    pub clauses: Vec<String>,
    pub exploration: Exploration,
    /// The counterexample's moves in words.
    pub shorthand: Vec<String>,
}

impl ExplorationRun {
    /// Not explored: `why`.
    pub fn skipped(why: impl Into<String>) -> ExplorationRun {
        ExplorationRun {
            scopes: Vec::new(),
            skipped: Some(why.into()),
            complete: true,
        }
    }

    pub fn violation(&self) -> Option<&ExploredScope> {
        self.scopes
            .iter()
            .find(|s| s.exploration.violation.is_some())
    }

    pub fn verdict(&self) -> SimVerdict {
        SimVerdict::of(
            self.skipped.is_some(),
            self.violation().is_some(),
            self.complete,
        )
    }
}

/// Explores `shard`'s share of `scopes` in order, stopping at the first violation (or when
/// `stop` says so), with the names the certification level compares.
#[allow(clippy::too_many_arguments)]
pub fn run_exploration(
    scopes: &[Scope],
    shard: Shard,
    implementation: &dyn Implementation,
    identity: Option<&Identity>,
    names: RejectNames,
    jobs: Jobs,
    mut done: impl FnMut(&ExploredScope),
    stop: impl Fn() -> bool + Sync,
) -> ExplorationRun {
    let Some(identity) = identity else {
        return ExplorationRun::skipped("the implementation did not start");
    };
    if scopes.is_empty() {
        return ExplorationRun::skipped("no scope to explore");
    }
    let mut out = ExplorationRun {
        scopes: Vec::new(),
        skipped: None,
        complete: true,
    };
    let scopes = scopes.iter().filter(|s| shard.takes_name(&s.id));
    let limits = Limits {
        merge: true,
        sleep_sets: true,
        max_states: EXPLORE_MAX_STATES,
        jobs: jobs.0.get(),
        power_loss: true,
    };
    for scope in scopes {
        let prepared = Prepared::new(scope, identity.claims(Capability::Execute));
        let exploration = explore(
            &prepared,
            implementation,
            names,
            limits,
            &search::Watch::default(),
            &stop,
        );
        let shorthand = exploration
            .violation
            .as_ref()
            .map(|ce| prepared.describe_schedule(&ce.schedule))
            .unwrap_or_default();
        out.complete &= exploration.verdict() != ScopeVerdict::NotExhausted;
        let found = exploration.violation.is_some();
        let explored = ExploredScope {
            id: scope.id.clone(),
            clauses: scope.clauses.clone(),
            exploration,
            shorthand,
        };
        done(&explored);
        out.scopes.push(explored);
        if found || stop() {
            out.complete &= !stop();
            break;
        }
    }
    out
}

/// The bound on each scope's states in a certification: far above what
/// the built-in scopes need.
pub const EXPLORE_MAX_STATES: u64 = 1_000_000;

/// Counts of outcomes at one level.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    pub counts: BTreeMap<Status, usize>,
}

impl Tally {
    pub fn get(&self, s: Status) -> usize {
        self.counts.get(&s).copied().unwrap_or(0)
    }

    pub fn failures(&self) -> usize {
        self.counts
            .iter()
            .filter(|(s, _)| s.is_failure())
            .map(|(_, n)| n)
            .sum()
    }
}

/// The conformance levels an implementation reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conformance {
    /// No core case failed (and the corpus ran to the end).
    pub core: bool,
    /// Nor any profile case.
    pub profile: bool,
    pub simulation: SimVerdict,
    pub exploration: SimVerdict,
    pub by_level: BTreeMap<Level, Tally>,
}

impl Conformance {
    pub fn of(
        cases: &[&Case],
        corpus: &CorpusRun,
        sim: &SimulationRun,
        exploration: &ExplorationRun,
    ) -> Conformance {
        let level: BTreeMap<&str, Level> = cases.iter().map(|c| (c.id.as_str(), c.level)).collect();
        let outcomes = corpus.cases.iter().map(|run| {
            let l = match &run.failure {
                // Another reject class or refusal reason than expected: the
                // receiver did what the seed asks, under another name.
                Some(f) if f.names_only => Level::Profile,
                _ => level.get(run.id.as_str()).copied().unwrap_or(Level::Core),
            };
            (l, run.status)
        });
        Conformance::of_outcomes(
            outcomes,
            corpus.complete && corpus.identity.is_ok(),
            sim.verdict(),
            exploration.verdict(),
        )
    }

    /// The levels reached from each case's outcome and the level it counts
    /// at; `whole` says the corpus ran to its end on a started
    /// implementation. `tern-sim merge` judges the shards' cases with it.
    pub fn of_outcomes(
        outcomes: impl IntoIterator<Item = (Level, Status)>,
        whole: bool,
        simulation: SimVerdict,
        exploration: SimVerdict,
    ) -> Conformance {
        let mut by_level: BTreeMap<Level, Tally> = BTreeMap::new();
        for (l, status) in outcomes {
            *by_level
                .entry(l)
                .or_default()
                .counts
                .entry(status)
                .or_default() += 1;
        }
        let clean = |l: Level| by_level.get(&l).is_none_or(|t| t.failures() == 0);
        let core = whole && clean(Level::Core);
        Conformance {
            core,
            profile: core && clean(Level::Profile),
            simulation,
            exploration,
            by_level,
        }
    }

    /// Certified at `level`: that level's cases all pass or do not apply,
    /// and neither the simulation nor the exploration found anything (a
    /// simulation that could not run for want of `execute`, or an
    /// exploration left out, does not block, and the report says so).
    pub fn certified(&self, level: Level) -> bool {
        let cases = match level {
            Level::Core => self.core,
            Level::Profile => self.profile,
        };
        let clean = |v: SimVerdict| matches!(v, SimVerdict::Clean | SimVerdict::NotRun);
        cases && clean(self.simulation) && clean(self.exploration)
    }

    /// The highest level certified, if any.
    pub fn level(&self) -> Option<Level> {
        [Level::Profile, Level::Core]
            .into_iter()
            .find(|l| self.certified(*l))
    }
}
