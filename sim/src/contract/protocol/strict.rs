//! `--strict-protocol`: every line an implementation writes is held to the
//! exact form of [`super::lines`], which is docs/protocol.schema.json,
//! before anything in it is judged as Tern.
//!
//! The lenient reading of docs/protocol.md ignores members nobody knows and
//! takes `"error": null` for no error. That keeps an implementation running
//! while it grows, and hides its mistakes: a misspelt `outgoin` is simply
//! not read. Here, each line is read as its type and written back, and the
//! first place where the two differ is the deviation, named by its JSON
//! pointer.
//!
//! Strict mode and the schema are one language, and a test judges a table
//! of lines with both: a line passes here exactly when it is valid against
//! its request's definition (`InitLine`, `DeliverLine`, ...), numbers
//! compared by value as JSON Schema compares them. The one thing a schema
//! cannot see, a repeated key, is refused here as Tern refuses it
//! ([`super::unique`]).

use std::fmt;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};
use tern_model::wire::Pointer;

use super::lines::{seq_value, DeliverAnswer, ExecuteAnswer, InitAnswer, Op, ViewAnswer, MAX_SEQ};
use super::unique::UniqueKeys;

/// Where a line leaves the protocol's form, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deviation {
    pub pointer: Pointer,
    pub problem: String,
}

impl Deviation {
    fn at(pointer: Pointer, problem: impl Into<String>) -> Deviation {
        Deviation {
            pointer,
            problem: problem.into(),
        }
    }
}

impl fmt::Display for Deviation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pointer.as_str().is_empty() {
            write!(f, "{}", self.problem)
        } else {
            write!(f, "at {}: {}", self.pointer, self.problem)
        }
    }
}

/// The members of which a line carries exactly one.
const SAYS: [&str; 4] = ["ok", "error", "perform", "log"];

/// Checks one line an implementation wrote while request `op` waited.
pub fn check_line(op: Op, line: &[u8]) -> Result<(), Deviation> {
    let root = Pointer::root;
    let value: Value = serde_json::from_slice(line)
        .map_err(|e| Deviation::at(root(), format!("not a JSON line ({e})")))?;
    let mut reader = serde_json::Deserializer::from_slice(line);
    serde_path_to_error::deserialize::<_, UniqueKeys>(&mut reader)
        .map_err(|e| located(root(), e))?;
    let Value::Object(members) = &value else {
        return Err(Deviation::at(root(), "a line is a JSON object"));
    };
    let says: Vec<&str> = SAYS
        .into_iter()
        .filter(|m| members.contains_key(*m))
        .collect();
    let [said] = says[..] else {
        return Err(Deviation::at(
            root(),
            format!(
                "a line has exactly one of `ok`, `error`, `perform` and `log`; this one has {}",
                if says.is_empty() {
                    "none".to_owned()
                } else {
                    says.iter()
                        .map(|m| format!("`{m}`"))
                        .collect::<Vec<_>>()
                        .join(" and ")
                }
            ),
        ));
    };
    for key in members.keys() {
        if key != "seq" && key != said {
            return Err(Deviation::at(
                root().key(key),
                "a member the protocol does not have",
            ));
        }
    }
    match members.get("seq") {
        Some(seq) if seq_value(seq).is_some() => {}
        Some(other) => {
            return Err(Deviation::at(
                root().key("seq"),
                format!("the request's seq, an integer from 1 to {MAX_SEQ}, not {other}"),
            ))
        }
        None => return Err(Deviation::at(root(), "missing member `seq`")),
    }
    let at = root().key(said);
    let body = &members[said];
    match said {
        "error" | "perform" if !body.is_string() => {
            Err(Deviation::at(at, format!("a string, not {body}")))
        }
        "ok" => match op {
            Op::Init => conforms::<InitAnswer>(body, at).map(drop),
            Op::Deliver => conforms::<DeliverAnswer>(body, at.clone())
                .and_then(|answer| events_match_outcomes(&answer, at)),
            Op::Execute => conforms::<ExecuteAnswer>(body, at).map(drop),
            Op::View => conforms::<ViewAnswer>(body, at).map(drop),
            Op::Shutdown => conforms::<()>(body, at),
        },
        _ => Ok(()),
    }
}

/// `value`, read as a `T` and written back, is `value` itself: nothing
/// missing, nothing extra, nothing in another form. An optional member may
/// be left out or written as null, as the schema allows. Gives the `T`, for
/// the rules its type cannot hold.
fn conforms<T: DeserializeOwned + Serialize>(value: &Value, at: Pointer) -> Result<T, Deviation> {
    let typed: T = serde_path_to_error::deserialize(value).map_err(|e| located(at.clone(), e))?;
    let written = serde_json::to_value(&typed)
        .map_err(|e| Deviation::at(at.clone(), format!("cannot be written back ({e})")))?;
    first_difference(value, &written, at)?;
    Ok(typed)
}

/// Each event has `missing` exactly when pending and `error` exactly when
/// rejected: a pending event with `"missing": null` reads as one without
/// the list, which the harness could only refuse later, as a bad event.
fn events_match_outcomes(answer: &DeliverAnswer, at: Pointer) -> Result<(), Deviation> {
    for (i, event) in answer.events.iter().enumerate() {
        event.outcome_members().map_err(|e| {
            Deviation::at(
                at.clone().key("events").index(i).key(e.member()),
                e.to_string(),
            )
        })?;
    }
    Ok(())
}

/// A reading error below `at`, at the member it concerns.
pub fn located(at: Pointer, e: serde_path_to_error::Error<serde_json::Error>) -> Deviation {
    let mut pointer = at;
    pointer.push_path(e.path());
    let problem = tern_model::wire::message_of(&e.into_inner());
    // serde names a missing member at its parent; point at the member.
    if let Some(name) = problem
        .strip_prefix("missing field `")
        .and_then(|rest| rest.split_once('`'))
        .map(|(name, _)| name)
    {
        pointer.push_key(name);
    }
    Deviation::at(pointer, problem)
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

fn first_difference(got: &Value, form: &Value, at: Pointer) -> Result<(), Deviation> {
    match (got, form) {
        (Value::Object(got), Value::Object(form)) => object_difference(got, form, at),
        (Value::Array(got), Value::Array(form)) if got.len() == form.len() => {
            for (i, (g, f)) in got.iter().zip(form).enumerate() {
                first_difference(g, f, at.clone().index(i))?;
            }
            Ok(())
        }
        _ if got == form => Ok(()),
        _ => Err(Deviation::at(
            at,
            format!("{got} where the protocol's form is {form}"),
        )),
    }
}

fn object_difference(
    got: &Map<String, Value>,
    form: &Map<String, Value>,
    at: Pointer,
) -> Result<(), Deviation> {
    for (key, g) in got {
        match form.get(key) {
            Some(f) => first_difference(g, f, at.clone().key(key))?,
            // An optional member written as null reads as left out, and
            // is written back so. (`[]` is kept, so it is never here.)
            None if g.is_null() => {}
            None => {
                return Err(Deviation::at(
                    at.key(key),
                    "a member the protocol does not have here",
                ))
            }
        }
    }
    for (key, f) in form {
        if !got.contains_key(key) && !is_empty(f) {
            return Err(Deviation::at(
                at.key(key),
                format!("missing member `{key}`"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(op: Op, line: &str) -> Result<(), String> {
        check_line(op, line.as_bytes()).map_err(|d| d.to_string())
    }

    #[test]
    fn the_lines_of_the_reference_agent_conform() {
        for (op, line) in [
            (
                Op::Init,
                r#"{"seq":1,"ok":{"name":"x","version":"1","capabilities":["execute"]}}"#,
            ),
            (Op::Init, r#"{"seq":1,"ok":{"name":"x"}}"#),
            (
                Op::Deliver,
                r#"{"seq":2,"ok":{"events":[{"outcome":"accepted","event":"delivered","id":"a:1","thread":"t"}],"outgoing":[]}}"#,
            ),
            (
                Op::Deliver,
                r#"{"seq":2,"ok":{"events":[{"outcome":"rejected","event":"delivered","id":null,"thread":null,"error":{"class":"parse","pointer":"","message":"EOF"}}]}}"#,
            ),
            (
                Op::Deliver,
                r#"{"seq":2,"ok":{"events":[{"outcome":"pending","event":"delivered","id":"a:2","thread":"t","missing":["a:1"]}]}}"#,
            ),
            (Op::Execute, r#"{"seq":3,"perform":"c/a:1"}"#),
            (Op::Execute, r#"{"seq":3,"ok":{"executed":"c/a:1"}}"#),
            (
                Op::Execute,
                r#"{"seq":3,"ok":{"refused":"already_executed"}}"#,
            ),
            (
                Op::View,
                r#"{"seq":4,"ok":{"thread":"t","messages":[],"pending":[],"commitments":[],"revisions":[],"effects":[]}}"#,
            ),
            (Op::View, r#"{"seq":4,"log":{"any":"thing"}}"#),
            (Op::Shutdown, r#"{"seq":5,"ok":null}"#),
            (Op::View, r#"{"seq":4,"error":"not JSON"}"#),
            // Numbers are compared by value, as JSON Schema compares them.
            (Op::View, r#"{"seq":4.0,"log":null}"#),
            (Op::View, r#"{"seq":40e-1,"log":null}"#),
            (Op::View, r#"{"seq":9007199254740991,"log":null}"#),
        ] {
            assert_eq!(check(op, line), Ok(()), "{line}");
        }
    }

    #[test]
    fn each_deviation_is_named_by_its_pointer() {
        for (op, line, expected) in [
            (
                Op::Init,
                r#"{"seq":1,"ok":{"name":"x","colour":"red"}}"#,
                "at /ok/colour: a member the protocol does not have here",
            ),
            (
                Op::Init,
                r#"{"seq":1,"ok":{"name":"x","capabilities":["exec"]}}"#,
                "at /ok/capabilities/0: unknown variant `exec`",
            ),
            (
                Op::Init,
                r#"{"seq":1,"ok":{"version":"1"}}"#,
                "at /ok/name: missing field `name`",
            ),
            (
                Op::Deliver,
                r#"{"seq":2,"ok":{"events":[],"outgoin":["AA=="]}}"#,
                "at /ok/outgoin: a member the protocol does not have here",
            ),
            (
                Op::Deliver,
                r#"{"seq":2,"ok":{"events":[{"outcome":"accepted","event":"delivered","id":5,"thread":"t"}]}}"#,
                "at /ok/events/0/id: invalid type: number",
            ),
            (
                Op::Deliver,
                r#"{"seq":2,"ok":{"events":[{"outcome":"pending","event":"delivered","id":"a:2","thread":"t","missing":"a:1"}]}}"#,
                "at /ok/events/0/missing: invalid type: string",
            ),
            (
                Op::Deliver,
                r#"{"seq":2,"ok":{"events":[{"outcome":"rejected","event":"delivered","id":null,"thread":null,"error":{"class":"nonsense","pointer":"","message":""}}]}}"#,
                "at /ok/events/0/error/class: unknown variant `nonsense`",
            ),
            (
                Op::Execute,
                r#"{"seq":3,"ok":{"executed":"k","refused":"terminal"}}"#,
                "at /ok",
            ),
            (
                Op::Execute,
                r#"{"seq":3,"perform":7}"#,
                "at /perform: a string, not 7",
            ),
            (
                Op::View,
                r#"{"seq":4,"ok":{"thread":"t","messages":[],"pending":[],"commitments":[],"revisions":[],"effects":[],"extra":1}}"#,
                "at /ok/extra: unknown field `extra`",
            ),
            (
                Op::View,
                r#"{"seq":4,"ok":{"thread":"t"},"error":null}"#,
                "exactly one of `ok`, `error`, `perform` and `log`; this one has `ok` and `error`",
            ),
            (Op::View, r#"{"seq":4}"#, "this one has none"),
            (
                Op::View,
                r#"{"seq":4,"log":1,"note":2}"#,
                "at /note: a member the protocol does not have",
            ),
            (
                Op::View,
                r#"{"seq":"4","log":1}"#,
                "at /seq: the request's seq",
            ),
            (Op::View, r#"[1]"#, "a line is a JSON object"),
            (
                Op::View,
                r#"{"seq":null,"error":"not JSON"}"#,
                "at /seq: the request's seq, an integer from 1 to 9007199254740991, not null",
            ),
            (Op::View, r#"{"seq":0,"log":1}"#, "at /seq"),
            (Op::View, r#"{"seq":4.5,"log":1}"#, "at /seq"),
            (Op::View, r#"{"seq":9007199254740992,"log":1}"#, "at /seq"),
            (Op::View, r#"{"seq":1e400,"log":1}"#, "at /seq"),
            (
                Op::View,
                r#"{"seq":7,"seq":4,"log":1}"#,
                "at /seq: duplicate key `seq`",
            ),
            (
                Op::View,
                r#"{"seq":4,"log":[{"a":{"b~/":1,"b~/":2}}]}"#,
                "at /log/0/a/b~0~1: duplicate key `b~/`",
            ),
            (
                Op::Deliver,
                r#"{"seq":2,"ok":{"events":[{"outcome":"pending","event":"delivered","id":"a:2","thread":"t","missing":null}]}}"#,
                "at /ok/events/0/missing: an event with outcome `pending` needs `missing`, and not null",
            ),
            (
                Op::Deliver,
                r#"{"seq":2,"ok":{"events":[{"outcome":"rejected","event":"delivered","id":null,"thread":null}]}}"#,
                "at /ok/events/0/error: an event with outcome `rejected` needs `error`",
            ),
            (
                Op::Deliver,
                r#"{"seq":2,"ok":{"events":[{"outcome":"accepted","event":"delivered","id":"a:1","thread":"t","missing":[]}]}}"#,
                "at /ok/events/0/missing: `missing` comes only with outcome `pending`, not with `accepted`",
            ),
            (
                Op::Shutdown,
                r#"{"seq":5,"ok":{}}"#,
                "at /ok: invalid type: map, expected unit",
            ),
        ] {
            let got = check(op, line).expect_err(line);
            assert!(
                got.contains(expected),
                "{line}\n  got: {got}\n  expected: {expected}"
            );
        }
    }
}
