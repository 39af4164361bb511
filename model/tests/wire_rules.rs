//! One test per stateless rule of the profile: a valid frame and an invalid
//! one side by side, differing only in what the rule is about, so each test
//! shows both that the rule bites and that it bites nothing else.

use serde_json::{json, Value};
use tern_model::wire::{parse_frame, ErrorClass};

const WORKED_EXCHANGE: &str = include_str!("../../examples/worked-exchange.jsonl");

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

// ---- Section 1: version and envelope ------------------------------------

#[test]
fn s1_unsupported_versions_are_rejected_before_anything_else() {
    side_by_side(
        ask(),
        |v| v["tern"] = json!("0.2"),
        ErrorClass::Version,
        "/tern",
    );
    // The rest is not looked at: a broken body still gives `version`.
    side_by_side(
        ask(),
        |v| {
            v["tern"] = json!("1.0");
            v["body"] = json!({"nonsense": true});
            v["to"] = json!([]);
        },
        ErrorClass::Version,
        "/tern",
    );
    // But strict JSON comes first: a version cannot be read from a broken frame.
    let mut v = ask();
    v["tern"] = json!("1.0");
    let text = String::from_utf8(frame(&v))
        .unwrap()
        .replace("\"act\":\"ASK\"", "\"act\":\"ASK\",\"act\":1");
    rejects(text.as_bytes(), ErrorClass::Parse, "/act");
}

#[test]
fn s1_envelope_fields_are_required() {
    for field in ["tern", "id", "from", "to", "thread", "reply", "act", "body"] {
        side_by_side(
            ask(),
            |v| {
                v.as_object_mut().unwrap().remove(field);
            },
            ErrorClass::Envelope,
            &format!("/{field}"),
        );
    }
}

#[test]
fn s1_envelope_strings_are_nonempty() {
    side_by_side(
        ask(),
        |v| v["tern"] = json!(""),
        ErrorClass::Envelope,
        "/tern",
    );
    side_by_side(
        ask(),
        |v| v["thread"] = json!(""),
        ErrorClass::Envelope,
        "/thread",
    );
    side_by_side(
        ask(),
        |v| v["from"] = json!(""),
        ErrorClass::Envelope,
        "/from",
    );
    side_by_side(ask(), |v| v["id"] = json!(""), ErrorClass::Envelope, "/id");
    side_by_side(
        ask(),
        |v| v["act"] = json!(""),
        ErrorClass::Envelope,
        "/act",
    );
}

#[test]
fn s1_to_is_a_nonempty_list_of_distinct_nonempty_participants() {
    side_by_side(ask(), |v| v["to"] = json!([]), ErrorClass::Envelope, "/to");
    side_by_side(
        ask(),
        |v| v["to"] = json!(["reviewer", ""]),
        ErrorClass::Envelope,
        "/to/1",
    );
    side_by_side(
        ask(),
        |v| v["to"] = json!(["reviewer", "editor", "reviewer"]),
        ErrorClass::Envelope,
        "/to/2",
    );
    side_by_side(
        ask(),
        |v| v["to"] = json!(["a:b"]),
        ErrorClass::Envelope,
        "/to/0",
    );
}

#[test]
fn s1_reply_is_null_or_a_message_reference() {
    let mut replying = ask();
    replying["reply"] = json!("reviewer:7");
    accepts(&frame(&replying));
    side_by_side(
        ask(),
        |v| v["reply"] = json!("reviewer"),
        ErrorClass::Envelope,
        "/reply",
    );
    side_by_side(
        ask(),
        |v| v["reply"] = json!(":7"),
        ErrorClass::Envelope,
        "/reply",
    );
    side_by_side(
        ask(),
        |v| v["reply"] = json!("reviewer:"),
        ErrorClass::Envelope,
        "/reply",
    );
}

#[test]
fn s1_id_prefix_must_match_from() {
    side_by_side(
        ask(),
        |v| v["id"] = json!("reviewer:1"),
        ErrorClass::Envelope,
        "/id",
    );
    side_by_side(
        ask(),
        |v| v["id"] = json!("drafter:"),
        ErrorClass::Envelope,
        "/id",
    );
    side_by_side(
        ask(),
        |v| v["id"] = json!("drafter"),
        ErrorClass::Envelope,
        "/id",
    );
    // The suffix may itself contain colons; the sender ends at the first one.
    let mut v = ask();
    v["id"] = json!("drafter:2026:1");
    accepts(&frame(&v));
}

#[test]
fn s1_sender_names_cannot_contain_colons() {
    side_by_side(
        ask(),
        |v| {
            v["from"] = json!("draft:er");
            v["id"] = json!("draft:er:1");
        },
        ErrorClass::Envelope,
        "/from",
    );
}

#[test]
fn s1_ids_are_case_sensitive() {
    side_by_side(
        ask(),
        |v| v["id"] = json!("Drafter:1"),
        ErrorClass::Envelope,
        "/id",
    );
    side_by_side(
        ask(),
        |v| v["act"] = json!("Ask"),
        ErrorClass::Envelope,
        "/act",
    );
}

#[test]
fn s1_unknown_fields_are_rejected_outside_extensions() {
    side_by_side(
        ask(),
        |v| v["priority"] = json!("high"),
        ErrorClass::Envelope,
        "/priority",
    );
    side_by_side(
        ask(),
        |v| v["body"]["urgency"] = json!(1),
        ErrorClass::Body,
        "/body/urgency",
    );
    let mut v = ask();
    v["extensions"] = json!({"priority": "high", "nested": {"any": [1, null, true]}});
    v["body"]["extensions"] = json!({"urgency": 1});
    accepts(&frame(&v));
}

#[test]
fn p_env_extensions_is_an_object_and_only_where_allowed() {
    side_by_side(
        ask(),
        |v| v["extensions"] = json!([1]),
        ErrorClass::Envelope,
        "/extensions",
    );
    side_by_side(
        ask(),
        |v| v["extensions"] = json!(null),
        ErrorClass::Envelope,
        "/extensions",
    );
    let mut tell = ask();
    tell["act"] = json!("TELL");
    tell["body"] = json!({"claims": [claim()]});
    side_by_side(
        tell,
        |v| v["body"]["claims"][0]["extensions"] = json!({}),
        ErrorClass::Body,
        "/body/claims/0/extensions",
    );
}

#[test]
fn s1_body_is_an_object() {
    side_by_side(
        ask(),
        |v| v["body"] = json!("question"),
        ErrorClass::Envelope,
        "/body",
    );
    side_by_side(
        ask(),
        |v| v["body"] = json!(null),
        ErrorClass::Envelope,
        "/body",
    );
}

#[test]
fn s2_exactly_one_known_act() {
    side_by_side(
        ask(),
        |v| v["act"] = json!("DEMAND"),
        ErrorClass::Envelope,
        "/act",
    );
    side_by_side(
        ask(),
        |v| v["act"] = json!(["ASK"]),
        ErrorClass::Envelope,
        "/act",
    );
    // The body must be the act's body.
    side_by_side(
        ask(),
        |v| v["act"] = json!("ACK"),
        ErrorClass::Body,
        "/body/question",
    );
}

#[test]
fn s1_body_before_act_is_read_the_same() {
    let v = ask();
    let mut text = String::from("{\"body\":{\"question\":\"q\"},");
    for (k, val) in v.as_object().unwrap().iter().filter(|(k, _)| *k != "body") {
        text.push_str(&format!("{}:{},", serde_json::to_string(k).unwrap(), val));
    }
    text.pop();
    text.push('}');
    accepts(text.as_bytes());
    let broken = text.replace("{\"question\":\"q\"}", "{\"question\":1}");
    rejects(broken.as_bytes(), ErrorClass::Body, "/body/question");
    // The error position still points into the frame, at the offending value.
    let err = parse_frame(broken.as_bytes()).unwrap_err();
    let p = err.position.expect("position");
    assert_eq!(p.line, 1);
    assert!(p.column > 9 && p.column <= 25, "{p:?}");
}

// ---- Section 2 and 3: bodies, claims, evidence --------------------------

fn with_body(act: &str, body: Value) -> Value {
    let mut v = ask();
    v["act"] = json!(act);
    v["body"] = body;
    v
}

#[test]
fn s2_text_fields_are_nonempty() {
    side_by_side(
        ask(),
        |v| v["body"]["question"] = json!(""),
        ErrorClass::Body,
        "/body/question",
    );
    let req = with_body(
        "REQUEST",
        json!({"action":"a","done_when":"d","constraints":["c"],"authority_ref":null}),
    );
    side_by_side(
        req.clone(),
        |v| v["body"]["constraints"][0] = json!(""),
        ErrorClass::Body,
        "/body/constraints/0",
    );
    side_by_side(
        req,
        |v| v["body"]["done_when"] = json!(""),
        ErrorClass::Body,
        "/body/done_when",
    );
}

#[test]
fn s2_challenge_kind_is_one_of_five() {
    let ch = with_body(
        "CHALLENGE",
        json!({"target":"reviewer:1","kind":"factual","reason":"r","claims":[]}),
    );
    for kind in ["factual", "inference", "scope", "feasibility", "authority"] {
        let mut v = ch.clone();
        v["body"]["kind"] = json!(kind);
        accepts(&frame(&v));
    }
    side_by_side(
        ch.clone(),
        |v| v["body"]["kind"] = json!("moral"),
        ErrorClass::Body,
        "/body/kind",
    );
    side_by_side(
        ch,
        |v| v["body"]["kind"] = json!("Factual"),
        ErrorClass::Body,
        "/body/kind",
    );
}

#[test]
fn s2_report_state_is_one_of_four() {
    let rep = with_body(
        "REPORT",
        json!({"commitment":"reviewer:1","state":"active","claims":[]}),
    );
    for state in ["active", "fulfilled", "failed"] {
        let mut v = rep.clone();
        v["body"]["state"] = json!(state);
        accepts(&frame(&v));
    }
    side_by_side(
        rep.clone(),
        |v| v["body"]["state"] = json!("done"),
        ErrorClass::Body,
        "/body/state",
    );
    side_by_side(
        rep,
        |v| v["body"]["state"] = json!("withdrawn"),
        ErrorClass::Body,
        "/body/state",
    );
}

#[test]
fn s4_blocked_report_names_the_obstacle_in_its_claims() {
    let rep = with_body(
        "REPORT",
        json!({"commitment":"reviewer:1","state":"blocked","claims":[claim()],"next":"n"}),
    );
    side_by_side(
        rep.clone(),
        |v| v["body"]["claims"] = json!([]),
        ErrorClass::Body,
        "/body/claims",
    );
    side_by_side(
        rep,
        |v| v["body"]["next"] = json!(null),
        ErrorClass::Body,
        "/body/next",
    );
}

#[test]
fn p_body_tell_states_at_least_one_claim() {
    let tell = with_body("TELL", json!({"claims":[claim()]}));
    side_by_side(
        tell,
        |v| v["body"]["claims"] = json!([]),
        ErrorClass::Body,
        "/body/claims",
    );
}

#[test]
fn s3_claim_has_exactly_its_six_fields() {
    let tell = with_body("TELL", json!({"claims":[claim()]}));
    for field in [
        "text",
        "basis",
        "confidence",
        "scope",
        "evidence",
        "alternatives",
    ] {
        side_by_side(
            tell.clone(),
            |v| {
                v["body"]["claims"][0]
                    .as_object_mut()
                    .unwrap()
                    .remove(field);
            },
            ErrorClass::Body,
            &format!("/body/claims/0/{field}"),
        );
    }
    side_by_side(
        tell,
        |v| v["body"]["claims"][0]["weight"] = json!(1),
        ErrorClass::Body,
        "/body/claims/0/weight",
    );
}

#[test]
fn s3_basis_and_confidence_are_closed_vocabularies() {
    let tell = with_body("TELL", json!({"claims":[claim()]}));
    for basis in ["observed", "inferred", "reported", "assumed"] {
        let mut v = tell.clone();
        v["body"]["claims"][0]["basis"] = json!(basis);
        accepts(&frame(&v));
    }
    for confidence in ["low", "medium", "high", "unspecified"] {
        let mut v = tell.clone();
        v["body"]["claims"][0]["confidence"] = json!(confidence);
        accepts(&frame(&v));
    }
    side_by_side(
        tell.clone(),
        |v| v["body"]["claims"][0]["basis"] = json!("guessed"),
        ErrorClass::Body,
        "/body/claims/0/basis",
    );
    // Confidence is qualitative, never a number or probability.
    side_by_side(
        tell,
        |v| v["body"]["claims"][0]["confidence"] = json!(0.9),
        ErrorClass::Body,
        "/body/claims/0/confidence",
    );
}

#[test]
fn s3_claim_evidence_lists_evidence_ids() {
    let tell = with_body("TELL", json!({"claims":[claim()]}));
    let mut v = tell.clone();
    v["body"]["claims"][0]["evidence"] = json!(["ev:review-excerpt"]);
    accepts(&frame(&v));
    side_by_side(
        tell.clone(),
        |v| v["body"]["claims"][0]["evidence"] = json!(["review-excerpt"]),
        ErrorClass::Body,
        "/body/claims/0/evidence/0",
    );
    side_by_side(
        tell,
        |v| v["body"]["claims"][0]["evidence"] = json!(["ev:"]),
        ErrorClass::Body,
        "/body/claims/0/evidence/0",
    );
}

fn evidence() -> Value {
    json!({"id":"ev:1","source":"s","collected_at":"2026-11-30T12:00:00Z","method":"m","result":"r"})
}

#[test]
fn s3_evidence_objects_have_their_five_fields() {
    let mut v = ask();
    v["evidence"] = json!([evidence()]);
    for field in ["id", "source", "collected_at", "method", "result"] {
        side_by_side(
            v.clone(),
            |v| {
                v["evidence"][0].as_object_mut().unwrap().remove(field);
            },
            ErrorClass::Envelope,
            &format!("/evidence/0/{field}"),
        );
    }
    side_by_side(
        v.clone(),
        |v| v["evidence"][0]["hash"] = json!("h"),
        ErrorClass::Envelope,
        "/evidence/0/hash",
    );
    side_by_side(
        v,
        |v| v["evidence"] = json!(null),
        ErrorClass::Envelope,
        "/evidence",
    );
}

#[test]
fn s3_collected_at_is_rfc3339() {
    let mut v = ask();
    v["evidence"] = json!([evidence()]);
    for good in [
        "2026-11-30T12:00:00+01:00",
        "2026-11-30T12:00:00.123456Z",
        "2024-02-29T23:59:59-05:30",
        // RFC 3339 section 5.6: "T" and "Z" may be lower case.
        "2026-11-30t12:00:00Z",
        "2026-11-30T12:00:00z",
        "2026-11-30t12:00:00.5z",
    ] {
        let mut g = v.clone();
        g["evidence"][0]["collected_at"] = json!(good);
        accepts(&frame(&g));
    }
    for bad in [
        "2026-11-30",
        "2026-11-30 12:00:00Z",
        "2026-11-30T12:00:00",
        "2026-11-30x12:00:00Z",
        "2026-11-30T12:00:00x",
        "2026-13-01T00:00:00Z",
        "2025-02-29T00:00:00Z",
        "yesterday",
    ] {
        side_by_side(
            v.clone(),
            |v| v["evidence"][0]["collected_at"] = json!(bad),
            ErrorClass::Envelope,
            "/evidence/0/collected_at",
        );
    }
}

#[test]
fn p_env_evidence_ids_are_distinct_within_a_message() {
    let mut v = ask();
    let mut second = evidence();
    second["id"] = json!("ev:2");
    v["evidence"] = json!([evidence(), second]);
    side_by_side(
        v,
        |v| v["evidence"][1]["id"] = json!("ev:1"),
        ErrorClass::Envelope,
        "/evidence/1/id",
    );
}

// ---- Section 4: COMMIT, REPORT, REVISE bodies ----------------------------

fn commit() -> Value {
    with_body(
        "COMMIT",
        json!({"request":"reviewer:1","action":"a","deliverable":"d","done_when":"w","due":null,
               "conditions":[],"authority_ref":null}),
    )
}

#[test]
fn s4_commit_references_a_request_and_may_have_no_deadline() {
    side_by_side(
        commit(),
        |v| v["body"]["request"] = json!(null),
        ErrorClass::Body,
        "/body/request",
    );
    side_by_side(
        commit(),
        |v| v["body"]["due"] = json!("next week"),
        ErrorClass::Body,
        "/body/due",
    );
    let mut dated = commit();
    dated["body"]["due"] = json!("2026-12-24T17:00:00Z");
    accepts(&frame(&dated));
    side_by_side(
        commit(),
        |v| {
            v["body"].as_object_mut().unwrap().remove("due");
        },
        ErrorClass::Body,
        "/body/due",
    );
}

#[test]
fn s5_authority_ref_is_null_or_a_reference() {
    let mut granted = commit();
    granted["body"]["authority_ref"] = json!("grant:review-2026");
    accepts(&frame(&granted));
    side_by_side(
        commit(),
        |v| v["body"]["authority_ref"] = json!(""),
        ErrorClass::Body,
        "/body/authority_ref",
    );
    side_by_side(
        commit(),
        |v| v["body"]["authority_ref"] = json!({"scope": "all"}),
        ErrorClass::Body,
        "/body/authority_ref",
    );
}

#[test]
fn s4_request_replaces_is_optional_but_never_null() {
    let req = with_body(
        "REQUEST",
        json!({"action":"a","done_when":"d","constraints":[],"authority_ref":null,"replaces":"reviewer:1"}),
    );
    side_by_side(
        req.clone(),
        |v| v["body"]["replaces"] = json!(null),
        ErrorClass::Body,
        "/body/replaces",
    );
    side_by_side(
        req,
        |v| v["body"]["replaces"] = json!("reviewer"),
        ErrorClass::Body,
        "/body/replaces",
    );
}

fn revise() -> Value {
    with_body(
        "REVISE",
        json!({"target":"drafter:1","previous":"drafter:1","mode":"withdraw","replacement":null,
               "impact":[{"commitment":"reviewer:1","assessment":"paused","reason":"r"}]}),
    )
}

#[test]
fn s4_revise_mode_is_replace_or_withdraw() {
    side_by_side(
        revise(),
        |v| v["body"]["mode"] = json!("amend"),
        ErrorClass::Body,
        "/body/mode",
    );
}

#[test]
fn s4_replacement_is_a_body_when_replacing_and_null_when_withdrawing() {
    side_by_side(
        revise(),
        |v| v["body"]["replacement"] = json!({"question": "q"}),
        ErrorClass::Body,
        "/body/replacement",
    );
    let mut replacing = revise();
    replacing["body"]["mode"] = json!("replace");
    replacing["body"]["replacement"] = json!({"question": "q"});
    side_by_side(
        replacing.clone(),
        |v| v["body"]["replacement"] = json!(null),
        ErrorClass::Body,
        "/body/replacement",
    );
    side_by_side(
        replacing,
        |v| v["body"]["replacement"] = json!("q"),
        ErrorClass::Body,
        "/body/replacement",
    );
}

#[test]
fn s4_every_revise_includes_impact() {
    side_by_side(
        revise(),
        |v| {
            v["body"].as_object_mut().unwrap().remove("impact");
        },
        ErrorClass::Body,
        "/body/impact",
    );
    let mut empty = revise();
    empty["body"]["impact"] = json!([]);
    accepts(&frame(&empty));
    side_by_side(
        revise(),
        |v| v["body"]["impact"][0]["assessment"] = json!("cancelled"),
        ErrorClass::Body,
        "/body/impact/0/assessment",
    );
    side_by_side(
        revise(),
        |v| v["body"]["impact"][0]["commitment"] = json!(null),
        ErrorClass::Body,
        "/body/impact/0/commitment",
    );
    side_by_side(
        revise(),
        |v| {
            v["body"]["impact"][0]
                .as_object_mut()
                .unwrap()
                .remove("reason");
        },
        ErrorClass::Body,
        "/body/impact/0/reason",
    );
}

#[test]
fn p_body_every_act_has_its_schema() {
    let valid = [
        ("PROPOSE", json!({"proposal":"p","request":null})),
        ("PROPOSE", json!({"proposal":"p","request":"drafter:1"})),
        ("ACK", json!({"target":"reviewer:2"})),
        (
            "CHALLENGE",
            json!({"target":"reviewer:2","kind":"scope","reason":"r","claims":[claim()]}),
        ),
    ];
    for (act, body) in valid {
        accepts(&frame(&with_body(act, body)));
    }
    side_by_side(
        with_body("PROPOSE", json!({"proposal":"p","request":null})),
        |v| {
            v["body"].as_object_mut().unwrap().remove("request");
        },
        ErrorClass::Body,
        "/body/request",
    );
    side_by_side(
        with_body("ACK", json!({"target":"reviewer:2"})),
        |v| v["body"]["target"] = json!("reviewer"),
        ErrorClass::Body,
        "/body/target",
    );
}

#[test]
fn p_err_positions_point_into_the_frame() {
    let text = "{\"tern\":\"0.1\",\n\"id\":\"a:1\",\"from\":\"a\",\"to\":[\"b\"],\"thread\":\"t\",\"reply\":null,\"act\":\"ASK\",\n\"body\":{\"question\":7}}";
    let err = parse_frame(text_frame(text).as_slice()).unwrap_err();
    assert_eq!(
        (err.class, err.pointer.as_str()),
        (ErrorClass::Body, "/body/question")
    );
    let p = err.position.unwrap();
    assert_eq!(p.line, 3);
    assert!(p.column >= 19, "{p:?}");
}

// ---- Precedence and key order (found in review) -------------------------

/// Writes `v` with `body` as the first key, the order in which the body's
/// schema is not yet known when it is read.
fn body_first(v: &Value) -> String {
    let mut text = format!("{{\"body\":{}", v["body"]);
    for (k, val) in v.as_object().unwrap().iter().filter(|(k, _)| *k != "body") {
        text.push_str(&format!(",{}:{}", serde_json::to_string(k).unwrap(), val));
    }
    text.push('}');
    text
}

#[test]
fn p_json_6_depth_limit_is_exact_and_independent_of_key_order() {
    use tern_model::wire::MAX_DEPTH;
    // A question of nested arrays inside an extension of the body:
    // message (1) + body (2) + extensions (3) + arrays.
    let with_depth = |total: usize| {
        let arrays = total - 3;
        let mut v = ask();
        v["body"]["extensions"] = json!({"x": 0});
        let nested = format!("{}0{}", "[".repeat(arrays), "]".repeat(arrays));
        let mut v2: Value = v.clone();
        v2["body"]["extensions"]["x"] = json!("PLACEHOLDER");
        let act_first = serde_json::to_string(&v2)
            .unwrap()
            .replace("\"PLACEHOLDER\"", &nested);
        let body_first = body_first(&v2).replace("\"PLACEHOLDER\"", &nested);
        (act_first, body_first)
    };
    let (a, b) = with_depth(MAX_DEPTH);
    accepts(a.as_bytes());
    accepts(b.as_bytes());
    let (a, b) = with_depth(MAX_DEPTH + 1);
    for text in [a, b] {
        let err = parse_frame(text.as_bytes()).unwrap_err();
        assert_eq!(err.class, ErrorClass::Parse, "{err}");
        assert!(err.message.contains("nesting deeper than 127"), "{err}");
    }
}

#[test]
fn p_err_envelope_errors_come_before_body_errors_in_any_key_order() {
    let mut v = ask();
    v["id"] = json!("reviewer:1");
    v["body"]["question"] = json!("");
    rejects(&frame(&v), ErrorClass::Envelope, "/id");
    rejects(body_first(&v).as_bytes(), ErrorClass::Envelope, "/id");

    let mut v = ask();
    v.as_object_mut().unwrap().remove("thread");
    v["body"]["question"] = json!(3);
    rejects(&frame(&v), ErrorClass::Envelope, "/thread");
    rejects(body_first(&v).as_bytes(), ErrorClass::Envelope, "/thread");

    let mut v = ask();
    v["to"] = json!(["x", "x"]);
    v["body"] = json!({"nonsense": 1});
    rejects(&frame(&v), ErrorClass::Envelope, "/to/1");
    rejects(body_first(&v).as_bytes(), ErrorClass::Envelope, "/to/1");
}

#[test]
fn s1_vocabulary_values_are_strings_not_objects() {
    side_by_side(
        ask(),
        |v| v["act"] = json!({"ASK": null}),
        ErrorClass::Envelope,
        "/act",
    );
    let tell = with_body("TELL", json!({"claims":[claim()]}));
    side_by_side(
        tell.clone(),
        |v| v["body"]["claims"][0]["basis"] = json!({"observed": null}),
        ErrorClass::Body,
        "/body/claims/0/basis",
    );
    side_by_side(
        tell,
        |v| v["body"]["claims"][0]["confidence"] = json!(["high"]),
        ErrorClass::Body,
        "/body/claims/0/confidence",
    );
    side_by_side(
        revise(),
        |v| v["body"]["mode"] = json!({"withdraw": null}),
        ErrorClass::Body,
        "/body/mode",
    );
}

#[test]
fn p_eq_3_zero_and_negative_zero_are_one_value_with_one_spelling() {
    let mut a = ask();
    a["extensions"] = json!({"n": 0});
    let text = String::from_utf8(frame(&a)).unwrap();
    let zero = parse_frame(text.as_bytes()).unwrap();
    let negative = parse_frame(text.replace("\"n\":0", "\"n\":-0.0").as_bytes()).unwrap();
    assert_eq!(zero, negative);
    assert_eq!(zero.to_json_line(), negative.to_json_line());
}

#[test]
fn p_err_2_a_strict_json_error_in_a_body_before_act_outranks_the_envelope() {
    // The body comes first, so it is read as raw text after the envelope;
    // the parse error inside it must still win, whatever else is wrong.
    let frames: [(&str, &str); 5] = [
        (
            r#"{"body":{"question":"x","question":"x"},"act":"ASK","reply":null,"thread":"t","to":["bob","bob"],"from":"alice","id":"alice:1","tern":"0.1"}"#,
            "/body/question",
        ),
        (
            r#"{"body":{"question":"x","question":"x"},"act":"ASK","reply":null,"thread":"t","to":["bob"],"from":"alice","id":"carol:1","tern":"0.1"}"#,
            "/body/question",
        ),
        (
            r#"{"body":{"question":"x","question":"x"},"act":"ASK","reply":null,"thread":"t","to":["bob"],"from":"alice","id":"alice:1","tern":"0.2"}"#,
            "/body/question",
        ),
        (
            r#"{"body":{"question":"x","extensions":{"n":1e999}},"act":"ASK","reply":null,"thread":"t","to":["bob","bob"],"from":"alice","id":"alice:1","tern":"0.1"}"#,
            "/body/extensions/n",
        ),
        (
            r#"{"body":{"question":"\ud800"},"act":"ASK","reply":null,"thread":"t","to":["bob"],"from":"alice","id":"carol:1","tern":"0.1"}"#,
            "/body/question",
        ),
    ];
    for (text, pointer) in frames {
        rejects(text.as_bytes(), ErrorClass::Parse, pointer);
    }
}

/// The ASK of [`ask`] with `extensions` holding `{"n": <literal>}`, as text.
fn with_number(literal: &str) -> Vec<u8> {
    let mut a = ask();
    a["extensions"] = json!({"n": 0});
    String::from_utf8(frame(&a))
        .unwrap()
        .replace("\"n\":0", &format!("\"n\":{literal}"))
        .into_bytes()
}

#[track_caller]
fn number_line(literal: &str) -> String {
    parse_frame(&with_number(literal)).unwrap().to_json_line()
}

#[test]
fn p_eq_3_numbers_compare_by_exact_decimal_value() {
    let equal_groups: [&[&str]; 5] = [
        &["1", "1.0", "1e0", "10e-1", "0.1e1", "100E-2", "0.00001e+5"],
        &["0", "-0", "0.0", "-0.0e-3", "0e400"],
        &[
            "9007199254740993",
            "9007199254740993.000",
            "9.007199254740993e15",
        ],
        &["1e-400", "10e-401", "0.0001e-396"],
        &[
            "123456789012345678901234567890",
            "1.2345678901234567890123456789e29",
        ],
    ];
    for group in equal_groups {
        let first = parse_frame(&with_number(group[0])).unwrap();
        for other in &group[1..] {
            assert_eq!(first, parse_frame(&with_number(other)).unwrap(), "{other}");
        }
    }
    // Pairs that one binary64 would hold: different values all the same.
    for (a, b) in [
        ("9007199254740992", "9007199254740993"),
        ("0.1", "0.10000000000000001"),
        ("1e-400", "0"),
        ("1e-400", "2e-400"),
        (
            "123456789012345678901234567890",
            "123456789012345678901234567891",
        ),
        ("1", "-1"),
    ] {
        assert_ne!(
            parse_frame(&with_number(a)).unwrap(),
            parse_frame(&with_number(b)).unwrap(),
            "{a} {b}"
        );
    }
}

#[test]
fn p_eq_3_a_member_named_like_the_readers_number_token_stays_an_object() {
    let a = parse_frame(&with_number(r#"{"$serde_json::private::Number":"1"}"#)).unwrap();
    assert_ne!(a, parse_frame(&with_number("1")).unwrap());
    assert!(a
        .to_json_line()
        .contains(r#""n":{"$serde_json::private::Number":"1"}"#));
}

#[test]
fn p_eq_3_numbers_print_one_canonical_spelling_of_their_value() {
    for (literal, canonical) in [
        ("1.0", "1"),
        ("-0", "0"),
        ("-0.0", "0"),
        ("1e16", "10000000000000000"),
        ("9007199254740992.0", "9007199254740992"),
        ("9007199254740993", "9007199254740993"),
        ("1e20", "100000000000000000000"),
        ("1e21", "1e+21"),
        ("-1.50", "-1.5"),
        ("12.3400e1", "123.4"),
        ("0.000001", "0.000001"),
        ("1e-7", "1e-7"),
        ("-25e-8", "-2.5e-7"),
        ("1.5e300", "1.5e+300"),
        ("1e-400", "1e-400"),
        (
            "123456789012345678901234567890",
            "1.2345678901234567890123456789e+29",
        ),
    ] {
        let line = number_line(literal);
        assert!(
            line.contains(&format!("\"n\":{canonical}}}")),
            "{literal} printed as {line}"
        );
        // The spelling reads back as the same value.
        assert_eq!(number_line(canonical), line, "{literal}");
    }
}

#[test]
fn p_json_8_overflow_is_rejected_and_underflow_kept_exact() {
    // Overflow: rejected whatever the spelling, huge exponents included.
    let huge = format!("1e{}", "9".repeat(60));
    for bad in ["1e309", "-1.8e308", "17976931348623159e292", huge.as_str()] {
        rejects(&with_number(bad), ErrorClass::Parse, "/extensions/n");
    }
    // The largest finite binary64 and numbers just below its rounding edge.
    for good in ["1.7976931348623157e308", "-1.7976931348623158e308"] {
        accepts(&with_number(good));
    }
    // Underflow, even with an exponent far beyond i128, is accepted.
    let tiny = format!("1e-{}", "9".repeat(60));
    accepts(&with_number(&tiny));
    assert_ne!(
        parse_frame(&with_number(&tiny)).unwrap(),
        parse_frame(&with_number("0")).unwrap()
    );
}
