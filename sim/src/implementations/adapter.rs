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

use std::collections::{BTreeMap, VecDeque};
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::Value;
use tern_model::ledger::{EffectKey, Execution, LocalTime};
use tern_model::message::{MessageRef, Principal, ThreadId};
use tern_model::wire::Pointer;

use crate::contract::plugin::{
    Capability, Delivered, Durability, Identity, ImplError, Implementation, InitParams, Receiver,
    View,
};
use crate::contract::protocol::lines::{
    self, DeliverAnswer, ExecuteAnswer, InitAnswer, Op, Request, ViewRequest,
};
use crate::contract::protocol::{
    config_text, decode_bytes, encode_bytes, event_of_line, execution_of, strict, PROTOCOL,
};
use crate::contract::storage::{CrashPoint, Storage};
use crate::contract::world::AgentWorld;
use crate::implementations::affinity;
use crate::implementations::child_io::{self, LineReader, Seen, WriteFailure};
pub use crate::implementations::exit_guard::{defer_interrupts, interrupted};
use crate::implementations::exit_guard::{forget_root, register_root};
use crate::implementations::machine;
use crate::implementations::reaper::{self, Marked};
use crate::implementations::state_dirs::{Gate, StateDir, StateDirError, StateDirs, Watch};
use crate::implementations::stderr_log::{StderrLog, ThreadLogs};

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
    /// docs/protocol.schema.json ([`strict`]), not only what the lenient
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

fn locked<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

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
        drop(std::mem::take(&mut *locked(&self.kept)));
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
        let answer: InitAnswer = answered
            .map_err(|e| {
                // A vendor reading the verdict must know this `init` was
                // not the process's first.
                let again = "at an `init` that starts a new session in a process kept from an earlier one, as its claim `reinit` allows:";
                match e {
                    ImplError::Misbehaved(why) if started_over => {
                        ImplError::Misbehaved(format!("{again} {why}"))
                    }
                    ImplError::TimedOut(why) if started_over => {
                        ImplError::TimedOut(format!("{again} {why}"))
                    }
                    e => e,
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

/// The `sh` script that runs a COMMAND that is not plain words, the same at
/// every start.
///
/// The command runs in a background group whose standard input and output
/// are the protocol pipes, and the shell closes its own copies before it
/// waits: so the implementation is the only holder of its stdout, and its
/// closing it reaches tern-sim as the end of output (a shell that merely ran
/// `sh -c 'COMMAND'` would hold the pipe open for as long as it waits). The
/// shell passes on the command's exit status, a death by signal N as
/// 128 + N. A background group starts with SIGINT and SIGQUIT ignored;
/// tern-sim only ever sends SIGKILL.
pub fn launcher(command: &str) -> String {
    format!(
        "exec 3<&0 4>&1 0</dev/null 1>/dev/null\n{{\n{command}\n}} 0<&3 1>&4 3<&- 4>&- &\nexec 3<&- 4>&-\nwait $!\n"
    )
}

/// COMMAND as a program and its arguments, when it is plain words (letters,
/// digits and `-_./:,+@%`, separated by spaces) whose program can be
/// found: such a command means the same started directly, and a start
/// then costs one process instead of two (a restart is most of what a
/// crash costs over the protocol). Anything else, and a program that
/// cannot be found (so that the shell says so, as before), runs by `sh`.
pub fn direct_argv(command: &str) -> Option<Vec<String>> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./:,+@% ".contains(c);
    if !command.chars().all(plain) {
        return None;
    }
    let argv: Vec<String> = command
        .split(' ')
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect();
    let program = argv.first()?;
    let executable = |p: &Path| {
        use std::os::unix::fs::PermissionsExt;
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    let found = if program.contains('/') {
        executable(Path::new(program))
    } else {
        std::env::var_os("PATH").is_some_and(|path| {
            std::env::split_paths(&path).any(|dir| executable(&dir.join(program)))
        })
    };
    found.then_some(argv)
}

/// The running child and the threads that read it.
struct ChildProcess {
    command: String,
    process: Marked,
    /// Nonblocking: every write is bounded by the request's deadline.
    stdin: ChildStdin,
    lines: LineReader<ChildStdout>,
    /// The seq of the request being written or last written: each line is
    /// tagged with it, so a line that came before its request was written
    /// is known to be unsolicited.
    sent: u64,
    stderr: Arc<Mutex<VecDeque<u8>>>,
    /// The log its stderr goes to: that of the thread using it now.
    log: Arc<Mutex<Arc<Mutex<StderrLog>>>>,
    /// Ends when the reader of stderr met its end, after the kill: the
    /// log is then whole before the case's is taken.
    stderr_done: std::sync::mpsc::Receiver<()>,
    seq: u64,
    limits: Limits,
    /// Killed already: no polite shutdown on drop.
    dead: bool,
    /// Killed and waited for: its pid may belong to someone else now.
    reaped: bool,
    /// The core it was started on, which a thread reusing it must share
    /// (see [`affinity`]).
    home: Option<usize>,
    /// While a crash point inside the request is armed: the state
    /// directory's file system, polled while the answer is awaited, since
    /// a process held at its crash point never answers.
    crash_gate: Option<Gate>,
}

const STDERR_TAIL: usize = 2048;

/// How often the state directory is asked whether an armed crash point
/// was reached, while an answer is awaited.
const GATE_POLL: Duration = Duration::from_millis(1);

impl ChildProcess {
    fn spawn(
        command: &str,
        limits: Limits,
        log: Arc<Mutex<StderrLog>>,
    ) -> Result<ChildProcess, ImplError> {
        crate::implementations::exit_guard::install();
        // Before the spawn: the process inherits the thread's core.
        let home = affinity::home();
        // A process group of its own, so that a crash kills the command and
        // everything it started at once; the reaper finds whatever left it.
        let prepared = |argv: Option<&[String]>| {
            let mut cmd = match argv {
                Some(argv) => {
                    let mut cmd = Command::new(&argv[0]);
                    cmd.args(&argv[1..]);
                    cmd
                }
                None => {
                    let mut cmd = Command::new("sh");
                    cmd.arg("-c").arg(launcher(command));
                    cmd
                }
            };
            cmd.process_group(0)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            cmd
        };
        let direct = direct_argv(command);
        let spawned = match reaper::spawn(&mut prepared(direct.as_deref())) {
            // An executable the kernel cannot run (a script without `#!`)
            // is what `sh` runs as a script.
            Err(e) if direct.is_some() && e.raw_os_error() == Some(libc::ENOEXEC) => {
                reaper::spawn(&mut prepared(None))
            }
            other => other,
        };
        let mut process =
            spawned.map_err(|e| ImplError::Misbehaved(format!("cannot start `{command}`: {e}")))?;
        let pipes = (
            process.child.stdin.take(),
            process.child.stdout.take(),
            process.child.stderr.take(),
        );
        let opened = match pipes {
            (Some(i), Some(o), Some(e)) if child_io::set_nonblocking(&i).is_ok() => {
                LineReader::new(o, limits.line_bytes)
                    .ok()
                    .map(|lines| (i, lines, e))
            }
            _ => None,
        };
        let Some((stdin, lines, stderr)) = opened else {
            reaper::kill_tree(&mut process);
            return Err(ImplError::Misbehaved(
                "cannot open the child's pipes".into(),
            ));
        };
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let sink = tail.clone();
        let log = Arc::new(Mutex::new(log));
        let logs = log.clone();
        let (done, stderr_done) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut stderr = stderr;
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut buf) {
                if n == 0 {
                    break;
                }
                if let Ok(mut t) = sink.lock() {
                    t.extend(&buf[..n]);
                    while t.len() > STDERR_TAIL {
                        t.pop_front();
                    }
                }
                let log = locked(&logs).clone();
                locked(&log).push(&buf[..n]);
            }
            let _ = done.send(());
        });
        Ok(ChildProcess {
            command: command.to_owned(),
            process,
            stdin,
            lines,
            sent: 0,
            stderr: tail,
            log,
            stderr_done,
            seq: 0,
            limits,
            dead: false,
            reaped: false,
            home,
            crash_gate: None,
        })
    }

    /// Sends its stderr from now on to `log`: a process kept waiting may be
    /// taken by another thread than the one that started it.
    fn log_to(&mut self, log: Arc<Mutex<StderrLog>>) {
        *locked(&self.log) = log;
    }

    fn stderr_tail(&self) -> String {
        let bytes: Vec<u8> = self
            .stderr
            .lock()
            .map(|t| t.iter().copied().collect())
            .unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes).trim().to_owned();
        if text.is_empty() {
            "(stderr was empty)".to_owned()
        } else {
            format!("stderr ends with:\n{text}")
        }
    }

    /// Kills the child and every process it started, wherever they went.
    fn kill(&mut self) {
        self.dead = true;
        if !self.reaped {
            reaper::kill_tree(&mut self.process);
            self.reaped = true;
        }
    }

    /// Kills the child and describes what it did.
    fn fail(&mut self, what: String) -> ImplError {
        ImplError::Misbehaved(self.last_words(what))
    }

    /// Kills the child that let a deadline pass, and describes it.
    fn fail_timeout(&mut self, what: String) -> ImplError {
        ImplError::TimedOut(self.last_words(what))
    }

    fn last_words(&mut self, what: String) -> String {
        // Give the stderr reader a moment to collect the last words.
        std::thread::sleep(Duration::from_millis(20));
        self.kill();
        crate::implementations::machine::probe_state_roots();
        format!("`{}` {what}; {}", self.command, self.stderr_tail())
    }

    /// How the child ended, if it did.
    fn exit_status(&mut self) -> Option<std::process::ExitStatus> {
        self.process.child.try_wait().ok().flatten()
    }

    /// Writes one request line by `deadline`.
    fn send(
        &mut self,
        seq: u64,
        line: &[u8],
        op: &str,
        deadline: Instant,
        timeout: Duration,
    ) -> Result<(), ImplError> {
        self.lines.take_ready(self.sent);
        self.sent = seq;
        match child_io::write_all_by(self.stdin.as_raw_fd(), line, deadline) {
            Ok(()) => Ok(()),
            Err(WriteFailure::TimedOut { written }) => Err(self.fail_timeout(format!(
                "did not read its input within {} ms: it took {written} of the {} bytes of `{op}` (seq {seq})",
                timeout.as_millis(),
                line.len()
            ))),
            Err(WriteFailure::Closed(e)) => {
                std::thread::sleep(Duration::from_millis(20));
                Err(match self.exit_status() {
                    Some(s) => self.fail(format!("exited ({s}) before `{op}` (seq {seq}) could be sent")),
                    None => self.fail(format!("stopped reading its input ({e})")),
                })
            }
        }
    }

    /// Sends one request and waits for its answer, counting effects on the
    /// way. `Err(Crashed)` when a crash scheduled right after an effect
    /// fired. Writing and reading together take at most `timeout`.
    fn request<T: DeserializeOwned>(
        &mut self,
        make: impl FnOnce(u64) -> Request,
        timeout: Duration,
        world: &AgentWorld,
    ) -> Result<T, ImplError> {
        self.request_then(make, &[], timeout, world)
            .map(|(answer, _)| answer)
    }

    /// [`ChildProcess::request`], with the `view` requests of `then` in
    /// the same write (to a process that claims `pipeline`). Gives the
    /// answer and the seqs of those views, whose answers are left unread.
    fn request_then<T: DeserializeOwned>(
        &mut self,
        make: impl FnOnce(u64) -> Request,
        then: &[ThreadId],
        timeout: Duration,
        world: &AgentWorld,
    ) -> Result<(T, Vec<(u64, ThreadId)>), ImplError> {
        type Make<'a> = Box<dyn FnOnce(u64) -> Request + 'a>;
        let deadline = Instant::now() + timeout;
        let makes = std::iter::once(Box::new(make) as Make)
            .chain(then.iter().map(|t| Box::new(view_request(t)) as Make));
        let sent = self.send_all(makes, deadline, timeout)?;
        let views = sent[1..]
            .iter()
            .map(|&(seq, _)| seq)
            .zip(then.iter().cloned())
            .collect();
        let (seq, op) = sent[0];
        match self.answer_to(seq, op, deadline, timeout, world, None)? {
            Answered::Raw(answer) => Ok((self.read_ok(op, &answer)?, views)),
            // (Only a caller that expects bytes is answered with them.)
            Answered::AsExpected => Err(self.fail(format!("answered `{op}` unread"))),
        }
    }

    /// An answer's `ok`, as it came, read as the answer to `op`; what does
    /// not have its form is named by its pointer.
    fn read_ok<T: DeserializeOwned>(&mut self, op: Op, answer: &RawValue) -> Result<T, ImplError> {
        // Read plainly first; only a line that fails is read again, with
        // the path tracking that names where it broke.
        if let Ok(ok) = serde_json::from_str(answer.get()) {
            return Ok(ok);
        }
        let mut reader = serde_json::Deserializer::from_str(answer.get());
        serde_path_to_error::deserialize(&mut reader).map_err(|e| {
            let deviation = strict::located(Pointer::root().key("ok"), e);
            self.fail(format!(
                "answered `{op}` with an `ok` that is not of the protocol's form, {deviation}"
            ))
        })
    }

    /// [`ChildProcess::request`], giving the answer's `ok` as the text the
    /// implementation wrote: a view is then compared as it came, and read
    /// as a tree only when it differs from the expected one.
    fn request_raw(
        &mut self,
        make: impl FnOnce(u64) -> Request,
        timeout: Duration,
        world: &AgentWorld,
        expected: Option<&str>,
    ) -> Result<Answered, ImplError> {
        let deadline = Instant::now() + timeout;
        let sent = self.send_all([make], deadline, timeout)?;
        let (seq, op) = sent[0];
        self.answer_to(seq, op, deadline, timeout, world, expected)
    }

    /// Writes the requests `makes` builds, numbered in turn, in one write
    /// by `deadline`: one request, or several to a process that claims
    /// `pipeline`. Gives their seqs and ops, in order.
    fn send_all<F: FnOnce(u64) -> Request>(
        &mut self,
        makes: impl IntoIterator<Item = F>,
        deadline: Instant,
        timeout: Duration,
    ) -> Result<Vec<(u64, Op)>, ImplError> {
        let mut line = Vec::new();
        let mut sent = Vec::new();
        for make in makes {
            self.seq += 1;
            let request = make(self.seq);
            sent.push((self.seq, request.op()));
            // Writing into a Vec cannot fail.
            let _ = serde_json::to_writer(&mut line, &request);
            line.push(b'\n');
        }
        if let Some(&(seq, op)) = sent.last() {
            self.send(seq, &line, op.as_str(), deadline, timeout)?;
        }
        Ok(sent)
    }

    /// The next thing the child's output shows, by `deadline`. With a crash
    /// point armed, the file system is polled meanwhile: once the point is
    /// reached, the child is killed and the request crashed.
    fn next_seen(&mut self, deadline: Instant) -> Result<Option<Seen>, ImplError> {
        let Some(gate) = self.crash_gate.clone() else {
            return Ok(self.lines.next_by(deadline, self.sent));
        };
        loop {
            let slice = (Instant::now() + GATE_POLL).min(deadline);
            if let Some(seen) = self.lines.next_by(slice, self.sent) {
                return Ok(Some(seen));
            }
            if gate.mount.held().is_some() {
                // The process is blocked at a held operation, so whatever
                // it wrote before it is in the pipe already: that comes
                // first (a `perform` line that fires the crash before the
                // operation is let through).
                if let Some(seen) = self.lines.next_by(Instant::now(), self.sent) {
                    return Ok(Some(seen));
                }
                if gate.crash_now() {
                    self.kill();
                    return Err(ImplError::Crashed);
                }
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
        }
    }

    /// Reads lines until the answer to request `seq` (`op`), by
    /// `deadline`, counting effects on the way. A caller that expects the
    /// `ok` to be certain bytes (a view: the oracle's canonical text) is
    /// told when the answer is exactly `{"seq":SEQ,"ok":EXPECTED}`, which
    /// is then not parsed at all: those bytes are valid JSON already, and
    /// reading a view of several kilobytes cost more than comparing it.
    fn answer_to(
        &mut self,
        seq: u64,
        op: Op,
        deadline: Instant,
        timeout: Duration,
        world: &AgentWorld,
        expected: Option<&str>,
    ) -> Result<Answered, ImplError> {
        let mut lines = 0usize;
        let mut performed: Option<String> = None;
        let when = |tag: u64| {
            if tag < seq {
                format!("before `{op}` (seq {seq}) was sent")
            } else {
                format!("while answering `{op}` (seq {seq})")
            }
        };
        loop {
            let (bytes, tag) = match self.next_seen(deadline)? {
                Some(Seen::Line { bytes, tag }) => (bytes, tag),
                Some(Seen::TooLong { len, .. }) => {
                    return Err(self.fail(format!(
                        "printed a line of at least {len} bytes (the limit is {})",
                        self.limits.line_bytes
                    )))
                }
                Some(Seen::Failed { error, .. }) => {
                    return Err(self.fail(format!("could not be read ({error})")))
                }
                None => {
                    return Err(self.fail_timeout(format!(
                        "did not answer `{op}` (seq {seq}) within {} ms",
                        timeout.as_millis()
                    )))
                }
                Some(Seen::Closed { tag }) => {
                    std::thread::sleep(Duration::from_millis(20));
                    return Err(match self.exit_status() {
                        Some(s) => self.fail(format!("exited ({s}) {}", when(tag))),
                        None => self.fail(format!("closed its output {}", when(tag))),
                    });
                }
            };
            lines += 1;
            if lines > self.limits.lines_per_answer {
                return Err(self.fail(format!(
                    "flooded its output: more than {} lines for one `{op}`",
                    self.limits.lines_per_answer
                )));
            }
            let shown = || String::from_utf8_lossy(&bytes[..bytes.len().min(80)]).into_owned();
            if tag < seq {
                return Err(self.fail(format!(
                    "printed a line that no request asked for, before `{op}` (seq {seq}) was sent: {:?}",
                    shown()
                )));
            }
            if let Some(expected) = expected.filter(|_| !self.limits.strict) {
                if is_exactly_ok(&bytes, seq, expected) {
                    return Ok(Answered::AsExpected);
                }
            }
            // Each member as the text it came as: only what is needed is
            // read further (a view, above all, is compared as it came).
            let mut v: BTreeMap<String, Box<RawValue>> = match serde_json::from_slice(&bytes) {
                Ok(v) => v,
                Err(_) => {
                    return Err(self.fail(format!(
                        "printed something that is not a JSON line: {:?}",
                        shown()
                    )));
                }
            };
            if self.limits.strict {
                if let Err(deviation) = strict::check_line(op, &bytes) {
                    let line = String::from_utf8_lossy(&bytes[..bytes.len().min(400)]);
                    return Err(self.fail(format!(
                        "wrote a line that breaks the protocol's form (--strict-protocol, \
                         docs/protocol.schema.json) while `{op}` (seq {seq}) was waiting, \
                         {deviation}; the line: {line}"
                    )));
                }
            }
            let member = |v: &BTreeMap<String, Box<RawValue>>, key: &str| -> Value {
                v.get(key)
                    .and_then(|raw| serde_json::from_str(raw.get()).ok())
                    .unwrap_or(Value::Null)
            };
            // By value: `2.0` is seq 2, as the schema reads it.
            let answered = member(&v, "seq");
            if lines::seq_value(&answered) != Some(seq) {
                return Err(self.fail(format!(
                    "answered with seq {answered} while `{op}` (seq {seq}) was waiting"
                )));
            }
            // An answer first: `ok`, or a non-null `error`.
            if let Some(ok) = v.remove("ok") {
                return Ok(Answered::Raw(ok));
            }
            let error = member(&v, "error");
            if !error.is_null() {
                return Err(self.fail(format!("answered `{op}` with an error: {error}")));
            }
            if let Some(key) = member(&v, "perform").as_str() {
                // Protocol breaches, told before the world records anything:
                // an effect outside `execute`, or a second, other effect in
                // one `execute`. (The same effect twice is recorded twice:
                // that is the world's at-most-once to judge.)
                if op != Op::Execute {
                    return Err(self.fail(format!(
                        "performed effect `{key}` during `{op}` (seq {seq}); effects are allowed only during `execute`"
                    )));
                }
                if let Some(first) = performed.as_deref().filter(|first| *first != key) {
                    return Err(self.fail(format!(
                        "performed a second effect `{key}` during `execute` (seq {seq}), after `{first}`; one `execute` performs at most one effect"
                    )));
                }
                performed = Some(key.to_owned());
                if let Err(e) = world.perform(&EffectKey(key.to_owned())) {
                    self.kill();
                    return Err(e);
                }
                continue;
            }
            if v.contains_key("log") {
                // Diagnostics on the protocol channel: allowed, but counted.
                continue;
            }
            return Err(self.fail(format!(
                "answered `{op}` without `ok`, `error`, `perform` or `log`: {}",
                String::from_utf8_lossy(&bytes)
            )));
        }
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        // A polite `shutdown` first (unless it was killed), then never leave
        // a process behind.
        if !self.dead {
            self.seq += 1;
            let seq = self.seq;
            let mut bye =
                serde_json::to_vec(&Request::Shutdown(lines::Shutdown { seq })).unwrap_or_default();
            bye.push(b'\n');
            let deadline = Instant::now() + Duration::from_millis(200);
            self.lines.take_ready(self.sent);
            self.sent = seq;
            if child_io::write_all_by(self.stdin.as_raw_fd(), &bye, deadline).is_ok() {
                let _ = self.lines.next_by(deadline, seq);
            }
        }
        self.kill();
        // Every process of the tree is dead, so stderr ends at once; the
        // wait is bounded all the same, since nothing may hang the harness.
        let _ = self.stderr_done.recv_timeout(Duration::from_millis(200));
    }
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
            if watch.held() {
                self.storage.note(watch.settle());
                return Err(self.crash_now());
            }
            // The crash at the effect fired (the process is killed, and
            // what it did after the effect is held, never to be applied),
            // or the execution answered: stop stepping either way.
            watch.release();
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

/// An answer's `ok`.
enum Answered {
    /// The text it came as.
    Raw(Box<RawValue>),
    /// Exactly the bytes the caller expected, not read further.
    AsExpected,
}

/// Whether `line` is `{"seq":SEQ,"ok":EXPECTED}` to the byte.
fn is_exactly_ok(line: &[u8], seq: u64, expected: &str) -> bool {
    let head = format!("{{\"seq\":{seq},\"ok\":");
    line.len() == head.len() + expected.len() + 1
        && line.starts_with(head.as_bytes())
        && line.ends_with(b"}")
        && &line[head.len()..line.len() - 1] == expected.as_bytes()
}

fn view_request(thread: &ThreadId) -> impl FnOnce(u64) -> Request + '_ {
    move |seq| {
        Request::View(ViewRequest {
            seq,
            thread: thread.as_str().to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{direct_argv, is_exactly_ok};

    #[test]
    fn only_the_exact_answer_line_skips_reading() {
        let view = r#"{"thread":"t"}"#;
        assert!(is_exactly_ok(
            br#"{"seq":12,"ok":{"thread":"t"}}"#,
            12,
            view
        ));
        for other in [
            r#"{"seq":12,"ok":{"thread":"u"}}"#,
            r#"{"seq":13,"ok":{"thread":"t"}}"#,
            r#"{"seq":1,"ok":{"thread":"t"}}"#,
            r#"{"ok":{"thread":"t"},"seq":12}"#,
            r#"{"seq":12, "ok":{"thread":"t"}}"#,
            r#"{"seq":12,"ok":{"thread":"t"}} "#,
            r#"{"seq":12,"ok":{"thread":"t"},"log":1}"#,
            r#"{"seq":12,"ok":{"thread":"t"}"#,
        ] {
            assert!(!is_exactly_ok(other.as_bytes(), 12, view), "{other}");
        }
    }

    #[test]
    fn only_plain_commands_whose_program_exists_skip_the_shell() {
        assert_eq!(
            direct_argv("sh  -c:x ./a.py"),
            Some(vec![
                "sh".to_owned(),
                "-c:x".to_owned(),
                "./a.py".to_owned()
            ])
        );
        assert_eq!(direct_argv("/bin/sh"), Some(vec!["/bin/sh".to_owned()]));
        for shell_syntax in [
            "FOO=1 ./agent",
            "cd dir && ./agent",
            "sh -c 'exit 3'",
            "agent > log",
            "echo $HOME",
            "a\tb",
            "",
        ] {
            assert_eq!(direct_argv(shell_syntax), None, "{shell_syntax}");
        }
        assert_eq!(direct_argv("no-such-program-of-tern-sim --x"), None);
        assert_eq!(direct_argv("./no/such/file"), None);
    }
}
