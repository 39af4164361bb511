//! One implementation process and the pipes tern-sim speaks `tern-sim/1`
//! on: starting it (directly or by `sh`), writing requests by a deadline,
//! reading its answers with their effects, and killing its whole tree. The
//! adapter (`adapter.rs`) turns these into receivers.

use std::collections::{BTreeMap, VecDeque};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::Value;
use tern_model::ledger::EffectKey;
use tern_model::message::ThreadId;
use tern_model::wire::Pointer;

use crate::contract::plugin::ImplError;
use crate::contract::protocol::lines::{self, Op, Request, ViewRequest};
use crate::contract::protocol::strict;
use crate::contract::world::AgentWorld;
use crate::implementations::affinity;
use crate::implementations::child_io::{self, LineReader, Seen, WriteFailure};
use crate::implementations::reaper::{self, Marked};
use crate::implementations::state_dirs::Gate;
use crate::implementations::stderr_log::StderrLog;
use crate::implementations::stderr_poller::{self, Sink};

use crate::implementations::adapter::Limits;
use crate::implementations::locked;

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

/// The running child and the pipes it is read from.
pub(crate) struct ChildProcess {
    pub(crate) command: String,
    pub(crate) process: Marked,
    /// Nonblocking: every write is bounded by the request's deadline.
    pub(crate) stdin: ChildStdin,
    pub(crate) lines: LineReader<ChildStdout>,
    /// The seq of the request being written or last written: each line is
    /// tagged with it, so a line that came before its request was written
    /// is known to be unsolicited.
    pub(crate) sent: u64,
    pub(crate) stderr: Arc<Mutex<VecDeque<u8>>>,
    /// The log its stderr goes to: that of the thread using it now.
    pub(crate) log: Arc<Mutex<Arc<Mutex<StderrLog>>>>,
    /// Ends when the reader of stderr ([`stderr_poller`]) met its end,
    /// after the kill: the log is then whole before the case's is taken.
    pub(crate) stderr_done: std::sync::mpsc::Receiver<()>,
    pub(crate) seq: u64,
    pub(crate) limits: Limits,
    /// Killed already: no polite shutdown on drop.
    pub(crate) dead: bool,
    /// Killed and waited for: its pid may belong to someone else now.
    pub(crate) reaped: bool,
    /// The core it was started on, which a thread reusing it must share
    /// (see [`affinity`]).
    pub(crate) home: Option<usize>,
    /// While a crash point inside the request is armed: the state
    /// directory's file system, polled while the answer is awaited, since
    /// a process held at its crash point never answers.
    pub(crate) crash_gate: Option<Gate>,
    /// When each request still unanswered was written, by seq: its answer
    /// closes the round trip that [`latency`](super::latency) records.
    pub(crate) sent_at: Vec<(u64, Instant)>,
}

const STDERR_TAIL: usize = 2048;

/// How often the state directory is asked whether an armed crash point
/// was reached, while an answer is awaited.
const GATE_POLL: Duration = Duration::from_millis(1);

impl ChildProcess {
    pub(crate) fn spawn(
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
        let log = Arc::new(Mutex::new(log));
        let stderr_done = stderr_poller::watch(
            stderr,
            Sink {
                tail: tail.clone(),
                tail_bytes: STDERR_TAIL,
                log: log.clone(),
            },
            home,
        );
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
            sent_at: Vec::new(),
        })
    }

    /// Sends its stderr from now on to `log`: a process kept waiting may be
    /// taken by another thread than the one that started it.
    pub(crate) fn log_to(&mut self, log: Arc<Mutex<StderrLog>>) {
        *locked(&self.log) = log;
    }

    pub(crate) fn stderr_tail(&self) -> String {
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
    pub(crate) fn kill(&mut self) {
        self.dead = true;
        if !self.reaped {
            reaper::kill_tree(&mut self.process);
            self.reaped = true;
        }
    }

    /// Kills the child and describes what it did.
    pub(crate) fn fail(&mut self, what: String) -> ImplError {
        ImplError::Misbehaved(self.last_words(what))
    }

    /// Kills the child that let a deadline pass, and describes it.
    pub(crate) fn fail_timeout(&mut self, what: String) -> ImplError {
        ImplError::TimedOut(self.last_words(what))
    }

    pub(crate) fn last_words(&mut self, what: String) -> String {
        // Give the stderr reader a moment to collect the last words.
        std::thread::sleep(Duration::from_millis(20));
        self.kill();
        crate::implementations::machine::probe_state_roots();
        format!("`{}` {what}; {}", self.command, self.stderr_tail())
    }

    /// How the child ended, if it did.
    pub(crate) fn exit_status(&mut self) -> Option<std::process::ExitStatus> {
        self.process.child.try_wait().ok().flatten()
    }

    /// Writes one request line by `deadline`.
    pub(crate) fn send(
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
    pub(crate) fn request<T: DeserializeOwned>(
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
    pub(crate) fn request_then<T: DeserializeOwned>(
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
    pub(crate) fn read_ok<T: DeserializeOwned>(
        &mut self,
        op: Op,
        answer: &RawValue,
    ) -> Result<T, ImplError> {
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
    pub(crate) fn request_raw(
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
    pub(crate) fn send_all<F: FnOnce(u64) -> Request>(
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
            let at = Instant::now();
            self.send(seq, &line, op.as_str(), deadline, timeout)?;
            self.sent_at.extend(sent.iter().map(|&(seq, _)| (seq, at)));
        }
        Ok(sent)
    }

    /// The next thing the child's output shows, by `deadline`. With a crash
    /// point armed, the file system is polled meanwhile: once the point is
    /// reached, the child is killed and the request crashed.
    pub(crate) fn next_seen(&mut self, deadline: Instant) -> Result<Option<Seen>, ImplError> {
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
    pub(crate) fn answer_to(
        &mut self,
        seq: u64,
        op: Op,
        deadline: Instant,
        timeout: Duration,
        world: &AgentWorld,
        expected: Option<&str>,
    ) -> Result<Answered, ImplError> {
        let answered = self.read_answer(seq, op, deadline, timeout, world, expected);
        // Only an answer closes a round trip: a timeout or a crash says
        // nothing of the implementation's speed.
        let sent = self.sent_at.iter().position(|&(s, _)| s == seq);
        if let Some(at) = sent.map(|i| self.sent_at.swap_remove(i).1) {
            if answered.is_ok() {
                super::latency::record(op.as_str(), at.elapsed());
            }
        }
        // Requests older than this one were answered or abandoned.
        self.sent_at.retain(|&(s, _)| s > seq);
        answered
    }

    /// [`ChildProcess::answer_to`], without the timing.
    fn read_answer(
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
        loop {
            let (bytes, tag) = self.next_line(seq, op, deadline, timeout)?;
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
                self.perform(seq, op, key, &mut performed, world)?;
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

    /// The next line the process printed for request `seq` (`op`), with
    /// the tag of the request it followed; a line too long, a read that
    /// failed, the deadline or the end of the output is the process's
    /// failure.
    fn next_line(
        &mut self,
        seq: u64,
        op: Op,
        deadline: Instant,
        timeout: Duration,
    ) -> Result<(Vec<u8>, u64), ImplError> {
        let when = |tag: u64| {
            if tag < seq {
                format!("before `{op}` (seq {seq}) was sent")
            } else {
                format!("while answering `{op}` (seq {seq})")
            }
        };
        match self.next_seen(deadline)? {
            Some(Seen::Line { bytes, tag }) => Ok((bytes, tag)),
            Some(Seen::TooLong { len, .. }) => Err(self.fail(format!(
                "printed a line of at least {len} bytes (the limit is {})",
                self.limits.line_bytes
            ))),
            Some(Seen::Failed { error, .. }) => {
                Err(self.fail(format!("could not be read ({error})")))
            }
            None => Err(self.fail_timeout(format!(
                "did not answer `{op}` (seq {seq}) within {} ms",
                timeout.as_millis()
            ))),
            Some(Seen::Closed { tag }) => {
                std::thread::sleep(Duration::from_millis(20));
                Err(match self.exit_status() {
                    Some(s) => self.fail(format!("exited ({s}) {}", when(tag))),
                    None => self.fail(format!("closed its output {}", when(tag))),
                })
            }
        }
    }

    /// An effect the process performed while request `seq` (`op`) was
    /// waiting, recorded in the world; `performed` is the effect this
    /// request performed before, if any.
    fn perform(
        &mut self,
        seq: u64,
        op: Op,
        key: &str,
        performed: &mut Option<String>,
        world: &AgentWorld,
    ) -> Result<(), ImplError> {
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
        *performed = Some(key.to_owned());
        if let Err(e) = world.perform(&EffectKey(key.to_owned())) {
            self.kill();
            return Err(e);
        }
        Ok(())
    }
}

impl ChildProcess {
    /// Writes `shutdown` by `deadline` without waiting for its answer;
    /// the seq to wait for, when it went out. A process asked is not asked
    /// again when dropped.
    fn ask_shutdown(&mut self, deadline: Instant) -> Option<u64> {
        if self.dead {
            return None;
        }
        self.seq += 1;
        let seq = self.seq;
        let mut bye =
            serde_json::to_vec(&Request::Shutdown(lines::Shutdown { seq })).unwrap_or_default();
        bye.push(b'\n');
        self.lines.take_ready(self.sent);
        self.sent = seq;
        let sent = child_io::write_all_by(self.stdin.as_raw_fd(), &bye, deadline).is_ok();
        sent.then_some(seq)
    }

    /// Waits by `deadline` for the answer to the `shutdown` asked, then
    /// makes sure no process is left behind.
    fn end_after(&mut self, asked: Option<u64>, deadline: Instant) {
        if let Some(seq) = asked {
            let _ = self.lines.next_by(deadline, seq);
        }
        self.kill();
        // Every process of the tree is dead, so stderr ends at once; the
        // wait is bounded all the same, since nothing may hang the harness.
        let _ = self.stderr_done.recv_timeout(Duration::from_millis(200));
    }
}

/// How long a process has to answer `shutdown` before it is killed.
const SHUTDOWN_GRACE: Duration = Duration::from_millis(200);

/// Shuts several processes down at once: every one is asked first, then
/// all are waited for within one grace period, so that processes that
/// ignore `shutdown` cost one grace period together, not one each.
pub(crate) fn shut_down_all(mut children: Vec<ChildProcess>) {
    let deadline = Instant::now() + SHUTDOWN_GRACE;
    let asked: Vec<Option<u64>> = children
        .iter_mut()
        .map(|c| c.ask_shutdown(deadline))
        .collect();
    for (child, asked) in children.iter_mut().zip(asked) {
        child.end_after(asked, deadline);
    }
    // Each is dead now: dropping it asks nothing more.
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        // A polite `shutdown` first (unless it was killed), then never leave
        // a process behind.
        let deadline = Instant::now() + SHUTDOWN_GRACE;
        let asked = self.ask_shutdown(deadline);
        self.end_after(asked, deadline);
    }
}

/// An answer's `ok`.
pub(crate) enum Answered {
    /// The text it came as.
    Raw(Box<RawValue>),
    /// Exactly the bytes the caller expected, not read further.
    AsExpected,
}

/// Whether `line` is `{"seq":SEQ,"ok":EXPECTED}` to the byte.
pub(crate) fn is_exactly_ok(line: &[u8], seq: u64, expected: &str) -> bool {
    let head = format!("{{\"seq\":{seq},\"ok\":");
    line.len() == head.len() + expected.len() + 1
        && line.starts_with(head.as_bytes())
        && line.ends_with(b"}")
        && &line[head.len()..line.len() - 1] == expected.as_bytes()
}

pub(crate) fn view_request(thread: &ThreadId) -> impl FnOnce(u64) -> Request + '_ {
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
