//! `tern-sim agent`: the reference implementation on the subprocess protocol.

use std::io::{self, BufReader};

use clap::Args;
use tern_harness::implementations::mutants::Mutant;

use super::sim::parse_mutant;
use super::Status;

#[derive(Debug, Args)]
pub struct AgentArgs {
    /// Serve a mutant of the zoo instead of the reference (for testing the
    /// subprocess path against broken implementations).
    #[arg(long, value_parser = parse_mutant())]
    mutant: Option<Mutant>,
}

pub fn run(args: AgentArgs) -> Status {
    let input = BufReader::new(io::stdin().lock());
    match tern_harness::implementations::agent::serve(input, Box::new(io::stdout()), args.mutant) {
        Ok(()) => Status::Ok,
        // The harness went away: nobody is left to serve or to tell.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Status::Ok,
        Err(e) => {
            errln!("tern-sim agent: {e}");
            Status::Trouble
        }
    }
}
