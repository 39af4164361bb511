//! The command line. Exit statuses are part of the interface:
//!
//! | status | meaning |
//! |---|---|
//! | 0 | no violation: every message valid (`check`), every run clean (`run`, `replay`), every mutant killed (`selftest`), certified at the level asked (`certify`), every clause covered (`coverage`), no regression (`diff`), the site written (`site`) |
//! | 1 | a violation: an invalid message, a broken invariant, a surviving mutant, not certified, a clause without a case, a regression |
//! | 128+n | `certify` stopped by signal n (130 for Ctrl-C), after writing reports marked as interrupted |
//! | 2 | usage error, or an input or output could not be read or written |
//!
//! A reader that closes standard output early (`| head`) is not an error:
//! the output ends quietly and the status is that of the work done (see
//! [`output`]). Each command's `--help` lists its statuses.

#[macro_use]
mod output;

mod agent;
mod certify;
mod check;
mod corpus;
mod coverage;
mod diff;
mod explore;
mod github;
mod merge;
mod paint;
mod progress;
mod replay;
mod run;
mod selftest;
mod shard;
mod sim;
mod site;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Conformance harness and simulator for Tern 0.1.
#[derive(Debug, Parser)]
#[command(
    name = "tern-sim",
    version,
    about,
    long_about = None,
    after_help = "Exit status: 0 success, 1 a violation (or not certified, or a regression), \
                  2 a usage error or an input or output that cannot be used, 128+n stopped \
                  by signal n. Each command's --help says what they mean for it."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,

    /// Colour verdicts, failures and table headers: `auto` on a terminal,
    /// unless NO_COLOR is set. Files and JSON are never coloured.
    #[arg(long, global = true, value_enum, default_value_t = ColorArg::Auto, value_name = "WHEN")]
    color: ColorArg,

    /// No progress display and no notes on standard error: only the
    /// results, and errors.
    #[arg(long, short = 'q', global = true)]
    quiet: bool,
}

/// `--color`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ColorArg {
    Auto,
    Always,
    Never,
}

/// The end of every command's exit-status list.
macro_rules! pipe_note {
    () => {
        "\nA reader that closes standard output early (| head) ends the output \
         quietly, without an error; the status is then that of the work done."
    };
}

const RUN_HELP: &str = concat!(
    "Exit status:\n",
    "  0      no violation in the runs made\n",
    "  1      a violation: printed, shrunk, and its trace saved\n",
    "  2      usage error, or the trace could not be saved\n",
    "  128+n  stopped by signal n (130 for Ctrl-C)\n",
    pipe_note!()
);
const REPLAY_HELP: &str = concat!(
    "Exit status:\n",
    "  0      the run passes\n",
    "  1      a violation\n",
    "  2      usage error, or the trace cannot be read (not a trace, or a format \
     this tern-sim does not support)\n",
    "  128+n  stopped by signal n (130 for Ctrl-C)\n",
    pipe_note!()
);
const EXPLORE_HELP: &str = concat!(
    "Exit status:\n",
    "  0      every scope exhausted with no violation\n",
    "  1      a violation: printed as a shortest schedule, its trace saved\n",
    "  2      usage error, a scope that cannot be read, a trace that cannot be saved, \
     or a scope not exhausted within --max-states\n",
    "  128+n  stopped by signal n (130 for Ctrl-C)\n",
    pipe_note!()
);
const SELFTEST_HELP: &str = concat!(
    "Exit status:\n",
    "  0      every mutant killed and the reference clean\n",
    "  1      a mutant survived, or the reference failed\n",
    "  2      usage error\n",
    "  128+n  stopped by signal n (130 for Ctrl-C)\n",
    pipe_note!()
);
const CHECK_HELP: &str = concat!(
    "Exit status:\n",
    "  0      every message valid (with --stateful: none rejected, none pending)\n",
    "  1      at least one invalid (rejected, or still pending)\n",
    "  2      usage error, or an input or the --context file cannot be read\n",
    "  128+n  stopped by signal n (130 for Ctrl-C)\n",
    "\nOn a pipe or a terminal each verdict is printed as soon as it is known. \
     --document stops reading at the 1 MiB frame limit.\n",
    pipe_note!()
);
const CERTIFY_HELP: &str = concat!(
    "Exit status:\n",
    "  0      every implementation named is certified at --level\n",
    "  1      at least one is not; a partial run (--only) never certifies\n",
    "  2      usage error, the corpus cannot be used, the report folder cannot \
     be used (checked before any work), or a report cannot be written\n",
    "  128+n  stopped by signal n (130 for Ctrl-C, 143 for SIGTERM), after \
     writing the reports marked as interrupted\n",
    pipe_note!()
);
const COVERAGE_HELP: &str = concat!(
    "Exit status:\n",
    "  0      every clause has a case\n",
    "  1      a clause without a case\n",
    "  2      usage error, or the corpus cannot be loaded\n",
    pipe_note!()
);
const DIFF_HELP: &str = concat!(
    "Exit status:\n",
    "  0      no regression\n",
    "  1      a regression: a case that got worse or that passed and is now \
     absent, an implementation missing from NEW, an invariant broken, a \
     simulation violation, a level or certification lost\n",
    "  2      usage error, or a file is unreadable or not a valid report (the \
     message gives the JSON pointer of what is wrong)\n",
    pipe_note!()
);
const SITE_HELP: &str = concat!(
    "Exit status:\n",
    "  0      the site is written\n",
    "  2      usage error, a file is unreadable or not a valid report (the \
     message names it and the JSON pointer of what is wrong), or the folder \
     cannot be used or written (an existing folder is replaced only when it \
     is empty or a site written by this command)\n",
    pipe_note!()
);
const MERGE_HELP: &str = concat!(
    "Exit status: that of the command the parts come from, as if one machine had run it \
     (0, 1, or 2 for a trace that could not be saved or a scope not exhausted), or\n",
    "  2      the parts do not belong together (another version, command, option, \
     corpus or N; a shard missing, given twice, or interrupted), a part cannot be read, \
     or a report cannot be written\n",
    pipe_note!()
);
const AGENT_HELP: &str = concat!(
    "Exit status:\n",
    "  0      served until shutdown, the end of input, or the harness went away\n",
    "  2      usage error, or a request could not be read or answered\n",
    "  128+n  stopped by signal n\n"
);

#[derive(Debug, Subcommand)]
enum Command {
    /// Simulate multi-agent Tern conversations with faults against an
    /// implementation, checking every invariant at every operation.
    #[command(after_help = RUN_HELP)]
    Run(run::RunArgs),
    /// Re-run a saved counterexample exactly.
    #[command(after_help = REPLAY_HELP)]
    Replay(replay::ReplayArgs),
    /// Show the harness catches every mutant of its zoo and passes the reference.
    #[command(after_help = SELFTEST_HELP)]
    Selftest(selftest::SelftestArgs),
    /// Validate Tern messages (syntax and schema) from a JSON-lines stream or one document.
    #[command(after_help = CHECK_HELP)]
    Check(check::CheckArgs),
    /// Certify an implementation: the whole conformance corpus, then a
    /// simulation budget with faults; a verdict per level and reports.
    #[command(after_help = CERTIFY_HELP)]
    Certify(certify::CertifyArgs),
    /// The traceability matrix: each seed clause, its cases, invariants and mutants.
    #[command(after_help = COVERAGE_HELP)]
    Coverage(coverage::CoverageArgs),
    /// Compare two certification reports; exit 1 on any regression.
    #[command(after_help = DIFF_HELP)]
    Diff(diff::DiffArgs),
    /// Write one static site from certification reports: an index per
    /// implementation and version, the clause matrix side by side, each
    /// implementation's history, and every report's page.
    #[command(after_help = SITE_HELP)]
    Site(site::SiteArgs),
    /// Explore every schedule of small scopes (every order, fault placement
    /// and crash point), checked against the oracle at every move.
    #[command(after_help = EXPLORE_HELP)]
    Explore(explore::ExploreArgs),
    /// Put the parts of a sharded run, certify, selftest or explore
    /// (--shard K/N) back together: the output, reports and status of one
    /// machine (docs/scale.md).
    #[command(after_help = MERGE_HELP)]
    Merge(merge::MergeArgs),
    /// Print a completion script for a shell (bash, zsh, fish, elvish,
    /// powershell) on standard output.
    #[command(after_help = "Exit status: 0, or 2 for a shell it does not know.\n\
                            Example: tern-sim completions bash > ~/.local/share/bash-completion/completions/tern-sim")]
    Completions {
        /// The shell to complete for.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff) of tern-sim, or of one of its commands,
    /// on standard output.
    #[command(after_help = "Exit status: 0, or 2 for a command it does not know.\n\
                            Example: tern-sim man certify | man -l -")]
    Man {
        /// The command whose page to print (default: tern-sim itself).
        command: Option<String>,
    },
    /// Serve the reference implementation (or a mutant) over the subprocess
    /// protocol on standard input and output.
    #[command(after_help = AGENT_HELP)]
    Agent(agent::AgentArgs),
    /// Print the JSON Schema (draft 2020-12) of every line of the
    /// subprocess protocol, the file docs/protocol.schema.json: validate
    /// an implementation's lines against it, as --strict-protocol does.
    #[command(after_help = "Exit status: 0.\n\
                            Example: tern-sim schema > tern-sim-1.schema.json")]
    Schema,
}

/// Output format of the simulation commands.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum FormatArg {
    Human,
    Json,
}

/// When an implementation's failure was the machine's (its state file
/// system full or failing): says so, and the command ends with status 2
/// and no verdict.
pub fn machine_trouble(command: &str) -> Option<Exit> {
    let fault = tern_harness::implementations::machine::fault()?;
    errln!(
        "tern-sim {command}: {}",
        tern_reports::escape::terminal(&fault.to_string())
    );
    Some(Exit::Trouble)
}

/// How every command ends, and its exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: nothing found.
    Ok,
    /// 1: a violation, a failed case, not certified.
    Violation,
    /// 2: a usage error, input that cannot be used, a machine fault.
    Trouble,
    /// 128 + the signal: stopped by it, after saying what ran.
    Interrupted(i32),
}

impl Exit {
    pub fn code(self) -> u8 {
        match self {
            Exit::Ok => 0,
            Exit::Violation => 1,
            Exit::Trouble => 2,
            Exit::Interrupted(signal) => u8::try_from(128 + signal.clamp(1, 127)).unwrap_or(255),
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(status: Exit) -> ExitCode {
        ExitCode::from(status.code())
    }
}

pub fn main() -> ExitCode {
    if let Some(args) = agent::plain_args(std::env::args_os().skip(1)) {
        return agent::run(args).into();
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help and version to stdout with status 0, and usage
            // errors to stderr with status 2, as documented above.
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() {
                Exit::Trouble.code()
            } else {
                0
            });
        }
    };
    output::set_color(paint::wanted(cli.color));
    output::set_quiet(cli.quiet);
    let status = match cli.command {
        Command::Completions { shell } => completions(shell),
        Command::Man { command } => man(command.as_deref()),
        Command::Schema => {
            out!("{}", tern_harness::contract::protocol::schema::text());
            Exit::Ok
        }
        Command::Run(args) => run::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Selftest(args) => selftest::run(args),
        Command::Check(args) => check::run(args),
        Command::Agent(args) => agent::run(args),
        Command::Certify(args) => certify::run(args),
        Command::Coverage(args) => coverage::run(args),
        Command::Diff(args) => diff::run(args),
        Command::Site(args) => site::run(args),
        Command::Explore(args) => explore::run(args),
        Command::Merge(args) => merge::run(args),
    };
    output::flush();
    // A signal's status stands whatever else went wrong after it; a
    // reader that went away is trouble otherwise.
    match status {
        Exit::Interrupted(_) => status.into(),
        _ if output::failed() => Exit::Trouble.into(),
        _ => status.into(),
    }
}

fn completions(shell: clap_complete::Shell) -> Exit {
    use clap::CommandFactory;
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "tern-sim", &mut buf);
    out!("{}", String::from_utf8_lossy(&buf));
    Exit::Ok
}

fn man(command: Option<&str>) -> Exit {
    use clap::CommandFactory;
    let root = Cli::command();
    let page = match command {
        None => root,
        Some(name) => match root.find_subcommand(name) {
            Some(c) => c.clone().name(format!("tern-sim-{name}")),
            None => {
                errln!("tern-sim man: no command `{name}`; `tern-sim --help` lists them");
                return Exit::Trouble;
            }
        },
    };
    let mut buf = Vec::new();
    if let Err(e) = clap_mangen::Man::new(page).render(&mut buf) {
        errln!("tern-sim man: cannot render the page: {e}");
        return Exit::Trouble;
    }
    out!("{}", String::from_utf8_lossy(&buf));
    Exit::Ok
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    /// A vendor learns the tool from `--help`: an option without a line of
    /// help, or a command that does not say what its statuses mean, is a
    /// hole in the interface.
    #[test]
    fn every_option_has_help_and_every_command_its_exit_statuses() {
        let root = Cli::command();
        root.clone().debug_assert();
        let mut holes = Vec::new();
        for command in root.get_subcommands() {
            for arg in command.get_arguments() {
                let id = arg.get_id().as_str();
                if id == "help" || id == "version" {
                    continue;
                }
                if arg.get_help().is_none() && arg.get_long_help().is_none() {
                    holes.push(format!("{} {id}: no help", command.get_name()));
                }
            }
            let after = command
                .get_after_help()
                .map(ToString::to_string)
                .unwrap_or_default();
            if !after.contains("Exit status") {
                holes.push(format!("{}: no exit statuses", command.get_name()));
            }
        }
        assert!(holes.is_empty(), "{}", holes.join("\n"));
    }
}
