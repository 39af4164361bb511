//! The plug-in contract over a child process speaking `tern-sim/1`.
//!
//! A crash is a SIGKILL of the child and of every process it started
//! (including those that left its process group: see [`crate::implementations::reaper`]) at
//! the chosen point; a restart runs the command again, the same way, on the
//! same state directory. Every request, its writing as well as its answer,
//! has a deadline, every line a size limit, and every answer is checked for
//! form, so an implementation that hangs, stops reading, exits, floods or
//! prints garbage gets a verdict naming what it did, with the tail of its
//! stderr, and never a hang.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tern_model::ledger::{Execution, LocalTime};
use tern_model::message::{MessageRef, Principal, ThreadId};

use crate::contract::plugin::{
    Capability, Delivered, Durability, Identity, ImplError, Implementation, InitParams, Receiver,
    View,
};
use crate::contract::protocol::lines::{
    self, DeliverAnswer, ExecuteAnswer, InitAnswer, Op, Request,
};
use crate::contract::protocol::{
    config_text, decode_bytes, encode_bytes, event_of_line, execution_of, PROTOCOL,
};
use crate::contract::storage::{CrashPoint, FileOp, Storage};
use crate::contract::world::AgentWorld;
use crate::implementations::affinity;
pub use crate::implementations::child_process::{direct_argv, launcher};
use crate::implementations::child_process::{view_request, Answered, ChildProcess};
pub use crate::implementations::exit_guard::{defer_interrupts, interrupted};
use crate::implementations::exit_guard::{forget_root, register_root};
use crate::implementations::locked;
use crate::implementations::machine;
use crate::implementations::state_dirs::{StateDir, StateDirError, StateDirs, Watch};
use crate::implementations::stderr_log::ThreadLogs;

/// Overrides where state roots are made.
pub const STATE_DIR_VAR: &str = "TERN_SIM_STATE_DIR";

/// What a child is held to.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub startup: Duration,
    pub request: Duration,
    /// Longest line accepted from the child.
    pub line_bytes: usize,
    /// Most lines (effects, noise) accepted before one answer.
    pub lines_per_answer: usize,
    /// `--strict-protocol`: every line must have the exact form of
    /// docs/protocol.schema.json ([`crate::contract::protocol::strict`]), not only what the lenient
    /// reading of docs/protocol.md needs.
    pub strict: bool,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            startup: Duration::from_secs(10),
            request: Duration::from_secs(5),
            line_bytes: 16 << 20,
            lines_per_answer: 10_000,
            strict: false,
        }
    }
}

/// An implementation: COMMAND started directly when it is plain words
/// ([`direct_argv`]), else by `sh` (see [`launcher`]), one process per
/// agent and start, each agent with a state directory under one root
/// that is removed when this is dropped or tern-sim exits.
pub struct SubprocessImpl {
    command: String,
    limits: Limits,
    /// `None` only while dropping.
    root: Option<tempfile::TempDir>,
    /// Each storage's state directory, until its receiver is dismissed.
    dirs: Arc<StateDirs>,
    /// What a crash can take here: whether FUSE can serve power losses.
    durability: Durability,
    /// Whether state directories are served by tern-statefs, so that a
    /// crash can be a power loss ([`Implementation::enable_power_loss`]).
    power: std::sync::atomic::AtomicBool,
    /// A cap on the wait for one answer, set while shrinking a timeout
    /// (see [`Implementation::cap_request_wait`]).
    cap: Mutex<Option<Duration>>,
    /// The stderr of every process, by the thread that started it.
    logs: ThreadLogs,
    /// Processes that claimed `reinit`, waiting for a fresh start.
    idle: Arc<Idle>,
}

/// Processes that claimed `reinit` and ended a session without a crash,
/// kept for the next fresh start: that start is then an `init` on pipes
/// already open, not a new process, which over the protocol is most of
/// what a start costs. Shared by every thread: a process's stderr goes to
/// the log of the thread that takes it ([`ChildProcess::log_to`]).
///
/// (Spawning processes ahead for the starts that need a new one, after a
/// crash, was tried and measured slower: the start-up work moves, it does
/// not go.)
struct Idle {
    kept: Mutex<Vec<ChildProcess>>,
    /// Off while a failing run is shrunk or replayed on fresh processes
    /// only ([`Implementation::set_process_reuse`]): nothing is kept then.
    allowed: std::sync::atomic::AtomicBool,
    /// Fresh starts that took a kept process.
    reused: std::sync::atomic::AtomicU64,
}

impl Default for Idle {
    fn default() -> Idle {
        Idle {
            kept: Mutex::default(),
            allowed: std::sync::atomic::AtomicBool::new(true),
            reused: std::sync::atomic::AtomicU64::new(0),
        }
    }
}

/// Enough for every agent of a run on every worker; a process beyond
/// these is shut down.
const IDLE_MOST: usize = 32;

impl Idle {
    /// A process started on `home` (see [`affinity`]), the one kept last.
    fn take(&self, home: Option<usize>) -> Option<ChildProcess> {
        let mut idle = locked(&self.kept);
        let at = idle.iter().rposition(|c| c.home == home)?;
        self.reused.fetch_add(1, Ordering::Relaxed);
        Some(idle.remove(at))
    }

    fn keep(&self, child: ChildProcess) {
        let mut idle = locked(&self.kept);
        if idle.len() < IDLE_MOST && self.allowed.load(Ordering::Relaxed) {
            idle.push(child);
        }
        // (Else `child` is dropped here: shut down, then killed.)
    }

    /// Shuts every idle process down: before the state root goes, since
    /// they may hold files in it open.
    fn clear(&self) {
        let kept = std::mem::take(&mut *locked(&self.kept));
        crate::implementations::child_process::shut_down_all(kept);
    }
}

/// Where state roots are made: `$TERN_SIM_STATE_DIR` or `$TMPDIR` when set
/// (in that order), else `/dev/shm` when a directory can be made there (it
/// is memory-backed, so an implementation's syncs cost little), else the
/// system's temporary directory.
fn make_root() -> std::io::Result<tempfile::TempDir> {
    let builder = || {
        let mut b = tempfile::Builder::new();
        b.prefix("tern-sim-state-");
        b
    };
    for var in [STATE_DIR_VAR, "TMPDIR"] {
        if let Some(dir) = std::env::var_os(var).filter(|d| !d.is_empty()) {
            return builder().tempdir_in(dir);
        }
    }
    builder()
        .tempdir_in("/dev/shm")
        .or_else(|_| builder().tempdir())
}

impl SubprocessImpl {
    pub fn new(command: impl Into<String>, limits: Limits) -> std::io::Result<SubprocessImpl> {
        crate::implementations::exit_guard::install();
        let root = make_root()?;
        register_root(root.path());
        let durability = match tern_statefs::probe() {
            Ok(()) => Durability::PowerLoss,
            Err(why) => Durability::KillOnly { reason: why.reason },
        };
        Ok(SubprocessImpl {
            command: command.into(),
            limits,
            root: Some(root),
            dirs: Arc::default(),
            durability,
            power: std::sync::atomic::AtomicBool::new(false),
            cap: Mutex::new(None),
            logs: ThreadLogs::default(),
            idle: Arc::default(),
        })
    }

    /// The limits a child started now gets: the configured ones, each wait
    /// no longer than the cap while one is set.
    fn limits_now(&self) -> Limits {
        let cap = *locked(&self.cap);
        match cap {
            None => self.limits,
            Some(cap) => Limits {
                startup: self.limits.startup.min(cap),
                request: self.limits.request.min(cap),
                ..self.limits
            },
        }
    }

    fn root(&self) -> &Path {
        self.root
            .as_ref()
            .map_or(Path::new("/nonexistent"), |r| r.path())
    }

    /// One state directory per agent per run, kept across its restarts,
    /// and whether this start is the first on it (a fresh start, not a
    /// restart). A directory that cannot be made or served is the
    /// machine's fault, recorded as such: no verdict blames the
    /// implementation for it.
    fn state_dir(&self, storage: &Storage) -> Result<(StateDir, bool), ImplError> {
        let power = self.power.load(Ordering::Relaxed);
        self.dirs
            .get(self.root(), storage.id(), power)
            .map_err(|e| machine_trouble(self.root(), e))
    }

    /// The process a start talks to: one kept from an earlier session
    /// (`reinit`) when the start is fresh and one is idle, else a new one;
    /// and whether it was kept. Its stderr goes to this thread's log, which
    /// says which it is.
    fn process_for(
        &self,
        init: &InitParams,
        fresh: bool,
        limits: Limits,
    ) -> Result<(ChildProcess, bool), ImplError> {
        let log = self.logs.for_this_thread();
        // A restart after a crash always gets a new process: reusing one
        // would let a receiver keep in memory what the crash must lose.
        let reused = if fresh {
            self.idle.take(affinity::home())
        } else {
            None
        };
        let started_over = reused.is_some();
        if let Ok(mut log) = log.lock() {
            let how = if started_over {
                "started over (reinit)"
            } else {
                "started"
            };
            log.push(
                format!(
                    "[tern-sim] `{}` {how} for {}\n",
                    self.command,
                    init.participant.as_str()
                )
                .as_bytes(),
            );
        }
        let mut child = match reused {
            Some(child) => child,
            None => ChildProcess::spawn(&self.command, limits, log.clone())?,
        };
        child.limits = limits;
        child.log_to(log);
        Ok((child, started_over))
    }
}

impl Drop for SubprocessImpl {
    fn drop(&mut self) {
        // Every child in use was killed with its receiver; the idle ones
        // go now, then the state directories' file systems. Remove the
        // tree then, and leave it to the exit hook if that fails.
        self.idle.clear();
        self.dirs.clear();
        if let Some(root) = self.root.take() {
            let path = root.path().to_owned();
            if root.close().is_ok() {
                forget_root(&path);
            }
        }
    }
}

impl Implementation for SubprocessImpl {
    fn name(&self) -> String {
        format!("subprocess `{}`", self.command)
    }

    fn cap_request_wait(&self, cap: Option<Duration>) {
        *locked(&self.cap) = cap;
    }

    fn take_log(&self) -> Option<Vec<u8>> {
        Some(self.logs.take())
    }

    fn set_process_reuse(&self, allowed: bool) {
        self.idle.allowed.store(allowed, Ordering::Relaxed);
        self.idle.clear();
    }

    fn processes_reused(&self) -> u64 {
        self.idle.reused.load(Ordering::Relaxed)
    }

    fn release(&self, storage: &Storage) {
        self.dirs.remove(storage.id());
    }

    fn hash_state_dir(&self, storage: &Storage, h: &mut dyn std::hash::Hasher) {
        if let Some(dir) = self.dirs.existing(storage.id()) {
            dir.hash_state(h);
        }
    }

    fn file_ops_mark(&self, storage: &Storage) -> Option<u64> {
        self.dirs.existing(storage.id())?.ops_mark()
    }

    fn file_ops_since(&self, storage: &Storage, mark: u64) -> Vec<FileOp> {
        self.dirs
            .existing(storage.id())
            .map(|d| d.ops_since(mark))
            .unwrap_or_default()
    }

    fn durability(&self) -> Durability {
        if self.durability == Durability::PowerLoss && !self.power.load(Ordering::Relaxed) {
            // Probed, but not asked for: every crash is a kill.
            return Durability::KillOnly {
                reason: "power loss is not on for this command".into(),
            };
        }
        self.durability.clone()
    }

    fn set_power_loss(&self, on: bool) -> bool {
        let on = on && self.durability == Durability::PowerLoss;
        self.power.store(on, Ordering::Relaxed);
        on
    }

    fn start(
        &self,
        init: &InitParams,
        storage: Storage,
        world: AgentWorld,
    ) -> Result<Box<dyn Receiver>, ImplError> {
        let (dir, fresh) = self.state_dir(&storage)?;
        if !fresh {
            // A restart comes after a crash: the crash's cut is made now,
            // with the crashed process gone.
            match dir.after_crash(storage.cut()) {
                Ok(Some(note)) => storage.note(note),
                Ok(None) => {}
                Err(e) => return Err(machine_trouble(self.root(), e)),
            }
        }
        let limits = self.limits_now();
        // A crash scheduled for this recovery: before it, the process is
        // killed as it starts, so its recovery makes nothing durable; after
        // it, it is killed once it answered `init`, its recovery durable.
        // Over a power-loss state directory it can fall at one of the
        // recovery's file operations instead.
        let armed = storage.armed();
        let at_op = storage.cut().and_then(|c| c.at_op);
        let watch = armed.and_then(|_| dir.watch(at_op));
        if armed == Some(CrashPoint::BeforeSync)
            && watch.as_ref().is_none_or(|w| w.gate().is_none())
        {
            storage.fire();
            return Err(ImplError::Crashed);
        }
        let (mut child, started_over) = self.process_for(init, fresh, limits)?;
        let request = |seq| {
            Request::Init(lines::Init {
                seq,
                protocol: PROTOCOL.to_owned(),
                participant: init.participant.as_str().to_owned(),
                principal: init.principal.as_str().to_owned(),
                config: config_text(&init.config),
                state_dir: dir.path.display().to_string(),
                effects: world.performed_by_me(),
            })
        };
        child.crash_gate = watch.as_ref().and_then(Watch::gate);
        let answered = child.request(request, limits.startup, &world);
        child.crash_gate = None;
        if let Some(watch) = watch {
            // The recovery's crash: at its held file operation, or once it
            // answered `init`.
            if crashes_here(&answered, &watch) {
                storage.note(watch.settle());
                storage.fire();
                child.kill();
                return Err(ImplError::Crashed);
            }
        }
        let answer: InitAnswer = answered.map_err(|e| {
            if started_over {
                at_a_kept_process(e)
            } else {
                e
            }
        })?;
        let identity = Identity {
            name: answer.name,
            version: answer.version,
            capabilities: answer.capabilities.into_iter().collect(),
        };
        if armed == Some(CrashPoint::AfterSync) {
            storage.fire();
            child.kill();
            return Err(ImplError::Crashed);
        }
        let idle = identity
            .claims(Capability::Reinit)
            .then(|| self.idle.clone());
        Ok(Box::new(SubprocessReceiver {
            child: Some(child),
            storage,
            world,
            identity,
            idle,
            dir,
            dirs: self.dirs.clone(),
            views_next: Vec::new(),
            prefetched: Vec::new(),
        }))
    }
}

/// An `init` answered wrongly by a process kept from an earlier session:
/// a vendor reading the verdict must know this `init` was not the
/// process's first.
fn at_a_kept_process(e: ImplError) -> ImplError {
    let again = "at an `init` that starts a new session in a process kept from an earlier one, as its claim `reinit` allows:";
    match e {
        ImplError::Misbehaved(why) => ImplError::Misbehaved(format!("{again} {why}")),
        ImplError::TimedOut(why) => ImplError::TimedOut(format!("{again} {why}")),
        e => e,
    }
}

/// Whether a request with a crash armed inside it (`watch`) crashes now:
/// it reached its crash point, or it answered before reaching it (the
/// crash then falls right after the answer). Any other failure is the
/// implementation's own.
fn crashes_here<T>(answered: &Result<T, ImplError>, watch: &Watch) -> bool {
    match answered {
        Ok(_) | Err(ImplError::Crashed) => true,
        Err(_) => watch.held(),
    }
}

/// A state directory tern-sim could not make or serve: recorded as the
/// machine's fault (the command then stops with exit 2 and no verdict),
/// and the start fails.
fn machine_trouble(root: &Path, e: StateDirError) -> ImplError {
    let why = e.to_string();
    machine::record(root, format!("could not be used: {why}"));
    ImplError::Misbehaved(format!(
        "tern-sim could not serve the state directory: {why}"
    ))
}

struct SubprocessReceiver {
    /// `None` only once dismissed into `idle`.
    child: Option<ChildProcess>,
    storage: Storage,
    world: AgentWorld,
    identity: Identity,
    /// Where a dismissed process waits for reuse, if it claimed `reinit`.
    idle: Option<Arc<Idle>>,
    /// This receiver's state directory.
    dir: StateDir,
    /// The state directories, of which this receiver's goes when it is
    /// dismissed.
    dirs: Arc<StateDirs>,
    /// The views the harness will ask after the next delivery
    /// ([`Receiver::views_follow`]).
    views_next: Vec<ThreadId>,
    /// `view` requests written with the last delivery whose answers are
    /// not read yet: their seqs and threads, in order.
    prefetched: Vec<(u64, ThreadId)>,
}

/// A receiver asked anything after [`Receiver::dismiss`]: the harness's
/// mistake, never the implementation's, but an error rather than a panic.
fn dismissed() -> ImplError {
    ImplError::Misbehaved("tern-sim asked a receiver it had dismissed".into())
}

impl SubprocessReceiver {
    /// Reads the answers to views written with the last delivery that the
    /// harness did not ask for after all: the process answered them, and
    /// its next answer comes after them. Their form is held to the
    /// protocol like any answer; their views are not compared.
    fn settle_prefetched(&mut self) -> Result<(), ImplError> {
        if self.prefetched.is_empty() {
            return Ok(());
        }
        let prefetched = std::mem::take(&mut self.prefetched);
        let world = &self.world;
        let child = self.child.as_mut().ok_or_else(dismissed)?;
        let timeout = child.limits.request;
        for (seq, _) in prefetched {
            child.answer_to(
                seq,
                Op::View,
                Instant::now() + timeout,
                timeout,
                world,
                None,
            )?;
        }
        Ok(())
    }

    fn crash_now(&mut self) -> ImplError {
        self.storage.fire();
        if let Some(child) = self.child.as_mut() {
            child.kill();
        }
        ImplError::Crashed
    }
}

impl Receiver for SubprocessReceiver {
    fn identity(&self) -> Identity {
        self.identity.clone()
    }

    fn deliver(
        &mut self,
        frame: &[u8],
        principal: &Principal,
        now: LocalTime,
    ) -> Result<Delivered, ImplError> {
        let views_next = std::mem::take(&mut self.views_next);
        self.settle_prefetched()?;
        let armed = self.storage.armed();
        // Over a power-loss state directory, a crash at a sync point can
        // fall at one of the delivery's own file operations.
        let watch = armed
            .filter(|p| matches!(p, CrashPoint::BeforeSync | CrashPoint::AfterSync))
            .and_then(|_| self.dir.watch(self.storage.cut().and_then(|c| c.at_op)));
        let inside = watch.as_ref().is_some_and(|w| w.gate().is_some());
        if armed == Some(CrashPoint::BeforeSync) && !inside {
            // Killed before the frame reached it.
            return Err(self.crash_now());
        }
        let request = |seq| {
            Request::Deliver(lines::Deliver {
                seq,
                frame: encode_bytes(frame),
                principal: principal.as_str().to_owned(),
                now: now.0,
            })
        };
        // The views that follow go in the same write, unless a crash is
        // armed: a kill must find nothing asked beyond the delivery.
        let pipelined =
            armed.is_none() && !views_next.is_empty() && self.identity.claims(Capability::Pipeline);
        let world = &self.world;
        let child = self.child.as_mut().ok_or_else(dismissed)?;
        let timeout = child.limits.request;
        let then: &[ThreadId] = if pipelined { &views_next } else { &[] };
        // (An answer that cannot be read kills the process, so views asked
        // with it need no reading then.)
        child.crash_gate = watch.as_ref().and_then(Watch::gate);
        let answered = child.request_then(request, then, timeout, world);
        child.crash_gate = None;
        if let Some(watch) = watch {
            if crashes_here(&answered, &watch) {
                // At the held operation, or right after the answer, which
                // the harness never takes.
                self.storage.note(watch.settle());
                return Err(self.crash_now());
            }
        }
        let (answer, prefetched): (DeliverAnswer, _) = answered?;
        self.prefetched = prefetched;
        if armed == Some(CrashPoint::AfterSync) {
            // It answered; the harness never took the answer.
            return Err(self.crash_now());
        }
        let child = self.child.as_mut().ok_or_else(dismissed)?;
        let events = answer
            .events
            .into_iter()
            .map(event_of_line)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| child.fail(format!("answered deliver with a bad event: {e}")))?;
        let outgoing = answer
            .outgoing
            .unwrap_or_default()
            .iter()
            .map(|f| decode_bytes(f))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| {
                child.fail("answered deliver with outgoing frames that are not base64".into())
            })?;
        Ok(Delivered { events, outgoing })
    }

    fn execute(
        &mut self,
        thread: &ThreadId,
        commitment: &MessageRef,
        now: LocalTime,
    ) -> Result<Execution, ImplError> {
        self.settle_prefetched()?;
        let request = |seq| {
            Request::Execute(lines::Execute {
                seq,
                thread: thread.as_str().to_owned(),
                commitment: commitment.as_str().to_owned(),
                now: now.0,
            })
        };
        // Over a power-loss state directory, a crash at the effect can fall
        // before it, at one of the execution's file operations (writing its
        // intent).
        // With a crash at the effect armed, the execution's file operations
        // are let through one at a time, so that what it does after its
        // `perform` line never takes effect before the kill, however fast
        // it goes on: the crash falls at the same place at every replay.
        let armed = self.storage.armed();
        let watch = match armed {
            Some(CrashPoint::BeforeEffect) => self
                .dir
                .watch_stepping(self.storage.cut().and_then(|c| c.at_op)),
            Some(CrashPoint::AfterEffect) => self.dir.watch_stepping(None),
            _ => None,
        };
        let world = &self.world;
        let child = self.child.as_mut().ok_or_else(dismissed)?;
        let timeout = child.limits.request;
        child.crash_gate = watch.as_ref().and_then(Watch::gate);
        let answered = child.request::<ExecuteAnswer>(request, timeout, world);
        child.crash_gate = None;
        if let Some(watch) = watch {
            // Held at the crash's own operation, unless the `perform` line
            // came first and fired the crash there: the operation after it
            // is held only if the process got to it before it was killed,
            // which is a race, so it must not say where the crash fell.
            if watch.held() && !self.storage.fired() {
                self.storage.note(watch.settle());
                return Err(self.crash_now());
            }
            // The crash at the effect fired (the process is killed, and
            // what it did after the effect is held, never to be applied),
            // or the execution answered: stop stepping either way, and in
            // the second case let go of what was held meanwhile.
            if answered.is_ok() {
                watch.release_answered();
            } else {
                watch.release();
            }
        }
        Ok(execution_of(answered?))
    }

    fn kill(&mut self) {
        self.prefetched.clear();
        if let Some(child) = self.child.as_mut() {
            child.kill();
        }
    }

    fn dismiss(&mut self) {
        // A process with answers still unread is not kept: the next session
        // would read them as its own.
        let unread = !self.prefetched.is_empty();
        match (self.child.take(), &self.idle) {
            (Some(child), Some(idle)) if !child.dead && !unread => idle.keep(child),
            (Some(mut child), _) => child.kill(),
            (None, _) => {}
        }
        // The session is over: nothing restarts on its state directory, so
        // it goes now rather than with the root (an exploration makes one
        // per schedule, hundreds of thousands). A process kept for reuse
        // may still hold a file of it open, which costs nothing.
        self.dirs.remove(self.storage.id());
    }

    fn views_follow(&mut self, threads: &[ThreadId]) {
        self.views_next = threads.to_vec();
    }

    fn view(&mut self, thread: &ThreadId) -> Result<View, ImplError> {
        self.settle_prefetched()?;
        let world = &self.world;
        let child = self.child.as_mut().ok_or_else(dismissed)?;
        let timeout = child.limits.request;
        child
            .request::<Value>(view_request(thread), timeout, world)
            .map(|answer| View::from_value(&answer))
    }

    fn views_against(&mut self, wanted: &[(ThreadId, View)]) -> Result<Vec<View>, ImplError> {
        let asked = self.prefetched.len() == wanted.len()
            && self
                .prefetched
                .iter()
                .zip(wanted)
                .all(|((_, t), (w, _))| t == w);
        if asked {
            // Written with the delivery: only the answers are left to read.
            let prefetched = std::mem::take(&mut self.prefetched);
            let world = &self.world;
            let child = self.child.as_mut().ok_or_else(dismissed)?;
            let timeout = child.limits.request;
            let mut views = Vec::with_capacity(wanted.len());
            for ((seq, _), (_, expected)) in prefetched.iter().zip(wanted) {
                let deadline = Instant::now() + timeout;
                let answer = child.answer_to(
                    *seq,
                    Op::View,
                    deadline,
                    timeout,
                    world,
                    Some(expected.as_str()),
                )?;
                views.push(view_of_answer(child, &answer, expected)?);
            }
            return Ok(views);
        }
        self.settle_prefetched()?;
        if wanted.len() < 2 || !self.identity.claims(Capability::Pipeline) {
            return wanted
                .iter()
                .map(|(thread, expected)| self.view_against(thread, expected))
                .collect();
        }
        let world = &self.world;
        let child = self.child.as_mut().ok_or_else(dismissed)?;
        let timeout = child.limits.request;
        let mut deadline = Instant::now() + timeout;
        let sent = child.send_all(
            wanted.iter().map(|(thread, _)| view_request(thread)),
            deadline,
            timeout,
        )?;
        let mut views = Vec::with_capacity(wanted.len());
        for (&(seq, op), (_, expected)) in sent.iter().zip(wanted) {
            let answer =
                child.answer_to(seq, op, deadline, timeout, world, Some(expected.as_str()))?;
            views.push(view_of_answer(child, &answer, expected)?);
            // Each answer has the whole timeout from the one before.
            deadline = Instant::now() + timeout;
        }
        Ok(views)
    }

    fn view_against(&mut self, thread: &ThreadId, expected: &View) -> Result<View, ImplError> {
        self.settle_prefetched()?;
        let world = &self.world;
        let child = self.child.as_mut().ok_or_else(dismissed)?;
        let timeout = child.limits.request;
        let answer = child.request_raw(
            view_request(thread),
            timeout,
            world,
            Some(expected.as_str()),
        )?;
        view_of_answer(child, &answer, expected)
    }
}

/// The view a `view` answer gives. The expected view is canonical text: an
/// answer with the same bytes is that view. Any other is read as JSON and
/// made canonical, as `view` does.
fn view_of_answer(
    child: &mut ChildProcess,
    answer: &Answered,
    expected: &View,
) -> Result<View, ImplError> {
    let answer = match answer {
        Answered::AsExpected => return Ok(expected.clone()),
        Answered::Raw(answer) if answer.get() == expected.as_str() => return Ok(expected.clone()),
        Answered::Raw(answer) => answer,
    };
    child
        .read_ok::<Value>(Op::View, answer)
        .map(|view| View::from_value(&view))
}
