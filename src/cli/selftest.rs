//! `tern-sim selftest`: proves the harness's power. Every mutant of the zoo
//! must be killed, and the reference must pass a large seed budget.

use std::time::Instant;

use clap::Args;
use indicatif::ProgressBar;
use serde_json::json;
use tern_harness::mutants::{Mutant, MutantImpl};
use tern_harness::reference::ReferenceImpl;
use tern_harness::sim::driver::{generate, mix_for, play, shrink};
use tern_harness::sim::faults::FaultSet;
use tern_harness::sim::runner::RunConfig;
use tern_reports::run::{selftest_json, selftest_table, violation_text, MutantRow};

use super::sim::parse_agents;
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
}

fn config(seed: u64, args: &SelftestArgs) -> RunConfig {
    let faults = FaultSet::all();
    RunConfig {
        seed,
        agents: args.agents,
        steps: args.steps,
        mix: mix_for(seed, &faults, true),
        names: Default::default(),
        faults,
    }
}

pub fn run(args: SelftestArgs) -> Status {
    let human = matches!(args.format, FormatArg::Human);
    let bar = if human {
        ProgressBar::new(Mutant::ALL.len() as u64 + 1)
    } else {
        ProgressBar::hidden()
    };
    let mut rows = Vec::new();
    for &m in Mutant::ALL {
        bar.set_message(m.name());
        let imp = MutantImpl(m);
        let started = Instant::now();
        let mut row = MutantRow {
            name: m.name().to_owned(),
            target: m.target().to_owned(),
            killed_by: None,
            seeds_needed: args.seeds,
            shrunk_len: None,
            millis: 0,
        };
        for (i, seed) in (0..args.seeds).enumerate() {
            let c = config(seed, &args);
            let g = generate(&c);
            if let Some(v) = play(&c, &g.steps, &imp, false).violation {
                let ce = shrink(&c, g, v, &imp, |_| {});
                row.killed_by = Some(ce.violation.invariant.name.to_owned());
                row.seeds_needed = i as u64 + 1;
                row.shrunk_len = Some(ce.steps.len());
                break;
            }
        }
        row.millis = started.elapsed().as_millis();
        rows.push(row);
        bar.inc(1);
    }
    bar.set_message("reference");
    let started = Instant::now();
    let mut reference_failure = None;
    for seed in 0..args.reference_seeds {
        let c = config(seed, &args);
        if let Some(v) = play(&c, &generate(&c).steps, &ReferenceImpl, false).violation {
            reference_failure = Some((seed, v));
            break;
        }
    }
    let reference_ms = started.elapsed().as_millis();
    bar.finish_and_clear();
    // A mutant caught by another invariant than the one meant for it is a
    // finding too: either the mutant or the classification is wrong.
    let all_killed = rows
        .iter()
        .all(|r| r.killed_by.as_deref() == Some(r.target.as_str()));
    if human {
        println!("{}", selftest_table(&rows));
        let killed = rows.iter().filter(|r| r.killed_by.is_some()).count();
        let intended = rows
            .iter()
            .filter(|r| r.killed_by.as_deref() == Some(r.target.as_str()))
            .count();
        let mut times: Vec<u128> = rows.iter().map(|r| r.millis).collect();
        times.sort();
        println!(
            "{killed} of {} mutants killed ({intended} by the invariant meant for them); median time to kill {} ms",
            rows.len(),
            times.get(times.len() / 2).copied().unwrap_or(0)
        );
        match &reference_failure {
            None => println!(
                "reference: clean over {} seeds ({reference_ms} ms)",
                args.reference_seeds
            ),
            Some((seed, v)) => println!("reference FAILS at seed {seed}: {}", violation_text(v)),
        }
    } else {
        println!(
            "{}",
            json!({
                "mutants": selftest_json(&rows),
                "reference": {
                    "seeds": args.reference_seeds,
                    "clean": reference_failure.is_none(),
                    "failing_seed": reference_failure.as_ref().map(|(s, _)| s),
                    "millis": reference_ms,
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
