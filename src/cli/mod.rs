//! The command line. Exit statuses are part of the interface:
//!
//! | status | meaning |
//! |---|---|
//! | 0 | every message checked is valid |
//! | 1 | at least one message is invalid |
//! | 2 | usage error, or an input or output could not be read or written |

mod check;

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
    /// Validate Tern messages (syntax and schema) from a JSON-lines stream or one document.
    Check(check::CheckArgs),
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
        Command::Check(args) => check::run(args),
    }
    .into()
}
