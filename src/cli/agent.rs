//! `tern-sim agent`: the reference implementation on the subprocess protocol.

use std::io::{self, BufReader};

use clap::Args;
use tern_harness::implementations::agent::{AgentMutant, SNAPSHOT_AFTER};

use super::Exit;

#[derive(Debug, Args)]
pub struct AgentArgs {
    /// Serve a mutant instead of the reference (for testing the subprocess
    /// path against broken implementations): one of the zoo's, or one only
    /// a process can be (`leaks-session`, and five whose log or snapshot
    /// gets durability wrong, which only a power loss catches:
    /// `skips-fsync`, `skips-dir-fsync`, `renames-unsynced`,
    /// `syncs-every-second`, `renames-snapshot-unsynced`; and
    /// `flaky-duplicates`, whose failures are random and do not replay).
    #[arg(long, value_parser = parse_agent_mutant)]
    mutant: Option<AgentMutant>,
    /// Keep a snapshot of the state in the state directory once a start
    /// has replayed this many log records that no snapshot covers, so that
    /// later starts replay only the records after it (docs/protocol.md
    /// section 7); 0 never keeps one.
    #[arg(long, value_name = "RECORDS", default_value_t = SNAPSHOT_AFTER)]
    snapshot_after: usize,
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

/// The arguments of `tern-sim agent`, with `--mutant NAME` (NAME a
/// mutant of the zoo) and `--snapshot-after N` if given, read without
/// building the whole command line's parser; anything else (`--help`, a
/// global option, a typo) is `None`, for clap to read and answer as
/// always. `tern-sim agent` is started for every agent of every run and
/// after every crash, so its start-up is on the path of each: the full
/// parser, with every subcommand and 109 mutants, is about a third of it.
pub fn plain_args(mut args: impl Iterator<Item = std::ffi::OsString>) -> Option<AgentArgs> {
    if args.next()? != "agent" {
        return None;
    }
    let mut plain = AgentArgs {
        mutant: None,
        snapshot_after: SNAPSHOT_AFTER,
    };
    let (mut mutant, mut snapshot) = (false, false);
    while let Some(arg) = args.next() {
        let arg = arg.to_str()?;
        let (flag, value) = match arg.split_once('=') {
            Some((flag, value)) => (flag, value.to_owned()),
            None => (arg, args.next()?.to_str()?.to_owned()),
        };
        match flag {
            "--mutant" if !std::mem::replace(&mut mutant, true) => {
                plain.mutant = Some(AgentMutant::by_name(&value)?);
            }
            "--snapshot-after" if !std::mem::replace(&mut snapshot, true) => {
                plain.snapshot_after = parse_count(&value)?;
            }
            _ => return None,
        }
    }
    Some(plain)
}

/// A count as clap reads a `usize`: decimal digits, nothing else.
fn parse_count(text: &str) -> Option<usize> {
    text.bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| text.parse().ok())
        .flatten()
}

pub fn run(args: AgentArgs) -> Exit {
    let input = BufReader::new(io::stdin().lock());
    // Answers are written in many small pieces and flushed once per line:
    // a buffer in front of stdout spares each piece stdout's lock and its
    // search for a line end.
    let output = io::BufWriter::with_capacity(1 << 16, io::stdout().lock());
    let snapshot_after = (args.snapshot_after > 0).then_some(args.snapshot_after);
    match tern_harness::implementations::agent::serve_with(
        input,
        Box::new(output),
        args.mutant,
        snapshot_after,
    ) {
        Ok(()) => Exit::Ok,
        // The harness went away: nobody is left to serve or to tell.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Exit::Ok,
        Err(e) => {
            errln!("tern-sim agent: {e}");
            Exit::Trouble
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
    fn parsed(line: &str) -> Option<(Option<AgentMutant>, usize)> {
        let words = std::iter::once("tern-sim").chain(line.split(' '));
        match super::super::Cli::try_parse_from(words).ok()?.command {
            super::super::Command::Agent(args) => Some((args.mutant, args.snapshot_after)),
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
            "agent --snapshot-after 8",
            "agent --snapshot-after=0",
            "agent --mutant renames-snapshot-unsynced --snapshot-after 16",
            "agent --snapshot-after 16 --mutant=skips-fsync",
        ] {
            let fast = plain(line).map(|a| (a.mutant, a.snapshot_after));
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
            "agent --snapshot-after",
            "agent --snapshot-after -1",
            "agent --snapshot-after +1",
            "agent --snapshot-after 8 --snapshot-after 9",
            "agent --mutant acks-acks --mutant acks-acks",
            "--quiet agent",
            "run",
        ] {
            assert!(plain(line).is_none(), "{line}");
        }
    }
}
