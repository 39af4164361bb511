//! One test per stateless rule of the profile: a valid frame and an invalid
//! one side by side, differing only in what the rule is about, so each test
//! shows both that the rule bites and that it bites nothing else.

use serde_json::{json, Value};
use tern_model::wire::{parse_frame, ErrorClass};

mod bodies;
mod commitments;
mod envelope;

use bodies::*;

const WORKED_EXCHANGE: &str = include_str!("../../../examples/worked-exchange.jsonl");

fn ask() -> Value {
    json!({"tern":"0.1","id":"drafter:1","from":"drafter","to":["reviewer"],"thread":"design",
           "reply":null,"act":"ASK","body":{"question":"Which ambiguity first?"}})
}

fn claim() -> Value {
    json!({"text":"t","basis":"observed","confidence":"high","scope":"s","evidence":[],"alternatives":[]})
}

fn frame(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).unwrap()
}

#[track_caller]
fn accepts(bytes: &[u8]) {
    if let Err(e) = parse_frame(bytes) {
        panic!(
            "expected valid, got {e}\n{}",
            String::from_utf8_lossy(bytes)
        );
    }
}

#[track_caller]
fn rejects(bytes: &[u8], class: ErrorClass, pointer: &str) {
    match parse_frame(bytes) {
        Ok(m) => panic!("expected {class} error at {pointer}, got {m:?}"),
        Err(e) => {
            assert_eq!((e.class, e.pointer.as_str()), (class, pointer), "{e}");
            assert!(!e.message.is_empty());
        }
    }
}

/// Applies `edit` to a copy of `base` and checks valid vs invalid.
#[track_caller]
fn side_by_side(base: Value, edit: impl FnOnce(&mut Value), class: ErrorClass, pointer: &str) {
    accepts(&frame(&base));
    let mut broken = base;
    edit(&mut broken);
    rejects(&frame(&broken), class, pointer);
}

fn text_frame(s: &str) -> Vec<u8> {
    s.as_bytes().to_vec()
}

// ---- Section 6: the worked exchange -------------------------------------

#[test]
fn s6_worked_exchange_validates_and_reprints_byte_for_byte() {
    let lines: Vec<&str> = WORKED_EXCHANGE.lines().collect();
    assert_eq!(lines.len(), 4);
    for line in lines {
        let message = parse_frame(line.as_bytes()).unwrap_or_else(|e| panic!("{e}\n{line}"));
        assert_eq!(message.to_json_line(), line);
    }
}

// ---- Section 1: encoding and grammar (strict JSON, class parse) ----------

#[test]
fn s1_invalid_json_is_a_parse_error() {
    accepts(&frame(&ask()));
    let mut text = String::from_utf8(frame(&ask())).unwrap();
    text.pop();
    rejects(text.as_bytes(), ErrorClass::Parse, "");
}

#[test]
fn s1_invalid_utf8_is_a_parse_error() {
    let good = frame(&ask());
    let at = good.windows(5).position(|w| w == b"Which").unwrap();
    for bad in [
        &[0xff][..],
        &[0xc0, 0xaf],
        &[0xe0, 0x80, 0xaf],
        &[0xed, 0xa0, 0x80],
    ] {
        // 0xff never occurs; c0 af and e0 80 af are overlong '/'; ed a0 80 is a surrogate.
        let mut broken = good.clone();
        broken.splice(at..at + 1, bad.iter().copied());
        rejects(&broken, ErrorClass::Parse, "/body/question");
    }
}

#[test]
fn s1_lone_surrogate_escapes_are_a_parse_error() {
    let good = String::from_utf8(frame(&ask())).unwrap();
    accepts(good.replace("Which", "\\ud83d\\ude00").as_bytes());
    rejects(
        good.replace("Which", "\\ud83d").as_bytes(),
        ErrorClass::Parse,
        "/body/question",
    );
    rejects(
        good.replace("Which", "\\ude00").as_bytes(),
        ErrorClass::Parse,
        "/body/question",
    );
}

#[test]
fn s1_duplicate_keys_are_a_parse_error_at_every_depth() {
    let good = String::from_utf8(frame(&ask())).unwrap();
    rejects(
        good.replacen("\"act\":\"ASK\"", "\"act\":\"ASK\",\"act\":\"ASK\"", 1)
            .as_bytes(),
        ErrorClass::Parse,
        "/act",
    );
    rejects(
        good.replacen("{\"question\"", "{\"question\":\"a\",\"question\"", 1)
            .as_bytes(),
        ErrorClass::Parse,
        "/body/question",
    );
    // Equal only after unescaping.
    rejects(
        good.replacen("{\"question\"", "{\"q\\u0075estion\":\"a\",\"question\"", 1)
            .as_bytes(),
        ErrorClass::Parse,
        "/body/question",
    );
    // Inside extensions, which are otherwise free-form.
    let mut with_ext = ask();
    with_ext["extensions"] = json!({"x": {"y": 1}});
    let text = String::from_utf8(frame(&with_ext)).unwrap();
    accepts(text.as_bytes());
    rejects(
        text.replace("{\"y\":1}", "{\"y\":1,\"y\":1}").as_bytes(),
        ErrorClass::Parse,
        "/extensions/x/y",
    );
    // Inside a claim.
    let mut tell = ask();
    tell["act"] = json!("TELL");
    tell["body"] = json!({"claims": [claim()]});
    let text = String::from_utf8(frame(&tell)).unwrap();
    accepts(text.as_bytes());
    rejects(
        text.replace(
            "\"basis\":\"observed\"",
            "\"basis\":\"observed\",\"basis\":\"observed\"",
        )
        .as_bytes(),
        ErrorClass::Parse,
        "/body/claims/0/basis",
    );
}

#[test]
fn s1_non_finite_numbers_are_a_parse_error() {
    let mut with_ext = ask();
    with_ext["extensions"] = json!({"n": 0});
    let text = String::from_utf8(frame(&with_ext)).unwrap();
    for good in ["1.5e300", "-0", "123456789012345678901234567890", "1e-400"] {
        accepts(text.replace("\"n\":0", &format!("\"n\":{good}")).as_bytes());
    }
    for bad in [
        "1e400",
        "-1e400",
        "NaN",
        "Infinity",
        "-Infinity",
        "+1",
        ".5",
        "01",
    ] {
        let broken = text.replace("\"n\":0", &format!("\"n\":{bad}"));
        rejects(broken.as_bytes(), ErrorClass::Parse, "/extensions/n");
    }
}

#[test]
fn s1_comments_are_a_parse_error() {
    let good = String::from_utf8(frame(&ask())).unwrap();
    rejects(
        good.replacen('{', "{/* c */", 1).as_bytes(),
        ErrorClass::Parse,
        "",
    );
    rejects(format!("{good}// c").as_bytes(), ErrorClass::Parse, "");
}

#[test]
fn s1_exactly_one_object_per_frame() {
    let good = String::from_utf8(frame(&ask())).unwrap();
    accepts(format!("  {good}\r\n").as_bytes());
    rejects(format!("{good}{good}").as_bytes(), ErrorClass::Parse, "");
    rejects(format!("{good} 1").as_bytes(), ErrorClass::Parse, "");
    rejects(b"", ErrorClass::Parse, "");
    rejects(b"   ", ErrorClass::Parse, "");
    rejects(format!("\u{feff}{good}").as_bytes(), ErrorClass::Parse, "");
}

#[test]
fn p_json_6_nesting_is_bounded() {
    let deep = |n: usize| {
        let mut v = ask();
        v["extensions"] = json!({"x": 0});
        let text = String::from_utf8(frame(&v)).unwrap();
        text.replace(
            "\"x\":0",
            &format!("\"x\":{}0{}", "[".repeat(n), "]".repeat(n)),
        )
    };
    accepts(deep(100).as_bytes());
    let err = parse_frame(deep(200).as_bytes()).unwrap_err();
    assert_eq!(err.class, ErrorClass::Parse, "{err}");
    // 100,000 levels: an error, not a stack overflow.
    let err = parse_frame("[".repeat(100_000).as_bytes()).unwrap_err();
    assert_eq!(err.class, ErrorClass::Parse);
    let err = parse_frame("{\"a\":".repeat(100_000).as_bytes()).unwrap_err();
    assert_eq!(err.class, ErrorClass::Parse);
}

#[test]
fn p_json_7_frames_are_bounded() {
    let mut v = ask();
    v["body"]["question"] = json!("x".repeat(1000));
    accepts(&frame(&v));
    v["body"]["question"] = json!("x".repeat(tern_model::wire::MAX_FRAME_BYTES));
    let err = parse_frame(&frame(&v)).unwrap_err();
    assert_eq!((err.class, err.pointer.as_str()), (ErrorClass::Parse, ""));
    assert!(err.message.contains("exceeds the limit"), "{err}");
}

#[test]
fn s1_no_implicit_type_conversion() {
    side_by_side(
        ask(),
        |v| v["body"]["question"] = json!(42),
        ErrorClass::Body,
        "/body/question",
    );
    side_by_side(
        ask(),
        |v| v["to"] = json!("reviewer"),
        ErrorClass::Envelope,
        "/to",
    );
    side_by_side(
        ask(),
        |v| v["body"] = json!(["Which?"]),
        ErrorClass::Envelope,
        "/body",
    );
    side_by_side(
        ask(),
        |v| v["reply"] = json!(false),
        ErrorClass::Envelope,
        "/reply",
    );
    let mut tell = ask();
    tell["act"] = json!("TELL");
    tell["body"] = json!({"claims": [claim()]});
    side_by_side(
        tell,
        |v| v["body"]["claims"][0] = json!(["t", "observed", "high", "s", [], []]),
        ErrorClass::Body,
        "/body/claims/0",
    );
}
