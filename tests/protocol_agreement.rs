//! The schema and `--strict-protocol` are one language. Each probe line is
//! judged twice: by a JSON Schema validator against the definition of the
//! lines written while its request waits (`#/$defs/InitLine`, ...) in
//! docs/protocol.schema.json, and by strict mode's own check. The two must
//! agree line by line, and agree with the verdict the table expects, so
//! that a change to either side that the other does not follow fails here.
//!
//! JSON Schema judges values, not text: `2.0` is the integer 2 to it, and
//! an object cannot have two equal keys in its data model. So a line is
//! first read as JSON (refusing repeated keys, which Tern refuses), and
//! only a line that is JSON gets to the validator.

mod common;

use std::collections::BTreeSet;
use std::fmt;
use std::io::Write;
use std::process::{Command, Stdio};

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;
use tern_harness::contract::protocol::lines::Op;
use tern_harness::contract::protocol::strict::check_line;

use common::BIN;

const SCHEMA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/protocol.schema.json");

/// A judgement of one line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Valid,
    Deviation,
}

use Verdict::{Deviation, Valid};

/// The validator for each request's lines.
struct Judges {
    by_op: Vec<(Op, jsonschema::Validator)>,
}

const OPS: [Op; 5] = [Op::Init, Op::Deliver, Op::Execute, Op::View, Op::Shutdown];

impl Judges {
    fn new() -> Judges {
        let text = std::fs::read_to_string(SCHEMA).expect("docs/protocol.schema.json");
        let document: Value = serde_json::from_str(&text).expect("the schema is JSON");
        let by_op = OPS
            .into_iter()
            .map(|op| {
                let name = format!("{}Line", capitalised(op.as_str()));
                assert!(
                    document["$defs"][&name].is_object(),
                    "the schema has no definition {name}"
                );
                // The whole document, its root pointed at the definition.
                let mut schema = document.clone();
                let root = schema.as_object_mut().expect("the schema is an object");
                root.remove("anyOf");
                root.insert("$ref".into(), format!("#/$defs/{name}").into());
                let validator = jsonschema::validator_for(&schema)
                    .unwrap_or_else(|e| panic!("{name} does not compile: {e}"));
                (op, validator)
            })
            .collect();
        Judges { by_op }
    }

    /// The validator's verdict, and why when it is a deviation.
    fn schema(&self, op: Op, line: &str) -> (Verdict, String) {
        if let Err(e) = no_repeated_keys(line) {
            return (Deviation, format!("not JSON in the data model: {e}"));
        }
        let value: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => return (Deviation, format!("not JSON: {e}")),
        };
        let (_, validator) = self
            .by_op
            .iter()
            .find(|(o, _)| *o == op)
            .expect("a validator for every op");
        match validator.validate(&value) {
            Ok(()) => (Valid, String::new()),
            Err(e) => (Deviation, e.to_string()),
        }
    }
}

fn strict(op: Op, line: &str) -> (Verdict, String) {
    match check_line(op, line.as_bytes()) {
        Ok(()) => (Valid, String::new()),
        Err(d) => (Deviation, d.to_string()),
    }
}

fn capitalised(name: &str) -> String {
    let mut chars = name.chars();
    chars
        .next()
        .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

/// Reads `text` as JSON only to refuse an object with two equal keys. (Its
/// own reader, not strict mode's, so that the two judges share no code.)
fn no_repeated_keys(text: &str) -> Result<(), serde_json::Error> {
    struct Keys;
    impl<'de> Deserialize<'de> for Keys {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Keys, D::Error> {
            d.deserialize_any(KeysVisitor)
        }
    }
    struct KeysVisitor;
    impl<'de> Visitor<'de> for KeysVisitor {
        type Value = Keys;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("JSON")
        }
        fn visit_unit<E: de::Error>(self) -> Result<Keys, E> {
            Ok(Keys)
        }
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Keys, E> {
            Ok(Keys)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Keys, E> {
            Ok(Keys)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Keys, E> {
            Ok(Keys)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Keys, E> {
            Ok(Keys)
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Keys, E> {
            Ok(Keys)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Keys, A::Error> {
            while seq.next_element::<Keys>()?.is_some() {}
            Ok(Keys)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Keys, A::Error> {
            let mut keys = BTreeSet::new();
            while let Some(key) = map.next_key::<String>()? {
                if !keys.insert(key.clone()) {
                    return Err(de::Error::custom(format!("the key {key:?} twice")));
                }
                map.next_value::<Keys>()?;
            }
            Ok(Keys)
        }
    }
    serde_json::from_str::<Keys>(text).map(drop)
}

/// Every probe: the request that waits, the verdict both judges must give,
/// and the line.
const PROBES: &[(Op, Verdict, &str)] = &[
    // ---- init answers
    (Op::Init, Valid, r#"{"seq":1,"ok":{"name":"x"}}"#),
    (
        Op::Init,
        Valid,
        r#"{"seq":1,"ok":{"name":"x","version":"1","capabilities":["execute","reinit","pipeline"]}}"#,
    ),
    (
        Op::Init,
        Valid,
        r#"{"seq":1,"ok":{"name":"x","version":null,"capabilities":[]}}"#,
    ),
    (
        Op::Init,
        Deviation,
        r#"{"seq":1,"ok":{"name":"x","capabilities":null}}"#,
    ),
    (
        Op::Init,
        Deviation,
        r#"{"seq":1,"ok":{"name":"x","capabilities":["exec"]}}"#,
    ),
    (
        Op::Init,
        Deviation,
        r#"{"seq":1,"ok":{"name":"x","colour":"red"}}"#,
    ),
    (Op::Init, Deviation, r#"{"seq":1,"ok":{"version":"1"}}"#),
    (Op::Init, Deviation, r#"{"seq":1,"ok":{"name":7}}"#),
    (
        Op::Init,
        Deviation,
        r#"{"seq":1,"ok":{"name":"x","version":3}}"#,
    ),
    (Op::Init, Deviation, r#"{"seq":1,"ok":null}"#),
    (Op::Init, Deviation, r#"{"seq":1,"ok":"x"}"#),
    (
        Op::Init,
        Valid,
        r#"{"seq":1,"error":"unsupported protocol"}"#,
    ),
    (Op::Init, Deviation, r#"{"seq":1,"error":null}"#),
    (Op::Init, Deviation, r#"{"seq":1,"error":{"why":"no"}}"#),
    // ---- seq: an integer from 1 to 2^53 - 1, by value
    (Op::View, Valid, r#"{"seq":2,"log":"x"}"#),
    (Op::View, Valid, r#"{"seq":2.0,"log":"x"}"#),
    (Op::View, Valid, r#"{"seq":2e0,"log":"x"}"#),
    (Op::View, Valid, r#"{"seq":0.2E1,"log":"x"}"#),
    (Op::View, Valid, r#"{"seq":9007199254740991,"log":"x"}"#),
    (Op::View, Deviation, r#"{"seq":9007199254740992,"log":"x"}"#),
    (
        Op::View,
        Deviation,
        r#"{"seq":18446744073709551615,"log":"x"}"#,
    ),
    (
        Op::View,
        Deviation,
        r#"{"seq":18446744073709551616,"log":"x"}"#,
    ),
    (Op::View, Deviation, r#"{"seq":1e30,"log":"x"}"#),
    (Op::View, Deviation, r#"{"seq":1e400,"log":"x"}"#),
    (Op::View, Deviation, r#"{"seq":2.5,"log":"x"}"#),
    (Op::View, Deviation, r#"{"seq":0,"log":"x"}"#),
    (Op::View, Deviation, r#"{"seq":-0,"log":"x"}"#),
    (Op::View, Deviation, r#"{"seq":-1,"log":"x"}"#),
    (Op::View, Deviation, r#"{"seq":-2.0,"log":"x"}"#),
    (Op::View, Deviation, r#"{"seq":"2","log":"x"}"#),
    (Op::View, Deviation, r#"{"seq":true,"log":"x"}"#),
    (Op::View, Deviation, r#"{"seq":[2],"log":"x"}"#),
    (Op::View, Deviation, r#"{"log":"x"}"#),
    // The reference agent used to answer a request that was not JSON so.
    (Op::View, Deviation, r#"{"seq":null,"error":"not JSON"}"#),
    (Op::View, Valid, r#"{"seq":4,"error":"not JSON"}"#),
    // ---- repeated keys, anywhere in the line
    (
        Op::Init,
        Deviation,
        r#"{"seq":7,"seq":2,"ok":{"name":"x"}}"#,
    ),
    (
        Op::Init,
        Deviation,
        r#"{"seq":1,"ok":{"name":"x","name":"y"}}"#,
    ),
    (
        Op::Init,
        Deviation,
        r#"{"seq":1,"ok":{"name":"x","n\u0061me":"y"}}"#,
    ),
    (
        Op::View,
        Deviation,
        r#"{"seq":4,"log":{"a":[{"b":1,"b":1}]}}"#,
    ),
    (
        Op::Deliver,
        Deviation,
        r#"{"seq":2,"ok":{"events":[{"event":"delivered","id":"a:1","thread":"t","outcome":"accepted","outcome":"rejected"}]}}"#,
    ),
    (Op::View, Valid, r#"{"seq":4,"log":{"a":1,"A":2,"a ":3}}"#),
    // ---- deliver answers, each outcome
    (
        Op::Deliver,
        Valid,
        r#"{"seq":2,"ok":{"events":[{"event":"delivered","id":"a:1","thread":"t","outcome":"accepted"}],"outgoing":[]}}"#,
    ),
    (
        Op::Deliver,
        Valid,
        r#"{"seq":2,"ok":{"events":[{"event":"delivered","id":"a:1","thread":"t","outcome":"duplicate"}]}}"#,
    ),
    (
        Op::Deliver,
        Valid,
        r#"{"seq":2,"ok":{"events":[{"event":"delivered","id":"a:2","thread":"t","outcome":"pending","missing":["a:1"]}],"outgoing":null}}"#,
    ),
    (
        Op::Deliver,
        Valid,
        r#"{"seq":2,"ok":{"events":[{"event":"delivered","id":"a:1","thread":"t","outcome":"accepted"},{"event":"released","id":"a:2","thread":"t","outcome":"accepted"},{"event":"invalidated","id":"a:3","thread":"t","outcome":"rejected","error":{"class":"reference","pointer":"/reply","message":"m"}}]}}"#,
    ),
    (
        Op::Deliver,
        Valid,
        r#"{"seq":2,"ok":{"events":[{"event":"delivered","id":null,"thread":null,"outcome":"rejected","error":{"class":"parse","pointer":"","message":"EOF"}}]}}"#,
    ),
    (
        Op::Deliver,
        Valid,
        r#"{"seq":2,"ok":{"events":[{"event":"delivered","outcome":"rejected","error":{"class":"parse","pointer":"","message":"EOF"}}]}}"#,
    ),
    // Members of another outcome, written as null: allowed, as absent.
    (
        Op::Deliver,
        Valid,
        r#"{"seq":2,"ok":{"events":[{"event":"delivered","id":"a:1","thread":"t","outcome":"accepted","missing":null,"error":null}]}}"#,
    ),
    (
        Op::Deliver,
        Valid,
        r#"{"seq":2,"ok":{"events":[{"event":"delivered","id":"a:2","thread":"t","outcome":"pending","missing":["a:1"],"error":null}]}}"#,
    ),
    (
        Op::Deliver,
        Valid,
        r#"{"seq":2,"ok":{"events":[],"outgoing":["AA=="]}}"#,
    ),
    // The member an outcome needs: never null, never absent.
    (
        Op::Deliver,
        Deviation,
        r#"{"seq":2,"ok":{"events":[{"event":"delivered","id":"a:2","thread":"t","outcome":"pending","missing":null}]}}"#,
    ),
    (
        Op::Deliver,
        Deviation,
        r#"{"seq":2,"ok":{"events":[{"event":"delivered","id":"a:2","thread":"t","outcome":"pending"}]}}"#,
    ),
    (
        Op::Deliver,
        Deviation,
        r#"{"seq":2,"ok":{"events":[{"event":"delivered","id":null,"thread":null,"outcome":"rejected","error":null}]}}"#,
    ),
    (
        Op::Deliver,
        Deviation,
        r#"{"seq":2,"ok":{"events":[{"event":"delivered","id":null,"thread":null,"outcome":"rejected"}]}}"#,
    ),
    // ... and never with another outcome.
    (
        Op::Deliver,
        Deviation,
        r#"{"seq":2,"ok":{"events":[{"event":"delivered","id":"a:1","thread":"t","outcome":"accepted","missing":["a:0"]}]}}"#,
    ),
    (
        Op::Deliver,
        Deviation,
        r#"{"seq":2,"ok":{"events":[{"event":"delivered","id":"a:1","thread":"t","outcome":"duplicate","missing":[]}]}}"#,
    ),
    (
        Op::Deliver,
        Deviation,
        r#"{"seq":2,"ok":{"events":[{"event":"delivered","id":"a:1","thread":"t","outcome":"accepted","error":{"class":"parse","pointer":"","message":"m"}}]}}"#,
    ),
    (
        Op::Deliver,
        Deviation,
        r#"{"seq":2,"ok":{"events":[{"event":"delivered","id":null,"thread":null,"outcome":"rejected","missing":[],"error":{"class":"parse","pointer":"","message":"m"}}]}}"#,
    ),
    // Wrong types and strays.
    (
        Op::Deliver,
        Deviation,
        r#"{"seq":2,"ok":{"events":[{"event":"delivered","id":"a:2","thread":"t","outcome":"pending","missing":"a:1"}]}}"#,
    ),
    (
        Op::Deliver,
        Deviation,
        r#"{"seq":2,"ok":{"events":[{"event":"delivered","id":"a:2","thread":"t","outcome":"pending","missing":[1]}]}}"#,
    ),
    (
        Op::Deliver,
        Deviation,
        r#"{"seq":2,"ok":{"events":[{"event":"delivered","id":5,"thread":"t","outcome":"accepted"}]}}"#,
    ),
    (
        Op::Deliver,
        Deviation,
        r#"{"seq":2,"ok":{"events":[{"event":"arrived","id":"a:1","thread":"t","outcome":"accepted"}]}}"#,
    ),
    (
        Op::Deliver,
        Deviation,
        r#"{"seq":2,"ok":{"events":[{"event":"delivered","id":"a:1","thread":"t","outcome":"Accepted"}]}}"#,
    ),
    (
        Op::Deliver,
        Deviation,
        r#"{"seq":2,"ok":{"events":[{"event":"delivered","id":"a:1","thread":"t"}]}}"#,
    ),
    (
        Op::Deliver,
        Deviation,
        r#"{"seq":2,"ok":{"events":[{"event":"delivered","id":"a:1","thread":"t","outcome":"accepted","origin":0}]}}"#,
    ),
    (
        Op::Deliver,
        Deviation,
        r#"{"seq":2,"ok":{"events":[{"event":"delivered","id":null,"thread":null,"outcome":"rejected","error":{"class":"oops","pointer":"","message":"m"}}]}}"#,
    ),
    (
        Op::Deliver,
        Deviation,
        r#"{"seq":2,"ok":{"events":[{"event":"delivered","id":null,"thread":null,"outcome":"rejected","error":{"class":"parse","pointer":""}}]}}"#,
    ),
    (
        Op::Deliver,
        Deviation,
        r#"{"seq":2,"ok":{"events":[{"event":"delivered","id":null,"thread":null,"outcome":"rejected","error":{"class":"parse","pointer":"","message":"m","at":1}}]}}"#,
    ),
    (
        Op::Deliver,
        Deviation,
        r#"{"seq":2,"ok":{"events":[],"outgoin":[]}}"#,
    ),
    (
        Op::Deliver,
        Deviation,
        r#"{"seq":2,"ok":{"events":[],"outgoing":"AA=="}}"#,
    ),
    (Op::Deliver, Deviation, r#"{"seq":2,"ok":{"events":null}}"#),
    (Op::Deliver, Deviation, r#"{"seq":2,"ok":{"outgoing":[]}}"#),
    (Op::Deliver, Deviation, r#"{"seq":2,"ok":[]}"#),
    // ---- execute answers and effects
    (Op::Execute, Valid, r#"{"seq":3,"perform":"c/a:1"}"#),
    (Op::Execute, Valid, r#"{"seq":3,"ok":{"executed":"c/a:1"}}"#),
    (
        Op::Execute,
        Valid,
        r#"{"seq":3,"ok":{"refused":"already_executed"}}"#,
    ),
    (
        Op::Execute,
        Valid,
        r#"{"seq":3,"ok":{"refused":"approval_required"}}"#,
    ),
    (
        Op::Execute,
        Deviation,
        r#"{"seq":3,"ok":{"refused":"nope"}}"#,
    ),
    (
        Op::Execute,
        Deviation,
        r#"{"seq":3,"ok":{"executed":"k","refused":"terminal"}}"#,
    ),
    (Op::Execute, Deviation, r#"{"seq":3,"ok":{}}"#),
    (
        Op::Execute,
        Deviation,
        r#"{"seq":3,"ok":{"executed":null}}"#,
    ),
    (
        Op::Execute,
        Deviation,
        r#"{"seq":3,"ok":{"executed":"k","note":1}}"#,
    ),
    (Op::Execute, Deviation, r#"{"seq":3,"ok":"executed"}"#),
    (Op::Execute, Deviation, r#"{"seq":3,"perform":7}"#),
    (Op::Execute, Deviation, r#"{"seq":3,"perform":null}"#),
    (
        Op::Execute,
        Deviation,
        r#"{"seq":3,"perform":"k","ok":{"executed":"k"}}"#,
    ),
    // ---- view answers
    (
        Op::View,
        Valid,
        r#"{"seq":4,"ok":{"thread":"t","messages":[{"id":"a:1"}],"pending":[],"commitments":[],"revisions":[],"effects":["c/a:1"]}}"#,
    ),
    (
        Op::View,
        Deviation,
        r#"{"seq":4,"ok":{"thread":"t","messages":[],"pending":[],"commitments":[],"revisions":[]}}"#,
    ),
    (
        Op::View,
        Deviation,
        r#"{"seq":4,"ok":{"thread":"t","messages":[],"pending":[],"commitments":[],"revisions":[],"effects":[],"extra":1}}"#,
    ),
    (
        Op::View,
        Deviation,
        r#"{"seq":4,"ok":{"thread":"t","messages":null,"pending":[],"commitments":[],"revisions":[],"effects":[]}}"#,
    ),
    (
        Op::View,
        Deviation,
        r#"{"seq":4,"ok":{"thread":5,"messages":[],"pending":[],"commitments":[],"revisions":[],"effects":[]}}"#,
    ),
    (
        Op::View,
        Deviation,
        r#"{"seq":4,"ok":{"thread":"t","messages":[{"id":"a:1","id":"a:1"}],"pending":[],"commitments":[],"revisions":[],"effects":[]}}"#,
    ),
    // ---- shutdown
    (Op::Shutdown, Valid, r#"{"seq":5,"ok":null}"#),
    (Op::Shutdown, Deviation, r#"{"seq":5,"ok":{}}"#),
    (Op::Shutdown, Deviation, r#"{"seq":5,"ok":false}"#),
    // ---- lines: exactly one of ok, error, perform and log; nothing else
    (Op::View, Valid, r#"{"seq":4,"log":null}"#),
    (
        Op::View,
        Valid,
        r#"{"seq":4,"log":{"any":["thing",1.5e300]}}"#,
    ),
    (Op::View, Valid, r#"{"seq":4,"log":1e400}"#),
    (Op::View, Deviation, r#"{"seq":4}"#),
    (Op::View, Deviation, r#"{"seq":4,"log":1,"note":2}"#),
    (Op::View, Deviation, r#"{"seq":4,"log":1,"error":"x"}"#),
    (
        Op::View,
        Deviation,
        r#"{"seq":4,"ok":{"thread":"t","messages":[],"pending":[],"commitments":[],"revisions":[],"effects":[]},"error":null}"#,
    ),
    (
        Op::Init,
        Deviation,
        r#"{"seq":1,"ok":{"name":"x"},"log":"started"}"#,
    ),
    (Op::View, Deviation, r#"[{"seq":4,"log":1}]"#),
    (Op::View, Deviation, r#""log""#),
    (Op::View, Deviation, r#"null"#),
    (Op::View, Deviation, r#"not json"#),
    (Op::View, Deviation, r#"{"seq":4,"log":1"#),
    (
        Op::View,
        Deviation,
        r#"{"seq":4,"log":1} {"seq":4,"log":2}"#,
    ),
];

#[test]
fn the_schema_and_strict_mode_judge_every_probe_alike() {
    let judges = Judges::new();
    let mut wrong = Vec::new();
    for &(op, expected, line) in PROBES {
        let (by_schema, schema_why) = judges.schema(op, line);
        let (by_strict, strict_why) = strict(op, line);
        if by_schema != expected || by_strict != expected {
            wrong.push(format!(
                "while `{op}` waits: {line}\n    expected {expected:?}; schema: {by_schema:?} {schema_why}; strict: {by_strict:?} {strict_why}"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} probes are not judged as expected:\n{}",
        wrong.len(),
        PROBES.len(),
        wrong.join("\n")
    );
    // The table says something on both sides of each kind of line.
    for op in OPS {
        for verdict in [Valid, Deviation] {
            assert!(
                PROBES.iter().any(|&(o, v, _)| o == op && v == verdict),
                "no {verdict:?} probe while `{op}` waits"
            );
        }
    }
}

/// The requests of docs/protocol.md section 11, with lines that are no
/// request among them, each with the `op` it has if it is one.
fn requests(state_dir: &str) -> Vec<(Option<Op>, String)> {
    let config = r#"{"participant":"reviewer","contexts":{"c1":{"drafter":"pk-drafter","reviewer":"pk-reviewer"}},"threads":{"design":"c1"},"grants":[],"policy":{"permitted_without_grant":["design"]}}"#;
    let deliver = |frame: &str, principal: &str, now: u32| {
        format!(
            r#"{{"op":"deliver","SEQ":0,"frame":"{frame}","principal":"{principal}","now":{now}}}"#
        )
    };
    const REQUEST: &str = "eyJ0ZXJuIjoiMC4xIiwiaWQiOiJkcmFmdGVyOjEiLCJmcm9tIjoiZHJhZnRlciIsInRvIjpbInJldmlld2VyIl0sInRocmVhZCI6ImRlc2lnbiIsInJlcGx5IjpudWxsLCJhY3QiOiJSRVFVRVNUIiwiYm9keSI6eyJhY3Rpb24iOiJSZXZpZXcgdGhlIEFDSyBydWxlIGluIHRoZSBzdXBwbGllZCBkcmFmdC4iLCJkb25lX3doZW4iOiJJZGVudGlmeSB3aGV0aGVyIEFDSyBpbXBsaWVzIGFncmVlbWVudCBhbmQgZXhwbGFpbiB3aHkuIiwiY29uc3RyYWludHMiOlsiUmV2aWV3IG9ubHk7IGRvIG5vdCBlZGl0IGZpbGVzLiJdLCJhdXRob3JpdHlfcmVmIjpudWxsfX0=";
    const REPORT: &str = "eyJ0ZXJuIjoiMC4xIiwiaWQiOiJyZXZpZXdlcjoyIiwiZnJvbSI6InJldmlld2VyIiwidG8iOlsiZHJhZnRlciJdLCJ0aHJlYWQiOiJkZXNpZ24iLCJyZXBseSI6InJldmlld2VyOjEiLCJhY3QiOiJSRVBPUlQiLCJib2R5Ijp7ImNvbW1pdG1lbnQiOiJyZXZpZXdlcjoxIiwic3RhdGUiOiJibG9ja2VkIiwiY2xhaW1zIjpbeyJ0ZXh0IjoiVGhlIGRyYWZ0IGlzIG5vdCBhdmFpbGFibGUgdG8gbWUuIiwiYmFzaXMiOiJvYnNlcnZlZCIsImNvbmZpZGVuY2UiOiJoaWdoIiwic2NvcGUiOiJBY2Nlc3NpYmxlIGlucHV0cyBpbiB0aGlzIGlsbHVzdHJhdGl2ZSBleGNoYW5nZS4iLCJldmlkZW5jZSI6W10sImFsdGVybmF0aXZlcyI6W119XSwibmV4dCI6IlBsZWFzZSBwcm92aWRlIHRoZSBkcmFmdCB0ZXh0LiJ9fQ==";
    const COMMIT: &str = "eyJ0ZXJuIjoiMC4xIiwiaWQiOiJyZXZpZXdlcjoxIiwiZnJvbSI6InJldmlld2VyIiwidG8iOlsiZHJhZnRlciJdLCJ0aHJlYWQiOiJkZXNpZ24iLCJyZXBseSI6ImRyYWZ0ZXI6MSIsImFjdCI6IkNPTU1JVCIsImJvZHkiOnsicmVxdWVzdCI6ImRyYWZ0ZXI6MSIsImFjdGlvbiI6IlJldmlldyB0aGUgc3VwcGxpZWQgQUNLIHJ1bGUuIiwiZGVsaXZlcmFibGUiOiJBIGZpbmRpbmcgYW5kIHRleHR1YWwgc3VwcG9ydC4iLCJkb25lX3doZW4iOiJFeHBsYWluIHdoZXRoZXIgQUNLIGltcGxpZXMgYWdyZWVtZW50IHdpdGggc3VwcG9ydGluZyB0ZXh0LiIsImR1ZSI6bnVsbCwiY29uZGl0aW9ucyI6WyJUaGUgZHJhZnQgaXMgYWNjZXNzaWJsZS4iXSwiYXV0aG9yaXR5X3JlZiI6bnVsbH19";
    vec![
        (None, "not json".to_owned()),
        (
            Some(Op::View),
            r#"{"op":"view","SEQ":0,"thread":"design"}"#.to_owned(),
        ),
        (
            Some(Op::Init),
            format!(
                r#"{{"op":"init","SEQ":0,"protocol":"tern-sim/1","participant":"reviewer","principal":"pk-reviewer","config":{config},"state_dir":{},"effects":[]}}"#,
                Value::from(state_dir)
            ),
        ),
        (Some(Op::Deliver), deliver(REQUEST, "pk-drafter", 1000)),
        (Some(Op::Deliver), deliver(REPORT, "pk-reviewer", 1010)),
        (None, "[1]".to_owned()),
        (Some(Op::Deliver), deliver(COMMIT, "pk-reviewer", 1020)),
        (Some(Op::Deliver), deliver(REQUEST, "pk-drafter", 1030)),
        (
            Some(Op::Deliver),
            deliver("eyJ0ZXJuIjoiMC4xIiw=", "pk-drafter", 1040),
        ),
        (
            Some(Op::Deliver),
            deliver("not base64!", "pk-drafter", 1045),
        ),
        (Some(Op::Deliver), deliver(REPORT, "pk-mallory", 1050)),
        (None, r#"{"op":"dance","SEQ":0}"#.to_owned()),
        (
            Some(Op::Execute),
            r#"{"op":"execute","SEQ":0,"thread":"design","commitment":"drafter:1","now":1060}"#
                .to_owned(),
        ),
        (
            Some(Op::Execute),
            r#"{"op":"execute","SEQ":0,"thread":"design","commitment":"reviewer:1","now":1070}"#
                .to_owned(),
        ),
        (
            Some(Op::Execute),
            r#"{"op":"execute","SEQ":0,"thread":"design","commitment":"reviewer:1","now":1080}"#
                .to_owned(),
        ),
        (
            None,
            r#"{"op":"view","seq":null,"thread":"design"}"#.to_owned(),
        ),
        (
            Some(Op::View),
            r#"{"op":"view","SEQ":0,"thread":"design"}"#.to_owned(),
        ),
        (
            Some(Op::Shutdown),
            r#"{"op":"shutdown","SEQ":0}"#.to_owned(),
        ),
    ]
}

/// `tern-sim agent` answers every line it is given, readable or not, with
/// lines both judges accept under the request's `op`, each with the seq
/// that request has (counted, for a line that is none): never null.
#[test]
fn the_reference_agent_writes_only_lines_both_judges_accept() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let requests = requests(state.to_str().unwrap());
    let mut input = String::new();
    for (i, (_, line)) in requests.iter().enumerate() {
        input.push_str(&line.replace(r#""SEQ":0"#, &format!(r#""seq":{}"#, i + 1)));
        input.push('\n');
    }
    let mut child = Command::new(BIN)
        .arg("agent")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tern-sim agent starts");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let judges = Judges::new();
    let mut answered = Vec::new();
    let mut performed = 0;
    for line in text.lines() {
        let seq = serde_json::from_str::<Value>(line).unwrap()["seq"].clone();
        let seq = seq
            .as_u64()
            .unwrap_or_else(|| panic!("a seq that is no request's: {line}"));
        let index = usize::try_from(seq - 1).unwrap();
        let ops = match requests.get(index) {
            Some((Some(op), _)) => vec![*op],
            // A line that was no request: its answer is an error, of one
            // form whatever the op.
            Some((None, _)) => OPS.to_vec(),
            None => panic!("seq {seq} was never sent: {line}"),
        };
        for op in ops {
            assert_eq!(strict(op, line), (Valid, String::new()), "strict, {op}");
            assert_eq!(
                judges.schema(op, line),
                (Valid, String::new()),
                "schema, {op}"
            );
        }
        if line.contains(r#""perform":"#) {
            performed += 1;
        } else {
            answered.push(seq);
        }
    }
    let every: Vec<u64> = (1..=requests.len() as u64).collect();
    assert_eq!(
        answered, every,
        "one answer to each line, in order:\n{text}"
    );
    assert_eq!(performed, 1, "{text}");
    assert!(
        text.contains(r#""outcome":"pending","missing":["reviewer:1"]"#)
            && text.contains(r#""event":"released""#)
            && text.contains(r#""outcome":"rejected","error":{"class":"parse""#),
        "{text}"
    );
}
