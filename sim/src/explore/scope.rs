//! A scope: the small world the explorer enumerates. One receiver under
//! test with its setup (the corpus format), a set of frames that will
//! reach it and commitments it will be asked to execute, each exactly once
//! in some order, and a budget of faults. Nothing in a scope is ordered:
//! the explorer tries every order.
//!
//! Frames in a scope are fixed, not produced by other receivers, so
//! receivers in one world never influence each other: a world of several
//! receivers is the product of one scope per receiver, explored apart.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde::Deserialize;
use serde_json::{json, Value};
use tern_model::ledger::{Contexts, LocalTime};
use tern_model::message::{MessageRef, Principal, ThreadId};

use crate::contract::protocol::config_json;
use crate::corpus::case::{Case, Setup, Step};
use crate::corpus::reading::{local_time, read_json, setup_of, At, RawSetup};
use crate::corpus::{Corpus, CorpusError};

/// Why a scope could not be read or built.
#[derive(Debug, thiserror::Error)]
pub enum ScopeError {
    #[error("cannot read {}: {source}", file.display())]
    Read {
        file: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Invalid(#[from] CorpusError),
    #[error("{}: no corpus case `{id}`", file.display())]
    UnknownCase { file: PathBuf, id: String },
    #[error("no built-in scope `{0}` (`tern-sim explore --list` names them)")]
    UnknownScope(String),
}

/// One thing that happens to the receiver exactly once (unless a fault
/// repeats it).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Action {
    Deliver {
        frame: Arc<[u8]>,
        principal: Principal,
        at: LocalTime,
    },
    /// An ask to execute a commitment, at one of `at` (the explorer tries
    /// each: the clock values around a grant's expiry).
    Execute {
        thread: ThreadId,
        commitment: MessageRef,
        at: Vec<LocalTime>,
    },
}

/// The faults a schedule may use, at most this many of each.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct FaultBudget {
    /// Crashes, each at any crash point: inside a delivery before or after
    /// its record is durable, inside an execution before or after its
    /// effect, between operations (losing the acknowledgement of the last
    /// answer), or inside the recovery that follows a crash.
    pub crashes: u8,
    /// Extra deliveries of a frame already delivered.
    pub duplicates: u8,
}

#[derive(Debug, Clone)]
pub struct Scope {
    pub id: String,
    pub title: String,
    /// Seed clauses the scope is about (`scenarios/clauses.json`).
    pub clauses: Vec<String>,
    pub setup: Setup,
    pub actions: Vec<Action>,
    pub budget: FaultBudget,
    /// Where it came from: a file, a corpus case, or built in.
    pub origin: String,
}

impl Scope {
    /// The threads whose views are compared after every operation: every
    /// thread the setup binds.
    pub fn threads(&self) -> Vec<ThreadId> {
        match &self.setup.config.contexts {
            Contexts::Fixed { threads, .. } => threads.keys().cloned().collect(),
            Contexts::Open => Vec::new(),
        }
    }

    /// How many actions differ from one another (identical ones are one
    /// action owed several times).
    pub fn distinct_actions(&self) -> usize {
        self.grouped().len()
    }

    /// The distinct actions, in order of first appearance, each with how
    /// many times it is owed: one action listed twice is one action owed
    /// twice, so that its copies are not told apart.
    pub fn grouped(&self) -> Vec<(Action, u8)> {
        let mut out: Vec<(Action, u8)> = Vec::new();
        for a in &self.actions {
            match out.iter_mut().find(|(b, _)| b == a) {
                Some((_, n)) => *n = n.saturating_add(1),
                None => out.push((a.clone(), 1)),
            }
        }
        out
    }

    /// A corpus case as a scope: its deliveries and executions as a set,
    /// with `budget`. Its views, effect counts, crashes and restarts are
    /// left out: the oracle says what every order must show, and the
    /// budget places the crashes.
    pub fn from_case(case: &Case, budget: FaultBudget) -> Scope {
        // Deliveries first, then executions: the order of the file format,
        // so that a scope written out and read back names its actions alike.
        let mut actions: Vec<Action> = Vec::new();
        let mut executions = Vec::new();
        for step in &case.steps {
            match step {
                Step::Deliver {
                    frame,
                    principal,
                    at,
                    ..
                } => actions.push(Action::Deliver {
                    frame: frame.as_slice().into(),
                    principal: principal.clone(),
                    at: *at,
                }),
                Step::Execute {
                    thread,
                    commitment,
                    at,
                    ..
                } => executions.push(Action::Execute {
                    thread: thread.clone(),
                    commitment: commitment.clone(),
                    at: vec![*at],
                }),
                _ => {}
            }
        }
        actions.extend(executions);
        Scope {
            id: case.id.clone(),
            title: case.title.clone(),
            clauses: case.clauses.iter().map(|c| c.id.clone()).collect(),
            setup: case.setup.clone(),
            actions,
            budget,
            origin: format!("corpus case {}", case.id),
        }
    }

    /// Reads a scope file (docs/explore.md §4). A scope that names a corpus
    /// `case` takes its setup and actions from `corpus`, plus any it lists.
    pub fn from_json(
        file: &Path,
        text: &str,
        corpus: Option<&Corpus>,
    ) -> Result<Scope, ScopeError> {
        let at = At { file };
        let raw: RawScope = read_json(file, text)?;
        if raw.id.is_empty() {
            return Err(at.err("/id", "a scope has a non-empty `id`").into());
        }
        let budget = FaultBudget {
            crashes: raw.faults.crashes,
            duplicates: raw.faults.duplicates,
        };
        let mut scope = match (&raw.case, raw.setup) {
            (Some(id), None) => {
                let case = corpus
                    .and_then(|c| c.cases.iter().find(|c| &c.id == id))
                    .ok_or_else(|| ScopeError::UnknownCase {
                        file: file.to_path_buf(),
                        id: id.clone(),
                    })?;
                Scope::from_case(case, budget)
            }
            (None, Some(setup)) => Scope {
                id: String::new(),
                title: String::new(),
                clauses: Vec::new(),
                setup: setup_of(&at, "/setup", setup)?,
                actions: Vec::new(),
                budget,
                origin: String::new(),
            },
            _ => {
                return Err(at
                    .err("", "a scope has exactly one of `setup` and `case`")
                    .into())
            }
        };
        scope.id = raw.id;
        if !raw.title.is_empty() {
            scope.title = raw.title;
        }
        scope.origin = file.display().to_string();
        if !raw.clauses.is_empty() {
            scope.clauses = raw.clauses;
        }
        for (i, d) in raw.deliver.into_iter().enumerate() {
            let p = format!("/deliver/{i}");
            let principal = Principal::new(&d.principal)
                .map_err(|e| at.err(format!("{p}/principal"), e.to_string()))?;
            let frame = match (d.frame, d.frame_base64) {
                (Some(f), None) => f.into_bytes(),
                (None, Some(b)) => STANDARD
                    .decode(b)
                    .map_err(|e| at.err(format!("{p}/frame_base64"), format!("not base64: {e}")))?,
                _ => {
                    return Err(at
                        .err(
                            p,
                            "a delivery has exactly one of `frame` and `frame_base64`",
                        )
                        .into())
                }
            };
            scope.actions.push(Action::Deliver {
                frame: frame.into(),
                principal,
                at: time_of(&at, &format!("{p}/at"), d.at.as_ref())?,
            });
        }
        for (i, x) in raw.execute.into_iter().enumerate() {
            let p = format!("/execute/{i}");
            let thread = ThreadId::new(&x.thread)
                .map_err(|e| at.err(format!("{p}/thread"), e.to_string()))?;
            let commitment = MessageRef::new(&x.commitment)
                .map_err(|e| at.err(format!("{p}/commitment"), e.to_string()))?;
            let times = if x.at.is_empty() {
                vec![LocalTime(0)]
            } else {
                x.at.iter()
                    .enumerate()
                    .map(|(j, t)| time_of(&at, &format!("{p}/at/{j}"), Some(t)))
                    .collect::<Result<Vec<_>, _>>()?
            };
            scope.actions.push(Action::Execute {
                thread,
                commitment,
                at: times,
            });
        }
        // Deliveries first, as `to_json` writes them (a stable sort).
        scope
            .actions
            .sort_by_key(|a| matches!(a, Action::Execute { .. }));
        if scope.actions.is_empty() {
            return Err(at
                .err("/deliver", "a scope delivers or executes something")
                .into());
        }
        Ok(scope)
    }

    /// The scope in its file format, self-contained (a case's actions
    /// spelled out), so that a saved counterexample needs no corpus.
    pub fn to_json(&self) -> Value {
        let mut deliver = Vec::new();
        let mut execute = Vec::new();
        for a in &self.actions {
            match a {
                Action::Deliver {
                    frame,
                    principal,
                    at,
                } => {
                    let mut d = json!({"principal": principal.as_str(), "at": at.0});
                    match std::str::from_utf8(frame) {
                        Ok(text) => d["frame"] = json!(text),
                        Err(_) => d["frame_base64"] = json!(STANDARD.encode(frame)),
                    }
                    deliver.push(d)
                }
                Action::Execute {
                    thread,
                    commitment,
                    at,
                } => execute.push(json!({
                    "thread": thread.as_str(),
                    "commitment": commitment.as_str(),
                    "at": at.iter().map(|t| t.0).collect::<Vec<_>>(),
                })),
            }
        }
        let mut config = config_json(&self.setup.config);
        if let Some(o) = config.as_object_mut() {
            o.remove("participant");
        }
        json!({
            "id": self.id,
            "title": self.title,
            "clauses": self.clauses,
            "setup": {
                "participant": self.setup.participant.as_str(),
                "principal": self.setup.principal.as_str(),
                "config": config,
            },
            "deliver": deliver,
            "execute": execute,
            "faults": {"crashes": self.budget.crashes, "duplicates": self.budget.duplicates},
        })
    }
}

/// A time as a scope spells it: an RFC 3339 timestamp, or milliseconds
/// since the Unix epoch.
fn time_of(at: &At, pointer: &str, v: Option<&Value>) -> Result<LocalTime, CorpusError> {
    match v {
        None => Ok(LocalTime(0)),
        Some(Value::String(t)) => local_time(at, pointer, Some(t)),
        Some(v) => v.as_i64().map(LocalTime).ok_or_else(|| {
            at.err(
                pointer,
                "a time is an RFC 3339 timestamp or whole milliseconds since the epoch",
            )
        }),
    }
}

// The file format, as serde reads it.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScope {
    id: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    clauses: Vec<String>,
    #[serde(default)]
    case: Option<String>,
    #[serde(default)]
    setup: Option<RawSetup>,
    #[serde(default)]
    deliver: Vec<RawDeliver>,
    #[serde(default)]
    execute: Vec<RawExecute>,
    #[serde(default)]
    faults: RawBudget,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDeliver {
    #[serde(default)]
    frame: Option<String>,
    #[serde(default)]
    frame_base64: Option<String>,
    principal: String,
    #[serde(default)]
    at: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExecute {
    thread: String,
    commitment: String,
    #[serde(default)]
    at: Vec<Value>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawBudget {
    #[serde(default)]
    crashes: u8,
    #[serde(default)]
    duplicates: u8,
}
