//! `tern-sim selftest`: proves the harness's power. Every mutant of the zoo
//! must be killed, and the reference must pass a large seed budget.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use clap::Args;
use indicatif::ProgressBar;
use serde_json::json;
use tern_harness::mutants::{Mutant, MutantImpl};
use tern_harness::reference::ReferenceImpl;
use tern_harness::sim::driver::{first_violation, shrink, Batch, Jobs, ShrinkBudget};
use tern_harness::sim::faults::FaultSet;
use tern_reports::run::{selftest_json, selftest_table, violation_text, MutantRow};

use super::sim::{parse_agents, JobsArg};
use super::{FormatArg, Status};

#[derive(Debug, Args)]
pub struct SelftestArgs {
    /// Seeds tried per mutant before it counts as surviving.
    #[arg(long, default_value_t = 300)]
    seeds: u64,

    /// Seeds the reference must pass.
    #[arg(long, default_value_t = 1000)]
    reference_seeds: u64,

    #[arg(long, default_value = "3", value_parser = parse_agents)]
    agents: usize,

    #[arg(long, default_value_t = 120)]
    steps: usize,

    #[arg(long, value_enum, default_value_t = FormatArg::Human)]
    format: FormatArg,

    #[command(flatten)]
    jobs: JobsArg,
}

/// `seeds` runs from seed 0, with every fault.
fn batch(seeds: u64, args: &SelftestArgs) -> Batch {
    Batch {
        first_seed: 0,
        seeds,
        agents: args.agents,
        steps: args.steps,
        faults: FaultSet::all(),
        names: Default::default(),
        swarm: true,
    }
}

/// One mutant against the simulator: the seeds it took and the invariant
/// that caught it.
fn try_mutant(m: Mutant, args: &SelftestArgs) -> MutantRow {
    let imp = MutantImpl(m);
    let started = Instant::now();
    let mut row = MutantRow {
        name: m.name().to_owned(),
        target: m.target().name.to_owned(),
        killed_by: None,
        seeds_needed: args.seeds,
        shrunk_len: None,
        millis: 0,
    };
    let outcome = first_violation(
        &batch(args.seeds, args),
        &imp,
        Jobs::ONE,
        false,
        |_, _, _| {},
        || false,
    );
    if let Some((c, g, v)) = outcome.failure {
        let ce = shrink(&c, g, v, &imp, ShrinkBudget::default(), |_| {});
        row.killed_by = Some(ce.violation.invariant.name.to_owned());
        row.seeds_needed = outcome.runs;
        row.shrunk_len = Some(ce.steps.len());
    }
    row.millis = started.elapsed().as_millis();
    row
}

pub fn run(args: SelftestArgs) -> Status {
    let human = matches!(args.format, FormatArg::Human);
    let bar = if human {
        ProgressBar::new(Mutant::ALL.len() as u64 + 1)
    } else {
        ProgressBar::hidden()
    };
    // Mutants are independent: the jobs take them one at a time, and the
    // rows come back in the zoo's order.
    let jobs = args.jobs.get();
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Option<MutantRow>>> = Mutex::new(vec![None; Mutant::ALL.len()]);
    std::thread::scope(|scope| {
        for _ in 0..jobs.0.get().min(Mutant::ALL.len()) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(&m) = Mutant::ALL.get(i) else { break };
                let row = try_mutant(m, &args);
                bar.inc(1);
                done.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(row);
            });
        }
    });
    let rows: Vec<MutantRow> = done
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .flatten()
        .collect();
    bar.set_message("reference");
    let started = Instant::now();
    let reference_failure = first_violation(
        &batch(args.reference_seeds, &args),
        &ReferenceImpl,
        jobs,
        false,
        |_, _, _| {},
        || false,
    )
    .failure
    .map(|(c, _, v)| (c.seed, v));
    let reference_ms = started.elapsed().as_millis();
    bar.finish_and_clear();
    // A mutant caught by another invariant than the one meant for it is a
    // finding too: either the mutant or the classification is wrong.
    let all_killed = rows
        .iter()
        .all(|r| r.killed_by.as_deref() == Some(r.target.as_str()));
    if human {
        outln!("{}", selftest_table(&rows));
        let killed = rows.iter().filter(|r| r.killed_by.is_some()).count();
        let intended = rows
            .iter()
            .filter(|r| r.killed_by.as_deref() == Some(r.target.as_str()))
            .count();
        let mut times: Vec<u128> = rows.iter().map(|r| r.millis).collect();
        times.sort();
        outln!(
            "{killed} of {} mutants killed ({intended} by the invariant meant for them); median time to kill {} ms",
            rows.len(),
            times.get(times.len() / 2).copied().unwrap_or(0)
        );
        match &reference_failure {
            None => outln!(
                "reference: clean over {} seeds ({reference_ms} ms)",
                args.reference_seeds
            ),
            Some((seed, v)) => outln!("reference FAILS at seed {seed}: {}", violation_text(v)),
        }
    } else {
        outln!(
            "{}",
            json!({
                "mutants": selftest_json(&rows),
                "reference": {
                    "seeds": args.reference_seeds,
                    "clean": reference_failure.is_none(),
                    "failing_seed": reference_failure.as_ref().map(|(s, _)| s),
                },
            })
        );
    }
    if all_killed && reference_failure.is_none() {
        Status::Ok
    } else {
        Status::Violation
    }
}
