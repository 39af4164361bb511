//! `tern-sim certify`: the whole corpus, then a simulation budget with
//! faults, against one or several implementations; a verdict per level and
//! report files written atomically, also after Ctrl-C.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use clap::Args;
use tern_harness::certify::{self, Explore, Plan, Share, Soak, Subject};
use tern_harness::corpus::{Case, Corpus, Level, Origin};
use tern_harness::events::{self, Event};
use tern_harness::explore::builtin;
use tern_harness::explore::scope::Scope;
use tern_harness::implementations::adapter::{
    defer_interrupts, interrupted, Limits, SubprocessImpl,
};
use tern_harness::implementations::machine;
use tern_harness::implementations::mutants::{Mutant, MutantImpl};
use tern_harness::implementations::reference::ReferenceImpl;
use tern_harness::shard::Shard;
use tern_harness::simulator::driver::Jobs;
use tern_harness::simulator::runner::Stats;
use tern_reports::certify::baseline::{classify, load as load_baseline};
use tern_reports::certify::files::shell_quoted;
use tern_reports::certify::{scopes_left_out_note, write, Report, ScopeLeftOut};
use tern_reports::escape;
use tern_reports::shards::certify as certify_part;
use tern_reports::shards::{Command, Part};

use super::corpus::load_corpus;
use super::progress::Progress;
use super::shard::{header, Options, ShardArgs};
use super::sim::{
    parse_agents, parse_duration, parse_mutant, parse_steps, DeterminismArg, JobsArg, TimeoutArgs,
};
use super::{Exit, FormatArg};
use tern_harness::implementations::locked;

mod reports;
pub use reports::publish;

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum LevelArg {
    Core,
    Profile,
}

impl From<LevelArg> for Level {
    fn from(level: LevelArg) -> Level {
        match level {
            LevelArg::Core => Level::Core,
            LevelArg::Profile => Level::Profile,
        }
    }
}

#[derive(Debug, Args)]
pub struct CertifyArgs {
    /// An implementation in another process, speaking docs/protocol.md.
    /// Repeat to compare several side by side.
    #[arg(long = "impl", value_name = "COMMAND")]
    implementations: Vec<String>,

    /// A mutant of the zoo (repeatable), to see what certification catches.
    #[arg(long = "mutant", value_parser = parse_mutant(), value_name = "NAME")]
    mutants: Vec<Mutant>,

    /// Include the built-in reference (the default when nothing else is named).
    #[arg(long)]
    reference: bool,

    #[command(flatten)]
    jobs: JobsArg,

    /// The level to certify at: `core` (the seed's words) or `profile`
    /// (also the profile's readings).
    #[arg(long, value_enum, default_value_t = LevelArg::Profile)]
    level: LevelArg,

    /// The corpus folder (clauses.json and one folder of cases per section),
    /// instead of the corpus built into tern-sim.
    #[arg(long, value_name = "DIR")]
    scenarios: Option<PathBuf>,

    /// Run only the cases whose ID contains this text.
    #[arg(long, value_name = "TEXT")]
    only: Option<String>,

    /// Simulation runs after the corpus (0 skips the simulation). The
    /// default takes about a minute against the reference on two cores.
    #[arg(long, default_value_t = tern_harness::certify::DEFAULT_SEEDS)]
    seeds: u64,

    /// The first simulation seed.
    #[arg(long, default_value_t = tern_harness::certify::DEFAULT_FIRST_SEED)]
    seed: u64,

    /// Soak: each simulation plays seeds in order from --seed for this
    /// long (90s, 10m, 1h30m) instead of --seeds runs, and certifies only
    /// if it played at least --seeds runs. The report gives the seeds that
    /// ran (docs/scale.md).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, conflicts_with = "shard")]
    duration: Option<std::time::Duration>,

    /// Agents per simulation run.
    #[arg(long, default_value_t = tern_harness::certify::DEFAULT_AGENTS, value_parser = parse_agents)]
    agents: usize,

    /// Steps per simulation run.
    #[arg(long, default_value_t = tern_harness::certify::DEFAULT_STEPS, value_parser = parse_steps)]
    steps: usize,

    /// Explore every schedule of the built-in scopes after the simulation
    /// (docs/explore.md). On by default in process; over the protocol
    /// only when asked, since every state explored is replayed from a fresh start.
    #[arg(long, conflicts_with = "no_explore")]
    explore: bool,

    /// Leave the exploration out, even in process.
    #[arg(long)]
    no_explore: bool,

    /// An earlier certification's report.json: each failure is then marked
    /// New or Ongoing against it, and what it failed and passes now is
    /// listed as Resolved, in every report.
    #[arg(long, value_name = "REPORT", conflicts_with = "shard")]
    baseline: Option<PathBuf>,

    /// Where the reports go: report.json, junit.xml, report.html,
    /// summary.txt, summary.md, badge.json and badge.svg; over the
    /// protocol also latency.json, the request times.
    #[arg(long, value_name = "DIR", default_value = "tern-sim-report")]
    report_dir: PathBuf,

    /// Stop running cases after this many in a row end in an error (the
    /// rest are reported as errors); 0 never stops.
    #[arg(long, default_value_t = tern_harness::certify::GIVE_UP_AFTER, value_name = "N")]
    give_up_after: usize,

    #[command(flatten)]
    timeouts: TimeoutArgs,

    #[command(flatten)]
    determinism: DeterminismArg,

    /// `human` prints the summary; `json` prints report.json.
    #[arg(long, value_enum, default_value_t = FormatArg::Human)]
    format: FormatArg,

    #[command(flatten)]
    shards: ShardArgs,
}

impl CertifyArgs {
    /// Every option that changes a certification's results.
    fn options(&self) -> Options {
        let mut o = Options::default();
        o.list("--impl", &self.implementations)
            .list(
                "--mutant",
                &self
                    .mutants
                    .iter()
                    .map(|m| m.name().to_owned())
                    .collect::<Vec<_>>(),
            )
            .set("--reference", self.reference)
            .set("--level", Level::from(self.level).as_str())
            .set("--only", self.only.clone().unwrap_or_default())
            .set("--seeds", self.seeds)
            .set("--seed", self.seed)
            .set("--agents", self.agents)
            .set("--steps", self.steps)
            .set("--explore", self.explore)
            .set("--no-explore", self.no_explore)
            .set("--give-up-after", self.give_up_after);
        self.timeouts.record(&mut o);
        self.determinism.record(&mut o);
        o
    }
}

/// Whether the work must stop: an interrupt, or the machine failing.
fn stop() -> bool {
    interrupted().is_some() || machine::fault().is_some()
}

pub fn run(args: CertifyArgs) -> Exit {
    let corpus = match load_corpus(args.scenarios.as_deref(), "certify") {
        Ok(c) => c,
        Err(s) => return s,
    };
    let cases = corpus.select(args.only.as_deref());
    if cases.is_empty() {
        errln!(
            "tern-sim certify: no case ID contains `{}`",
            args.only.as_deref().unwrap_or_default()
        );
        return Exit::Trouble;
    }
    let shard = args.shards.share();
    let baseline = match outputs_ready(&args) {
        Ok(b) => b,
        Err(s) => return s,
    };
    let limits = args.timeouts.limits();
    let (scopes, left_out) = match scopes_of(&args, &corpus) {
        Ok(s) => s,
        Err(s) => return s,
    };
    let subjects = match under_test(&args, limits) {
        Ok(u) => u,
        Err(s) => return s,
    };
    let level = Level::from(args.level);
    let plan = Plan {
        subjects,
        level,
        budget: certify::budget(args.seeds, args.seed, args.agents, args.steps, level, shard),
        soak: args.duration.map(Soak),
        scopes,
        give_up_after: args.give_up_after,
        determinism: args.determinism.sample(),
    };
    let context = Context {
        args: &args,
        plan: &plan,
        cases: &cases,
        shard,
        human: matches!(args.format, FormatArg::Human),
        jobs: args.jobs.get(),
        share_of_cases: cases.iter().filter(|c| shard.takes_name(&c.id)).count(),
    };
    if context.human {
        context.announce(&corpus);
    }
    if let Some(note) = scopes_left_out_note(&left_out).filter(|_| context.human) {
        noteln!("{}", escape::terminal(&note));
    }
    // From here on an interrupt is noted, children are killed at once, and
    // the reports are still written, marked as interrupted.
    defer_interrupts();
    let display = Display::new(context.human, args.shards.shard().is_some());
    let results = certify::certify(
        &plan,
        Share {
            cases: &cases,
            shard: context.shard,
            jobs: context.jobs,
        },
        &|event| display.hear(event),
        &stop,
    );
    // Per implementation, each simulation run's counts: a shard's part
    // keeps them for the merge.
    let run_counts = display.counts();
    if let Some(status) = super::machine_trouble("certify") {
        return status;
    }
    let was_interrupted = interrupted();
    let mut report = Report::build(
        &corpus,
        &cases,
        args.only.as_deref(),
        level,
        &plan.budget,
        was_interrupted.is_some(),
        &results,
    );
    report.scopes_left_out = left_out;
    if let (Some(old), Some(path)) = (&baseline, &args.baseline) {
        report.baseline = Some(classify(&path.to_string_lossy(), old, &report));
    }
    report.simulation_budget.duration = args
        .duration
        .map(|d| humantime::format_duration(d).to_string());
    if let Some(shard) = args.shards.shard() {
        return context.write_part(shard, &corpus.hash, report, run_counts, was_interrupted);
    }
    publish(&report, &args.report_dir, context.human)
}

/// The report folder (or a shard's part folder) and the baseline, checked
/// before any work starts: a certification must not run for minutes only
/// to find it cannot write its verdict. The baseline, if any.
fn outputs_ready(args: &CertifyArgs) -> Result<Option<Report>, Exit> {
    if args.shards.shard().is_some() {
        args.shards.prepare("certify")?;
    } else if let Err(e) = write::prepare(&args.report_dir) {
        errln!(
            "tern-sim certify: --report-dir {}",
            escape::terminal(&e.to_string())
        );
        return Err(Exit::Trouble);
    }
    // A baseline that cannot be used is said at once, like the folder.
    match args.baseline.as_deref().map(load_baseline).transpose() {
        Ok(b) => Ok(b),
        Err(e) => {
            errln!(
                "tern-sim certify: --baseline {}",
                escape::terminal(&e.to_string())
            );
            Err(Exit::Trouble)
        }
    }
}

/// The built-in scopes this corpus can give, and those left out (none
/// with `--no-explore`).
fn scopes_of(args: &CertifyArgs, corpus: &Corpus) -> Result<(Vec<Scope>, Vec<ScopeLeftOut>), Exit> {
    if args.no_explore {
        return Ok((Vec::new(), Vec::new()));
    }
    builtin::usable(corpus).map_err(|e| {
        errln!(
            "tern-sim certify: the built-in scopes cannot be used with this corpus: {}",
            escape::terminal(&e.to_string())
        );
        Exit::Trouble
    })
}

/// The implementations named, each with the flag that names it on a
/// command line and whether it is explored; a label named twice is a
/// usage error.
fn under_test(args: &CertifyArgs, limits: Limits) -> Result<Vec<Subject>, Exit> {
    let in_process = Explore::of(false, args.explore, args.no_explore);
    let mut subjects: Vec<Subject> = Vec::new();
    if args.reference || (args.implementations.is_empty() && args.mutants.is_empty()) {
        subjects.push(Subject {
            label: "reference".to_owned(),
            flag: String::new(),
            explore: in_process,
            implementation: Box::new(ReferenceImpl),
        });
    }
    for m in &args.mutants {
        subjects.push(Subject {
            label: m.name().to_owned(),
            flag: format!(" --mutant {}", m.name()),
            explore: in_process,
            implementation: Box::new(MutantImpl(*m)),
        });
    }
    for cmd in &args.implementations {
        match SubprocessImpl::new(cmd.as_str(), limits) {
            Ok(s) => subjects.push(Subject {
                label: cmd.clone(),
                flag: format!(" --impl {}{}", shell_quoted(cmd), args.timeouts.flag()),
                explore: Explore::of(true, args.explore, args.no_explore),
                implementation: Box::new(s),
            }),
            Err(e) => {
                errln!("tern-sim certify: cannot prepare state directories: {e}");
                return Err(Exit::Trouble);
            }
        }
    }
    certify::subjects(subjects).map_err(|e| {
        errln!("tern-sim certify: {}", escape::terminal(&e.to_string()));
        Exit::Trouble
    })
}

/// How the plan is carried out on this command line: the cases selected,
/// the shard, and what the terminal shows.
struct Context<'a> {
    args: &'a CertifyArgs,
    plan: &'a Plan,
    cases: &'a [&'a Case],
    shard: Shard,
    human: bool,
    jobs: Jobs,
    share_of_cases: usize,
}

const TEMPLATE: &str = "{prefix} {bar:30} {pos}/{len} {msg}";

/// What the terminal shows of a certification as it hears it: a bar for
/// each part that runs, the determinism check announced, and each
/// implementation's times; and each simulation run's counts, kept for a
/// shard's part.
struct Display {
    human: bool,
    sharded: bool,
    bar: Mutex<Option<Progress>>,
    /// The corpus's, the simulation's (its determinism check included)
    /// and the exploration's time, of the implementation under way.
    took: Mutex<[Duration; 3]>,
    /// Per implementation, in order.
    counts: Mutex<Vec<Vec<Stats>>>,
}

impl Display {
    fn new(human: bool, sharded: bool) -> Display {
        Display {
            human,
            sharded,
            bar: Mutex::new(None),
            took: Mutex::new([Duration::ZERO; 3]),
            counts: Mutex::new(Vec::new()),
        }
    }

    fn hear(&self, event: Event<'_>) {
        match event {
            Event::PartStarted {
                label,
                part: events::Part::Determinism,
                ..
            } => {
                if self.human {
                    noteln!(
                        "{}: playing seeds twice to check determinism...",
                        escape::terminal(label)
                    );
                }
            }
            Event::PartStarted {
                label,
                part,
                len,
                workers,
            } => {
                if part == events::Part::Corpus {
                    locked(&self.counts).push(Vec::new());
                }
                let progress =
                    Progress::new(self.human && len > 0 && !stop(), len, TEMPLATE, workers);
                progress
                    .bar
                    .set_prefix(format!("{}: {}", escape::terminal(label), part.name()));
                *locked(&self.bar) = Some(progress);
            }
            Event::PartEnded { label, part, took } => {
                if let Some(progress) = locked(&self.bar).take() {
                    progress.finish();
                }
                let mut times = locked(&self.took);
                times[match part {
                    events::Part::Corpus => 0,
                    events::Part::Simulation | events::Part::Determinism => 1,
                    events::Part::Exploration => 2,
                }] += took;
                if part == events::Part::Exploration && self.human {
                    noteln!(
                        "{}: corpus in {:.1} s, simulation in {:.1} s, exploration in {:.1} s",
                        escape::terminal(label),
                        times[0].as_secs_f64(),
                        times[1].as_secs_f64(),
                        times[2].as_secs_f64()
                    );
                }
                if part == events::Part::Exploration {
                    *times = [Duration::ZERO; 3];
                }
            }
            event => {
                if let (true, Event::Run { played, .. }) = (self.sharded, event) {
                    if let Some(runs) = locked(&self.counts).last_mut() {
                        runs.push(played.stats.clone());
                    }
                }
                if let Some(progress) = locked(&self.bar).as_ref() {
                    progress.hear(event);
                }
            }
        }
    }

    fn counts(self) -> Vec<Vec<Stats>> {
        self.counts.into_inner().unwrap_or_else(|e| e.into_inner())
    }
}

impl Context<'_> {
    /// The line that says what is about to be certified, and a shard's
    /// share of it.
    fn announce(&self, corpus: &Corpus) {
        let (args, budget, scopes) = (self.args, &self.plan.budget, &self.plan.scopes);
        let runs = match self.plan.soak {
            Some(Soak(d)) => format!(
                "a soak of {} (at least {} runs to certify)",
                humantime::format_duration(d),
                budget.seeds
            ),
            None => format!("{} simulation run(s)", budget.seeds),
        };
        outln!(
            "tern-sim certify: {} case(s) of corpus {} ({}), then {runs} from seed {} ({} agents × {} steps, all faults), at `{}` level",
            self.cases.len(),
            &corpus.hash[..12],
            match &corpus.origin {
                Origin::BuiltIn => "built in".to_owned(),
                Origin::Folder(dir) => format!("from {}", escape::terminal(&dir.to_string_lossy())),
            },
            budget.first_seed,
            budget.agents,
            budget.steps,
            self.plan.level.as_str()
        );
        if let Some(shard) = args.shards.shard() {
            outln!(
                "shard {shard}: {} case(s), {} run(s){}",
                self.share_of_cases,
                budget.share(),
                if scopes.is_empty() {
                    String::new()
                } else {
                    format!(
                        ", {} scope(s)",
                        scopes.iter().filter(|s| shard.takes_name(&s.id)).count()
                    )
                }
            );
        }
    }

    /// A shard's part, for `tern-sim merge`, instead of the reports.
    fn write_part(
        &self,
        shard: Shard,
        corpus_hash: &str,
        report: Report,
        run_counts: Vec<Vec<Stats>>,
        was_interrupted: Option<i32>,
    ) -> Exit {
        let args = self.args;
        let mut header = header(
            Command::Certify,
            shard,
            args.options(),
            was_interrupted.is_none(),
        );
        header.corpus_hash = Some(corpus_hash.to_owned());
        header.work.insert(
            "cases".to_owned(),
            self.cases.iter().map(|c| c.id.clone()).collect(),
        );
        header.work.insert(
            "scopes".to_owned(),
            self.plan.scopes.iter().map(|s| s.id.clone()).collect(),
        );
        let part = Part {
            part: header,
            body: certify_part::Body {
                attachments: report.attachments.clone(),
                report,
                give_up_after: self.plan.give_up_after,
                runs: run_counts,
            },
        };
        let status = args.shards.write(&part, self.human);
        if let Some(signal) = was_interrupted {
            errln!("tern-sim certify: interrupted by signal {signal}; the part says so, and merge will refuse it");
            return Exit::Interrupted(signal);
        }
        status
    }
}
