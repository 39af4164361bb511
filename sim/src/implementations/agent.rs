//! `tern-sim agent`: the reference implementation (or a mutant of the zoo)
//! served over the subprocess protocol on stdin and stdout, with its durable
//! log in the state directory the harness names. It exercises the subprocess
//! path end to end, and gives vendors traffic to compare with.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::rc::Rc;

use serde::Serialize;
use serde_json::Value;
use tern_model::ledger::{EffectKey, LedgerConfig, LocalTime};
use tern_model::message::{MessageRef, Participant, Principal, ThreadId};

use crate::contract::plugin::{Capability, ImplError, InitParams, Receiver, View};
use crate::contract::protocol::lines::{
    self, DeliverAnswer, ExecuteAnswer, InitAnswer, Line, Request,
};
use crate::contract::protocol::{decode_bytes, encode_bytes, event_line, execute_answer, PROTOCOL};
use crate::contract::world::Effects;
pub use crate::implementations::file_log::{FileLog, LogFlaw, SNAPSHOT_AFTER};
use crate::implementations::mutants::{start_mutant, Mutant};
use crate::implementations::reference::{Recording, ReferenceReceiver};

/// The world as seen from a subprocess: performing an effect is a line on
/// stdout that the harness counts; what was performed before a restart comes
/// in the `init` request.
#[derive(Clone)]
pub struct ProtocolWorld {
    out: Rc<RefCell<Box<dyn Write>>>,
    seq: Rc<RefCell<u64>>,
    performed: Rc<RefCell<BTreeSet<String>>>,
}

impl Effects for ProtocolWorld {
    fn perform(&self, key: &EffectKey) -> Result<(), ImplError> {
        let line = Line::Perform {
            seq: *self.seq.borrow(),
            perform: key.0.clone(),
        };
        let mut out = self.out.borrow_mut();
        write_line(&mut *out, &line).map_err(|e| io_error("cannot write", e))?;
        self.performed.borrow_mut().insert(key.0.clone());
        Ok(())
    }

    fn performed(&self, key: &EffectKey) -> bool {
        self.performed.borrow().contains(&key.0)
    }
}

fn io_error(what: &str, e: io::Error) -> ImplError {
    ImplError::Misbehaved(format!("{what}: {e}"))
}

/// One line, straight into the writer, then flushed: the harness waits on
/// it. (`Value`'s `Display` would go through the formatting machinery for
/// every piece.)
fn write_line(out: &mut dyn Write, line: &impl Serialize) -> io::Result<()> {
    put_line(out, line)?;
    out.flush()
}

/// One line into the writer, left for the caller to flush.
fn put_line(out: &mut dyn Write, line: &impl Serialize) -> io::Result<()> {
    serde_json::to_writer(&mut *out, line)?;
    out.write_all(b"\n")
}

/// Flushes the answers written so far unless a whole request already waits
/// in `input`: a harness that wrote several requests at once (`pipeline`)
/// then gets their answers in one write. Nothing is held back while the
/// next request is incomplete or not there, since the harness may be
/// waiting for these answers before it writes more.
fn flush_unless_more<R: Read>(out: &mut dyn Write, input: &BufReader<R>) -> io::Result<()> {
    // `contains` rather than the memchr crate, whose first call detects the
    // CPU's features: a restarted agent would pay that at every start.
    if input.buffer().contains(&b'\n') {
        Ok(())
    } else {
        out.flush()
    }
}

/// `{"seq": N, "ok": ...}` with a typed answer, written without a tree.
#[derive(Serialize)]
struct OkLine<'a, T: Serialize> {
    seq: u64,
    ok: &'a T,
}

fn start(
    req: &lines::Init,
    world: &ProtocolWorld,
    mutant: Option<Mutant>,
    flaw: Option<LogFlaw>,
    snapshot_after: Option<usize>,
) -> Result<Box<dyn Receiver>, String> {
    if req.protocol != PROTOCOL {
        return Err(format!(
            "unsupported protocol {:?}; this agent speaks {PROTOCOL}",
            req.protocol
        ));
    }
    let participant = Participant::new(&req.participant)?;
    let principal = Principal::new(&req.principal)?;
    let config = LedgerConfig::from_json(req.config.get()).map_err(|e| e.to_string())?;
    let dir = PathBuf::from(&req.state_dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    world
        .performed
        .borrow_mut()
        .extend(req.effects.iter().cloned());
    let init = InitParams {
        participant,
        principal,
        config: config.into(),
    };
    let log = FileLog::open(dir, flaw, snapshot_after).map_err(|e| e.to_string())?;
    match mutant {
        Some(m) => start_mutant(m, &init, log, world.clone()),
        None => ReferenceReceiver::recover_with(&init, log, world.clone(), Recording::Full)
            .map(|r| Box::new(r) as Box<dyn Receiver>),
    }
    .map_err(|e| e.to_string())
}

/// What one request is answered with. A view is already canonical JSON
/// text, so it goes on the line as it is, not through a JSON tree.
enum Answer {
    Init(InitAnswer),
    Deliver(DeliverAnswer),
    Execute(ExecuteAnswer),
    View(View),
}

fn handle(req: &Request, receiver: &mut Box<dyn Receiver>) -> Result<Answer, String> {
    match req {
        Request::Deliver(d) => {
            let frame = decode_bytes(&d.frame).ok_or("`frame` must be base64")?;
            let principal = Principal::new(&d.principal)?;
            let delivered = receiver
                .deliver(&frame, &principal, LocalTime(d.now))
                .map_err(|e| e.to_string())?;
            Ok(Answer::Deliver(DeliverAnswer {
                events: delivered.events.iter().map(event_line).collect(),
                outgoing: Some(delivered.outgoing.iter().map(|f| encode_bytes(f)).collect()),
            }))
        }
        Request::Execute(e) => {
            let thread = ThreadId::new(&e.thread)?;
            let commitment = MessageRef::new(&e.commitment)?;
            let done = receiver
                .execute(&thread, &commitment, LocalTime(e.now))
                .map_err(|e| e.to_string())?;
            Ok(Answer::Execute(execute_answer(&done)))
        }
        Request::View(v) => {
            let thread = ThreadId::new(&v.thread)?;
            receiver
                .view(&thread)
                .map(Answer::View)
                .map_err(|e| e.to_string())
        }
        Request::Init(_) | Request::Shutdown(_) => {
            Err(format!("`{}` is not answered here", req.op()))
        }
    }
}

/// What `tern-sim agent --mutant NAME` serves: a mutant of the zoo, or a
/// wrong that only a process can do, one the zoo's receivers (which live
/// in tern-sim's own process and have no process to keep) cannot have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentMutant {
    Zoo(Mutant),
    /// Claims `reinit`, and keeps across `init` the IDs it accepted in
    /// earlier sessions (a cache that outlives the session): a message of
    /// a new session with an ID an earlier one accepted in the same thread
    /// is answered `duplicate`. Wrong only when a process is reused; a
    /// fresh one is the reference.
    LeaksSession,
    /// The reference with a log that gets durability wrong.
    Log(LogFlaw),
    /// Now and then, by a draw of its own that no seed governs, answers
    /// `duplicate` for a message it accepted: a failure that a replay of
    /// the same seed does not show again, which only
    /// `--check-determinism` names for what it is.
    FlakyDuplicates,
}

impl AgentMutant {
    /// The mutants only a process can be, by name.
    pub const PROCESS_ONLY: [(&'static str, AgentMutant, &'static str); 7] = [
        (
            "leaks-session",
            AgentMutant::LeaksSession,
            "answers `duplicate` for IDs an earlier session accepted (claims `reinit`)",
        ),
        (
            "skips-fsync",
            AgentMutant::Log(LogFlaw::SkipsFsync),
            "never syncs its log or its directory (caught only by a power loss)",
        ),
        (
            "skips-dir-fsync",
            AgentMutant::Log(LogFlaw::SkipsDirFsync),
            "syncs its log but never its directory, so the log's name is not durable (caught only by a power loss)",
        ),
        (
            "renames-unsynced",
            AgentMutant::Log(LogFlaw::RenamesUnsynced),
            "after a crash, renames its rewritten log into place before syncing it (caught only by a power loss)",
        ),
        (
            "syncs-every-second",
            AgentMutant::Log(LogFlaw::SyncsEverySecond),
            "syncs its log at every second delivery only (caught only by a power loss)",
        ),
        (
            "renames-snapshot-unsynced",
            AgentMutant::Log(LogFlaw::RenamesSnapshotUnsynced),
            "renames a new snapshot into place before syncing it, then drops the records it covers from its log (caught only by a power loss after a snapshot)",
        ),
        (
            "flaky-duplicates",
            AgentMutant::FlakyDuplicates,
            "now and then, at random, answers `duplicate` for a message it accepted (nondeterministic: its failures do not replay)",
        ),
    ];

    pub fn by_name(name: &str) -> Option<AgentMutant> {
        Mutant::by_name(name).map(AgentMutant::Zoo).or_else(|| {
            AgentMutant::PROCESS_ONLY
                .iter()
                .find(|(n, ..)| *n == name)
                .map(|(_, m, _)| *m)
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            AgentMutant::Zoo(m) => m.name(),
            other => AgentMutant::PROCESS_ONLY
                .iter()
                .find(|(_, m, _)| *m == other)
                .map_or("unnamed", |(n, ..)| n),
        }
    }

    fn zoo(self) -> Option<Mutant> {
        match self {
            AgentMutant::Zoo(m) => Some(m),
            _ => None,
        }
    }

    fn flaw(self) -> Option<LogFlaw> {
        match self {
            AgentMutant::Log(f) => Some(f),
            _ => None,
        }
    }
}

/// `flaky-duplicates`' draw: seeded by the process's own random hash
/// keys, so two processes given the same requests draw differently.
struct Flaky {
    keys: std::collections::hash_map::RandomState,
    draws: u64,
}

impl Flaky {
    fn new() -> Flaky {
        Flaky {
            keys: std::collections::hash_map::RandomState::new(),
            draws: 0,
        }
    }

    /// True about once in 16 draws.
    fn strikes(&mut self) -> bool {
        use std::hash::BuildHasher;
        self.draws += 1;
        self.keys.hash_one(self.draws) % 16 == 0
    }

    /// Answers `duplicate`, now and then, for a message accepted.
    fn strike(&mut self, d: &mut DeliverAnswer) {
        for e in &mut d.events {
            if e.outcome == lines::OutcomeName::Accepted && self.strikes() {
                e.outcome = lines::OutcomeName::Duplicate;
            }
        }
    }
}

/// `leaks-session`: answers `duplicate` for a message accepted under an
/// ID that an earlier session accepted in the same thread, and notes what
/// this one accepts.
fn leak_sessions(
    d: &mut DeliverAnswer,
    earlier: &BTreeSet<(String, String)>,
    accepted: &mut BTreeSet<(String, String)>,
) {
    for e in &mut d.events {
        let (Some(id), Some(thread)) = (&e.id, &e.thread) else {
            continue;
        };
        let key = (thread.clone(), id.clone());
        if e.outcome == lines::OutcomeName::Accepted {
            if earlier.contains(&key) {
                e.outcome = lines::OutcomeName::Duplicate;
            }
            accepted.insert(key);
        }
    }
}

/// Serves one harness until `shutdown` or the end of input, keeping a
/// snapshot every [`SNAPSHOT_AFTER`] records.
pub fn serve(
    input: BufReader<impl Read>,
    output: Box<dyn Write>,
    served: Option<AgentMutant>,
) -> io::Result<()> {
    serve_with(input, output, served, Some(SNAPSHOT_AFTER))
}

/// Serves one harness until `shutdown` or the end of input; a start keeps
/// a snapshot of its state once it replayed `snapshot_after` records that
/// no snapshot covered (`None`: never).
pub fn serve_with(
    input: BufReader<impl Read>,
    output: Box<dyn Write>,
    served: Option<AgentMutant>,
    snapshot_after: Option<usize>,
) -> io::Result<()> {
    let mutant = served.and_then(AgentMutant::zoo);
    let flaw = served.and_then(AgentMutant::flaw);
    let leaks = served == Some(AgentMutant::LeaksSession);
    let mut flaky = (served == Some(AgentMutant::FlakyDuplicates)).then(Flaky::new);
    // `leaks-session`'s memory: (thread, ID) accepted in this session, and
    // in the sessions before it.
    let mut accepted: BTreeSet<(String, String)> = BTreeSet::new();
    let mut earlier: BTreeSet<(String, String)> = BTreeSet::new();
    let out = Rc::new(RefCell::new(output));
    let new_world = || ProtocolWorld {
        out: out.clone(),
        seq: Rc::new(RefCell::new(0)),
        performed: Rc::new(RefCell::new(BTreeSet::new())),
    };
    let mut world = new_world();
    let mut receiver: Option<Box<dyn Receiver>> = None;
    // One buffer for every line, read as bytes: a line that is not UTF-8
    // gets an error answer like any other line that is not JSON.
    let mut input = input;
    let mut line = Vec::new();
    // The seq the next request should have: requests are counted from 1,
    // so even one that cannot be read is answered with its own seq.
    let mut next_seq: u64 = 1;
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        if line.trim_ascii().is_empty() {
            continue;
        }
        let req = match Request::from_line(&line) {
            Ok(req) => req,
            Err(e) => {
                // A request that is not one: echo its seq if it has one
                // that names a request, or else give the one it should
                // have had.
                let (seq, why) = match serde_json::from_slice::<Value>(&line) {
                    Ok(v) => (
                        lines::seq_value(&v["seq"]).unwrap_or(next_seq),
                        format!("not a request of {PROTOCOL}: {e}"),
                    ),
                    Err(_) => (next_seq, format!("not JSON: {e}")),
                };
                next_seq = seq.saturating_add(1);
                let mut o = out.borrow_mut();
                put_line(&mut **o, &Line::Error { seq, error: why })?;
                flush_unless_more(&mut **o, &input)?;
                continue;
            }
        };
        let seq = req.seq();
        next_seq = seq.saturating_add(1);
        if let Request::Init(_) = req {
            // Another `init` starts over (the `reinit` capability): nothing
            // of the last session stays, in memory or in the world.
            receiver = None;
            world = new_world();
            earlier.append(&mut accepted);
        }
        *world.seq.borrow_mut() = seq;
        let answer = match (&req, receiver.as_mut()) {
            (Request::Init(init), _) => {
                start(init, &world, mutant, flaw, snapshot_after).map(|r| {
                    receiver = Some(r);
                    Answer::Init(InitAnswer {
                        name: match served {
                            Some(m) => format!("tern-sim agent (mutant {})", m.name()),
                            None => "tern-sim agent".to_owned(),
                        },
                        version: Some(env!("CARGO_PKG_VERSION").to_owned()),
                        capabilities: Capability::ALL.to_vec(),
                    })
                })
            }
            (Request::Shutdown(_), _) => {
                write_line(&mut **out.borrow_mut(), &OkLine { seq, ok: &() })?;
                return Ok(());
            }
            (_, None) => Err("the first request must be `init`".to_owned()),
            (_, Some(r)) => handle(&req, r),
        };
        let answer = match answer {
            Ok(Answer::Deliver(mut d)) if leaks => {
                leak_sessions(&mut d, &earlier, &mut accepted);
                Ok(Answer::Deliver(d))
            }
            Ok(Answer::Deliver(mut d)) if flaky.is_some() => {
                if let Some(flaky) = flaky.as_mut() {
                    flaky.strike(&mut d);
                }
                Ok(Answer::Deliver(d))
            }
            other => other,
        };
        let mut o = out.borrow_mut();
        match answer {
            Ok(Answer::Init(ok)) => put_line(&mut **o, &OkLine { seq, ok: &ok })?,
            Ok(Answer::Deliver(ok)) => put_line(&mut **o, &OkLine { seq, ok: &ok })?,
            Ok(Answer::Execute(ok)) => put_line(&mut **o, &OkLine { seq, ok: &ok })?,
            Ok(Answer::View(view)) => writeln!(o, "{{\"seq\":{seq},\"ok\":{view}}}")?,
            Err(error) => put_line(&mut **o, &Line::Error { seq, error })?,
        }
        flush_unless_more(&mut **o, &input)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What reached the harness at each flush.
    #[derive(Clone, Default)]
    struct Flushes {
        pending: Rc<RefCell<Vec<u8>>>,
        flushed: Rc<RefCell<Vec<String>>>,
    }

    impl Write for Flushes {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.pending.borrow_mut().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            let bytes = std::mem::take(&mut *self.pending.borrow_mut());
            if !bytes.is_empty() {
                self.flushed
                    .borrow_mut()
                    .push(String::from_utf8(bytes).unwrap());
            }
            Ok(())
        }
    }

    fn flushes(input: &[u8], capacity: usize) -> Vec<String> {
        let out = Flushes::default();
        let input = BufReader::with_capacity(capacity, input);
        serve(input, Box::new(out.clone()), None).unwrap();
        let flushed = out.flushed.borrow().clone();
        flushed
    }

    #[test]
    fn requests_that_came_together_are_answered_in_one_write() {
        let two = b"{\"op\":\"view\",\"seq\":1,\"thread\":\"t\"}\n{\"op\":\"view\",\"seq\":2,\"thread\":\"t\"}\n";
        let got = flushes(two, 1 << 16);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].lines().count(), 2, "{got:?}");
        assert!(got[0].contains("\"seq\":1") && got[0].contains("\"seq\":2"));
    }

    #[test]
    fn an_answer_is_not_held_for_a_request_not_wholly_there() {
        // A buffer that holds the first request and only part of the next:
        // the harness may be waiting for the first answer.
        let first = b"{\"op\":\"view\",\"seq\":1,\"thread\":\"t\"}\n";
        let mut two = first.to_vec();
        two.extend_from_slice(b"{\"op\":\"view\",\"seq\":2,\"thread\":\"t\"}\n");
        let got = flushes(&two, first.len() + 4);
        assert_eq!(got.len(), 2, "{got:?}");
        // Garbage gets its error answer at once too.
        assert_eq!(flushes(b"not json\n", 1 << 16).len(), 1);
    }

    /// Seqs are counted, so a request that cannot be read is answered with
    /// the seq it should have had, never null, and one that names its seq
    /// is answered with that one.
    #[test]
    fn a_request_that_cannot_be_read_is_answered_with_its_seq() {
        let input = b"not json\n[1]\n{\"op\":\"view\",\"seq\":3,\"thread\":\"t\"}\n{\"op\":\"dance\",\"seq\":4}\n{\"seq\":5.0}\n{\"seq\":null}\n";
        let seqs: Vec<Value> = flushes(input, 1 << 16)
            .concat()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["seq"].clone())
            .collect();
        assert_eq!(
            seqs,
            [1, 2, 3, 4, 5, 6].map(Value::from).to_vec(),
            "every line has the seq of its request"
        );
    }
}
