//! The command line. Exit statuses are part of the interface:
//!
//! | status | meaning |
//! |---|---|
//! | 0 | no violation: every message valid (`check`), every run clean (`run`, `replay`), every mutant killed (`selftest`) |
//! | 1 | a violation: an invalid message, a broken invariant, a surviving mutant |
//! | 2 | usage error, or an input or output could not be read or written |

mod agent;
mod check;
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
    match cli.command {
        Command::Run(args) => run::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Selftest(args) => selftest::run(args),
        Command::Check(args) => check::run(args),
        Command::Agent(args) => agent::run(args),
    }
    .into()
}
