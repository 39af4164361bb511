//! `tern-sim explore`: every schedule of small scopes, checked against the
//! oracle at every move; a violation is saved as a trace for `replay`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use clap::Args;
use tern_harness::contract::plugin::{Durability, Implementation, PowerLossServed};
use tern_harness::events::{Event, Work};
use tern_harness::explore::builtin;
use tern_harness::explore::scope::{FaultBudget, Scope};
use tern_harness::explore::search::{FailingSchedule, Limits, Prepared, ScopeVerdict, Watch};
use tern_harness::explore::sweep::{sweep, Claims, DoesNotStart, ExploredScope, Sweep};
use tern_harness::explore::trace;
use tern_harness::implementations::adapter::{defer_interrupts, interrupted};
use tern_harness::implementations::machine;
use tern_harness::implementations::mutants::Mutant;
use tern_harness::judge::compare::RejectNames;
use tern_harness::shard::Shard;
use tern_reports::explore::{counterexample_text, document, summary, Explored};
use tern_reports::shards::explore::Body;
use tern_reports::shards::{Command, Part};

use super::corpus::load_corpus;
use super::progress::Progress;
use super::shard::{header, Options, ShardArgs};
use super::sim::{implementation, parse_mutant, TimeoutArgs};
use super::{Exit, FormatArg};
use tern_harness::implementations::locked;
use tern_reports::escape::t as tty;

#[derive(Debug, Args)]
pub struct ExploreArgs {
    /// Built-in scopes to explore, `corpus` for the corpus family (default:
    /// all of them and the corpus family; `--list` names them).
    #[arg(value_name = "SCOPE")]
    scopes: Vec<String>,

    /// A corpus case as a scope: its deliveries and executions as a set,
    /// every order and crash point (repeatable).
    #[arg(long = "case", value_name = "ID")]
    cases: Vec<String>,

    /// The corpus family takes the cases with at most this many distinct
    /// deliveries and executions (the states grow as 2^N).
    #[arg(long, default_value_t = 12, value_name = "N")]
    max_actions: usize,

    /// A scope file (docs/explore.md §4; repeatable).
    #[arg(long = "scope-file", value_name = "PATH")]
    files: Vec<PathBuf>,

    /// List the built-in scopes and exit.
    #[arg(long)]
    list: bool,

    /// Crashes a schedule may use, for every scope explored (default: the
    /// scope's own budget; 1 for --case).
    #[arg(long, value_name = "N")]
    crashes: Option<u8>,

    /// Extra deliveries of an answered frame a schedule may use, for every
    /// scope explored (default: the scope's own budget; 0 for --case).
    #[arg(long, value_name = "N")]
    duplicates: Option<u8>,

    /// Explore every schedule, without merging schedules that reach the
    /// same state (slower; makes no assumption about hidden state).
    #[arg(long)]
    no_merge: bool,

    /// Play every order of deliveries the oracle shows commute, every move
    /// from states that differ only in the last frame answered, and every
    /// crash at the effect of an execution the oracle refuses, instead of
    /// leaving out the moves whose futures another move covers (slower;
    /// makes no assumption that the implementation commutes what the
    /// oracle commutes).
    #[arg(long)]
    no_sleep_sets: bool,

    /// Stop a scope, not exhausted, once it has this many distinct states.
    #[arg(long, default_value_t = 2_000_000, value_name = "N")]
    max_states: u64,

    /// Threads that play each layer of the search (default: one per
    /// core). Each layer is judged in order afterwards, so the output does
    /// not depend on it.
    #[arg(long, value_name = "N")]
    jobs: Option<std::num::NonZeroUsize>,

    /// Explore a mutant of the zoo instead of the reference.
    #[arg(long, value_parser = parse_mutant(), conflicts_with = "implementation")]
    mutant: Option<Mutant>,

    /// Explore an implementation in another process (docs/protocol.md).
    #[arg(long = "impl", value_name = "COMMAND")]
    implementation: Option<String>,

    #[command(flatten)]
    timeouts: TimeoutArgs,

    /// The corpus folder, for --case and built-in scopes drawn from cases,
    /// instead of the corpus built into tern-sim.
    #[arg(long, value_name = "DIR")]
    scenarios: Option<PathBuf>,

    /// Where counterexample traces are saved.
    #[arg(long, default_value = "tern-sim-traces")]
    trace_dir: PathBuf,

    /// Output format: `human` (a table per scope), or `json` for one document
    /// with no times in it.
    #[arg(long, value_enum, default_value_t = FormatArg::Human)]
    format: FormatArg,

    #[command(flatten)]
    shards: ShardArgs,
}

impl ExploreArgs {
    /// Every option that changes the results.
    fn options(&self) -> Options {
        let files: Vec<String> = self.files.iter().map(|f| f.display().to_string()).collect();
        let mut o = Options::default();
        o.list("SCOPE", &self.scopes)
            .list("--case", &self.cases)
            .list("--scope-file", &files)
            .set("--max-actions", self.max_actions)
            .set(
                "--crashes",
                self.crashes.map(|n| n.to_string()).unwrap_or_default(),
            )
            .set(
                "--duplicates",
                self.duplicates.map(|n| n.to_string()).unwrap_or_default(),
            )
            .set("--no-merge", self.no_merge)
            .set("--no-sleep-sets", self.no_sleep_sets)
            .set("--max-states", self.max_states)
            .set(
                "--mutant",
                self.mutant.map(|m| m.name().to_owned()).unwrap_or_default(),
            )
            .set("--impl", self.implementation.clone().unwrap_or_default());
        self.timeouts.record(&mut o);
        o
    }
}

/// The scopes asked for, in the order given: named built-ins (all of them
/// when nothing is named), cases, then files.
fn scopes(args: &ExploreArgs) -> Result<(Vec<Scope>, Option<String>), String> {
    // Built-in scopes and cases need the corpus; a scope file only if it
    // names a case (and then says so if the corpus is missing).
    let needs_corpus = args.files.is_empty() || !args.cases.is_empty() || !args.scopes.is_empty();
    let corpus = if needs_corpus {
        Some(load_corpus(args.scenarios.as_deref(), "explore").map_err(|_| String::new())?)
    } else {
        super::corpus::read(args.scenarios.as_deref()).ok()
    };
    let mut out = Vec::new();
    let everything = args.scopes.is_empty() && args.cases.is_empty() && args.files.is_empty();
    let family = |corpus: Option<&tern_harness::corpus::Corpus>| {
        corpus
            .map(|c| builtin::corpus_family(c, args.max_actions))
            .ok_or("the corpus cannot be read")
    };
    if everything {
        out.extend(builtin::all(corpus.as_ref()).map_err(|e| e.to_string())?);
        out.extend(family(corpus.as_ref())?);
    }
    for name in &args.scopes {
        if name == builtin::CORPUS {
            out.extend(family(corpus.as_ref())?);
        } else {
            out.push(builtin::by_name(name, corpus.as_ref()).map_err(|e| e.to_string())?);
        }
    }
    for id in &args.cases {
        let case = corpus
            .as_ref()
            .and_then(|c| c.cases.iter().find(|c| &c.id == id))
            .ok_or_else(|| format!("no corpus case `{id}`"))?;
        out.push(Scope::from_case(
            case,
            FaultBudget {
                crashes: 1,
                duplicates: 0,
            },
        ));
    }
    for file in &args.files {
        let text = std::fs::read_to_string(file)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        out.push(Scope::from_json(file, &text, corpus.as_ref()).map_err(|e| e.to_string())?);
    }
    for s in &mut out {
        if let Some(n) = args.crashes {
            s.budget.crashes = n;
        }
        if let Some(n) = args.duplicates {
            s.budget.duplicates = n;
        }
    }
    Ok((out, corpus.map(|c| c.hash)))
}

pub fn run(args: ExploreArgs) -> Exit {
    if args.list {
        for (name, title) in builtin::list() {
            outln!("{name:<28} {title}");
        }
        return Exit::Ok;
    }
    if let Err(s) = args.shards.prepare("explore") {
        return s;
    }
    let (all_scopes, corpus_hash) = match scopes(&args) {
        Ok(s) => s,
        Err(e) => {
            if !e.is_empty() {
                errln!("tern-sim explore: {}", tty(&e));
            }
            return Exit::Trouble;
        }
    };
    let shard = args.shards.share();
    let scopes: Vec<&Scope> = all_scopes
        .iter()
        .filter(|s| shard.takes_name(&s.id))
        .collect();
    let limits = args.timeouts.limits();
    let imp = match implementation(args.mutant, args.implementation.as_deref(), limits) {
        Ok(imp) => imp,
        Err(e) => {
            errln!("tern-sim explore: cannot prepare state directories: {e}");
            return Exit::Trouble;
        }
    };
    let human = matches!(args.format, FormatArg::Human);
    let jobs = args.jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        |n| n.get(),
    );
    if human {
        announce(&args, scopes.len(), &imp.name());
    }
    // Scopes that crash are explored with power-loss crashes where the
    // implementation can have them: what that means here, said once.
    let durability = {
        let _power = PowerLossServed::on(imp.as_ref(), true);
        imp.durability()
    };
    let durability = (durability != Durability::Simulated).then(|| durability.label());
    if let Some(d) = durability.as_ref().filter(|_| human) {
        outln!("durability: {d}");
    }
    defer_interrupts();
    let search = Limits {
        merge: !args.no_merge,
        sleep_sets: !args.no_sleep_sets,
        max_states: args.max_states,
        jobs,
        power_loss: true,
    };
    let watch = Watch::default();
    let policy = Sweep {
        limits: search,
        names: RejectNames::default(),
        claims: Claims::EachScope,
        until_first: false,
        watch: &watch,
    };
    let (explored, unsaved) = match sweep_shown(&args, &scopes, imp.as_ref(), &policy, human) {
        Ok(swept) => swept,
        Err(e) => {
            errln!("tern-sim explore: {}", tty(&e.to_string()));
            return Exit::Trouble;
        }
    };
    if let Some(status) = super::machine_trouble("explore") {
        return status;
    }
    let body = Body {
        implementation: imp.name(),
        merge: !args.no_merge,
        max_states: args.max_states,
        scopes: explored,
        unsaved,
        durability,
    };
    if let Some(shard) = args.shards.shard() {
        return write_part(&args, shard, corpus_hash, &all_scopes, body, human);
    }
    let status = print_outcome(&body, human);
    super::output::flush();
    if let Some(signal) = interrupted() {
        return Exit::Interrupted(signal);
    }
    status
}

/// The first line of the human output: the scopes, the implementation and
/// how the search is reduced.
fn announce(args: &ExploreArgs, scopes: usize, implementation: &str) {
    outln!(
        "tern-sim explore: {} scope(s), implementation: {}, {}",
        scopes,
        implementation,
        match (args.no_merge, args.no_sleep_sets) {
            (true, true) => "every schedule (no merging, no sleep sets)",
            (true, false) => "no merging; orders of commuting deliveries left out by sleep sets",
            (false, true) => "schedules reaching one state merged; no sleep sets",
            (false, false) =>
                "schedules reaching one state merged, orders of commuting deliveries left out by sleep sets",
        }
    );
}

/// Explores `scopes` under `policy`, each reported as it ends, with a
/// spinner (when `human`) that a thread of its own keeps telling the scope
/// under way, its depth, states and moves so far. Also whether a trace
/// could not be saved.
fn sweep_shown(
    args: &ExploreArgs,
    scopes: &[&Scope],
    imp: &dyn Implementation,
    policy: &Sweep<'_>,
    human: bool,
) -> Result<(Vec<Explored>, bool), DoesNotStart> {
    let name = imp.name();
    let mut explored = Vec::new();
    let mut unsaved = false;
    let progress = Progress::new(human, 0, "{spinner} {msg}", 1);
    let under_way = Mutex::new(scopes.first().map_or_else(String::new, |s| s.id.clone()));
    let listener = |e: Event<'_>| {
        if let Event::Started {
            work: Work::Scope(id),
            ..
        } = e
        {
            *locked(&under_way) = id.to_owned();
        }
    };
    let stop = || interrupted().is_some() || machine::fault().is_some();
    let watch = policy.watch;
    let done = AtomicBool::new(false);
    let swept = std::thread::scope(|s| {
        let ticker = s.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                progress.bar.set_message(format!(
                    "{}: depth {}, {} states, {} moves judged",
                    locked(&under_way),
                    watch.depth.load(Ordering::Relaxed),
                    watch.states.load(Ordering::Relaxed),
                    watch.transitions.load(Ordering::Relaxed)
                ));
                progress.bar.tick();
                std::thread::park_timeout(Duration::from_millis(100));
            }
        });
        let report = |scope: &Scope, prepared: &Prepared, done: &ExploredScope| {
            let x = found_and_saved(args, scope, prepared, done, &name, &mut unsaved);
            if human && args.shards.shard().is_none() {
                progress.suspend(|| print_found(&x));
            }
            explored.push(x);
        };
        let swept = sweep(
            scopes.iter().copied(),
            imp,
            policy,
            &listener,
            report,
            &stop,
        );
        done.store(true, Ordering::Relaxed);
        ticker.thread().unpark();
        let _ = ticker.join();
        swept
    });
    progress.finish();
    swept.map(|_| (explored, unsaved))
}

/// A scope explored, as reported: its counterexample, if any, saved as
/// a trace for `replay` (`unsaved` set when that failed, once said).
fn found_and_saved(
    args: &ExploreArgs,
    scope: &Scope,
    prepared: &Prepared,
    explored: &ExploredScope,
    implementation: &str,
    unsaved: &mut bool,
) -> Explored {
    let exploration = &explored.exploration;
    let saved = exploration.violation.as_ref().and_then(|ce| {
        let power_loss = exploration.power_loss;
        let saved = save_trace(args, scope, prepared, ce, implementation, power_loss);
        *unsaved |= saved.is_err();
        saved.ok()
    });
    Explored::new(
        &scope.id,
        &scope.clauses,
        exploration,
        explored.took,
        explored.shorthand.clone(),
        saved,
    )
}

/// Saves a scope's counterexample as a trace for `replay`: its path, or
/// `Err` once the failure to write it is said.
fn save_trace(
    args: &ExploreArgs,
    scope: &Scope,
    prepared: &Prepared,
    ce: &FailingSchedule,
    implementation: &str,
    power_loss: bool,
) -> Result<String, ()> {
    let path = args.trace_dir.join(format!("explore-{}.json", scope.id));
    let doc = trace::document(scope, prepared, ce, implementation, power_loss);
    let written = std::fs::create_dir_all(&args.trace_dir)
        .and_then(|()| std::fs::write(&path, format!("{doc:#}\n")));
    match written {
        Ok(()) => Ok(path.display().to_string()),
        Err(e) => {
            errln!(
                "tern-sim explore: could not save the trace to {}: {e}",
                path.display()
            );
            Err(())
        }
    }
}

/// A shard's part, for `tern-sim merge`, instead of the summary.
fn write_part(
    args: &ExploreArgs,
    shard: Shard,
    corpus_hash: Option<String>,
    all_scopes: &[Scope],
    body: Body,
    human: bool,
) -> Exit {
    let mut header = header(
        Command::Explore,
        shard,
        args.options(),
        interrupted().is_none(),
    );
    header.corpus_hash = corpus_hash;
    header.work.insert(
        "scopes".to_owned(),
        all_scopes.iter().map(|s| s.id.clone()).collect(),
    );
    let part = Part { part: header, body };
    let status = args.shards.write(&part, human);
    if let Some(signal) = interrupted() {
        return Exit::Interrupted(signal);
    }
    status
}

/// A scope's counterexample for people, as it is found.
pub fn print_found(x: &Explored) {
    if let Some(f) = &x.violation {
        out!("{}", counterexample_text(&x.scope, f));
        if let Some(p) = &f.trace {
            outln!("  trace saved: {p}\n  replay: tern-sim replay {p}");
        }
    }
}

/// The end of `explore`'s output and its status: from one machine, or
/// from merged parts.
pub fn print_outcome(body: &Body, human: bool) -> Exit {
    let explored = &body.scopes;
    if human {
        outln!("{}", summary(explored));
        outln!(
            "{}",
            tern_reports::explore::situations_table(
                explored,
                explored
                    .iter()
                    .any(|x| x.verdict == ScopeVerdict::Violation)
            )
        );
        let not_exhausted = explored
            .iter()
            .filter(|x| x.verdict == ScopeVerdict::NotExhausted)
            .count();
        if not_exhausted > 0 && interrupted().is_none() {
            outln!(
                "{not_exhausted} scope(s) not exhausted: --max-states {} reached; raise it, or shrink the scope",
                body.max_states
            );
        }
    } else {
        let mut doc = document(&body.implementation, body.merge, explored);
        if let Some(d) = &body.durability {
            doc["durability"] = serde_json::Value::from(d.as_str());
        }
        outln!("{doc}");
    }
    // A violation decides, whatever the order of the scopes, unless its
    // trace was lost; then a scope not exhausted.
    if body.unsaved {
        Exit::Trouble
    } else if explored.iter().any(|x| x.violation.is_some()) {
        Exit::Violation
    } else if explored.iter().any(|x| !x.exhausted) {
        Exit::Trouble
    } else {
        Exit::Ok
    }
}
