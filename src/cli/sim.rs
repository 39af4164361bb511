//! Options shared by the simulation commands, and choosing the
//! implementation under test.

use clap::Args;
use tern_harness::contract::plugin::{Durability, Implementation};
use tern_harness::implementations::adapter::{Limits, SubprocessImpl};
use tern_harness::implementations::mutants::{Mutant, MutantImpl};
use tern_harness::implementations::reference::ReferenceImpl;
use tern_harness::simulator::driver::Jobs;
use tern_harness::simulator::faults::{Fault, FaultSet};
use tern_harness::simulator::scenario::{MAX_AGENTS, MAX_STEPS};

/// Faults, each a flag; `--faults` turns on the default mix (all of them).
#[derive(Debug, Clone, Args)]
pub struct FaultArgs {
    /// The default mix: every fault below.
    #[arg(long)]
    pub faults: bool,
    /// Random extra latency, so messages overtake each other.
    #[arg(long)]
    pub reorder: bool,
    /// Second copies of messages.
    #[arg(long)]
    pub duplicate: bool,
    /// Long delays for some messages.
    #[arg(long)]
    pub delay: bool,
    /// Lost copies, retransmitted by their sender.
    #[arg(long)]
    pub drop: bool,
    /// Crashes at chosen points, with restarts from storage.
    #[arg(long)]
    pub crash: bool,
    /// Links cut for a while, both ways or one way.
    #[arg(long)]
    pub partition: bool,
    /// Clock skew between agents.
    #[arg(long)]
    pub skew: bool,
}

impl FaultArgs {
    /// The flags that ask for `set`, for a command line a person can rerun.
    /// (`power-loss` has no flag: it comes with `--crash` wherever the
    /// implementation's state directory can lose power.)
    pub fn flags_for(set: &FaultSet) -> String {
        let asked = FaultSet(
            set.0
                .iter()
                .copied()
                .filter(|f| *f != Fault::PowerLoss)
                .collect(),
        );
        if asked == FaultSet::all() {
            return " --faults".to_owned();
        }
        asked.0.iter().map(|f| format!(" --{f}")).collect()
    }

    pub fn set(&self) -> FaultSet {
        if self.faults {
            return FaultSet::all();
        }
        let flags = [
            (self.reorder, Fault::Reorder),
            (self.duplicate, Fault::Duplicate),
            (self.delay, Fault::Delay),
            (self.drop, Fault::Drop),
            (self.crash, Fault::Crash),
            (self.partition, Fault::Partition),
            (self.skew, Fault::Skew),
        ];
        FaultSet(
            flags
                .into_iter()
                .filter(|(on, _)| *on)
                .map(|(_, f)| f)
                .collect(),
        )
    }
}

/// Crashes over the protocol are power losses wherever the implementation
/// can have them (FUSE works): the fault set gains `power-loss` when it
/// crashes and the implementation serves them. What a crash takes then, as
/// reports name it; `None` in tern-sim's own process.
pub fn power_loss(imp: &dyn Implementation, faults: &mut FaultSet) -> Option<Durability> {
    faults.0.remove(&Fault::PowerLoss);
    if !faults.has(Fault::Crash) {
        // No crash, nothing to take.
        return None;
    }
    if imp.set_power_loss(true) {
        faults.0.insert(Fault::PowerLoss);
    }
    Some(imp.durability()).filter(|d| *d != Durability::Simulated)
}

pub fn parse_agents(s: &str) -> Result<usize, String> {
    let n: usize = s.parse().map_err(|_| format!("`{s}` is not a number"))?;
    if n == 0 || n > MAX_AGENTS {
        return Err(format!("between 1 and {MAX_AGENTS} agents"));
    }
    Ok(n)
}

/// `--steps N`: from 0 (start-up and the final checks only) to
/// [`MAX_STEPS`].
pub fn parse_steps(s: &str) -> Result<usize, String> {
    let n: usize = s.parse().map_err(|_| format!("`{s}` is not a number"))?;
    if n > MAX_STEPS {
        return Err(format!(
            "at most {MAX_STEPS} steps per run (a longer run would hold more memory than a run should; play more seeds instead)"
        ));
    }
    Ok(n)
}

/// `--mutant NAME`: one of the zoo, listed with its defect in `--help`,
/// and suggested by clap when a name is misspelt.
pub fn parse_mutant() -> impl clap::builder::TypedValueParser<Value = Mutant> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(
        Mutant::ALL
            .iter()
            .map(|m| PossibleValue::new(m.name()).help(m.defect())),
    )
    .try_map(|name| Mutant::by_name(&name).ok_or_else(|| format!("no mutant `{name}`")))
}

/// The reference implementation, a mutant of the zoo, or a subprocess.
pub fn implementation(
    mutant: Option<Mutant>,
    command: Option<&str>,
    limits: Limits,
) -> std::io::Result<Box<dyn Implementation>> {
    Ok(match (mutant, command) {
        (_, Some(cmd)) => Box::new(SubprocessImpl::new(cmd, limits)?),
        (Some(m), None) => Box::new(MutantImpl(m)),
        (None, None) => Box::new(ReferenceImpl),
    })
}

/// The limits on an implementation in another process, for every command
/// that takes `--impl`.
#[derive(Debug, Clone, Copy, Args)]
pub struct TimeoutArgs {
    /// With --impl: how long one request may take, in milliseconds.
    #[arg(long, default_value_t = 5000, value_name = "MS")]
    timeout: u64,

    /// With --impl: how long start-up (the `init` answer) may take, in milliseconds.
    #[arg(long, default_value_t = 10000, value_name = "MS")]
    startup_timeout: u64,

    /// With --impl: hold every line the implementation writes to the exact
    /// form of docs/protocol.schema.json (`tern-sim schema`): no member the
    /// protocol does not have, every member of its type, exactly one of
    /// `ok`, `error`, `perform` and `log`. The first deviation is a verdict
    /// naming its JSON pointer and the line, before anything is judged as
    /// Tern. Without it, lines are read as leniently as docs/protocol.md
    /// allows.
    #[arg(long)]
    strict_protocol: bool,
}

impl TimeoutArgs {
    /// Into a part's options: a subprocess's results can depend on them.
    pub fn record(self, options: &mut super::shard::Options) {
        options
            .set("--timeout", self.timeout)
            .set("--startup-timeout", self.startup_timeout)
            .set("--strict-protocol", self.strict_protocol);
    }

    /// What a reproduce command adds after `--impl '…'`.
    pub fn flag(self) -> &'static str {
        if self.strict_protocol {
            " --strict-protocol"
        } else {
            ""
        }
    }

    pub fn limits(self) -> Limits {
        Limits {
            request: std::time::Duration::from_millis(self.timeout),
            startup: std::time::Duration::from_millis(self.startup_timeout),
            strict: self.strict_protocol,
            ..Limits::default()
        }
    }
}

/// `--jobs N`: how many runs play at once. The output is the same whatever
/// N is; only the time changes.
#[derive(Debug, Clone, Copy, Args)]
pub struct JobsArg {
    /// Runs played at once, on as many threads (default: one per core).
    /// Results are merged in seed order, so the output does not depend on it.
    /// On a terminal, a line per worker shows what it is playing.
    #[arg(long, value_name = "N", value_parser = parse_jobs)]
    jobs: Option<Jobs>,
}

impl JobsArg {
    pub fn get(self) -> Jobs {
        self.jobs.unwrap_or_default()
    }
}

fn parse_jobs(s: &str) -> Result<Jobs, String> {
    s.parse::<std::num::NonZeroUsize>()
        .map(Jobs)
        .map_err(|_| format!("`{s}` is not a number of jobs (1 or more)"))
}

/// `--check-determinism [N]`: whether the implementation under test is
/// itself deterministic, asked by playing seeds twice.
#[derive(Debug, Clone, Copy, Args)]
pub struct DeterminismArg {
    /// Play the failing seed and N passing ones (default 10, spread over
    /// the runs) twice each, on fresh processes and state, and compare
    /// every answer: a difference is its own verdict, `nondeterministic`,
    /// naming the first request answered two ways, since such an
    /// implementation's failures cannot be reproduced.
    #[arg(
        long = "check-determinism",
        value_name = "N",
        num_args = 0..=1,
        default_missing_value = "10"
    )]
    sample: Option<u64>,
}

impl DeterminismArg {
    /// How many passing seeds to check, when asked.
    pub fn sample(self) -> Option<u64> {
        self.sample
    }

    /// The flag as a command line gives it, for the options a shard's
    /// part records (nothing when not asked, so parts without it are as
    /// before).
    pub fn record(self, o: &mut super::shard::Options) {
        if let Some(n) = self.sample {
            o.set("--check-determinism", n);
        }
    }
}

/// The longest soak: a year. A deadline further out than the clock can
/// hold would end a run in a panic after all its work, so the bound is
/// checked when the flag is read.
pub const MAX_DURATION: std::time::Duration = std::time::Duration::from_secs(365 * 24 * 3600);

/// `--duration`: a span of time such as `90s`, `10m` or `1h30m`.
pub fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    match humantime::parse_duration(s) {
        Ok(d) if d.is_zero() => Err("a soak must last longer than zero".to_owned()),
        Ok(d) if d > MAX_DURATION => Err(format!(
            "`{s}` is longer than a soak may last (at most 365 days)"
        )),
        Ok(d) => Ok(d),
        Err(e) => Err(format!(
            "`{s}` is not a duration such as 90s, 10m or 1h30m ({e})"
        )),
    }
}
