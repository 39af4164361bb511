//! `tern-sim selftest`: proves the harness's power. Every mutant of the zoo
//! must be killed, and the reference must pass a large seed budget.
//!
//! The simulation tries each mutant first; a mutant it does not kill within
//! its budget is played against the corpus, so that a defect the workload
//! does not reach yet still counts only if some case catches it. With
//! `--simulation-only` there is no corpus and a small budget: the measure
//! of how far the workload itself reaches.

use clap::Args;
use serde_json::json;
use std::path::PathBuf;

use tern_harness::events::{Event, Work};
use tern_harness::implementations::mutants::Mutant;
use tern_harness::simulator::driver::Batch;
use tern_harness::zoo::{self, Fate, Killed};
use tern_reports::run::{
    selftest_json, selftest_table, violation_text, KillSpread, KilledIn, MutantRow,
};

use tern_reports::shards::selftest::{Body, Reference, ReferenceFailure, Setting};
use tern_reports::shards::{Command, Part};

use super::progress::Progress;
use super::shard::{header, Options, ShardArgs};
use super::sim::{parse_agents, parse_steps, JobsArg};
use super::{Exit, FormatArg};

#[derive(Debug, Args)]
pub struct SelftestArgs {
    /// Kill every mutant with the simulation alone, no corpus, within a
    /// small budget (20 runs of 3 agents unless --seeds and --agents say
    /// otherwise), and report the spread of runs to kill.
    #[arg(long)]
    simulation_only: bool,

    /// Seeds tried per mutant before it counts as surviving the simulation
    /// [default: 300, or 20 with --simulation-only].
    #[arg(long)]
    seeds: Option<u64>,

    /// Seeds the reference must pass.
    #[arg(long, default_value_t = 1000)]
    reference_seeds: u64,

    /// Agents per run [default: 3, with or without --simulation-only].
    #[arg(long, value_parser = parse_agents)]
    agents: Option<usize>,

    /// Steps per simulation run, for the mutants and the reference alike.
    #[arg(long, default_value_t = 200, value_parser = parse_steps)]
    steps: usize,

    /// Output format: `human`, or `json` for one document on standard output.
    #[arg(long, value_enum, default_value_t = FormatArg::Human)]
    format: FormatArg,

    /// The corpus folder for mutants the simulation does not kill
    /// (as for certify; unused with --simulation-only).
    #[arg(long, value_name = "DIR")]
    scenarios: Option<PathBuf>,

    #[command(flatten)]
    jobs: JobsArg,

    #[command(flatten)]
    shards: ShardArgs,
}

impl SelftestArgs {
    /// The simulation budget per mutant.
    fn seeds(&self) -> u64 {
        self.seeds
            .unwrap_or(if self.simulation_only { 20 } else { 300 })
    }

    fn agents(&self) -> usize {
        self.agents.unwrap_or(3)
    }
}

impl SelftestArgs {
    fn setting(&self) -> Setting {
        Setting {
            simulation_only: self.simulation_only,
            seeds: self.seeds(),
            reference_seeds: self.reference_seeds,
            agents: self.agents(),
            steps: self.steps,
        }
    }

    /// Every option that changes the results.
    fn options(&self) -> Options {
        let s = self.setting();
        let mut o = Options::default();
        o.set("--simulation-only", s.simulation_only)
            .set("--seeds", s.seeds)
            .set("--reference-seeds", s.reference_seeds)
            .set("--agents", s.agents)
            .set("--steps", s.steps);
        o
    }
}

/// `seeds` runs from seed 0, with every fault.
fn batch(seeds: u64, args: &SelftestArgs) -> Batch {
    Batch::with_every_fault(0, seeds, args.agents(), args.steps)
}

/// A mutant's fate as the table and a shard's part keep it.
fn row(fate: &Fate) -> MutantRow {
    let m = fate.mutant;
    MutantRow {
        name: m.name().to_owned(),
        target: m.target().name.to_owned(),
        needs: m.needs().to_owned(),
        situation: m.situation().name(),
        killed_by: fate.killed.as_ref().map(|k| k.name().to_owned()),
        killed_in: fate.killed.as_ref().map(|k| match k {
            Killed::Simulation { runs, .. } => KilledIn::Simulation { runs: *runs },
            Killed::Corpus { case, .. } => KilledIn::Corpus { case: case.clone() },
        }),
        seeds_needed: fate.runs,
        shrunk_len: fate.shrunk_len,
        kill_millis: fate.kill_time.as_millis(),
        shrink_millis: fate.shrink_time.as_millis(),
    }
}

pub fn run(args: SelftestArgs) -> Exit {
    let human = matches!(args.format, FormatArg::Human);
    let shard = args.shards.share();
    if let Err(s) = args.shards.prepare("selftest") {
        return s;
    }
    // A sharded selftest names its corpus in its part, so that merge can
    // check every shard read the same one.
    let corpus = if args.simulation_only || args.shards.shard().is_none() {
        None
    } else {
        match super::corpus::load_corpus(args.scenarios.as_deref(), "selftest") {
            Ok(c) => Some(c),
            Err(status) => return status,
        }
    };
    let mutants: Vec<Mutant> = Mutant::ALL
        .iter()
        .copied()
        .filter(|m| shard.takes_name(m.name()))
        .collect();
    let jobs = args.jobs.get();
    let progress = Progress::new(
        human,
        mutants.len() as u64 + 1,
        "{bar:40} {pos}/{len} {msg}",
        jobs.0.get(),
    );
    let mut fates = zoo::simulate(&mutants, &batch(args.seeds(), &args), jobs, &|event| {
        progress.hear(event)
    });
    if !args.simulation_only && fates.iter().any(|f| f.killed.is_none()) {
        let loaded;
        let corpus = match &corpus {
            Some(c) => c,
            None => match super::corpus::load_corpus(args.scenarios.as_deref(), "selftest") {
                Ok(c) => {
                    loaded = c;
                    &loaded
                }
                Err(status) => {
                    progress.finish();
                    return status;
                }
            },
        };
        zoo::against_corpus(&mut fates, corpus);
    }
    let rows: Vec<MutantRow> = fates.iter().map(row).collect();
    progress.bar.set_message("reference");
    let reference = Batch {
        shard,
        ..batch(args.reference_seeds, &args)
    };
    let reference = zoo::reference(&reference, jobs, &|event| {
        if let Event::Started {
            worker,
            work: Work::Seed(seed),
        } = event
        {
            progress.worker(worker, format!("reference, seed {seed}"));
        }
    });
    let reference = Reference {
        failure: reference.failure.map(|(seed, v)| ReferenceFailure {
            seed,
            violation: violation_text(&v),
        }),
        millis: reference.took.as_millis(),
    };
    progress.finish();
    let body = Body {
        setting: args.setting(),
        rows,
        reference,
    };
    if let Some(shard) = args.shards.shard() {
        let mut header = header(Command::Selftest, shard, args.options(), true);
        header.corpus_hash = corpus.map(|c| c.hash);
        header.work.insert(
            "mutants".to_owned(),
            Mutant::ALL.iter().map(|m| m.name().to_owned()).collect(),
        );
        return args.shards.write(&Part { part: header, body }, human);
    }
    print_outcome(&body, human)
}

/// `selftest`'s output and status, from one machine or merged parts.
pub fn print_outcome(body: &Body, human: bool) -> Exit {
    let (setting, rows) = (&body.setting, &body.rows);
    let reference_failure = &body.reference.failure;
    // A mutant caught by another invariant than the one meant for it is a
    // finding too: either the mutant or the classification is wrong.
    let all_killed = rows.iter().all(MutantRow::as_intended);
    let spread = KillSpread::of(rows);
    if human {
        outln!("{}", selftest_table(rows));
        let killed = rows.iter().filter(|r| r.killed_by.is_some()).count();
        let intended = rows.iter().filter(|r| r.as_intended()).count();
        let by_corpus = rows
            .iter()
            .filter(|r| matches!(r.killed_in, Some(KilledIn::Corpus { .. })))
            .count();
        let corpus_note = if setting.simulation_only {
            "no corpus".to_owned()
        } else {
            format!("{by_corpus} by the corpus")
        };
        outln!(
            "{killed} of {} mutants killed ({intended} by the invariant meant for them; {corpus_note}) within {} runs of {} agents",
            rows.len(),
            setting.seeds,
            setting.agents,
        );
        outln!("{}", spread.text(rows));
        match reference_failure {
            None => outln!(
                "reference: clean over {} seeds ({} ms)",
                setting.reference_seeds,
                body.reference.millis
            ),
            Some(f) => outln!("reference FAILS at seed {}: {}", f.seed, f.violation),
        }
    } else {
        outln!(
            "{}",
            json!({
                "simulation_only": setting.simulation_only,
                "budget": {"seeds": setting.seeds, "agents": setting.agents, "steps": setting.steps},
                "mutants": selftest_json(rows),
                "summary": spread.json(),
                "reference": {
                    "seeds": setting.reference_seeds,
                    "clean": reference_failure.is_none(),
                    "failing_seed": reference_failure.as_ref().map(|f| f.seed),
                },
            })
        );
    }
    if all_killed && reference_failure.is_none() {
        Exit::Ok
    } else {
        Exit::Violation
    }
}
