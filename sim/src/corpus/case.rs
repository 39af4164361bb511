//! One conformance case, read from its language-neutral file (docs/corpus.md)
//! into types where a malformed case cannot be represented: a case that
//! loads is a case the harness can run.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use base64::Engine;
use serde::Deserialize;
use serde_json::Value;
use tern_model::ledger::{EffectKey, Execution, LedgerConfig, LocalTime, Refusal, RejectClass};
use tern_model::message::{MessageRef, Participant, Principal, ThreadId};

use super::reading::{local_time, name, read_json, setup_of, At, RawSetup};
use super::CorpusError;
use crate::contract::plugin::{Capability, InitParams};
use crate::contract::storage::CrashPoint;
pub use crate::judge::compare::{ComparedEvent, ComparedOutcome, EventKindKey};
use crate::judge::invariants::{self, Invariant};

/// Whether a case's verdict follows from the seed's words (`Core`) or rests
/// on the profile's reading (`Profile`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Core,
    Profile,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Core => "core",
            Level::Profile => "profile",
        }
    }

    pub fn from_name(name: &str) -> Option<Level> {
        match name {
            "core" => Some(Level::Core),
            "profile" => Some(Level::Profile),
            _ => None,
        }
    }
}

/// Its name, as reports print it.
impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A seed clause as a case cites it: the same three facts as the registry.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClauseRef {
    pub id: String,
    pub section: u8,
    pub sentence: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpectDeliver {
    pub events: Vec<ComparedEvent>,
    /// `"outgoing": "none"`: the receiver must send nothing of its own.
    pub no_outgoing: bool,
}

/// Where a crash scheduled inside an execution hits: around its effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExecuteCrash {
    /// At the effect, before it happens: the intent the receiver made
    /// durable survives, the world never sees the effect.
    BeforeEffect,
    /// Right after the effect, before the execution is reported.
    AfterEffect,
}

impl ExecuteCrash {
    pub fn point(self) -> CrashPoint {
        match self {
            ExecuteCrash::BeforeEffect => CrashPoint::BeforeEffect,
            ExecuteCrash::AfterEffect => CrashPoint::AfterEffect,
        }
    }
}

/// Where a crash scheduled inside a delivery (or a start-up) hits: at its
/// first sync.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliverCrash {
    BeforeDurable,
    AfterDurable,
}

impl DeliverCrash {
    pub fn point(self) -> CrashPoint {
        match self {
            DeliverCrash::BeforeDurable => CrashPoint::BeforeSync,
            DeliverCrash::AfterDurable => CrashPoint::AfterSync,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Deliver {
        frame: Vec<u8>,
        principal: Principal,
        at: LocalTime,
        /// `None` only when `crash` is set.
        expect: Option<ExpectDeliver>,
        crash: Option<DeliverCrash>,
    },
    Execute {
        thread: ThreadId,
        commitment: MessageRef,
        at: LocalTime,
        /// `None` only when `crash` is set.
        expect: Option<Execution>,
        crash: Option<ExecuteCrash>,
    },
    View {
        thread: ThreadId,
        pattern: Value,
    },
    Effects {
        expect: BTreeMap<String, u32>,
    },
    Crash,
    /// A start on the same storage; with `crash`, the start-up is killed at
    /// its first sync (before or after what it writes is durable), and the
    /// receiver stays down until the next restart.
    Restart {
        crash: Option<DeliverCrash>,
    },
}

impl Step {
    pub fn op(&self) -> &'static str {
        match self {
            Step::Deliver { .. } => "deliver",
            Step::Execute { .. } => "execute",
            Step::View { .. } => "view",
            Step::Effects { .. } => "effects",
            Step::Crash => "crash",
            Step::Restart { .. } => "restart",
        }
    }

    /// The capability a step exercises, if any.
    pub fn needs(&self) -> Option<Capability> {
        match self {
            Step::Execute { .. } | Step::Effects { .. } => Some(Capability::Execute),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Setup {
    pub participant: Participant,
    pub principal: Principal,
    pub config: LedgerConfig,
}

impl Setup {
    /// What the receiver under test is started with.
    pub fn init(&self) -> InitParams {
        InitParams {
            participant: self.participant.clone(),
            principal: self.principal.clone(),
            config: self.config.clone().into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    pub id: String,
    pub title: String,
    pub level: Level,
    pub clauses: Vec<ClauseRef>,
    pub rules: Vec<String>,
    pub invariants: Vec<Invariant>,
    pub requires: BTreeSet<Capability>,
    pub setup: Setup,
    pub steps: Vec<Step>,
    pub notes: Option<String>,
    /// Where it was read from, for error messages.
    pub file: PathBuf,
}

impl Case {
    /// Whether the case is about `invariant`: it lists the invariant, or
    /// cites one of the seed clauses the invariant checks. A failing case
    /// about a mutant's target invariant is what "killed by the corpus"
    /// means.
    pub fn is_about(&self, invariant: Invariant) -> bool {
        self.invariants.contains(&invariant)
            || self
                .clauses
                .iter()
                .any(|c| invariant.clauses.contains(&c.id.as_str()))
    }
}

impl Case {
    /// The section a case is filed under: its main (first) clause's.
    pub fn section(&self) -> u8 {
        self.clauses.first().map_or(0, |c| c.section)
    }
}

// The file format, as serde reads it; converted into the types above.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCase {
    id: String,
    title: String,
    level: String,
    clauses: Vec<ClauseRef>,
    #[serde(default)]
    rules: Vec<String>,
    invariants: Vec<String>,
    #[serde(default)]
    requires: Vec<String>,
    setup: RawSetup,
    steps: Vec<RawStep>,
    #[serde(default)]
    notes: Option<String>,
}

#[derive(Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
enum RawStep {
    Deliver {
        #[serde(default)]
        frame: Option<String>,
        #[serde(default)]
        frame_base64: Option<String>,
        /// Pads `frame` to exactly this many bytes at its `{{pad}}` marker,
        /// so that a case can hold a frame at the size limit without a
        /// file that large.
        #[serde(default)]
        pad_to: Option<usize>,
        principal: String,
        #[serde(default)]
        at: Option<String>,
        #[serde(default)]
        expect: Option<Value>,
        #[serde(default)]
        crash: Option<String>,
    },
    Execute {
        thread: String,
        commitment: String,
        #[serde(default)]
        at: Option<String>,
        #[serde(default)]
        expect: Option<Value>,
        #[serde(default)]
        crash: Option<String>,
    },
    View {
        thread: String,
        expect: Value,
    },
    Effects {
        expect: BTreeMap<String, u32>,
    },
    Crash {},
    Restart {
        #[serde(default)]
        crash: Option<String>,
    },
}

/// The crash of a step that syncs (a delivery or a start-up), from its
/// `crash` member.
fn sync_crash(
    at: &At<'_>,
    step: &str,
    what: &str,
    crash: Option<&str>,
) -> Result<Option<DeliverCrash>, CorpusError> {
    match crash {
        None => Ok(None),
        Some("before_durable") => Ok(Some(DeliverCrash::BeforeDurable)),
        Some("after_durable") => Ok(Some(DeliverCrash::AfterDurable)),
        Some(_) => Err(at.err(
            format!("{step}/crash"),
            format!("{what} crashes \"before_durable\" or \"after_durable\""),
        )),
    }
}

fn verdict_of(at: &At, pointer: &str, v: &Value) -> Result<ComparedEvent, CorpusError> {
    let obj = v
        .as_object()
        .ok_or_else(|| at.err(pointer, "an event must be an object"))?;
    for key in obj.keys() {
        if !["event", "id", "outcome", "class", "missing", "thread"].contains(&key.as_str()) {
            return Err(at.err(format!("{pointer}/{key}"), "unknown member of an event"));
        }
    }
    let kind = match obj.get("event").and_then(Value::as_str) {
        Some("delivered") => EventKindKey::Delivered,
        Some("released") => EventKindKey::Released,
        Some("invalidated") => EventKindKey::Invalidated,
        _ => {
            return Err(at.err(
                format!("{pointer}/event"),
                "must be \"delivered\", \"released\" or \"invalidated\"",
            ))
        }
    };
    let id = match obj.get("id") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(at.err(format!("{pointer}/id"), "must be a string or null")),
    };
    let outcome = obj.get("outcome").and_then(Value::as_str);
    let class = obj.get("class");
    let missing = obj.get("missing");
    let verdict = match outcome {
        Some("accepted") | Some("duplicate") if class.is_some() || missing.is_some() => {
            return Err(at.err(
                pointer,
                "`class` and `missing` belong only to rejected and pending events",
            ))
        }
        Some("accepted") => ComparedOutcome::Accepted,
        Some("duplicate") => ComparedOutcome::Duplicate,
        Some("pending") => {
            if class.is_some() {
                return Err(at.err(format!("{pointer}/class"), "a pending event has no class"));
            }
            let list = missing.and_then(Value::as_array).ok_or_else(|| {
                at.err(
                    pointer,
                    "a pending event needs `missing`, a list of references",
                )
            })?;
            let mut set = BTreeSet::new();
            for (i, m) in list.iter().enumerate() {
                let r = m
                    .as_str()
                    .filter(|s| MessageRef::new(s).is_ok())
                    .ok_or_else(|| {
                        at.err(format!("{pointer}/missing/{i}"), "not a message reference")
                    })?;
                set.insert(r.to_owned());
            }
            ComparedOutcome::Pending(set)
        }
        Some("rejected") => {
            if missing.is_some() {
                return Err(at.err(
                    format!("{pointer}/missing"),
                    "a rejected event has no `missing`",
                ));
            }
            let name = class
                .and_then(Value::as_str)
                .ok_or_else(|| at.err(pointer, "a rejected event needs `class`"))?;
            ComparedOutcome::Rejected(RejectClass::from_name(name).ok_or_else(|| {
                at.err(
                    format!("{pointer}/class"),
                    format!("unknown reject class `{name}`"),
                )
            })?)
        }
        _ => {
            return Err(at.err(
                format!("{pointer}/outcome"),
                "must be \"accepted\", \"duplicate\", \"pending\" or \"rejected\"",
            ))
        }
    };
    Ok(ComparedEvent { kind, id, verdict })
}

fn expect_deliver(at: &At, pointer: &str, v: &Value) -> Result<ExpectDeliver, CorpusError> {
    let obj = v
        .as_object()
        .ok_or_else(|| at.err(pointer, "must be an object with `events`"))?;
    for key in obj.keys() {
        if key != "events" && key != "outgoing" {
            return Err(at.err(format!("{pointer}/{key}"), "unknown member"));
        }
    }
    let list = obj
        .get("events")
        .and_then(Value::as_array)
        .filter(|l| !l.is_empty())
        .ok_or_else(|| {
            at.err(
                format!("{pointer}/events"),
                "a nonempty list of events is required",
            )
        })?;
    let events = list
        .iter()
        .enumerate()
        .map(|(i, e)| verdict_of(at, &format!("{pointer}/events/{i}"), e))
        .collect::<Result<Vec<_>, _>>()?;
    if events[0].kind != EventKindKey::Delivered {
        return Err(at.err(
            format!("{pointer}/events/0/event"),
            "the first event is always the frame's own `delivered` event",
        ));
    }
    if events[1..]
        .iter()
        .any(|e| e.kind == EventKindKey::Delivered)
    {
        return Err(at.err(
            format!("{pointer}/events"),
            "only the first event is `delivered`",
        ));
    }
    let no_outgoing = match obj.get("outgoing") {
        None => false,
        Some(Value::String(s)) if s == "none" => true,
        Some(_) => return Err(at.err(format!("{pointer}/outgoing"), "the only value is \"none\"")),
    };
    Ok(ExpectDeliver {
        events,
        no_outgoing,
    })
}

fn expect_execute(at: &At, pointer: &str, v: &Value) -> Result<Execution, CorpusError> {
    let obj = v.as_object().filter(|o| o.len() == 1).ok_or_else(|| {
        at.err(
            pointer,
            "must be {\"executed\": effect key} or {\"refused\": reason}",
        )
    })?;
    match (obj.get("executed"), obj.get("refused")) {
        (Some(Value::String(k)), None) => Ok(Execution::Executed {
            effect: EffectKey(k.clone()),
        }),
        (None, Some(Value::String(r))) => {
            Refusal::from_name(r)
                .map(Execution::Refused)
                .ok_or_else(|| {
                    at.err(
                        format!("{pointer}/refused"),
                        format!("unknown refusal `{r}`"),
                    )
                })
        }
        _ => Err(at.err(
            pointer,
            "must be {\"executed\": effect key} or {\"refused\": reason}",
        )),
    }
}

impl Case {
    /// Reads a case file's text. Errors name the file and, where possible,
    /// the JSON pointer of the offending member.
    pub fn from_json(file: &Path, text: &str) -> Result<Case, CorpusError> {
        let at = At { file };
        let raw: RawCase = read_json(file, text)?;
        if raw.id.is_empty()
            || !raw
                .id
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '-')
            || !raw.id.contains('.')
        {
            return Err(at.err(
                "/id",
                "a case ID is dotted lowercase: `<topic>.<what>`, letters, digits, `-` and `.`",
            ));
        }
        let level = Level::from_name(&raw.level)
            .ok_or_else(|| at.err("/level", "must be \"core\" or \"profile\""))?;
        if raw.clauses.is_empty() {
            return Err(at.err("/clauses", "a case checks at least one clause"));
        }
        if raw.invariants.is_empty() {
            return Err(at.err("/invariants", "a case exercises at least one invariant"));
        }
        let invariants = raw
            .invariants
            .iter()
            .enumerate()
            .map(|(i, name)| {
                invariants::by_name(name).ok_or_else(|| {
                    at.err(
                        format!("/invariants/{i}"),
                        format!("no invariant `{name}` (`tern-sim coverage` lists them)"),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let requires = requires_of(&at, &raw.requires)?;
        let setup = setup_of(&at, "/setup", raw.setup)?;
        if raw.steps.is_empty() {
            return Err(at.err("/steps", "a case has at least one step"));
        }
        let steps = steps_of(&at, raw.steps, &requires)?;
        Ok(Case {
            id: raw.id,
            title: raw.title,
            level,
            clauses: raw.clauses,
            rules: raw.rules,
            invariants,
            requires,
            setup,
            steps,
            notes: raw.notes,
            file: file.to_path_buf(),
        })
    }
}

/// The capabilities a case requires, by name: those of the contract only.
fn requires_of(at: &At, names: &[String]) -> Result<BTreeSet<Capability>, CorpusError> {
    names
        .iter()
        .enumerate()
        .map(|(i, c)| {
            // `reinit` and `pipeline` are the protocol's, matters of
            // cost: no case depends on them.
            Capability::from_name(c)
                .filter(|c| c.is_contract())
                .ok_or_else(|| {
                    at.err(
                        format!("/requires/{i}"),
                        format!("unknown capability `{c}`"),
                    )
                })
        })
        .collect()
}

/// A case's steps, each read, then held to the receiver's life (down after
/// a crash until a restart) and to the capabilities the case requires.
fn steps_of(
    at: &At,
    raw: Vec<RawStep>,
    requires: &BTreeSet<Capability>,
) -> Result<Vec<Step>, CorpusError> {
    let mut steps = Vec::with_capacity(raw.len());
    let mut up = true;
    for (i, raw_step) in raw.into_iter().enumerate() {
        let step = step_of(at, &format!("/steps/{i}"), raw_step)?;
        // The receiver's life: down after a crash until a restart.
        match &step {
            Step::Restart { .. } if up => {
                return Err(at.err(
                    format!("/steps/{i}"),
                    "`restart` while the receiver is running",
                ))
            }
            Step::Restart { crash } => up = crash.is_none(),
            Step::Crash if !up => {
                return Err(at.err(format!("/steps/{i}"), "`crash` while the receiver is down"))
            }
            Step::Effects { .. } => {}
            _ if !up => {
                return Err(at.err(
                    format!("/steps/{i}"),
                    "the receiver is down: a `restart` must come first",
                ))
            }
            _ => {}
        }
        let crashes = matches!(
            &step,
            Step::Crash
                | Step::Deliver { crash: Some(_), .. }
                | Step::Execute { crash: Some(_), .. }
        );
        if crashes {
            up = false;
        }
        if let Some(c) = step.needs() {
            if !requires.contains(&c) {
                return Err(at.err(
                    format!("/steps/{i}"),
                    format!(
                        "an `{}` step needs `\"{}\"` in `requires`",
                        step.op(),
                        c.as_str()
                    ),
                ));
            }
        }
        steps.push(step);
    }
    Ok(steps)
}

/// One step as the file spells it, at pointer `p`.
fn step_of(at: &At, p: &str, raw: RawStep) -> Result<Step, CorpusError> {
    Ok(match raw {
        RawStep::Deliver {
            frame,
            frame_base64,
            pad_to,
            principal,
            at: when,
            expect,
            crash,
        } => {
            let frame = frame_of(at, p, frame, frame_base64, pad_to)?;
            let crash = sync_crash(at, p, "a delivery", crash.as_deref())?;
            let expect = expectation(
                at,
                p,
                expect,
                crash.is_some(),
                "a delivery needs `expect` (or `crash`)",
                |e| expect_deliver(at, &format!("{p}/expect"), e),
            )?;
            Step::Deliver {
                frame,
                principal: name(at, &format!("{p}/principal"), &principal, |s| {
                    Principal::new(s)
                })?,
                at: local_time(at, &format!("{p}/at"), when.as_deref())?,
                expect,
                crash,
            }
        }
        RawStep::Execute {
            thread,
            commitment,
            at: when,
            expect,
            crash,
        } => {
            let crash = match crash.as_deref() {
                None => None,
                Some("before_effect") => Some(ExecuteCrash::BeforeEffect),
                Some("after_effect") => Some(ExecuteCrash::AfterEffect),
                Some(_) => {
                    return Err(at.err(
                        format!("{p}/crash"),
                        "an execution crashes \"before_effect\" or \"after_effect\"",
                    ))
                }
            };
            let expect = expectation(
                at,
                p,
                expect,
                crash.is_some(),
                "an execution needs `expect` (or `crash`)",
                |e| expect_execute(at, &format!("{p}/expect"), e),
            )?;
            Step::Execute {
                thread: name(at, &format!("{p}/thread"), &thread, |s| ThreadId::new(s))?,
                commitment: name(at, &format!("{p}/commitment"), &commitment, |s| {
                    MessageRef::new(s)
                })?,
                at: local_time(at, &format!("{p}/at"), when.as_deref())?,
                expect,
                crash,
            }
        }
        RawStep::View { thread, expect } => {
            if let Some(place) = super::pattern::misplaced_absent(&expect) {
                return Err(at.err(
                    format!("{p}/expect{place}"),
                    "`{\"$absent\": true}` can only be the pattern of an object's member",
                ));
            }
            Step::View {
                thread: name(at, &format!("{p}/thread"), &thread, |s| ThreadId::new(s))?,
                pattern: expect,
            }
        }
        RawStep::Effects { expect } => Step::Effects { expect },
        RawStep::Crash {} => Step::Crash,
        RawStep::Restart { crash } => Step::Restart {
            crash: sync_crash(at, p, "a start-up", crash.as_deref())?,
        },
    })
}

/// A delivery's frame: exactly one of `frame` (padded to `pad_to` bytes if
/// given) and `frame_base64`.
fn frame_of(
    at: &At,
    p: &str,
    frame: Option<String>,
    frame_base64: Option<String>,
    pad_to: Option<usize>,
) -> Result<Vec<u8>, CorpusError> {
    Ok(match (frame, frame_base64) {
        (Some(f), None) => match pad_to {
            None => f.into_bytes(),
            Some(n) => padded(&f, n).map_err(|m| at.err(format!("{p}/pad_to"), m))?,
        },
        (None, Some(_)) if pad_to.is_some() => {
            return Err(at.err(
                format!("{p}/pad_to"),
                "`pad_to` pads a `frame`, not a `frame_base64`",
            ))
        }
        (None, Some(b)) => base64::engine::general_purpose::STANDARD
            .decode(b)
            .map_err(|e| at.err(format!("{p}/frame_base64"), format!("not base64: {e}")))?,
        _ => {
            return Err(at.err(
                p,
                "a delivery has exactly one of `frame` and `frame_base64`",
            ))
        }
    })
}

/// A step's `expect`, read by `read`: required unless the step crashes
/// (`needs` says so), and then forbidden.
fn expectation<T>(
    at: &At,
    p: &str,
    expect: Option<Value>,
    crashes: bool,
    needs: &str,
    read: impl FnOnce(&Value) -> Result<T, CorpusError>,
) -> Result<Option<T>, CorpusError> {
    match (expect, crashes) {
        (Some(_), true) => Err(at.err(format!("{p}/expect"), "a crashing step has no `expect`")),
        (None, false) => Err(at.err(p, needs)),
        (Some(e), false) => Ok(Some(read(&e)?)),
        (None, true) => Ok(None),
    }
}

/// The marker a padded frame is padded at.
const PAD: &str = "{{pad}}";

/// `frame` with its one `{{pad}}` marker replaced by as many `x` as make it
/// exactly `len` bytes long. Bounded to twice the frame limit, so a case
/// cannot make the player allocate without end.
fn padded(frame: &str, len: usize) -> Result<Vec<u8>, String> {
    let limit = 2 * tern_model::wire::MAX_FRAME_BYTES;
    if frame.matches(PAD).count() != 1 {
        return Err(format!(
            "a padded frame holds the marker `{PAD}` exactly once"
        ));
    }
    let base = frame.len() - PAD.len();
    if len < base || len > limit {
        return Err(format!(
            "`pad_to` must be between the frame's own {base} bytes and {limit}, not {len}"
        ));
    }
    Ok(frame.replacen(PAD, &"x".repeat(len - base), 1).into_bytes())
}
