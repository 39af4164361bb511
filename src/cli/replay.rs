//! `tern-sim replay TRACE`: re-runs a saved counterexample exactly.

use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;

use clap::Args;
use serde_json::json;
use tern_harness::contract::plugin::Implementation;
use tern_harness::implementations::mutants::Mutant;
use tern_harness::implementations::reference::ReferenceImpl;
use tern_harness::simulator::driver::play;
use tern_harness::simulator::trace;
use tern_reports::run::{violation_json, violation_text};

use super::sim::{implementation, parse_mutant};
use super::{FormatArg, Status};
use tern_reports::escape::t as tty;

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// A trace saved by `tern-sim run`.
    trace: PathBuf,

    /// Replay against this mutant instead of the implementation the trace names.
    #[arg(long, value_parser = parse_mutant)]
    mutant: Option<Mutant>,

    /// Replay against the reference even if the trace names a mutant.
    #[arg(long, conflicts_with = "mutant")]
    reference: bool,

    /// Replay against an implementation in another process.
    #[arg(long = "impl", value_name = "COMMAND", conflicts_with_all = ["mutant", "reference"])]
    implementation: Option<String>,

    #[arg(long, value_enum, default_value_t = FormatArg::Human)]
    format: FormatArg,
}

pub fn run(args: ReplayArgs) -> Status {
    let file = match File::open(&args.trace) {
        Ok(f) => f,
        Err(e) => {
            errln!("tern-sim replay: cannot read {}: {e}", args.trace.display());
            return Status::Trouble;
        }
    };
    let t = match trace::read(BufReader::new(file)) {
        Ok(t) => t,
        Err(e) => {
            errln!(
                "tern-sim replay: {}: {}",
                args.trace.display(),
                tty(&e.to_string())
            );
            return Status::Trouble;
        }
    };
    let named = t
        .implementation
        .strip_prefix("mutant ")
        .and_then(Mutant::by_name);
    let known = named.is_some() || t.implementation == ReferenceImpl.name();
    if !known && !args.reference && args.mutant.is_none() && args.implementation.is_none() {
        errln!(
            "tern-sim replay: the trace was recorded against `{}`, which this build cannot start by itself; pass --impl COMMAND, --reference or --mutant NAME",
            tty(&t.implementation)
        );
        return Status::Trouble;
    }
    if t.version != env!("CARGO_PKG_VERSION") {
        errln!(
            "tern-sim replay: note: recorded with tern-sim {}, replayed with {}; only the same version reproduces a run exactly",
            tty(&t.version),
            env!("CARGO_PKG_VERSION")
        );
    }
    let mutant = if args.reference {
        None
    } else {
        args.mutant.or(named)
    };
    let imp = match implementation(
        mutant,
        args.implementation.as_deref(),
        tern_harness::implementations::adapter::Limits::default(),
    ) {
        Ok(imp) => imp,
        Err(e) => {
            errln!("tern-sim replay: cannot prepare state directories: {e}");
            return Status::Trouble;
        }
    };
    let played = play(&t.config, &t.steps, imp.as_ref(), true);
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
        for n in &played.notes {
            outln!("  {}", tty(n));
        }
        match &played.violation {
            Some(v) => {
                outln!("{}", violation_text(v));
                if let Some(recorded) = t.invariant.as_deref().filter(|i| *i != v.invariant.name) {
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
                "violation": played.violation.as_ref().map(violation_json),
                "shorthand": played.notes,
            })
        );
    }
    if played.violation.is_some() {
        Status::Violation
    } else {
        Status::Ok
    }
}
