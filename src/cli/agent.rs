//! `tern-sim agent`: the reference implementation on the subprocess protocol.

use std::io::{self, BufReader};

use clap::Args;
use tern_harness::implementations::agent::AgentMutant;

use super::Status;

#[derive(Debug, Args)]
pub struct AgentArgs {
    /// Serve a mutant instead of the reference (for testing the subprocess
    /// path against broken implementations): one of the zoo's, or one only
    /// a process can be (`leaks-session`, and four whose log gets
    /// durability wrong, which only a power loss catches: `skips-fsync`,
    /// `skips-dir-fsync`, `renames-unsynced`, `syncs-every-second`; and
    /// `flaky-duplicates`, whose failures are random and do not replay).
    #[arg(long, value_parser = parse_agent_mutant)]
    mutant: Option<AgentMutant>,
}

fn parse_agent_mutant(name: &str) -> Result<AgentMutant, String> {
    AgentMutant::by_name(name).ok_or_else(|| {
        format!(
            "no mutant `{name}`: `tern-sim selftest` lists the zoo's; the process-only ones are {}",
            AgentMutant::PROCESS_ONLY
                .iter()
                .map(|(n, _, what)| format!("`{n}` ({what})"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

/// The arguments of `tern-sim agent` or `tern-sim agent --mutant NAME`
/// (NAME a mutant of the zoo), read without building the whole command
/// line's parser; anything else (`--help`, a global option, a typo) is
/// `None`, for clap to read and answer as always. `tern-sim agent` is
/// started for every agent of every run and after every crash, so its
/// start-up is on the path of each: the full parser, with every
/// subcommand and 109 mutants, is about a third of it.
pub fn plain_args(mut args: impl Iterator<Item = std::ffi::OsString>) -> Option<AgentArgs> {
    if args.next()? != "agent" {
        return None;
    }
    let rest: Vec<std::ffi::OsString> = args.collect();
    let name = match rest.as_slice() {
        [] => return Some(AgentArgs { mutant: None }),
        [flag, name] if flag == "--mutant" => name.to_str()?,
        [flag] => flag.to_str()?.strip_prefix("--mutant=")?,
        _ => return None,
    };
    Some(AgentArgs {
        mutant: Some(AgentMutant::by_name(name)?),
    })
}

pub fn run(args: AgentArgs) -> Status {
    let input = BufReader::new(io::stdin().lock());
    // Answers are written in many small pieces and flushed once per line:
    // a buffer in front of stdout spares each piece stdout's lock and its
    // search for a line end.
    let output = io::BufWriter::with_capacity(1 << 16, io::stdout().lock());
    match tern_harness::implementations::agent::serve(input, Box::new(output), args.mutant) {
        Ok(()) => Status::Ok,
        // The harness went away: nobody is left to serve or to tell.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Status::Ok,
        Err(e) => {
            errln!("tern-sim agent: {e}");
            Status::Trouble
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn plain(line: &str) -> Option<AgentArgs> {
        plain_args(line.split(' ').map(std::ffi::OsString::from))
    }

    /// What the whole parser reads from the same words.
    fn parsed(line: &str) -> Option<Option<AgentMutant>> {
        let words = std::iter::once("tern-sim").chain(line.split(' '));
        match super::super::Cli::try_parse_from(words).ok()?.command {
            super::super::Command::Agent(args) => Some(args.mutant),
            _ => None,
        }
    }

    #[test]
    fn the_plain_forms_are_read_as_the_whole_parser_reads_them() {
        for line in [
            "agent",
            "agent --mutant memory-dedup",
            "agent --mutant=acks-acks",
            "agent --mutant leaks-session",
        ] {
            let fast = plain(line).map(|a| a.mutant);
            assert!(fast.is_some(), "{line}");
            assert_eq!(fast, parsed(line), "{line}");
        }
    }

    #[test]
    fn anything_else_is_left_to_the_whole_parser() {
        for line in [
            "agent --help",
            "agent --mutant",
            "agent --mutant no-such-mutant",
            "agent --mutant memory-dedup extra",
            "agent --mutnt memory-dedup",
            "--quiet agent",
            "run",
        ] {
            assert!(plain(line).is_none(), "{line}");
        }
    }
}
