//! The command line. Exit statuses are part of the interface:
//!
//! | status | meaning |
//! |---|---|
//! | 0 | no violation: every message valid (`check`), every run clean (`run`, `replay`), every mutant killed (`selftest`), certified at the level asked (`certify`), every clause covered (`coverage`), no regression (`diff`) |
//! | 1 | a violation: an invalid message, a broken invariant, a surviving mutant, not certified, a clause without a case, a regression |
//! | 128+n | `certify` stopped by signal n (130 for Ctrl-C), after writing reports marked as interrupted |
//! | 2 | usage error, or an input or output could not be read or written |

#[macro_use]
mod output;

mod agent;
mod certify;
mod check;
mod coverage;
mod diff;
mod replay;
mod run;
mod selftest;
mod sim;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Conformance harness and simulator for Tern 0.1.
#[derive(Debug, Parser)]
#[command(name = "tern-sim", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Simulate multi-agent Tern conversations with faults against an
    /// implementation, checking every invariant at every operation.
    Run(run::RunArgs),
    /// Re-run a saved counterexample exactly.
    Replay(replay::ReplayArgs),
    /// Show the harness catches every mutant of its zoo and passes the reference.
    Selftest(selftest::SelftestArgs),
    /// Validate Tern messages (syntax and schema) from a JSON-lines stream or one document.
    Check(check::CheckArgs),
    /// Certify an implementation: the whole conformance corpus, then a
    /// simulation budget with faults; a verdict per level and reports.
    Certify(certify::CertifyArgs),
    /// The traceability matrix: each seed clause, its cases, invariants and mutants.
    Coverage(coverage::CoverageArgs),
    /// Compare two certification reports; exit 1 on any regression.
    Diff(diff::DiffArgs),
    /// Serve the reference implementation (or a mutant) over the subprocess
    /// protocol on standard input and output.
    Agent(agent::AgentArgs),
}

/// Output format of the simulation commands.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum FormatArg {
    Human,
    Json,
}

/// Status codes of every command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Ok = 0,
    Violation = 1,
    Trouble = 2,
}

impl From<Status> for ExitCode {
    fn from(status: Status) -> ExitCode {
        ExitCode::from(status as u8)
    }
}

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help and version to stdout with status 0, and usage
            // errors to stderr with status 2, as documented above.
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() {
                Status::Trouble as u8
            } else {
                0
            });
        }
    };
    let status = match cli.command {
        Command::Run(args) => run::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Selftest(args) => selftest::run(args),
        Command::Check(args) => check::run(args),
        Command::Agent(args) => agent::run(args),
        Command::Certify(args) => certify::run(args),
        Command::Coverage(args) => coverage::run(args),
        Command::Diff(args) => diff::run(args),
    };
    output::flush();
    if output::failed() {
        Status::Trouble.into()
    } else {
        status.into()
    }
}
