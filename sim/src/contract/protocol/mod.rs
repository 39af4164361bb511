//! The subprocess protocol, `tern-sim/1`: JSON lines over stdin and stdout
//! (stderr is the implementation's log). docs/protocol.md is the reference
//! for implementers and docs/protocol.schema.json its schema. Every line is
//! a type of [`lines`], used by both ends inside tern-sim (`tern-sim agent`
//! and the adapter); this module converts between those lines and the
//! ledger's own types.

pub mod lines;
pub mod schema;
pub mod strict;
mod unique;

use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::Arc;

use base64::Engine;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};
use tern_model::ledger::{Contexts, Event, Execution, LedgerConfig, Outcome, Rejection, Viewer};
use tern_model::message::{MessageRef, ThreadId};
use tern_model::wire::Pointer;

use lines::{ConfigText, EventLine, ExecuteAnswer, OutcomeName, RejectionLine};

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

/// [`config_json`] as the text an `init` carries, printed once for each
/// configuration a thread meets: a run hands the same shared configuration
/// to every start of an agent, and that configuration lists every thread and
/// grant of the run. Keyed by the `Arc`, which the cache holds, so a key
/// cannot be reused by another configuration while it is cached.
pub fn config_text(config: &Arc<LedgerConfig>) -> ConfigText {
    /// A run has one configuration per agent; a few runs' worth is plenty.
    const KEPT: usize = 16;
    thread_local! {
        static PRINTED: RefCell<VecDeque<(Arc<LedgerConfig>, Box<RawValue>)>> =
            const { RefCell::new(VecDeque::new()) };
    }
    PRINTED.with(|printed| {
        let mut printed = printed.borrow_mut();
        if let Some((_, text)) = printed.iter().find(|(c, _)| Arc::ptr_eq(c, config)) {
            return ConfigText(text.clone());
        }
        let text = serde_json::value::to_raw_value(&config_json(config))
            .expect("a JSON tree always prints");
        if printed.len() == KEPT {
            printed.pop_front();
        }
        printed.push_back((config.clone(), text.clone()));
        ConfigText(text)
    })
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

/// One event as the protocol writes it.
pub fn event_line(e: &Event) -> EventLine {
    let (outcome, missing, error) = match &e.outcome {
        Outcome::Accepted => (OutcomeName::Accepted, None, None),
        Outcome::Duplicate => (OutcomeName::Duplicate, None, None),
        Outcome::Pending { missing } => (
            OutcomeName::Pending,
            Some(missing.iter().map(|m| m.as_str().to_owned()).collect()),
            None,
        ),
        Outcome::Rejected(r) => (
            OutcomeName::Rejected,
            None,
            Some(RejectionLine {
                class: r.class,
                pointer: r.pointer.as_str().to_owned(),
                message: r.message.clone(),
            }),
        ),
    };
    EventLine {
        event: e.kind,
        id: e.id.as_ref().map(|i| i.as_str().to_owned()),
        thread: e.thread.as_ref().map(|t| t.as_str().to_owned()),
        outcome,
        missing,
        error,
    }
}

/// Reads an event back; `Err` names what is wrong with it. The line's
/// types have checked its form; what is left is what references must look
/// like, and the member each outcome needs.
pub fn event_of_line(line: EventLine) -> Result<Event, String> {
    let reference = |what: &str, s: &str| {
        MessageRef::new(s).map_err(|e| format!("{what} `{s}` is not a message reference: {e}"))
    };
    let id = line
        .id
        .as_deref()
        .map(|s| reference("event id", s))
        .transpose()?;
    let thread = line
        .thread
        .as_deref()
        .map(|s| ThreadId::new(s).map_err(|e| format!("event thread `{s}`: {e}")))
        .transpose()?;
    let outcome = match line.outcome {
        OutcomeName::Accepted => Outcome::Accepted,
        OutcomeName::Duplicate => Outcome::Duplicate,
        OutcomeName::Pending => Outcome::Pending {
            missing: line
                .missing
                .ok_or("a pending event needs `missing`")?
                .iter()
                .map(|m| reference("missing reference", m))
                .collect::<Result<_, _>>()?,
        },
        OutcomeName::Rejected => {
            let error = line.error.ok_or("a rejected event needs `error`")?;
            Outcome::Rejected(Rejection::new(error.class, Pointer::root(), error.message))
        }
    };
    Ok(Event {
        kind: line.event,
        origin: 0,
        id,
        thread,
        outcome,
    })
}

/// An execution as the protocol writes it.
pub fn execute_answer(e: &Execution) -> ExecuteAnswer {
    match e {
        Execution::Executed { effect } => ExecuteAnswer::Executed(effect.0.clone()),
        Execution::Refused(r) => ExecuteAnswer::Refused(*r),
    }
}

/// An execution as the ledger speaks of it.
pub fn execution_of(answer: ExecuteAnswer) -> Execution {
    match answer {
        ExecuteAnswer::Executed(effect) => Execution::Executed {
            effect: tern_model::ledger::EffectKey(effect),
        },
        ExecuteAnswer::Refused(r) => Execution::Refused(r),
    }
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
                let text = serde_json::to_string(&event_line(&e)).unwrap();
                let back = event_of_line(serde_json::from_str(&text).unwrap()).unwrap();
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
    fn a_configuration_is_printed_as_itself_whether_cached_or_not() {
        let one = Arc::new(LedgerConfig::from_json(r#"{"participant": "a"}"#).unwrap());
        let two = Arc::new(LedgerConfig::from_json(r#"{"participant": "b"}"#).unwrap());
        for _ in 0..2 {
            assert_eq!(config_text(&one).get(), config_json(&one).to_string());
            assert_eq!(config_text(&two).get(), config_json(&two).to_string());
        }
        // An equal configuration in another allocation is printed afresh,
        // and alike.
        let again = Arc::new((*one).clone());
        assert_eq!(config_text(&again), config_text(&one));
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
