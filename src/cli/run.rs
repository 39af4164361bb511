//! `tern-sim run`: randomized multi-agent runs with faults, checked at every
//! operation; a failure shrinks to a minimal counterexample saved for replay.

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::Args;
use serde_json::json;
use tern_harness::implementations::adapter::{defer_interrupts, interrupted};
use tern_harness::implementations::mutants::Mutant;
use tern_harness::simulator::driver::{
    first_violation_watched, shrink, unshrunk, Batch, ShrinkBudget, ShrinkEnd, DEFAULT_HANG_WAIT,
};
use tern_harness::simulator::runner::Stats;
use tern_harness::simulator::trace;
use tern_reports::run::{counterexample_text, summary, violation_json, violation_text};

use super::progress::Progress;
use super::sim::{implementation, parse_agents, parse_mutant, FaultArgs, JobsArg, TimeoutArgs};
use super::{FormatArg, Status};

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Honest agents, each an implementation under test (1 to 16).
    #[arg(long, default_value = "3", value_parser = parse_agents)]
    agents: usize,

    #[command(flatten)]
    faults: FaultArgs,

    #[command(flatten)]
    jobs: JobsArg,

    /// How many runs (seeds), one after another.
    #[arg(long, default_value_t = 100)]
    seeds: u64,

    /// The first seed; printed when chosen at random.
    #[arg(long)]
    seed: Option<u64>,

    /// Steps per run.
    #[arg(long, default_value_t = 200)]
    steps: usize,

    /// Use every kind of message in every run, instead of a random subset per run.
    #[arg(long)]
    no_swarm: bool,

    /// Run against a mutant of the zoo instead of the reference.
    #[arg(long, value_parser = parse_mutant, conflicts_with = "implementation")]
    mutant: Option<Mutant>,

    /// Run against an implementation in another process, speaking the
    /// protocol of docs/protocol.md: `--impl 'python3 agent.py'`.
    #[arg(long = "impl", value_name = "COMMAND")]
    implementation: Option<String>,

    #[command(flatten)]
    timeouts: TimeoutArgs,

    /// Keep a failing run as it is instead of shrinking it (each shrinking
    /// attempt replays the run, which is slow against an implementation
    /// that fails by timing out).
    #[arg(long)]
    no_shrink: bool,

    /// The most time shrinking may take, in seconds; then the smallest
    /// failing run found so far is the counterexample (the output says so).
    #[arg(long, default_value_t = 120, value_name = "SECS")]
    shrink_time: u64,

    /// Print every run in shorthand as it is played (best with --seeds 1).
    #[arg(long)]
    show_trace: bool,

    /// Where a counterexample trace is saved.
    #[arg(long, default_value = "tern-sim-traces")]
    trace_dir: PathBuf,

    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Human)]
    format: FormatArg,
}

fn fresh_seed() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
        % 1_000_000_000
}

pub fn run(args: RunArgs) -> Status {
    if args.seeds == 0 {
        errln!("tern-sim run: --seeds must be at least 1");
        return Status::Trouble;
    }
    let first = args.seed.unwrap_or_else(fresh_seed);
    let faults = args.faults.set();
    let limits = args.timeouts.limits();
    let imp = match implementation(args.mutant, args.implementation.as_deref(), limits) {
        Ok(imp) => imp,
        Err(e) => {
            errln!("tern-sim run: cannot prepare state directories: {e}");
            return Status::Trouble;
        }
    };
    let human = matches!(args.format, FormatArg::Human);
    if human {
        outln!(
            "tern-sim run: seed {first}{}, {} agents, {} steps per run, faults: {}, implementation: {}",
            if args.seeds > 1 { format!(" (first of {})", args.seeds) } else { String::new() },
            args.agents,
            args.steps,
            faults.names(),
            imp.name()
        );
    }
    let jobs = args.jobs.get();
    let progress = Progress::new(
        human,
        args.seeds,
        "{bar:40} {pos}/{len} runs, {msg}",
        jobs.0.get(),
    );
    let batch = Batch {
        first_seed: first,
        seeds: args.seeds,
        agents: args.agents,
        steps: args.steps,
        faults: faults.clone(),
        names: Default::default(),
        swarm: !args.no_swarm,
        shard: tern_harness::shard::Shard::WHOLE,
        deadline: None,
    };
    let outcome = first_violation_watched(
        &batch,
        imp.as_ref(),
        jobs,
        args.show_trace,
        |config, played, total| {
            if args.show_trace && human {
                progress.suspend(|| {
                    outln!("run {}:", config.seed);
                    for n in &played.notes {
                        outln!("  {}", tern_reports::escape::terminal(n));
                    }
                });
            }
            progress.bar.inc(1);
            progress
                .bar
                .set_message(format!("{} deliveries", total.deliveries));
        },
        |worker, seed| progress.worker(worker, format!("seed {seed}")),
        // A reader that went away wants no more runs.
        super::output::closed,
    );
    progress.finish();
    let (runs, total, found) = (outcome.runs, outcome.stats, outcome.failure);

    let Some((config, generated, violation)) = found else {
        if human {
            outln!("{}", summary(runs, &total, 0));
            outln!(
                "no violation in {runs} run(s). Reproduce one with: tern-sim run --seed {first} --seeds 1 --agents {} --steps {}{}{}{}",
                args.agents,
                args.steps,
                FaultArgs::flags_for(&faults),
                if args.no_swarm { " --no-swarm" } else { "" },
                args.mutant
                    .map(|m| format!(" --mutant {}", m.name()))
                    .or_else(|| args.implementation.as_ref().map(|c| format!(" --impl '{c}'")))
                    .unwrap_or_default()
            );
        } else {
            print_json(first, runs, &total, &args, None, None);
        }
        return Status::Ok;
    };

    if human {
        outln!("seed {}: {}", config.seed, violation_text(&violation));
        outln!("shrinking...");
    }
    let quiet = !human;
    // From here on an interrupt keeps what was found: shrinking stops, the
    // smallest failing run so far is saved, and then the process exits.
    defer_interrupts();
    let stop = || interrupted().is_some();
    let budget = ShrinkBudget {
        time: Some(Duration::from_secs(args.shrink_time)),
        stop: &stop,
        hang_wait: DEFAULT_HANG_WAIT.min(limits.request),
        jobs: args.jobs.get().0.get(),
    };
    let ce = if args.no_shrink {
        unshrunk(&config, generated.steps, violation, imp.as_ref())
    } else {
        shrink(
            &config,
            generated,
            violation,
            imp.as_ref(),
            budget,
            |line| {
                if !quiet {
                    errln!("  {}", tern_reports::escape::terminal(line));
                }
            },
        )
    };
    let path = args
        .trace_dir
        .join(format!("counterexample-{}.jsonl", config.seed));
    let saved = trace::save(&path, &ce, &imp.name());
    let early = ce.shrink_end.describe(&budget);
    if human {
        outln!("{}", summary(runs, &total, 1));
        outln!("{}", violation_text(&ce.violation));
        if let Some(early) = &early {
            outln!("{early}");
        }
        out!("{}", counterexample_text(&ce));
        match &saved {
            Ok(()) => outln!(
                "trace saved: {}\nreplay: tern-sim replay {}",
                path.display(),
                path.display()
            ),
            Err(e) => errln!(
                "tern-sim run: could not save the trace to {}: {e}",
                path.display()
            ),
        }
    } else {
        print_json(
            first,
            runs,
            &total,
            &args,
            Some(&ce),
            saved.as_ref().ok().map(|_| path.display().to_string()),
        );
    }
    super::output::flush();
    if let Some(signal) = interrupted().filter(|_| ce.shrink_end == ShrinkEnd::Interrupted) {
        std::process::exit(128 + signal);
    }
    if saved.is_err() {
        return Status::Trouble;
    }
    Status::Violation
}

fn print_json(
    first: u64,
    runs: u64,
    stats: &Stats,
    args: &RunArgs,
    ce: Option<&tern_harness::simulator::driver::Counterexample>,
    trace: Option<String>,
) {
    let out = json!({
        "seed": first,
        "runs": runs,
        "agents": args.agents,
        "steps_per_run": args.steps,
        "faults": args.faults.set().names(),
        "stats": {
            "steps": stats.steps,
            "messages": stats.messages,
            "deliveries": stats.deliveries,
            "executions": stats.executions,
            "effects": stats.effects,
            "checks": stats.checks,
            "faults": stats.faults,
        },
        "situations": tern_reports::run::situations_json(&stats.situations),
        "violation": ce.map(|c| violation_json(&c.violation)),
        "counterexample": ce.map(|c| json!({
            "seed": c.config.seed,
            "original_steps": c.original_len,
            "shrunk_steps": c.steps.len(),
            "shrink_end": match c.shrink_end {
                ShrinkEnd::Complete => "complete",
                ShrinkEnd::Skipped => "skipped",
                ShrinkEnd::OutOfTime => "out-of-time",
                ShrinkEnd::Interrupted => "interrupted",
            },
            "shorthand": c.notes,
        })),
        "trace": trace,
    });
    outln!("{out}");
}
