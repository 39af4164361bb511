//! Section 4: COMMIT, REPORT, REVISE bodies, and precedence and key order.

use super::*;

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
