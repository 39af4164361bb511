//! An exploration's counterexample saved for `tern-sim replay`: one JSON
//! document holding the scope itself (so it needs no corpus), the schedule
//! as moves, the violation, and the schedule in words for people.

use std::path::Path;

use serde_json::{json, Value};

use super::scope::{Scope, ScopeError};
use super::search::{AtOp, FailingSchedule, Move, Prepared};
use crate::contract::storage::CrashPoint;

/// The `format` member that marks an exploration trace.
pub const FORMAT: &str = "tern-sim explore trace 1";

/// The `format` of a trace explored with power-loss crashes: its crashes
/// are power losses, and a move may crash inside its request (`at_op`),
/// which an older tern-sim would drop without a word.
pub const FORMAT_POWER_LOSS: &str = "tern-sim explore trace 2";

fn point_name(p: Option<CrashPoint>) -> Value {
    match p {
        None => Value::Null,
        Some(CrashPoint::BeforeSync) => json!("before_durable"),
        Some(CrashPoint::AfterSync) => json!("after_durable"),
        Some(CrashPoint::BeforeEffect) => json!("before_effect"),
        Some(CrashPoint::AfterEffect) => json!("after_effect"),
    }
}

fn point_of(v: &Value) -> Result<Option<CrashPoint>, String> {
    match v {
        Value::Null => Ok(None),
        Value::String(s) => match s.as_str() {
            "before_durable" => Ok(Some(CrashPoint::BeforeSync)),
            "after_durable" => Ok(Some(CrashPoint::AfterSync)),
            "before_effect" => Ok(Some(CrashPoint::BeforeEffect)),
            "after_effect" => Ok(Some(CrashPoint::AfterEffect)),
            other => Err(format!("unknown crash point `{other}`")),
        },
        _ => Err("a crash point is a string or null".into()),
    }
}

fn at_op_json(at: AtOp) -> Value {
    json!({"op": at.op, "loss": if at.power { "power" } else { "kill" }})
}

fn at_op_of(v: &Value) -> Result<Option<AtOp>, String> {
    if v.is_null() {
        return Ok(None);
    }
    let op = v["op"]
        .as_u64()
        .and_then(|n| u8::try_from(n).ok())
        .filter(|&n| n > 0)
        .ok_or("`at_op.op` is a whole number from 1 to 255")?;
    let power = match v["loss"].as_str() {
        Some("power") => true,
        Some("kill") => false,
        _ => return Err("`at_op.loss` is `power` or `kill`".into()),
    };
    Ok(Some(AtOp { op, power }))
}

pub fn move_json(m: Move) -> Value {
    let mut v = match m {
        Move::Deliver { action, crash, .. } => {
            json!({"op": "deliver", "action": action, "crash": point_name(crash)})
        }
        Move::Execute {
            action, at, crash, ..
        } => {
            json!({"op": "execute", "action": action, "at": at, "crash": point_name(crash)})
        }
        Move::DeliverQuietly { action } => json!({"op": "deliver_quietly", "action": action}),
        Move::Duplicate { action } => json!({"op": "duplicate", "action": action}),
        Move::CrashIdle => json!({"op": "crash"}),
        Move::Restart { crash, .. } => json!({"op": "restart", "crash": point_name(crash)}),
    };
    match m {
        Move::Deliver { at_op: Some(a), .. } | Move::Execute { at_op: Some(a), .. } => {
            v["at_op"] = at_op_json(a);
        }
        Move::Restart { at_op: Some(k), .. } => v["at_op"] = json!(k),
        _ => {}
    }
    v
}

fn move_of(v: &Value) -> Result<Move, String> {
    let num = |k: &str| -> Result<u64, String> {
        v[k].as_u64()
            .ok_or_else(|| format!("`{k}` is a whole number"))
    };
    let action = || num("action").and_then(|n| u16::try_from(n).map_err(|e| e.to_string()));
    match v["op"].as_str() {
        Some("deliver") => Ok(Move::Deliver {
            action: action()?,
            crash: point_of(&v["crash"])?,
            at_op: at_op_of(&v["at_op"])?,
        }),
        Some("execute") => Ok(Move::Execute {
            action: action()?,
            at: u8::try_from(num("at")?).map_err(|e| e.to_string())?,
            crash: point_of(&v["crash"])?,
            at_op: at_op_of(&v["at_op"])?,
        }),
        Some("deliver_quietly") => Ok(Move::DeliverQuietly { action: action()? }),
        Some("duplicate") => Ok(Move::Duplicate { action: action()? }),
        Some("crash") => Ok(Move::CrashIdle),
        Some("restart") => Ok(Move::Restart {
            crash: point_of(&v["crash"])?,
            at_op: match &v["at_op"] {
                Value::Null => None,
                k => Some(
                    k.as_u64()
                        .and_then(|n| u8::try_from(n).ok())
                        .filter(|&n| n > 0)
                        .ok_or("a restart's `at_op` is a whole number from 1 to 255")?,
                ),
            },
        }),
        _ => Err("`op` is deliver, deliver_quietly, execute, duplicate, crash or restart".into()),
    }
}

/// The document saved for a counterexample.
pub fn document(
    scope: &Scope,
    prepared: &Prepared,
    ce: &FailingSchedule,
    implementation: &str,
    power_loss: bool,
) -> Value {
    let mut doc = json!({
        "format": if power_loss { FORMAT_POWER_LOSS } else { FORMAT },
        "tern_sim": env!("CARGO_PKG_VERSION"),
        "implementation": implementation,
        "scope": scope.to_json(),
        "schedule": ce.schedule.iter().map(|&m| move_json(m)).collect::<Vec<_>>(),
        "violation": {
            "invariant": ce.failure.invariant.name,
            "clauses": ce.failure.invariant.clauses,
            "expected": ce.failure.expected,
            "actual": ce.failure.actual,
        },
        "shorthand": prepared.describe_schedule(&ce.schedule),
    });
    if power_loss {
        doc["power_loss"] = json!(true);
    }
    doc
}

/// A saved exploration trace, as read back.
pub struct Saved {
    pub scope: Scope,
    pub schedule: Vec<Move>,
    pub implementation: String,
    pub invariant: String,
    /// Explored with power-loss crashes: replayed so too.
    pub power_loss: bool,
}

/// Whether a document is an exploration trace.
pub fn is_trace(doc: &Value) -> bool {
    doc["format"] == FORMAT || doc["format"] == FORMAT_POWER_LOSS
}

/// Reads a trace document from `file`.
pub fn read(file: &Path, doc: &Value) -> Result<Saved, ScopeError> {
    let bad = |pointer: &str, message: String| {
        ScopeError::Invalid(crate::corpus::CorpusError::Invalid {
            file: file.to_path_buf(),
            pointer: pointer.to_owned(),
            message,
        })
    };
    let scope = Scope::from_json(file, &doc["scope"].to_string(), None)?;
    let schedule = doc["schedule"]
        .as_array()
        .ok_or_else(|| bad("/schedule", "a list of moves".into()))?
        .iter()
        .enumerate()
        .map(|(i, m)| move_of(m).map_err(|e| bad(&format!("/schedule/{i}"), e)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Saved {
        scope,
        schedule,
        implementation: doc["implementation"].as_str().unwrap_or("").to_owned(),
        invariant: doc["violation"]["invariant"]
            .as_str()
            .unwrap_or("")
            .to_owned(),
        power_loss: doc["format"] == FORMAT_POWER_LOSS,
    })
}
