//! Every line of `tern-sim/1` as a type: the requests tern-sim writes, the
//! lines an implementation writes back, and the value of each answer.
//!
//! Both ends inside tern-sim (the adapter and `tern-sim agent`) write and
//! read through these types, and `docs/protocol.schema.json` is generated
//! from them ([`super::schema`]), so the schema an implementer validates
//! against is the code that reads their lines. Reading is as lenient as
//! docs/protocol.md allows (members nobody knows are ignored, a missing
//! event `id` reads as null); `--strict-protocol` ([`super::strict`]) holds
//! every line to the exact form the types write, which is the schema: the
//! answers are closed (`additionalProperties: false`), the requests open.
//! What serde's types cannot say (the range of `seq`, the member each
//! outcome needs) is said here once, for the schema and for strict mode.

use std::borrow::Cow;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;
use tern_model::ledger::{EventKind, Refusal, RejectClass};

use crate::contract::plugin::Capability;

/// A request: tern-sim → implementation. `seq` is 1 for the first request
/// a process receives (always `init`) and grows by 1 with each request.
/// Members not listed here may be added within `tern-sim/1`: ignore the
/// ones you do not know.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    Init(Init),
    Deliver(Deliver),
    Execute(Execute),
    View(ViewRequest),
    Shutdown(Shutdown),
}

impl Request {
    /// Reads one request line: first its `op` alone, then the whole line as
    /// that request's own type. Two quick passes rather than serde's reading
    /// of a tagged enum, which first copies every member into a tree (a
    /// `deliver`'s frame, an `init`'s configuration) and so could not keep
    /// `config` as the text it came as.
    pub fn from_line(line: &[u8]) -> serde_json::Result<Request> {
        /// Only `op`; every other member is skipped unread.
        #[derive(Deserialize)]
        #[serde(expecting = "a request object")]
        struct Head {
            op: Op,
        }
        let op = match leading_op(line) {
            Some(op) => op,
            None => serde_json::from_slice::<Head>(line)?.op,
        };
        Ok(match op {
            Op::Init => Request::Init(serde_json::from_slice(line)?),
            Op::Deliver => Request::Deliver(serde_json::from_slice(line)?),
            Op::Execute => Request::Execute(serde_json::from_slice(line)?),
            Op::View => Request::View(serde_json::from_slice(line)?),
            Op::Shutdown => Request::Shutdown(serde_json::from_slice(line)?),
        })
    }

    pub fn seq(&self) -> u64 {
        match self {
            Request::Init(r) => r.seq,
            Request::Deliver(r) => r.seq,
            Request::Execute(r) => r.seq,
            Request::View(r) => r.seq,
            Request::Shutdown(r) => r.seq,
        }
    }

    /// The `op` member, for messages.
    pub fn op(&self) -> Op {
        match self {
            Request::Init(_) => Op::Init,
            Request::Deliver(_) => Op::Deliver,
            Request::Execute(_) => Op::Execute,
            Request::View(_) => Op::View,
            Request::Shutdown(_) => Op::Shutdown,
        }
    }
}

/// The `op` of a line that begins `{"op":"NAME"`, as tern-sim writes every
/// request, found without reading the rest (a `deliver` carries its frame
/// after it). Any other line is read in full for its `op`.
fn leading_op(line: &[u8]) -> Option<Op> {
    let rest = line.strip_prefix(br#"{"op":""#)?;
    // (Not the memchr crate: its first call detects the CPU's features, a
    // cost a process that lives for one run pays at every start.)
    let end = rest.iter().position(|&b| b == b'"')?;
    Some(match &rest[..end] {
        b"init" => Op::Init,
        b"deliver" => Op::Deliver,
        b"execute" => Op::Execute,
        b"view" => Op::View,
        b"shutdown" => Op::Shutdown,
        _ => return None,
    })
}

/// What a request asks, which decides the form of its answer's `ok`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    Init,
    Deliver,
    Execute,
    View,
    Shutdown,
}

impl Op {
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Init => "init",
            Op::Deliver => "deliver",
            Op::Execute => "execute",
            Op::View => "view",
            Op::Shutdown => "shutdown",
        }
    }
}

impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The first request to every process, at the start of a run and at every
/// restart (docs/protocol.md section 4.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Init {
    #[schemars(schema_with = "seq")]
    pub seq: u64,
    /// `tern-sim/1`. Answer with an `error` if you do not speak it.
    pub protocol: String,
    /// Whose receiver this process is.
    pub participant: String,
    /// The participant's principal in its main identity context
    /// (informative; the bindings in `config` are the authority).
    pub principal: String,
    /// The ledger configuration, in the file format of docs/ledger.md
    /// section 8.
    #[schemars(with = "Value")]
    pub config: ConfigText,
    /// The only place where state may survive a crash; create it if absent.
    pub state_dir: String,
    /// Every effect key this agent performed so far in this run, in order.
    pub effects: Vec<String>,
}

/// A configuration as JSON text, written and read without a tree: the
/// harness prints a run's configuration once for all its restarts, and the
/// agent hands the text straight to [`LedgerConfig::from_json`], which holds
/// it to strict JSON.
///
/// [`LedgerConfig::from_json`]: tern_model::ledger::LedgerConfig::from_json
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ConfigText(pub Box<RawValue>);

impl ConfigText {
    pub fn get(&self) -> &str {
        self.0.get()
    }
}

impl PartialEq for ConfigText {
    fn eq(&self, other: &ConfigText) -> bool {
        self.get() == other.get()
    }
}

/// A frame the network delivers (section 4.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Deliver {
    #[schemars(schema_with = "seq")]
    pub seq: u64,
    /// The frame's raw bytes in standard base64, with padding.
    pub frame: String,
    /// The principal the authenticated transport vouches for.
    pub principal: String,
    /// The receiver's local time, in milliseconds since the Unix epoch.
    pub now: i64,
}

/// A request to execute a commitment (section 4.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Execute {
    #[schemars(schema_with = "seq")]
    pub seq: u64,
    pub thread: String,
    /// A message reference, meant to name a COMMIT.
    pub commitment: String,
    /// The local time in milliseconds; grant expiry is decided against it.
    pub now: i64,
}

/// A request for a thread's view (section 4.4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ViewRequest {
    #[schemars(schema_with = "seq")]
    pub seq: u64,
    pub thread: String,
}

/// The end of a process that did not crash (section 4.5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Shutdown {
    #[schemars(schema_with = "seq")]
    pub seq: u64,
}

/// A line from the implementation: the `seq` of the request it belongs to
/// and exactly one of `ok` (the answer), `error` (no answer), `perform`
/// (an effect, during `execute` only) and `log` (a diagnostic).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(untagged, deny_unknown_fields)]
pub enum Line {
    /// The answer. Its `ok` has the form of the request's answer:
    /// InitAnswer, DeliverAnswer, ExecuteAnswer, ViewAnswer, or null for
    /// `shutdown`.
    Answer {
        #[schemars(schema_with = "seq")]
        seq: u64,
        ok: Value,
    },
    /// The request cannot be answered: a violation of
    /// `implementation-sound`. Even a request that could not be read has a
    /// seq, the one after the last request's, since seqs are counted.
    Error {
        #[schemars(schema_with = "seq")]
        seq: u64,
        error: String,
    },
    /// The effect with this key is performed now.
    Perform {
        #[schemars(schema_with = "seq")]
        seq: u64,
        perform: String,
    },
    /// A diagnostic: allowed, ignored, counted toward the line limit.
    Log {
        #[schemars(schema_with = "seq")]
        seq: u64,
        log: Value,
    },
}

/// The largest `seq`: 2^53 - 1. tern-sim never counts that far, and up to
/// there every integer is held exactly by a binary64, so a validator that
/// reads numbers as binary64 (JavaScript's, and many others) judges the
/// bound exactly too.
pub const MAX_SEQ: u64 = (1 << 53) - 1;

/// The request a `seq` member names, if it names one: an integer from 1 to
/// [`MAX_SEQ`], compared by value, as JSON Schema and Tern compare numbers
/// (`2`, `2.0` and `2e0` are one number, so one seq).
pub fn seq_value(member: &Value) -> Option<u64> {
    let Value::Number(n) = member else {
        return None;
    };
    if let Some(seq) = n.as_u64() {
        return Some(seq).filter(|seq| (1..=MAX_SEQ).contains(seq));
    }
    // Another spelling: read exactly, then printed canonically, which
    // writes an integer below 10^21 as its digits alone.
    let exact = tern_model::json::Number::parse(&n.to_string()).ok()?;
    exact
        .to_string()
        .parse()
        .ok()
        .filter(|seq| (1..=MAX_SEQ).contains(seq))
}

/// The schema of every `seq`, one definition for all of them.
struct Seq;

impl JsonSchema for Seq {
    fn schema_name() -> Cow<'static, str> {
        "Seq".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "The number of a request, counted from 1 by each process. An integer \
                by value (2.0 is 2), up to 2^53 - 1.",
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_SEQ,
        })
    }
}

fn seq(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<Seq>()
}

/// The answer to `init`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct InitAnswer {
    /// The implementation's name, shown in every report.
    pub name: String,
    /// Its version, shown beside the name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The optional parts of the contract it supports.
    #[serde(default)]
    pub capabilities: Vec<Capability>,
}

/// The answer to `deliver`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct DeliverAnswer {
    /// The frame's own outcome first (`delivered`), then any `released`
    /// and `invalidated` events.
    pub events: Vec<EventLine>,
    /// Frames the receiver sends on its own initiative, each in base64.
    /// A conforming receiver needs none; null is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outgoing: Option<Vec<String>>,
}

/// One event (docs/protocol.md section 5.1). `id` and `thread` are null
/// only for a frame the wire layer rejected; `missing` comes with a
/// pending outcome and `error` with a rejected one, and neither with any
/// other outcome.
///
/// A flat record rather than an enum tagged by `outcome`: serde reads a
/// tagged enum through a buffer that loses the place of an error, and a
/// vendor needs the pointer to the member that is wrong.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(transform = outcome_needs)]
#[schemars(deny_unknown_fields)]
pub struct EventLine {
    #[schemars(schema_with = "event_kinds")]
    pub event: EventKind,
    /// A message reference (`sender:suffix`), or null.
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub thread: Option<String>,
    pub outcome: OutcomeName,
    /// With `pending`: the references the message waits for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<Vec<String>>,
    /// With `rejected`: why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<RejectionLine>,
}

/// An event's `outcome` (docs/ledger.md section 3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeName {
    Accepted,
    Duplicate,
    Pending,
    Rejected,
}

impl OutcomeName {
    pub fn as_str(self) -> &'static str {
        match self {
            OutcomeName::Accepted => "accepted",
            OutcomeName::Duplicate => "duplicate",
            OutcomeName::Pending => "pending",
            OutcomeName::Rejected => "rejected",
        }
    }
}

impl std::fmt::Display for OutcomeName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A member that belongs to one outcome: there, and of `json_type` (not
/// null), with its outcome; absent or null with any other. A pending event
/// without the list it waits for, or a rejection without its reason, says
/// nothing the harness can compare; a list beside another outcome says
/// something no receiver means.
struct OutcomeMember {
    outcome: OutcomeName,
    member: &'static str,
    json_type: &'static str,
}

const OUTCOME_MEMBERS: [OutcomeMember; 2] = [
    OutcomeMember {
        outcome: OutcomeName::Pending,
        member: "missing",
        json_type: "array",
    },
    OutcomeMember {
        outcome: OutcomeName::Rejected,
        member: "error",
        json_type: "object",
    },
];

/// An event whose members do not match its outcome.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OutcomeMismatch {
    #[error("an event with outcome `{outcome}` needs `{member}`, and not null")]
    Needed {
        outcome: OutcomeName,
        member: &'static str,
    },
    #[error("`{member}` comes only with outcome `{with}`, not with `{outcome}`")]
    Stray {
        outcome: OutcomeName,
        member: &'static str,
        with: OutcomeName,
    },
}

impl OutcomeMismatch {
    /// The member at fault, for its pointer.
    pub fn member(&self) -> &'static str {
        match self {
            OutcomeMismatch::Needed { member, .. } | OutcomeMismatch::Stray { member, .. } => {
                member
            }
        }
    }
}

impl EventLine {
    /// Whether `missing` and `error` are there exactly with their outcomes
    /// ([`OUTCOME_MEMBERS`]); a null has already read as absent.
    pub fn outcome_members(&self) -> Result<(), OutcomeMismatch> {
        // In the order of OUTCOME_MEMBERS.
        let present = [self.missing.is_some(), self.error.is_some()];
        for (m, present) in OUTCOME_MEMBERS.iter().zip(present) {
            let (outcome, member) = (self.outcome, m.member);
            match (outcome == m.outcome, present) {
                (true, false) => return Err(OutcomeMismatch::Needed { outcome, member }),
                (false, true) => {
                    return Err(OutcomeMismatch::Stray {
                        outcome,
                        member,
                        with: m.outcome,
                    })
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// [`OUTCOME_MEMBERS`] in the schema. The member's own property schema
/// allows null, for the other outcomes; with its outcome, `then` takes the
/// null away.
fn outcome_needs(schema: &mut Schema) {
    let rules: Vec<Value> = OUTCOME_MEMBERS
        .iter()
        .map(|m| {
            serde_json::json!({
                "if": {
                    "properties": { "outcome": { "const": m.outcome.as_str() } },
                    "required": ["outcome"]
                },
                "then": {
                    "required": [m.member],
                    "properties": { m.member: { "type": m.json_type } }
                },
                "else": { "properties": { m.member: { "type": "null" } } }
            })
        })
        .collect();
    schema.insert("allOf".to_owned(), Value::Array(rules));
}

/// Why a frame was rejected. tern-sim reads only `class`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RejectionLine {
    #[schemars(schema_with = "reject_classes")]
    pub class: RejectClass,
    /// An RFC 6901 pointer to the offending member.
    pub pointer: String,
    /// A sentence for people.
    pub message: String,
}

/// The answer to `execute`: exactly one of the two.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExecuteAnswer {
    /// The effect key, `<context>/<commitment id>`, after exactly one
    /// `perform` line with the same key.
    Executed(String),
    #[schemars(schema_with = "refusals")]
    Refused(Refusal),
}

/// The answer to `view`: the thread's view of docs/ledger.md section 9.
/// tern-sim compares it whole with the oracle's, so the schema only holds
/// its outline.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ViewAnswer {
    pub thread: String,
    pub messages: Vec<Value>,
    pub pending: Vec<Value>,
    pub commitments: Vec<Value>,
    pub revisions: Vec<Value>,
    pub effects: Vec<Value>,
}

fn names(names: impl IntoIterator<Item = &'static str>) -> Schema {
    let names: Vec<&str> = names.into_iter().collect();
    json_schema!({ "type": "string", "enum": names })
}

fn event_kinds(_: &mut SchemaGenerator) -> Schema {
    names(EventKind::ALL.iter().map(|k| k.as_str()))
}

fn reject_classes(_: &mut SchemaGenerator) -> Schema {
    names(RejectClass::ALL.iter().map(|c| c.as_str()))
}

fn refusals(_: &mut SchemaGenerator) -> Schema {
    names(Refusal::ALL.iter().map(|r| r.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_request() -> Vec<Request> {
        let config = r#"{"participant":"a","contexts":{"c":{"a":"pk-a"}},"threads":{"t":"c"}}"#;
        vec![
            Request::Init(Init {
                seq: 1,
                protocol: "tern-sim/1".into(),
                participant: "a".into(),
                principal: "pk-a".into(),
                config: ConfigText(RawValue::from_string(config.into()).unwrap()),
                state_dir: "/tmp/a".into(),
                effects: vec!["c/a:1".into()],
            }),
            Request::Deliver(Deliver {
                seq: 2,
                frame: "eyJ9".into(),
                principal: "pk-b".into(),
                now: 7,
            }),
            Request::Execute(Execute {
                seq: 3,
                thread: "t".into(),
                commitment: "a:1".into(),
                now: 8,
            }),
            Request::View(ViewRequest {
                seq: 4,
                thread: "t".into(),
            }),
            Request::Shutdown(Shutdown { seq: 5 }),
        ]
    }

    #[test]
    fn every_request_reads_back_as_written() {
        for request in every_request() {
            let line = serde_json::to_vec(&request).unwrap();
            assert_eq!(Request::from_line(&line).unwrap(), request);
        }
    }

    #[test]
    fn a_configuration_keeps_its_text() {
        let line = br#"{"op":"init","seq":1,"protocol":"tern-sim/1","participant":"a","principal":"p","config":{"b": 1, "a": [2]},"state_dir":"d","effects":[]}"#;
        let Request::Init(init) = Request::from_line(line).unwrap() else {
            panic!("not an init");
        };
        assert_eq!(init.config.get(), r#"{"b": 1, "a": [2]}"#);
    }

    #[test]
    fn op_may_come_anywhere_and_unknown_members_are_ignored() {
        let line = br#"{"seq":9,"thread":"t","later":{"x":[1]},"op":"view"}"#;
        assert_eq!(
            Request::from_line(line).unwrap(),
            Request::View(ViewRequest {
                seq: 9,
                thread: "t".into()
            })
        );
    }

    #[test]
    fn a_seq_is_an_integer_by_value_within_its_range() {
        for (text, seq) in [
            ("1", Some(1)),
            ("2.0", Some(2)),
            ("2e0", Some(2)),
            ("0.2E1", Some(2)),
            ("200e-2", Some(2)),
            ("9007199254740991", Some(MAX_SEQ)),
            ("9007199254740991.0", Some(MAX_SEQ)),
            ("9007199254740992", None),
            ("18446744073709551616", None),
            ("1e400", None),
            ("0", None),
            ("-0", None),
            ("-1", None),
            ("2.5", None),
            ("1e-400", None),
            ("\"2\"", None),
            ("null", None),
        ] {
            let member: Value = serde_json::from_str(text).unwrap();
            assert_eq!(seq_value(&member), seq, "{text}");
        }
    }

    #[test]
    fn a_line_that_is_no_request_says_why() {
        let why = |line: &[u8]| Request::from_line(line).unwrap_err().to_string();
        assert!(why(br#"{"seq":1}"#).contains("missing field `op`"));
        assert!(why(br#"{"op":"dance","seq":1}"#).contains("unknown variant `dance`"));
        assert!(why(br#""view""#).contains("a request object"));
        assert!(Request::from_line(br#"["view"]"#).is_err());
        assert!(why(br#"{"op":"view","seq":1}"#).contains("missing field `thread`"));
        assert!(why(b"{\"op\":\"view\",\"seq\":1,\"thread\":\"\xff\"}").contains("invalid unicode"));
    }
}
