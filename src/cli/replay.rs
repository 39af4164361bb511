//! `tern-sim replay TRACE`: re-runs a saved counterexample exactly.

use std::io::{BufReader, Read};
use std::path::PathBuf;

use clap::Args;
use serde_json::json;
use tern_harness::contract::plugin::{Capability, Durability, Implementation};
use tern_harness::corpus::play::identify_as;
use tern_harness::explore::search::Prepared;
use tern_harness::explore::trace as explore_trace;
use tern_harness::implementations::mutants::Mutant;
use tern_harness::implementations::reference::ReferenceImpl;
use tern_harness::simulator::driver::play;
use tern_harness::simulator::faults::Fault;
use tern_harness::simulator::happening::notes;
use tern_harness::simulator::runner::Sessions;
use tern_harness::simulator::trace;
use tern_reports::run::{violation_json, violation_text};

use super::sim::{implementation, parse_mutant, power_loss, TimeoutArgs};
use super::{Exit, FormatArg};
use tern_reports::escape::t as tty;

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// A trace saved by `tern-sim run` or `tern-sim explore`.
    trace: PathBuf,

    /// Replay against this mutant instead of the implementation the trace names.
    #[arg(long, value_parser = parse_mutant())]
    mutant: Option<Mutant>,

    /// Replay against the reference even if the trace names a mutant.
    #[arg(long, conflicts_with = "mutant")]
    reference: bool,

    /// Replay against an implementation in another process.
    #[arg(long = "impl", value_name = "COMMAND", conflicts_with_all = ["mutant", "reference"])]
    implementation: Option<String>,

    #[command(flatten)]
    timeouts: TimeoutArgs,

    /// Output format: `human`, or `json` for one document on standard output.
    #[arg(long, value_enum, default_value_t = FormatArg::Human)]
    format: FormatArg,
}

/// The implementation to replay against: the one asked for, else the one
/// the trace names if this build can start it by itself.
fn chosen(
    args: &ReplayArgs,
    recorded: &str,
    version: &str,
) -> Result<Box<dyn Implementation>, Exit> {
    let named = recorded.strip_prefix("mutant ").and_then(Mutant::by_name);
    let known = named.is_some() || recorded == ReferenceImpl.name();
    if !known && !args.reference && args.mutant.is_none() && args.implementation.is_none() {
        errln!(
            "tern-sim replay: the trace was recorded against `{}`, which this build cannot start by itself; pass --impl COMMAND, --reference or --mutant NAME",
            tty(recorded)
        );
        return Err(Exit::Trouble);
    }
    if version != env!("CARGO_PKG_VERSION") {
        let recorded = if version.is_empty() {
            "an unknown tern-sim version (the trace names none)".to_owned()
        } else {
            format!("tern-sim {}", tty(version))
        };
        errln!(
            "tern-sim replay: note: recorded with {recorded}, replayed with {}; only the same version reproduces a run exactly",
            env!("CARGO_PKG_VERSION")
        );
    }
    let mutant = if args.reference {
        None
    } else {
        args.mutant.or(named)
    };
    implementation(
        mutant,
        args.implementation.as_deref(),
        args.timeouts.limits(),
    )
    .map_err(|e| {
        errln!("tern-sim replay: cannot prepare state directories: {e}");
        Exit::Trouble
    })
}

/// The largest trace replay reads: a run of the longest length tern-sim
/// plays, with its notes, is a few tens of MB.
const MAX_TRACE_BYTES: u64 = 256 << 20;

pub fn run(args: ReplayArgs) -> Exit {
    let read = std::fs::File::open(&args.trace).and_then(|f| {
        let mut bytes = Vec::new();
        f.take(MAX_TRACE_BYTES + 1).read_to_end(&mut bytes)?;
        Ok(bytes)
    });
    let bytes = match read {
        Ok(b) if b.len() as u64 > MAX_TRACE_BYTES => {
            errln!(
                "tern-sim replay: {}: larger than {} MiB, more than any trace of a run tern-sim plays",
                args.trace.display(),
                MAX_TRACE_BYTES >> 20
            );
            return Exit::Trouble;
        }
        Ok(b) => b,
        Err(e) => {
            errln!("tern-sim replay: cannot read {}: {e}", args.trace.display());
            return Exit::Trouble;
        }
    };
    // An exploration's trace is one JSON document; a run's is JSON lines.
    if let Ok(doc) = serde_json::from_slice::<serde_json::Value>(&bytes) {
        if explore_trace::is_trace(&doc) {
            return replay_exploration(&args, &doc);
        }
    }
    let t = match trace::read(BufReader::new(bytes.as_slice())) {
        Ok(t) => t,
        Err(e) => {
            errln!(
                "tern-sim replay: {}: {}",
                args.trace.display(),
                tty(&e.to_string())
            );
            return Exit::Trouble;
        }
    };
    let imp = match chosen(&args, &t.implementation, &t.version) {
        Ok(imp) => imp,
        Err(status) => return status,
    };
    // Crashes recorded as power losses are played as power losses; where
    // FUSE is unavailable they can only be kills, which may not fail the
    // same way, and the output says so.
    let mut config = t.config.clone();
    let recorded_power = config.faults.has(Fault::PowerLoss);
    let durability = power_loss(imp.as_ref(), &mut config.faults);
    if recorded_power && !config.faults.has(Fault::PowerLoss) {
        errln!(
            "tern-sim replay: note: this run was recorded with power-loss crashes; here {}, so it may not fail the same way",
            durability.map_or_else(|| "crashes are simulated in process".to_owned(), |d| d.label())
        );
    }
    let played = play(&config, &t.steps, imp.as_ref(), true);
    if let Some(status) = super::machine_trouble("replay") {
        return status;
    }
    let human = matches!(args.format, FormatArg::Human);
    if human {
        outln!(
            "replaying {} ({} steps, seed {}, {} agents, faults: {}) against {}",
            args.trace.display(),
            t.steps.len(),
            t.config.seed,
            t.config.agents,
            t.config.faults.names(),
            imp.name()
        );
        match t.config.sessions {
            Sessions::Once => {}
            Sessions::AfterItself => outln!(
                "played twice on the same processes, as it was recorded: the first play warms up the processes the implementation keeps (`reinit`), the second is judged"
            ),
            Sessions::AfterEarlierRuns => outln!(
                "note: the failure recorded here needed what an earlier run left in a process the implementation kept (`reinit`); played alone, this run does not reproduce it"
            ),
        }
        for n in &notes(&played.happenings) {
            outln!("  {}", tty(n));
        }
        match &played.violation {
            Some(v) => {
                outln!("{}", violation_text(v));
                if let Some(recorded) = t
                    .invariant
                    .as_deref()
                    .filter(|i| *i != v.failure.invariant.name)
                {
                    outln!(
                        "note: the trace recorded a violation of {} instead",
                        tty(recorded)
                    );
                }
            }
            None => outln!("no violation: the run passes"),
        }
    } else {
        outln!(
            "{}",
            json!({
                "trace": args.trace.display().to_string(),
                "implementation": imp.name(),
                "recorded_invariant": t.invariant,
                "sessions": t.config.sessions.as_str(),
                "violation": played.violation.as_ref().map(violation_json),
                "shorthand": notes(&played.happenings),
            })
        );
    }
    if played.violation.is_some() {
        Exit::Violation
    } else {
        Exit::Ok
    }
}

/// Replays an exploration's counterexample: the saved scope, the schedule
/// move by move, every move judged.
fn replay_exploration(args: &ReplayArgs, doc: &serde_json::Value) -> Exit {
    let saved = match explore_trace::read(&args.trace, doc) {
        Ok(s) => s,
        Err(e) => {
            errln!("tern-sim replay: {}", tty(&e.to_string()));
            return Exit::Trouble;
        }
    };
    let version = doc["tern_sim"].as_str().unwrap_or("");
    let imp = match chosen(args, &saved.implementation, version) {
        Ok(imp) => imp,
        Err(status) => return status,
    };
    let claims = identify_as(imp.as_ref(), &saved.scope.setup.init())
        .is_ok_and(|i| i.claims(Capability::Execute));
    let prepared = Prepared::new(&saved.scope, claims);
    // Explored with power-loss crashes: played so, or said not to be.
    if saved.power_loss && !imp.set_power_loss(true) {
        errln!(
            "tern-sim replay: note: this schedule was explored with power-loss crashes; here {}, so it may not fail the same way",
            match imp.durability() {
                Durability::Simulated => "crashes are simulated in process".to_owned(),
                d => d.label(),
            }
        );
    }
    let result = prepared.replay(imp.as_ref(), Default::default(), &saved.schedule);
    if let Some(status) = super::machine_trouble("replay") {
        return status;
    }
    let lines = prepared.describe_schedule(&saved.schedule);
    let failed = result.as_ref().err().map(|b| (&b.0, &b.1));
    if matches!(args.format, FormatArg::Human) {
        outln!(
            "replaying {} (scope {}, {} moves) against {}",
            args.trace.display(),
            tty(&saved.scope.id),
            saved.schedule.len(),
            imp.name()
        );
        for (i, line) in lines.iter().enumerate() {
            outln!("  {:>2}. {}", i + 1, tty(line));
        }
        match failed {
            Some((at, m)) => {
                outln!(
                    "violation of {} at {}: expected {}, actual {}",
                    m.invariant.name,
                    at.map_or("the start".to_owned(), |i| format!("move {}", i + 1)),
                    tty(&m.expected),
                    tty(&m.actual)
                );
                if saved.invariant != m.invariant.name {
                    outln!(
                        "note: the trace recorded a violation of {} instead",
                        tty(&saved.invariant)
                    );
                }
            }
            None => outln!("no violation: the schedule passes"),
        }
    } else {
        outln!(
            "{}",
            json!({
                "trace": args.trace.display().to_string(),
                "implementation": imp.name(),
                "scope": saved.scope.id,
                "recorded_invariant": saved.invariant,
                "violation": failed.map(|(at, m)| json!({
                    "invariant": m.invariant.name,
                    "clauses": m.invariant.clauses,
                    "move": at.map(|i| i + 1),
                    "expected": m.expected,
                    "actual": m.actual,
                })),
                "shorthand": lines,
            })
        );
    }
    if failed.is_some() {
        Exit::Violation
    } else {
        Exit::Ok
    }
}
