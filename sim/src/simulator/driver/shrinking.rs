//! The shrinker behind [`super::shrink`]: candidates played side by side and
//! judged in the order one worker would try them, chunks of steps removed,
//! then each step's value simplified, under a time budget and an interrupt.
//! Kept apart from the driver because its phases share the state of one
//! shrink, not the batch's.

use std::cell::Cell;
use std::time::Instant;

use proptest::strategy::ValueTree;

use super::{play, Counterexample, Generated, ShrinkBudget, ShrinkEnd};
use crate::contract::plugin::Implementation;
use crate::simulator::runner::{Played, RunConfig, Sessions, Violation};
use crate::simulator::workload::Step;

/// A step's value tree, while it can still simplify the step.
type Tree = Option<Box<dyn ValueTree<Value = Step>>>;

/// How candidates are played and judged, and how the shrink ends: the
/// same for every phase.
struct Trial<'a> {
    config: &'a RunConfig,
    implementation: &'a dyn Implementation,
    budget: ShrinkBudget<'a>,
    /// The invariant a candidate must break, and whether by a timeout.
    target: &'static str,
    timed_out: bool,
    deadline: Option<Instant>,
    end: Cell<ShrinkEnd>,
}

impl Trial<'_> {
    fn going(&self) -> bool {
        self.end.get() == ShrinkEnd::Complete
    }

    /// Plays candidates side by side (one per job) and says which fail the
    /// same way. Nothing is played once the shrink must end.
    fn fail_all(&self, candidates: &[&[Step]]) -> Vec<Option<Violation>> {
        let none = || candidates.iter().map(|_| None).collect();
        if (self.budget.stop)() {
            self.end.set(ShrinkEnd::Interrupted);
            return none();
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.end.set(ShrinkEnd::OutOfTime);
            return none();
        }
        let (config, implementation) = (self.config, self.implementation);
        let same = |played: Played| {
            played.violation.filter(|v| {
                v.failure.invariant.name == self.target && v.failure.timed_out == self.timed_out
            })
        };
        let results: Vec<Option<Violation>> = if candidates.len() == 1 {
            vec![same(play(config, candidates[0], implementation, false))]
        } else {
            std::thread::scope(|scope| {
                let workers: Vec<_> = candidates
                    .iter()
                    .map(|c| scope.spawn(move || play(config, c, implementation, false)))
                    .collect();
                workers
                    .into_iter()
                    .map(|w| w.join().ok().and_then(same))
                    .collect()
            })
        };
        // An interrupt kills the implementation's processes, so the runs
        // that were under way say nothing about the candidates.
        if (self.budget.stop)() {
            self.end.set(ShrinkEnd::Interrupted);
            return none();
        }
        results
    }

    fn fails(&self, candidate: &[Step], runs: &mut usize) -> Option<Violation> {
        if !self.going() {
            return None;
        }
        *runs += 1;
        self.fail_all(&[candidate]).pop().flatten()
    }
}

/// The run being shrunk: its steps, their value trees, the violation it
/// was last seen to fail with, and the runs played so far.
struct Shrinking {
    steps: Vec<Step>,
    trees: Vec<Tree>,
    current: Violation,
    runs: usize,
}

/// Shrinks a failing run: first removing chunks of steps (halves, quarters,
/// ... single steps), then simplifying each remaining step with proptest's
/// value trees, keeping only changes that still break the same invariant.
/// Stops early, with the smallest failing run found so far, when the budget
/// runs out or `budget.stop` says so.
pub fn shrink(
    config: &RunConfig,
    generated: Generated,
    violation: Violation,
    implementation: &dyn Implementation,
    budget: ShrinkBudget,
    mut progress: impl FnMut(&str),
) -> Counterexample {
    let original_len = generated.steps.len();
    // Kept to fall back on when a timeout shrunk with shorter waits does
    // not reproduce with the full ones.
    let original = if violation.failure.timed_out {
        generated.steps.clone()
    } else {
        Vec::new()
    };
    let trial = Trial {
        config,
        implementation,
        budget,
        target: violation.failure.invariant.name,
        timed_out: violation.failure.timed_out,
        deadline: budget.time.map(|t| Instant::now() + t),
        end: Cell::new(ShrinkEnd::Complete),
    };
    let mut s = Shrinking {
        steps: generated.steps,
        trees: generated.trees.into_iter().map(Some).collect(),
        current: violation,
        runs: 0,
    };
    // A timeout is known to be a failure: candidates are waited on for less.
    if trial.timed_out {
        implementation.cap_request_wait(Some(budget.hang_wait));
    }
    // After itself, a candidate's two plays share the kept processes,
    // which candidates played side by side would take from each other.
    let jobs = match config.sessions {
        Sessions::AfterItself => 1,
        _ => budget.jobs.max(1),
    };
    cut_to_prefix(&trial, &mut s, &mut progress);
    remove_chunks(&trial, &mut s, jobs, &mut progress);
    simplify_steps(&trial, &mut s);
    if trial.timed_out {
        implementation.cap_request_wait(None);
    }
    let end = trial.end.get();
    progress(&format!(
        "shrink: {}, {} of {original_len} steps, {} runs",
        match end {
            ShrinkEnd::Complete | ShrinkEnd::Skipped => "done",
            ShrinkEnd::OutOfTime => "out of time",
            ShrinkEnd::Interrupted => "interrupted",
        },
        s.steps.len(),
        s.runs
    ));
    recorded(&trial, s, original, original_len, progress)
}

/// The first cuts: no step at all, when the failure needs none (start-up,
/// the final checks), else the steps up to the failing one.
fn cut_to_prefix(trial: &Trial, s: &mut Shrinking, progress: &mut impl FnMut(&str)) {
    // A failure that needs no step at all (start-up, the final checks) is
    // the smallest counterexample there is.
    if let Some(v) = trial.fails(&[], &mut s.runs) {
        progress("shrink: no step needed");
        s.steps.clear();
        s.trees.clear();
        s.current = v;
    }
    // Steps after the failing one were never played: a run is a function of
    // its prefix, so the prefix alone fails the same way.
    let prefix = s.current.step + 1;
    if prefix < s.steps.len() {
        if let Some(v) = trial.fails(&s.steps[..prefix], &mut s.runs) {
            s.steps.truncate(prefix);
            s.trees.truncate(prefix);
            s.current = v;
            progress(&format!(
                "shrink: {} steps (the prefix that fails)",
                s.steps.len()
            ));
        }
    }
}

/// Removes chunks of steps, halves first, down to single steps, `jobs`
/// candidates at a time.
fn remove_chunks(trial: &Trial, s: &mut Shrinking, jobs: usize, progress: &mut impl FnMut(&str)) {
    let mut chunk = s.steps.len().div_ceil(2).max(1);
    loop {
        let mut start = 0;
        while start < s.steps.len() && trial.going() {
            // The next removals one worker would try, from `start` on, each
            // against the steps as they are now.
            let starts: Vec<usize> = (0..jobs)
                .map(|k| start + k * chunk)
                .take_while(|&x| x < s.steps.len())
                .collect();
            let candidates: Vec<Vec<Step>> = starts
                .iter()
                .map(|&x| {
                    let stop = (x + chunk).min(s.steps.len());
                    s.steps[..x]
                        .iter()
                        .chain(&s.steps[stop..])
                        .cloned()
                        .collect()
                })
                .collect();
            let slices: Vec<&[Step]> = candidates.iter().map(Vec::as_slice).collect();
            let results = trial.fail_all(&slices);
            if !trial.going() {
                break;
            }
            match results
                .into_iter()
                .enumerate()
                .find_map(|(k, v)| Some((k, v?)))
            {
                Some((k, v)) => {
                    // One worker would have run these k + 1 candidates.
                    s.runs += k + 1;
                    let x = starts[k];
                    let stop = (x + chunk).min(s.steps.len());
                    s.steps = candidates.into_iter().nth(k).unwrap_or_default();
                    s.trees.drain(x..stop);
                    s.current = v;
                    start = x;
                    progress(&format!("shrink: {} steps", s.steps.len()));
                }
                None => {
                    s.runs += starts.len();
                    start += chunk * starts.len();
                }
            }
        }
        if chunk == 1 || !trial.going() {
            break;
        }
        chunk = chunk.div_ceil(2);
    }
}

/// Simplifies each remaining step's value with its tree, keeping each
/// simpler value that still fails the same way.
fn simplify_steps(trial: &Trial, s: &mut Shrinking) {
    // Simplifying the values of a hang's steps costs a wait per attempt and
    // tells little (the implementation stops answering, whatever the text
    // says), so a timeout keeps the steps that removal left.
    let simplify = if trial.timed_out { 0 } else { s.steps.len() };
    'simplify: for i in 0..simplify {
        let Some(tree) = s.trees[i].as_mut() else {
            continue;
        };
        for _ in 0..64 {
            if !trial.going() {
                break 'simplify;
            }
            if !tree.simplify() {
                break;
            }
            let mut candidate = s.steps.clone();
            candidate[i] = tree.current();
            if let Some(v) = trial.fails(&candidate, &mut s.runs) {
                s.steps = candidate;
                s.current = v;
            } else if trial.going() && !tree.complicate() {
                break;
            }
        }
    }
}

/// The shrunk run as a counterexample: replayed once more to record it,
/// with the full timeout (the original run instead, when a timeout shrunk
/// with shorter waits does not reproduce), except after an interrupt.
fn recorded(
    trial: &Trial,
    s: Shrinking,
    original: Vec<Step>,
    original_len: usize,
    mut progress: impl FnMut(&str),
) -> Counterexample {
    let (config, implementation) = (trial.config, trial.implementation);
    let end = trial.end.get();
    let Shrinking {
        mut steps,
        current,
        runs,
        ..
    } = s;
    if end == ShrinkEnd::Interrupted {
        // No replay after an interrupt: the user wants out, and the run is
        // saved as it was last seen to fail.
        return Counterexample {
            config: config.clone(),
            violation: current,
            steps,
            original_len,
            happenings: Vec::new(),
            shrink_runs: runs,
            shrink_end: end,
        };
    }
    // The record, with the full timeout: what the trace and report show.
    let mut replay = play(config, &steps, implementation, true);
    let reproduced = |p: &Played| {
        p.violation.as_ref().is_some_and(|v| {
            v.failure.invariant.name == trial.target && v.failure.timed_out == trial.timed_out
        })
    };
    if trial.timed_out && !reproduced(&replay) {
        // The shorter waits made a slow answer look like a hang: the
        // smallest run that fails with the full timeout is the original.
        progress("shrink: the shrunk run does not time out with the full timeout; keeping the original run");
        steps = original;
        replay = play(config, &steps, implementation, true);
    }
    Counterexample {
        config: config.clone(),
        violation: replay.violation.unwrap_or(current),
        steps,
        original_len,
        happenings: replay.happenings,
        shrink_runs: runs,
        shrink_end: end,
    }
}
