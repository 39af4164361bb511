//! Section 1: version and envelope.

use super::*;

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
