//! Sections 2 and 3: bodies, claims, evidence.

use super::*;

// ---- Section 2 and 3: bodies, claims, evidence --------------------------

pub(crate) fn with_body(act: &str, body: Value) -> Value {
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

pub(crate) fn evidence() -> Value {
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
