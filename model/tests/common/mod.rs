//! Generators of valid Tern 0.1 messages as JSON values, one strategy per act,
//! written from docs/profile.md independently of the parser's types so that
//! the two can check each other.

#![allow(dead_code)]

pub mod conversation;
pub mod kit;

use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use serde_json::{json, Map, Value};

pub const ACTS: [&str; 9] = [
    "ASK",
    "TELL",
    "PROPOSE",
    "REQUEST",
    "COMMIT",
    "REPORT",
    "REVISE",
    "ACK",
    "CHALLENGE",
];

/// Text with characters that need escaping, and some outside the BMP.
pub fn text() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 .,:\"\\\\/\\n\\t\u{e9}\u{2028}\u{1F600}]{1,12}"
}

pub fn participant() -> impl Strategy<Value = String> {
    "[a-z]{1,6}"
}

pub fn suffix() -> impl Strategy<Value = String> {
    "[a-z0-9][a-z0-9:._-]{0,5}"
}

pub fn message_ref() -> impl Strategy<Value = String> {
    (participant(), suffix()).prop_map(|(p, s)| format!("{p}:{s}"))
}

pub fn evidence_id() -> impl Strategy<Value = String> {
    "[a-z0-9-]{1,8}".prop_map(|s| format!("ev:{s}"))
}

pub fn timestamp() -> impl Strategy<Value = String> {
    "20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,3})?(Z|[+-]0[0-9]:[03]0)"
}

fn nullable<S: Strategy<Value = String>>(s: S) -> impl Strategy<Value = Value> {
    option::of(s).prop_map(|o| o.map_or(Value::Null, Value::String))
}

pub fn texts(max: usize) -> impl Strategy<Value = Value> {
    vec(text(), 0..=max).prop_map(|v| json!(v))
}

/// Free-form extension content: nested, with numbers that survive re-printing.
pub fn extension_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|i| json!(i)),
        (any::<i32>(), 1..1000i32).prop_map(|(a, b)| json!(a as f64 + 1.0 / (b as f64 + 0.5))),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..3).prop_map(Value::Array),
            proptest::collection::btree_map("[a-z\u{e9}~/]{1,4}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

pub fn extensions() -> impl Strategy<Value = Value> {
    proptest::collection::btree_map("[a-z]{1,5}", extension_value(), 0..3)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
}

pub fn claim() -> impl Strategy<Value = Value> {
    (
        text(),
        prop_oneof![
            Just("observed"),
            Just("inferred"),
            Just("reported"),
            Just("assumed")
        ],
        prop_oneof![
            Just("low"),
            Just("medium"),
            Just("high"),
            Just("unspecified")
        ],
        text(),
        vec(evidence_id(), 0..3),
        texts(2),
    )
        .prop_map(|(text, basis, confidence, scope, evidence, alternatives)| {
            json!({"text": text, "basis": basis, "confidence": confidence, "scope": scope,
                   "evidence": evidence, "alternatives": alternatives})
        })
}

pub fn claims(min: usize, max: usize) -> impl Strategy<Value = Value> {
    vec(claim(), min..=max).prop_map(Value::Array)
}

fn impact() -> impl Strategy<Value = Value> {
    (
        message_ref(),
        prop_oneof![
            Just("paused"),
            Just("unaffected"),
            Just("awaiting_instruction")
        ],
        text(),
    )
        .prop_map(|(c, a, r)| json!({"commitment": c, "assessment": a, "reason": r}))
}

/// A body of `act` without REVISE (whose replacement needs a body of another act).
pub fn plain_body(act: &'static str) -> BoxedStrategy<Value> {
    match act {
        "ASK" => text().prop_map(|q| json!({"question": q})).boxed(),
        "TELL" => claims(1, 3).prop_map(|c| json!({"claims": c})).boxed(),
        "PROPOSE" => (text(), nullable(message_ref()))
            .prop_map(|(p, r)| json!({"proposal": p, "request": r}))
            .boxed(),
        "REQUEST" => (
            text(),
            text(),
            texts(3),
            nullable(text()),
            option::of(message_ref()),
        )
            .prop_map(|(a, d, c, g, rep)| {
                let mut b =
                    json!({"action": a, "done_when": d, "constraints": c, "authority_ref": g});
                if let Some(r) = rep {
                    b["replaces"] = json!(r);
                }
                b
            })
            .boxed(),
        "COMMIT" => (
            message_ref(),
            (text(), text(), text()),
            nullable(timestamp()),
            texts(3),
            nullable(text()),
        )
            .prop_map(|(r, (a, del, d), due, cond, g)| {
                json!({"request": r, "action": a, "deliverable": del, "done_when": d,
                       "due": due, "conditions": cond, "authority_ref": g})
            })
            .boxed(),
        "REPORT" => (
            message_ref(),
            prop_oneof![
                Just("active"),
                Just("blocked"),
                Just("fulfilled"),
                Just("failed")
            ],
            claims(0, 2),
            claim(),
            option::of(text()),
        )
            .prop_map(|(c, state, mut claims, extra, next)| {
                if state == "blocked" && claims.as_array().is_some_and(|a| a.is_empty()) {
                    claims = json!([extra]);
                }
                let mut b = json!({"commitment": c, "state": state, "claims": claims});
                if let Some(n) = next {
                    b["next"] = json!(n);
                }
                b
            })
            .boxed(),
        "ACK" => message_ref().prop_map(|t| json!({"target": t})).boxed(),
        "CHALLENGE" => (
            message_ref(),
            prop_oneof![
                Just("factual"),
                Just("inference"),
                Just("scope"),
                Just("feasibility"),
                Just("authority")
            ],
            text(),
            claims(0, 2),
        )
            .prop_map(|(t, k, r, c)| json!({"target": t, "kind": k, "reason": r, "claims": c}))
            .boxed(),
        other => panic!("no plain body for {other}"),
    }
}

pub fn revise_body() -> BoxedStrategy<Value> {
    let revisable = prop_oneof![
        Just("TELL"),
        Just("PROPOSE"),
        Just("REQUEST"),
        Just("COMMIT"),
        Just("REPORT")
    ];
    (
        message_ref(),
        message_ref(),
        revisable.prop_flat_map(|act| option::of(plain_body(act))),
        vec(impact(), 0..3),
    )
        .prop_map(|(target, previous, replacement, impact)| {
            let (mode, replacement) = match replacement {
                Some(b) => ("replace", b),
                None => ("withdraw", Value::Null),
            };
            json!({"target": target, "previous": previous, "mode": mode,
                   "replacement": replacement, "impact": impact})
        })
        .boxed()
}

pub fn body(act: &'static str) -> BoxedStrategy<Value> {
    let base = if act == "REVISE" {
        revise_body()
    } else {
        plain_body(act)
    };
    (base, option::of(extensions()))
        .prop_map(|(mut b, ext)| {
            if let Some(e) = ext {
                b["extensions"] = e;
            }
            b
        })
        .boxed()
}

fn evidence() -> impl Strategy<Value = Value> {
    proptest::collection::btree_map("[a-z0-9]{1,6}", (text(), timestamp(), text(), text()), 1..3)
        .prop_map(|m| {
            Value::Array(
                m.into_iter()
                    .map(|(id, (source, at, method, result))| {
                        json!({"id": format!("ev:{id}"), "source": source, "collected_at": at,
                           "method": method, "result": result})
                    })
                    .collect(),
            )
        })
}

/// A valid message of `act`.
pub fn message_of(act: &'static str) -> BoxedStrategy<Value> {
    (
        participant(),
        suffix(),
        proptest::collection::btree_set(participant(), 1..4),
        "[a-z][a-z0-9-]{0,8}",
        nullable(message_ref()),
        body(act),
        option::of(evidence()),
        option::of(extensions()),
    )
        .prop_map(
            move |(from, suffix, to, thread, reply, body, evidence, ext)| {
                let mut m = json!({
                    "tern": "0.1", "id": format!("{from}:{suffix}"), "from": from,
                    "to": to.into_iter().collect::<Vec<_>>(), "thread": thread,
                    "reply": reply, "act": act, "body": body,
                });
                if let Some(e) = evidence {
                    m["evidence"] = e;
                }
                if let Some(e) = ext {
                    m["extensions"] = e;
                }
                m
            },
        )
        .boxed()
}

/// A valid message of any act.
pub fn message() -> impl Strategy<Value = Value> {
    proptest::sample::select(ACTS.to_vec()).prop_flat_map(message_of)
}

/// The fields that the profile requires (present, possibly null), per object
/// kind: the independent statement of docs/profile.md's field tables.
fn required_fields(kind: &str) -> &'static [&'static str] {
    match kind {
        "envelope" => &["tern", "id", "from", "to", "thread", "reply", "act", "body"],
        "ASK" => &["question"],
        "TELL" => &["claims"],
        "PROPOSE" => &["proposal", "request"],
        "REQUEST" => &["action", "done_when", "constraints", "authority_ref"],
        "COMMIT" => &[
            "request",
            "action",
            "deliverable",
            "done_when",
            "due",
            "conditions",
            "authority_ref",
        ],
        "REPORT" => &["commitment", "state", "claims"],
        "REVISE" => &["target", "previous", "mode", "replacement", "impact"],
        "ACK" => &["target"],
        "CHALLENGE" => &["target", "kind", "reason", "claims"],
        "claim" => &[
            "text",
            "basis",
            "confidence",
            "scope",
            "evidence",
            "alternatives",
        ],
        "evidence" => &["id", "source", "collected_at", "method", "result"],
        "impact" => &["commitment", "assessment", "reason"],
        other => panic!("unknown kind {other}"),
    }
}

/// Every required field of a message, as a path of keys and indices.
/// A REVISE's replacement is free-form JSON to the stateless layer, so the
/// fields inside it are not listed.
pub fn required_paths(message: &Value) -> Vec<Vec<Seg>> {
    let mut out = Vec::new();
    let add_object = |out: &mut Vec<Vec<Seg>>, at: &[Seg], kind: &str| {
        for f in required_fields(kind) {
            let mut p = at.to_vec();
            p.push(Seg::Key((*f).to_owned()));
            out.push(p);
        }
    };
    add_object(&mut out, &[], "envelope");
    let act = message["act"].as_str().expect("act");
    let body = vec![Seg::Key("body".into())];
    add_object(&mut out, &body, act);
    for list in ["claims", "impact"] {
        if let Some(items) = message["body"][list].as_array() {
            for i in 0..items.len() {
                let mut p = body.clone();
                p.push(Seg::Key(list.into()));
                p.push(Seg::Index(i));
                add_object(
                    &mut out,
                    &p,
                    if list == "claims" { "claim" } else { "impact" },
                );
            }
        }
    }
    if let Some(items) = message["evidence"].as_array() {
        for i in 0..items.len() {
            add_object(
                &mut out,
                &[Seg::Key("evidence".into()), Seg::Index(i)],
                "evidence",
            );
        }
    }
    out
}

#[derive(Debug, Clone, PartialEq)]
pub enum Seg {
    Key(String),
    Index(usize),
}

pub fn pointer(path: &[Seg]) -> String {
    path.iter()
        .map(|s| match s {
            Seg::Key(k) => format!("/{}", k.replace('~', "~0").replace('/', "~1")),
            Seg::Index(i) => format!("/{i}"),
        })
        .collect()
}

pub fn get_mut<'a>(v: &'a mut Value, path: &[Seg]) -> &'a mut Value {
    path.iter().fold(v, |v, s| match s {
        Seg::Key(k) => &mut v[k.as_str()],
        Seg::Index(i) => &mut v[*i],
    })
}

/// Removes the field at `path` (its last segment is a key).
pub fn remove(message: &mut Value, path: &[Seg]) {
    let (last, parent) = path.split_last().expect("nonempty path");
    let Seg::Key(k) = last else {
        panic!("fields are keys")
    };
    get_mut(message, parent)
        .as_object_mut()
        .expect("parent is an object")
        .remove(k);
}

/// A value of another JSON type than `v`.
pub fn retyped(v: &Value) -> Value {
    match v {
        Value::String(_) | Value::Null | Value::Bool(_) => json!(7),
        Value::Number(_) => json!("seven"),
        Value::Array(_) => json!({"not": "a list"}),
        Value::Object(_) => json!(["not", "an", "object"]),
    }
}

/// Serialises `v` with the field at `path` written twice (same value), which
/// no JSON value type can represent.
pub fn with_duplicate(v: &Value, path: &[Seg]) -> String {
    fn write(v: &Value, path: Option<&[Seg]>, out: &mut String) {
        match v {
            Value::Object(m) => {
                out.push('{');
                let mut first = true;
                for (k, val) in m {
                    let here = path.and_then(|p| match p.split_first() {
                        Some((Seg::Key(pk), rest)) if pk == k => Some(rest),
                        _ => None,
                    });
                    let copies = if here.is_some_and(|r| r.is_empty()) {
                        2
                    } else {
                        1
                    };
                    for _ in 0..copies {
                        if !first {
                            out.push(',');
                        }
                        first = false;
                        out.push_str(&serde_json::to_string(k).unwrap());
                        out.push(':');
                        write(val, here.filter(|r| !r.is_empty()), out);
                    }
                }
                out.push('}');
            }
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    let here = path.and_then(|p| match p.split_first() {
                        Some((Seg::Index(pi), rest)) if *pi == i => Some(rest),
                        _ => None,
                    });
                    write(item, here, out);
                }
                out.push(']');
            }
            other => out.push_str(&serde_json::to_string(other).unwrap()),
        }
    }
    let mut out = String::new();
    write(v, Some(path), &mut out);
    out
}

/// Rewrites a JSON value with `rename` applied to every object key.
pub fn map_keys(v: &Value, rename: &dyn Fn(&str) -> String) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, val) in m {
                out.insert(rename(k), map_keys(val, rename));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|i| map_keys(i, rename)).collect()),
        other => other.clone(),
    }
}
