//! `tern-sim run`: randomized multi-agent runs with faults, checked at every
//! operation; a failure shrinks to a minimal counterexample saved for replay.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::Args;
use serde_json::{json, Value};
use tern_harness::contract::plugin::{Durability, Implementation};
use tern_harness::events::Event;
use tern_harness::implementations::adapter::{defer_interrupts, interrupted};
use tern_harness::implementations::machine;
use tern_harness::implementations::mutants::Mutant;
use tern_harness::simulator::determinism;
use tern_harness::simulator::driver::{Batch, Counterexample, ShrinkEnd, DEFAULT_HANG_WAIT};
use tern_harness::simulator::faults::FaultSet;
use tern_harness::simulator::happening::notes;
use tern_harness::simulator::hunt::{hunt, Found, Hunt, Hunted};
use tern_harness::simulator::runner::{Sessions, Stats};
use tern_harness::simulator::trace;
use tern_reports::certify::files::{shell_quoted, shell_word};
use tern_reports::determinism::DeterminismReport;
use tern_reports::run::{counterexample_text, summary, violation_json, violation_text};

use tern_reports::shards::run::{Body, Finding, Setting};
use tern_reports::shards::{Command, Part};

use super::progress::Progress;
use super::shard::{header, Options, ShardArgs};
use super::sim::{
    implementation, parse_agents, parse_duration, parse_mutant, parse_steps, power_loss,
    DeterminismArg, FaultArgs, JobsArg, TimeoutArgs,
};
use super::{Exit, FormatArg};
use tern_harness::implementations::locked;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Honest agents, each an implementation under test (1 to 16).
    #[arg(long, default_value = "3", value_parser = parse_agents)]
    agents: usize,

    #[command(flatten)]
    faults: FaultArgs,

    #[command(flatten)]
    jobs: JobsArg,

    /// How many runs (seeds), one after another [default: 100, or no
    /// limit with --duration].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    seeds: Option<u64>,

    /// Soak: play seeds in order until this much time has passed (90s,
    /// 10m, 1h30m), then report the seeds that ran (docs/scale.md).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, conflicts_with = "shard")]
    duration: Option<std::time::Duration>,

    /// The first seed; printed when chosen at random.
    #[arg(long)]
    seed: Option<u64>,

    /// Steps per run.
    #[arg(long, default_value_t = 200, value_parser = parse_steps)]
    steps: usize,

    /// Use every kind of message in every run, instead of a random subset per run.
    #[arg(long)]
    no_swarm: bool,

    /// Run against a mutant of the zoo instead of the reference.
    #[arg(long, value_parser = parse_mutant(), conflicts_with = "implementation")]
    mutant: Option<Mutant>,

    /// Run against an implementation in another process, speaking the
    /// protocol of docs/protocol.md: `--impl 'python3 agent.py'`.
    #[arg(long = "impl", value_name = "COMMAND")]
    implementation: Option<String>,

    #[command(flatten)]
    timeouts: TimeoutArgs,

    #[command(flatten)]
    determinism: DeterminismArg,

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

    #[command(flatten)]
    shards: ShardArgs,
}

fn fresh_seed() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
        % 1_000_000_000
}

impl RunArgs {
    /// Every option that changes the runs' results.
    fn options(&self, first: u64) -> Options {
        let mut o = Options::default();
        o.set("--seed", first)
            .set("--seeds", self.seeds(first))
            .set("--agents", self.agents)
            .set("--steps", self.steps)
            .set("faults", self.faults.set().names())
            .set("--no-swarm", self.no_swarm)
            .set(
                "--mutant",
                self.mutant.map(|m| m.name().to_owned()).unwrap_or_default(),
            )
            .set("--impl", self.implementation.clone().unwrap_or_default())
            .set("--no-shrink", self.no_shrink)
            .set("--shrink-time", self.shrink_time);
        self.timeouts.record(&mut o);
        o
    }
}

impl RunArgs {
    /// The runs asked for: `--seeds`, else as many as a soak allows (up
    /// to the last seed), else 100.
    fn seeds(&self, first: u64) -> u64 {
        match (self.seeds, self.duration) {
            (Some(n), _) => n,
            (None, Some(_)) => u64::MAX - first,
            (None, None) => 100,
        }
    }
}

pub fn run(args: RunArgs) -> Exit {
    let shard = args.shards.share();
    if args.shards.shard().is_some() && args.seed.is_none() {
        errln!("tern-sim run: --shard needs --seed: every shard must split the same seeds");
        return Exit::Trouble;
    }
    if let Err(s) = args.shards.prepare("run") {
        return s;
    }
    let first = args.seed.unwrap_or_else(fresh_seed);
    let mut faults = args.faults.set();
    let limits = args.timeouts.limits();
    let imp = match implementation(args.mutant, args.implementation.as_deref(), limits) {
        Ok(imp) => imp,
        Err(e) => {
            errln!("tern-sim run: cannot prepare state directories: {e}");
            return Exit::Trouble;
        }
    };
    let durability = power_loss(imp.as_ref(), &mut faults);
    let seeds = args.seeds(first);
    let setting = setting_of(&args, first, seeds, &faults, imp.as_ref(), durability);
    let human = matches!(args.format, FormatArg::Human);
    if human {
        print_header(&setting);
    }
    let batch = Batch {
        first_seed: first,
        seeds,
        agents: args.agents,
        steps: args.steps,
        faults: faults.clone(),
        names: Default::default(),
        swarm: !args.no_swarm,
        shard,
        deadline: args.duration.map(|d| std::time::Instant::now() + d),
    };
    let plan = Hunt {
        batch,
        jobs: args.jobs.get(),
        record: args.show_trace,
        shrink: !args.no_shrink,
        shrink_time: Some(Duration::from_secs(args.shrink_time)),
        hang_wait: DEFAULT_HANG_WAIT.min(limits.request),
    };
    let (hunted, counts) = hunt_shown(&args, &plan, imp.as_ref(), human);
    let batch = plan.batch;
    let (runs, total, complete) = (hunted.runs, hunted.stats, hunted.complete);
    if let Some(status) = super::machine_trouble("run") {
        return status;
    }
    let finding = hunted.found.map(|found| {
        let ce = &found.counterexample;
        (
            finding(&args, imp.as_ref(), &found, plan.shrink_time),
            ce.shrink_end == ShrinkEnd::Interrupted,
        )
    });
    let interrupted_shrink = finding.as_ref().is_some_and(|(_, i)| *i);
    let finding = finding.map(|(f, _)| f);
    if let Some(status) = super::machine_trouble("run") {
        return status;
    }
    let determinism = args
        .determinism
        .sample()
        .filter(|_| complete && interrupted().is_none())
        .map(|sample| {
            if human {
                noteln!("playing seeds twice to check determinism...");
            }
            let failing = finding.as_ref().map(|f| f.seed);
            let seeds = determinism::seeds_to_check(&batch, runs, failing, sample);
            let stop = || interrupted().is_some() || super::output::closed();
            DeterminismReport::of(&determinism::check(&batch, &seeds, imp.as_ref(), stop))
        });
    if let Some(status) = super::machine_trouble("run") {
        return status;
    }
    if let Some(shard) = args.shards.shard() {
        let part = Part {
            part: header(
                Command::Run,
                shard,
                args.options(first),
                complete && !interrupted_shrink,
            ),
            body: Body {
                setting,
                runs: counts,
                finding,
                determinism,
            },
        };
        let status = args.shards.write(&part, human);
        if let Some(signal) = interrupted().filter(|_| interrupted_shrink) {
            return Exit::Interrupted(signal);
        }
        return status;
    }
    let status = print_outcome(
        &setting,
        runs,
        &total,
        finding.as_ref(),
        determinism.as_ref(),
        human,
    );
    super::output::flush();
    if let Some(signal) = interrupted().filter(|_| interrupted_shrink) {
        return Exit::Interrupted(signal);
    }
    status
}

/// What the batch is, as its output and a shard's part state it.
fn setting_of(
    args: &RunArgs,
    first: u64,
    seeds: u64,
    faults: &FaultSet,
    imp: &dyn Implementation,
    durability: Option<Durability>,
) -> Setting {
    Setting {
        first_seed: first,
        seeds,
        duration: args
            .duration
            .map(|d| humantime::format_duration(d).to_string()),
        agents: args.agents,
        steps: args.steps,
        faults: faults.names(),
        fault_flags: FaultArgs::flags_for(faults),
        swarm: !args.no_swarm,
        implementation: imp.name(),
        flag: args
            .mutant
            .map(|m| format!(" --mutant {}", m.name()))
            .or_else(|| {
                args.implementation
                    .as_ref()
                    .map(|c| format!(" --impl {}{}", shell_quoted(c), args.timeouts.flag()))
            })
            .unwrap_or_default(),
        durability: durability.map(|d| d.label()),
    }
}

/// Hunts the batch's first failure, with a progress bar (and each run's
/// notes, with `--show-trace`), what it found and how its shrinking goes;
/// and each run's counts when the work is a shard's.
fn hunt_shown(
    args: &RunArgs,
    plan: &Hunt,
    imp: &dyn Implementation,
    human: bool,
) -> (Hunted, Vec<Stats>) {
    let jobs = args.jobs.get();
    let progress = Progress::new(
        human,
        if args.duration.is_some() {
            0
        } else {
            plan.batch.share()
        },
        if args.duration.is_some() {
            "{spinner} {pos} runs in {elapsed}, {msg}"
        } else {
            "{bar:40} {pos}/{len} runs, {msg}"
        },
        jobs.0.get(),
    );
    let counts = Mutex::new(Vec::new());
    let hunted = hunt(
        plan,
        imp,
        &|event| match event {
            Event::Run { config, played, .. } => {
                if args.shards.shard().is_some() {
                    locked(&counts).push(played.stats.clone());
                }
                if args.show_trace && human {
                    progress.suspend(|| {
                        outln!("run {}:", config.seed);
                        for n in &notes(&played.happenings) {
                            outln!("  {}", tern_reports::escape::terminal(n));
                        }
                    });
                }
                progress.hear(event);
            }
            Event::Found { config, violation } => {
                progress.finish();
                // From here on an interrupt keeps what was found: shrinking
                // stops, the smallest failing run so far is saved, and then
                // the process exits.
                defer_interrupts();
                if human {
                    print_found(config.seed, &violation_text(violation));
                }
            }
            Event::Shrinking(line) => {
                if human {
                    noteln!("  {}", tern_reports::escape::terminal(line));
                }
            }
            event => progress.hear(event),
        },
        // A reader that went away wants no more runs.
        &|| super::output::closed() || super::output::reader_gone(),
        // A machine that fails ends the command, which says so.
        &|| interrupted().is_some() || machine::fault().is_some(),
    );
    progress.finish();
    (
        hunted,
        counts.into_inner().unwrap_or_else(|e| e.into_inner()),
    )
}

/// What was found, with its counterexample saved as a trace.
fn finding(
    args: &RunArgs,
    imp: &dyn Implementation,
    found: &Found,
    shrink_time: Option<Duration>,
) -> Finding {
    let ce = &found.counterexample;
    let seed = ce.config.seed;
    let path = args.trace_dir.join(format!("counterexample-{seed}.jsonl"));
    let saved = trace::save(&path, ce, &imp.name());
    Finding {
        seed,
        found: violation_text(&found.first),
        violation: violation_text(&ce.violation),
        early: ce.shrink_end.describe(shrink_time),
        counterexample: counterexample_text(ce),
        trace: saved.as_ref().ok().map(|()| path.display().to_string()),
        trace_error: saved
            .as_ref()
            .err()
            .map(|e| format!("could not save the trace to {}: {e}", path.display())),
        json_violation: violation_json(&ce.violation),
        json_counterexample: counterexample_json(ce),
    }
}

/// The first line of `run`'s human output.
pub fn print_header(s: &Setting) {
    outln!(
        "tern-sim run: seed {}{}, {} agents, {} steps per run, faults: {}, implementation: {}",
        s.first_seed,
        match &s.duration {
            Some(d) => format!(" (the first of a soak of {d})"),
            None if s.seeds > 1 => format!(" (first of {})", s.seeds),
            None => String::new(),
        },
        s.agents,
        s.steps,
        s.faults,
        s.implementation
    );
    if let Some(d) = &s.durability {
        outln!("durability: {d}");
    }
}

/// What `run` says of a violation as it is found, before shrinking.
pub fn print_found(seed: u64, found: &str) {
    outln!("seed {seed}: {found}");
    outln!("shrinking...");
}

/// The end of `run`'s output, and its status: what one machine prints
/// after its runs, and what `merge` prints of merged parts.
pub fn print_outcome(
    setting: &Setting,
    runs: u64,
    total: &Stats,
    finding: Option<&Finding>,
    determinism: Option<&DeterminismReport>,
    human: bool,
) -> Exit {
    let status = print_verdict(setting, runs, total, finding, determinism, human);
    if let Some(d) = determinism.filter(|_| human) {
        for line in d.lines() {
            outln!("{}", tern_reports::escape::terminal(&line));
        }
    }
    // Two answers to one request fail the run whatever else it found:
    // nothing it found can be trusted to replay.
    match determinism {
        Some(d) if d.diverged() && status == Exit::Ok => Exit::Violation,
        _ => status,
    }
}

fn print_verdict(
    setting: &Setting,
    runs: u64,
    total: &Stats,
    finding: Option<&Finding>,
    determinism: Option<&DeterminismReport>,
    human: bool,
) -> Exit {
    if !human {
        print_json(setting, runs, total, finding, determinism);
        return match finding {
            None => Exit::Ok,
            Some(f) if f.trace_error.is_some() => Exit::Trouble,
            Some(_) => Exit::Violation,
        };
    }
    if let Some(d) = &setting.duration {
        let range = tern_reports::run::seed_range(setting.first_seed, runs);
        outln!(
            "soak of {d}: {runs} run(s), {range}; again with --seed {} --seeds {runs}",
            setting.first_seed
        );
    }
    let Some(f) = finding else {
        outln!("{}", summary(runs, total, 0));
        outln!(
            "no violation in {runs} run(s). Reproduce one with: tern-sim run --seed {} --seeds 1 --agents {} --steps {}{}{}{}",
            setting.first_seed,
            setting.agents,
            setting.steps,
            setting.fault_flags,
            if setting.swarm { "" } else { " --no-swarm" },
            setting.flag
        );
        return Exit::Ok;
    };
    outln!("{}", summary(runs, total, 1));
    outln!("{}", f.violation);
    if let Some(early) = &f.early {
        outln!("{early}");
    }
    out!("{}", f.counterexample);
    match (&f.trace, &f.trace_error) {
        (Some(path), _) => {
            // The whole command: a trace of an implementation over the
            // protocol replays only against that implementation.
            outln!(
                "trace saved: {path}\nreplay: tern-sim replay {}{}",
                shell_word(path),
                setting.flag
            );
            Exit::Violation
        }
        (None, e) => {
            errln!(
                "tern-sim run: {}",
                e.as_deref().unwrap_or("the trace was not saved")
            );
            Exit::Trouble
        }
    }
}

fn print_json(
    setting: &Setting,
    runs: u64,
    stats: &Stats,
    finding: Option<&Finding>,
    determinism: Option<&DeterminismReport>,
) {
    let mut out = json!({
        "seed": setting.first_seed,
        "runs": runs,
        "agents": setting.agents,
        "steps_per_run": setting.steps,
        "faults": setting.faults,
        "stats": {
            "steps": stats.steps,
            "messages": stats.messages,
            "deliveries": stats.deliveries,
            "executions": stats.executions,
            "effects": stats.effects,
            "checks": stats.checks,
            "faults": stats.faults,
        },
        "situations": tern_reports::run::situations_json(stats),
        "violation": finding.map(|f| &f.json_violation),
        "counterexample": finding.map(|f| &f.json_counterexample),
        "trace": finding.and_then(|f| f.trace.as_ref()),
    });
    // Over the protocol, what a crash took.
    if let (Some(d), Some(map)) = (&setting.durability, out.as_object_mut()) {
        map.insert("durability".to_owned(), json!(d));
    }
    // Only when asked (`--check-determinism`), so that other runs print
    // the same document as before.
    if let (Some(d), Some(map)) = (determinism, out.as_object_mut()) {
        map.insert("determinism".to_owned(), json!(d));
    }
    // A soak says so; `seed` and `runs` are then the seeds that ran.
    if let (Some(d), Some(map)) = (&setting.duration, out.as_object_mut()) {
        map.insert("duration".to_owned(), json!(d));
    }
    outln!("{out}");
}

fn counterexample_json(c: &Counterexample) -> Value {
    let mut out = json!({
        "seed": c.config.seed,
        "original_steps": c.original_len,
        "shrunk_steps": c.steps.len(),
        "shrink_end": match c.shrink_end {
            ShrinkEnd::Complete => "complete",
            ShrinkEnd::Skipped => "skipped",
            ShrinkEnd::OutOfTime => "out-of-time",
            ShrinkEnd::Interrupted => "interrupted",
        },
        "shorthand": notes(&c.happenings),
    });
    // Only a run whose processes outlived a session says how it replays.
    if c.config.sessions != Sessions::Once {
        out["sessions"] = json!(c.config.sessions.as_str());
    }
    out
}
