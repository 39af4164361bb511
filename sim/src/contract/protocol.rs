//! The subprocess protocol, `tern-sim/1`: JSON lines over stdin and stdout
//! (stderr is the implementation's log). docs/protocol.md is the reference
//! for implementers; this module is its one encoder and decoder, used by
//! both ends inside tern-sim (`tern-sim agent` and the adapter).

use base64::Engine;
use serde_json::{json, Map, Value};
use tern_model::ledger::{
    Contexts, Event, EventKind, Execution, LedgerConfig, Outcome, Refusal, RejectClass, Rejection,
    Viewer,
};
use tern_model::message::{MessageRef, ThreadId};
use tern_model::wire::Pointer;

/// The protocol's name and version, sent in `init`.
pub const PROTOCOL: &str = "tern-sim/1";

pub fn encode_bytes(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

pub fn decode_bytes(text: &str) -> Option<Vec<u8>> {
    base64::engine::general_purpose::STANDARD.decode(text).ok()
}

/// A local time in milliseconds as RFC 3339, for configuration files.
fn rfc3339(ms: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_else(|| "1970-01-01T00:00:00Z".to_owned())
}

/// A ledger configuration in the file format of docs/ledger.md.
pub fn config_json(config: &LedgerConfig) -> Value {
    let mut out = Map::new();
    if let Viewer::Participant(p) = &config.viewer {
        out.insert("participant".into(), json!(p.as_str()));
    }
    if let Contexts::Fixed { contexts, threads } = &config.contexts {
        let contexts: Map<String, Value> = contexts
            .iter()
            .map(|(name, c)| {
                let bindings: Map<String, Value> = c
                    .bindings
                    .iter()
                    .map(|(p, k)| (p.to_string(), json!(k.as_str())))
                    .collect();
                (name.to_string(), Value::Object(bindings))
            })
            .collect();
        out.insert("contexts".into(), Value::Object(contexts));
        out.insert(
            "threads".into(),
            Value::Object(
                threads
                    .iter()
                    .map(|(t, c)| (t.to_string(), json!(c.as_str())))
                    .collect(),
            ),
        );
    }
    out.insert(
        "grants".into(),
        Value::Array(
            config
                .grants
                .values()
                .map(|g| {
                    let mut v = json!({
                        "id": g.id.as_str(),
                        "grantee": g.grantee.as_str(),
                        "threads": g.threads.iter().map(|t| t.as_str()).collect::<Vec<_>>(),
                        "requires_approval": g.requires_approval,
                    });
                    if let Some(t) = g.expires_at {
                        v["expires_at"] = json!(rfc3339(t.0));
                    }
                    v
                })
                .collect(),
        ),
    );
    out.insert(
        "policy".into(),
        json!({
            "permitted_without_grant": config.policy.permitted_without_grant.iter().map(|t| t.as_str()).collect::<Vec<_>>(),
            "approval_required": config.policy.approval_required.iter().map(|t| t.as_str()).collect::<Vec<_>>(),
            "approvals": config.policy.approvals.iter().map(|(t, c)| json!({"thread": t.as_str(), "commitment": c.as_str()})).collect::<Vec<_>>(),
        }),
    );
    Value::Object(out)
}

fn kind_name(kind: EventKind) -> &'static str {
    match kind {
        EventKind::Delivered => "delivered",
        EventKind::Released => "released",
        EventKind::Invalidated => "invalidated",
    }
}

/// One event as JSON: `event`, `id`, `thread`, `outcome`, and `missing` for a
/// pending message or `error` (`class`, `pointer`, `message`) for a rejection.
pub fn event_json(e: &Event) -> Value {
    let mut v = json!({
        "event": kind_name(e.kind),
        "id": e.id.as_ref().map(|i| i.as_str()),
        "thread": e.thread.as_ref().map(|t| t.as_str()),
    });
    match &e.outcome {
        Outcome::Accepted => v["outcome"] = json!("accepted"),
        Outcome::Duplicate => v["outcome"] = json!("duplicate"),
        Outcome::Pending { missing } => {
            v["outcome"] = json!("pending");
            v["missing"] = json!(missing.iter().map(|m| m.as_str()).collect::<Vec<_>>());
        }
        Outcome::Rejected(r) => {
            v["outcome"] = json!("rejected");
            v["error"] = json!({"class": r.class.as_str(), "pointer": r.pointer.as_str(), "message": r.message});
        }
    }
    v
}

/// Reads an event back; `Err` names what is wrong with it.
pub fn event_from_json(v: &Value) -> Result<Event, String> {
    let kind = match v["event"].as_str() {
        Some("delivered") => EventKind::Delivered,
        Some("released") => EventKind::Released,
        Some("invalidated") => EventKind::Invalidated,
        other => return Err(format!("unknown event kind {other:?}")),
    };
    let id = match &v["id"] {
        Value::Null => None,
        Value::String(s) => Some(MessageRef::new(s).map_err(|e| format!("event id: {e}"))?),
        other => return Err(format!("event id must be a string or null, not {other}")),
    };
    let thread = match &v["thread"] {
        Value::Null => None,
        Value::String(s) => Some(ThreadId::new(s).map_err(|e| format!("event thread: {e}"))?),
        other => {
            return Err(format!(
                "event thread must be a string or null, not {other}"
            ))
        }
    };
    let outcome = match v["outcome"].as_str() {
        Some("accepted") => Outcome::Accepted,
        Some("duplicate") => Outcome::Duplicate,
        Some("pending") => Outcome::Pending {
            missing: v["missing"]
                .as_array()
                .ok_or("a pending event needs `missing`")?
                .iter()
                .map(|m| {
                    m.as_str()
                        .and_then(|s| MessageRef::new(s).ok())
                        .ok_or_else(|| format!("bad missing reference {m}"))
                })
                .collect::<Result<_, _>>()?,
        },
        Some("rejected") => {
            let class = v["error"]["class"]
                .as_str()
                .ok_or("a rejected event needs `error.class`")?;
            Outcome::Rejected(Rejection::new(
                RejectClass::from_name(class)
                    .ok_or_else(|| format!("unknown rejection class `{class}`"))?,
                Pointer::root(),
                v["error"]["message"].as_str().unwrap_or("").to_owned(),
            ))
        }
        other => return Err(format!("unknown outcome {other:?}")),
    };
    Ok(Event {
        kind,
        origin: 0,
        id,
        thread,
        outcome,
    })
}

pub fn execution_json(e: &Execution) -> Value {
    match e {
        Execution::Executed { effect } => json!({"executed": effect.0}),
        Execution::Refused(r) => json!({"refused": r.as_str()}),
    }
}

pub fn execution_from_json(v: &Value) -> Result<Execution, String> {
    if let Some(effect) = v["executed"].as_str() {
        return Ok(Execution::Executed {
            effect: tern_model::ledger::EffectKey(effect.to_owned()),
        });
    }
    if let Some(reason) = v["refused"].as_str() {
        return Refusal::from_name(reason)
            .map(Execution::Refused)
            .ok_or_else(|| format!("unknown refusal `{reason}`"));
    }
    Err(format!(
        "expected {{\"executed\": key}} or {{\"refused\": reason}}, got {v}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tern_model::ledger::{Ledger, LocalTime};
    use tern_model::message::Principal;

    #[test]
    fn events_round_trip_through_json() {
        let mut l = Ledger::new(LedgerConfig::open_auditor());
        let frames: [&[u8]; 3] = [
            br#"{"tern":"0.1","id":"b:1","from":"b","to":["a"],"thread":"t","reply":"a:1","act":"ASK","body":{"question":"q"}}"#,
            br#"{"tern":"0.1","id":"a:1","from":"a","to":["b"],"thread":"t","reply":null,"act":"ASK","body":{"question":"q"}}"#,
            b"{",
        ];
        for (i, f) in frames.iter().enumerate() {
            let p = Principal::new(if i == 0 { "b" } else { "a" }).unwrap();
            for e in l.deliver(f, &p, LocalTime(0)) {
                let back = event_from_json(&event_json(&e)).unwrap();
                assert_eq!(
                    (back.kind, &back.id, &back.thread),
                    (e.kind, &e.id, &e.thread)
                );
                match (&back.outcome, &e.outcome) {
                    (Outcome::Rejected(a), Outcome::Rejected(b)) => assert_eq!(a.class, b.class),
                    (a, b) => assert_eq!(a, b),
                }
            }
        }
    }

    #[test]
    fn bytes_survive_even_when_not_utf8() {
        let raw = [0xff, 0x00, b'{', 0xc3];
        assert_eq!(decode_bytes(&encode_bytes(&raw)).unwrap(), raw);
        assert!(decode_bytes("not base64!").is_none());
    }

    #[test]
    fn configurations_survive_the_file_format() {
        let text = r#"{"participant": "a", "contexts": {"c": {"a": "pk-a", "b": "pk-b"}}, "threads": {"t": "c"},
                      "grants": [{"id": "g", "grantee": "a", "threads": ["t"], "expires_at": "2026-11-30T12:00:00Z", "requires_approval": true}],
                      "policy": {"permitted_without_grant": ["t"], "approvals": [{"thread": "t", "commitment": "a:1"}]}}"#;
        let config = LedgerConfig::from_json(text).unwrap();
        let again = LedgerConfig::from_json(&config_json(&config).to_string()).unwrap();
        assert_eq!(again, config);
    }
}
