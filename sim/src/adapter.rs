//! The plug-in contract over a child process speaking `tern-sim/1`.
//!
//! A crash is a SIGKILL of the child at the chosen point; a restart runs the
//! command again on the same state directory. Every request has a timeout,
//! every line a size limit, and every answer is checked for form, so an
//! implementation that hangs, exits, floods or prints garbage gets a verdict
//! naming what it did, with the tail of its stderr, and never a hang.

use std::collections::{BTreeMap, VecDeque};
use std::io::{BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::mpsc::{self, Receiver as Channel, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tern_model::ledger::{EffectKey, Execution, LocalTime};
use tern_model::message::{MessageRef, Principal, ThreadId};

use crate::frames::{Frame, Frames};
use crate::plugin::{
    Capability, Delivered, Identity, ImplError, Implementation, InitParams, Receiver,
};
use crate::protocol::{
    config_json, decode_bytes, encode_bytes, event_from_json, execution_from_json, PROTOCOL,
};
use crate::storage::{CrashPoint, Storage};
use crate::world::AgentWorld;

/// Process groups of the children alive now, in slots a signal handler can
/// read without locking: on Ctrl-C or SIGTERM every one is killed before the
/// harness exits, so no child outlives it.
const SLOTS: usize = 256;
static CHILD_GROUPS: [AtomicI32; SLOTS] = [const { AtomicI32::new(0) }; SLOTS];

fn register(pgid: i32) {
    for slot in &CHILD_GROUPS {
        if slot
            .compare_exchange(0, pgid, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            return;
        }
    }
}

fn unregister(pgid: i32) {
    for slot in &CHILD_GROUPS {
        let _ = slot.compare_exchange(pgid, 0, Ordering::SeqCst, Ordering::SeqCst);
    }
}

/// Set by [`defer_interrupts`]: a signal then kills the children and is
/// remembered in `INTERRUPTED` instead of ending the process, so that the
/// caller can finish writing what it owes (a report) before exiting.
static DEFER: AtomicBool = AtomicBool::new(false);
static INTERRUPTED: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_terminate(signal: libc::c_int) {
    for slot in &CHILD_GROUPS {
        let pgid = slot.load(Ordering::SeqCst);
        if pgid > 0 {
            // SAFETY: killpg and _exit are async-signal-safe.
            unsafe {
                libc::killpg(pgid, libc::SIGKILL);
            }
        }
    }
    // A second signal while deferring means the user wants out now.
    if DEFER.load(Ordering::SeqCst) && INTERRUPTED.swap(signal, Ordering::SeqCst) == 0 {
        return;
    }
    unsafe { libc::_exit(128 + signal) }
}

/// From now on, Ctrl-C, SIGTERM and SIGHUP kill every child and are
/// reported by [`interrupted`] rather than ending the process at once.
pub fn defer_interrupts() {
    DEFER.store(true, Ordering::SeqCst);
    install_handler();
}

/// The signal received since [`defer_interrupts`], if any.
pub fn interrupted() -> Option<i32> {
    match INTERRUPTED.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// Installs the handler once; called before the first child starts.
fn install_handler() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // SAFETY: the handler only touches atomics and async-signal-safe calls.
            unsafe {
                libc::signal(signal, on_terminate as *const () as libc::sighandler_t);
            }
        }
    });
}

/// Limits for a child.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub startup: Duration,
    pub request: Duration,
    /// Longest line accepted from the child.
    pub line_bytes: usize,
    /// Most lines (effects, noise) accepted before one answer.
    pub lines_per_answer: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            startup: Duration::from_secs(10),
            request: Duration::from_secs(5),
            line_bytes: 16 << 20,
            lines_per_answer: 10_000,
        }
    }
}

/// An implementation run as `sh -c 'exec COMMAND'`.
pub struct SubprocessImpl {
    command: String,
    limits: Limits,
    root: tempfile::TempDir,
    dirs: Mutex<BTreeMap<u64, PathBuf>>,
}

impl SubprocessImpl {
    pub fn new(command: impl Into<String>, limits: Limits) -> std::io::Result<SubprocessImpl> {
        Ok(SubprocessImpl {
            command: command.into(),
            limits,
            root: tempfile::Builder::new()
                .prefix("tern-sim-state-")
                .tempdir()?,
            dirs: Mutex::new(BTreeMap::new()),
        })
    }

    /// One state directory per agent per run, kept across its restarts.
    fn state_dir(&self, storage: &Storage) -> PathBuf {
        let mut dirs = self.dirs.lock().unwrap_or_else(|e| e.into_inner());
        dirs.entry(storage.id())
            .or_insert_with(|| self.root.path().join(format!("agent-{}", storage.id())))
            .clone()
    }
}

impl Implementation for SubprocessImpl {
    fn name(&self) -> String {
        format!("subprocess `{}`", self.command)
    }

    fn start(
        &self,
        init: &InitParams,
        storage: Storage,
        world: AgentWorld,
    ) -> Result<Box<dyn Receiver>, ImplError> {
        let dir = self.state_dir(&storage);
        let mut child = ChildProcess::spawn(&self.command, self.limits)?;
        let request = json!({
            "op": "init",
            "protocol": PROTOCOL,
            "participant": init.participant.as_str(),
            "principal": init.principal.as_str(),
            "config": config_json(&init.config),
            "state_dir": dir.display().to_string(),
            "effects": world.performed_by_me(),
        });
        let answer = child.request(request, self.limits.startup, &world)?;
        let identity = identity_of(&answer).map_err(|why| child.fail(why))?;
        Ok(Box::new(SubprocessReceiver {
            child,
            storage,
            world,
            identity,
        }))
    }
}

/// The running child and the threads that read it.
struct ChildProcess {
    command: String,
    process: Child,
    stdin: ChildStdin,
    lines: Channel<std::io::Result<Frame>>,
    stderr: Arc<Mutex<VecDeque<u8>>>,
    seq: u64,
    limits: Limits,
    /// Killed already: no polite shutdown on drop.
    dead: bool,
}

const STDERR_TAIL: usize = 2048;

impl ChildProcess {
    fn spawn(command: &str, limits: Limits) -> Result<ChildProcess, ImplError> {
        install_handler();
        // A process group of its own, so that a crash kills the command and
        // everything it started (a wrapper script, a pipeline), not just the shell.
        let mut process = Command::new("sh")
            .arg("-c")
            .arg(command)
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| ImplError::Misbehaved(format!("cannot start `{command}`: {e}")))?;
        if let Ok(pgid) = i32::try_from(process.id()) {
            register(pgid);
        }
        let (stdin, stdout, stderr) = match (
            process.stdin.take(),
            process.stdout.take(),
            process.stderr.take(),
        ) {
            (Some(i), Some(o), Some(e)) => (i, o, e),
            _ => {
                return Err(ImplError::Misbehaved(
                    "cannot open the child's pipes".into(),
                ))
            }
        };
        let (tx, lines) = mpsc::channel();
        let line_limit = limits.line_bytes;
        std::thread::spawn(move || {
            for frame in Frames::with_limit(BufReader::new(stdout), line_limit) {
                if tx.send(frame).is_err() {
                    break;
                }
            }
        });
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let sink = tail.clone();
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
            }
        });
        Ok(ChildProcess {
            command: command.to_owned(),
            process,
            stdin,
            lines,
            stderr: tail,
            seq: 0,
            limits,
            dead: false,
        })
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

    fn kill(&mut self) {
        self.dead = true;
        if let Ok(pid) = i32::try_from(self.process.id()) {
            // SAFETY: killpg only sends a signal; the group is the child's own.
            unsafe {
                libc::killpg(pid, libc::SIGKILL);
            }
        }
        let _ = self.process.kill();
        let _ = self.process.wait();
        if let Ok(pid) = i32::try_from(self.process.id()) {
            unregister(pid);
        }
    }

    /// Kills the child and describes what it did.
    fn fail(&mut self, what: String) -> ImplError {
        // Give the stderr reader a moment to collect the last words.
        std::thread::sleep(Duration::from_millis(20));
        self.kill();
        ImplError::Misbehaved(format!("`{}` {what}; {}", self.command, self.stderr_tail()))
    }

    /// Sends one request and waits for its answer, counting effects on the
    /// way. `Err(Crashed)` when a crash scheduled right after an effect fired.
    fn request(
        &mut self,
        mut body: Value,
        timeout: Duration,
        world: &AgentWorld,
    ) -> Result<Value, ImplError> {
        self.seq += 1;
        let seq = self.seq;
        body["seq"] = json!(seq);
        let op = body["op"].as_str().unwrap_or("?").to_owned();
        if let Err(e) = writeln!(self.stdin, "{body}").and_then(|()| self.stdin.flush()) {
            let status = self.process.try_wait().ok().flatten();
            return Err(self.fail(match status {
                Some(s) => format!("exited ({s}) before `{op}` could be sent"),
                None => format!("stopped reading its input ({e})"),
            }));
        }
        let deadline = Instant::now() + timeout;
        let mut lines = 0usize;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let frame = match self.lines.recv_timeout(left) {
                Ok(Ok(frame)) => frame,
                Ok(Err(e)) => return Err(self.fail(format!("could not be read ({e})"))),
                Err(RecvTimeoutError::Timeout) => {
                    return Err(self.fail(format!(
                        "did not answer `{op}` (seq {seq}) within {} ms",
                        timeout.as_millis()
                    )))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    std::thread::sleep(Duration::from_millis(20));
                    let status = self.process.try_wait().ok().flatten();
                    return Err(self.fail(match status {
                        Some(s) => format!("exited ({s}) while answering `{op}` (seq {seq})"),
                        None => format!("closed its output while answering `{op}` (seq {seq})"),
                    }));
                }
            };
            lines += 1;
            if lines > self.limits.lines_per_answer {
                return Err(self.fail(format!(
                    "flooded its output: more than {} lines for one `{op}`",
                    self.limits.lines_per_answer
                )));
            }
            let bytes = match frame {
                Frame::Oversized { len, .. } => {
                    return Err(self.fail(format!(
                        "printed a line of {len} bytes (the limit is {})",
                        self.limits.line_bytes
                    )))
                }
                Frame::Bytes { bytes, .. } => bytes,
            };
            let v: Value = match serde_json::from_slice(&bytes) {
                Ok(v) => v,
                Err(_) => {
                    let shown = String::from_utf8_lossy(&bytes[..bytes.len().min(80)]).into_owned();
                    return Err(self.fail(format!(
                        "printed something that is not a JSON line: {shown:?}"
                    )));
                }
            };
            if v["seq"] != json!(seq) {
                return Err(self.fail(format!(
                    "answered with seq {} while `{op}` (seq {seq}) was waiting",
                    v["seq"]
                )));
            }
            // An answer first: `ok`, or a non-null `error`.
            if let Some(ok) = v.get("ok") {
                return Ok(ok.clone());
            }
            if let Some(e) = v.get("error").filter(|e| !e.is_null()) {
                return Err(self.fail(format!("answered `{op}` with an error: {e}")));
            }
            if let Some(key) = v["perform"].as_str() {
                if let Err(e) = world.perform(&EffectKey(key.to_owned())) {
                    self.kill();
                    return Err(e);
                }
                continue;
            }
            if v.get("log").is_some() {
                // Diagnostics on the protocol channel: allowed, but counted.
                continue;
            }
            return Err(self.fail(format!(
                "answered `{op}` without `ok`, `error`, `perform` or `log`: {v}"
            )));
        }
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        // A polite `shutdown` first (unless it was killed), then never leave
        // a child behind.
        if !self.dead {
            self.seq += 1;
            let bye = json!({"seq": self.seq, "op": "shutdown"});
            if writeln!(self.stdin, "{bye}")
                .and_then(|()| self.stdin.flush())
                .is_ok()
            {
                let _ = self.lines.recv_timeout(Duration::from_millis(200));
            }
        }
        self.kill();
    }
}

struct SubprocessReceiver {
    child: ChildProcess,
    storage: Storage,
    world: AgentWorld,
    identity: Identity,
}

/// Reads the `init` answer: `name` is required, `version` and `capabilities`
/// optional. An unknown capability is a breach, not something to ignore: a
/// vendor who misspells `execute` must learn it before certifying.
fn identity_of(answer: &Value) -> Result<Identity, String> {
    let name = answer["name"]
        .as_str()
        .ok_or_else(|| format!("answered init without a `name`: {answer}"))?;
    let version = match &answer["version"] {
        Value::Null => None,
        Value::String(v) => Some(v.clone()),
        other => {
            return Err(format!(
                "answered init with a `version` that is not a string: {other}"
            ))
        }
    };
    let capabilities = match &answer["capabilities"] {
        Value::Null => Default::default(),
        Value::Array(items) => items
            .iter()
            .map(|c| {
                c.as_str().and_then(Capability::from_name).ok_or_else(|| {
                    format!(
                        "answered init with an unknown capability {c} (known: {})",
                        Capability::ALL
                            .iter()
                            .map(|c| c.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                })
            })
            .collect::<Result<_, _>>()?,
        other => {
            return Err(format!(
                "answered init with `capabilities` that is not a list: {other}"
            ))
        }
    };
    Ok(Identity {
        name: name.to_owned(),
        version,
        capabilities,
    })
}

impl SubprocessReceiver {
    fn crash_now(&mut self) -> ImplError {
        self.storage.fire();
        self.child.kill();
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
        let armed = self.storage.armed();
        if armed == Some(CrashPoint::BeforeSync) {
            // Killed before the frame reached it.
            return Err(self.crash_now());
        }
        let request = json!({"op": "deliver", "frame": encode_bytes(frame), "principal": principal.as_str(), "now": now.0});
        let timeout = self.child.limits.request;
        let answer = self.child.request(request, timeout, &self.world)?;
        if armed == Some(CrashPoint::AfterSync) {
            // It answered; the harness never took the answer.
            return Err(self.crash_now());
        }
        let events = answer["events"]
            .as_array()
            .ok_or_else(|| {
                self.child
                    .fail(format!("answered deliver without `events`: {answer}"))
            })?
            .iter()
            .map(event_from_json)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| {
                self.child
                    .fail(format!("answered deliver with a bad event: {e}"))
            })?;
        let outgoing = match &answer["outgoing"] {
            Value::Null => Some(Vec::new()),
            Value::Array(a) => a
                .iter()
                .map(|f| f.as_str().and_then(decode_bytes))
                .collect::<Option<Vec<_>>>(),
            _ => None,
        }
        .ok_or_else(|| {
            self.child
                .fail("answered deliver with outgoing frames that are not base64".into())
        })?;
        Ok(Delivered { events, outgoing })
    }

    fn execute(
        &mut self,
        thread: &ThreadId,
        commitment: &MessageRef,
        now: LocalTime,
    ) -> Result<Execution, ImplError> {
        let request = json!({"op": "execute", "thread": thread.as_str(), "commitment": commitment.as_str(), "now": now.0});
        let timeout = self.child.limits.request;
        let answer = self.child.request(request, timeout, &self.world)?;
        execution_from_json(&answer)
            .map_err(|e| self.child.fail(format!("answered execute badly: {e}")))
    }

    fn kill(&mut self) {
        self.child.kill();
    }

    fn view(&mut self, thread: &ThreadId) -> Result<Value, ImplError> {
        let timeout = self.child.limits.request;
        self.child.request(
            json!({"op": "view", "thread": thread.as_str()}),
            timeout,
            &self.world,
        )
    }
}
