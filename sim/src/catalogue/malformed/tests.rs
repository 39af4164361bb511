use std::collections::BTreeSet;

use serde_json::{json, Value};
use tern_model::ledger::RejectClass;
use tern_model::wire::{MAX_DEPTH, MAX_FRAME_BYTES};

use super::{Malformation, VARIANTS};

fn claim() -> Value {
    json!({"text": "It is done.", "basis": "observed", "confidence": "high",
           "scope": "This run.", "evidence": ["ev:log"], "alternatives": []})
}

fn message(act: &str, body: Value) -> Value {
    json!({"tern": "0.1", "id": "alice:1", "from": "alice", "to": ["bob"], "thread": "plan",
           "reply": null, "act": act, "body": body})
}

/// An honest message of every act, one with evidence, one renewal.
fn honest() -> Vec<Value> {
    let mut tell = message("TELL", json!({"claims": [claim()]}));
    tell["evidence"] = json!([{"id": "ev:log", "source": "the run's own log",
                               "collected_at": "2026-11-30T12:00:00Z", "method": "inspection",
                               "result": "As stated."}]);
    vec![
        message("ASK", json!({"question": "Is it done?"})),
        tell,
        message(
            "PROPOSE",
            json!({"proposal": "Do it tomorrow.", "request": "bob:1"}),
        ),
        message(
            "REQUEST",
            json!({"action": "Deploy.", "done_when": "It runs.", "constraints": ["Only staging."],
                   "authority_ref": "grant:ops"}),
        ),
        message(
            "REQUEST",
            json!({"action": "Deploy.", "done_when": "It runs.", "constraints": [],
                   "authority_ref": null, "replaces": "bob:2"}),
        ),
        message(
            "COMMIT",
            json!({"request": "bob:1", "action": "Deploy.", "deliverable": "A release.",
                   "done_when": "It runs.", "due": "2026-12-01T00:00:00Z",
                   "conditions": ["Staging is up."], "authority_ref": "grant:ops"}),
        ),
        message(
            "REPORT",
            json!({"commitment": "alice:0", "state": "blocked", "claims": [claim()],
                   "next": "Wait."}),
        ),
        message(
            "REVISE",
            json!({"target": "alice:0", "previous": "alice:0", "mode": "replace",
                   "replacement": {"question": "Is it really done?"},
                   "impact": [{"commitment": "bob:3", "assessment": "paused", "reason": "Changed."}]}),
        ),
        message("ACK", json!({"target": "bob:1"})),
        message(
            "CHALLENGE",
            json!({"target": "bob:1", "kind": "factual", "reason": "Not so.", "claims": []}),
        ),
    ]
}

/// The classes a frame breaking `rule` may be refused with: the wire
/// layer's order of checks (P-ERR) puts strict JSON first, then the
/// version, the envelope (top-level evidence included), then the body.
fn classes_for(rule: &str) -> &'static [RejectClass] {
    if rule.starts_with("P-JSON") {
        &[RejectClass::Parse]
    } else if rule == "P-ENV-2" {
        &[RejectClass::Version, RejectClass::Envelope]
    } else if rule.starts_with("P-ENV") {
        &[RejectClass::Envelope]
    } else {
        &[RejectClass::Body, RejectClass::Envelope]
    }
}

/// Every way of breaking a frame, in every variant, on every act it fits,
/// yields a frame the strict parser refuses, with a class its rule allows;
/// a body rule is refused as `envelope` only in the top-level evidence.
#[test]
fn every_malformation_is_refused_by_the_rule_it_names() {
    for m in honest() {
        let frame = serde_json::to_vec(&m).expect("serialises");
        assert!(
            tern_model::parse_frame(&frame).is_ok(),
            "the honest {} is valid: {:?}",
            m["act"],
            tern_model::parse_frame(&frame).err()
        );
    }
    for &kind in Malformation::ALL {
        let mut applied = [false, false];
        for m in honest() {
            for (level, profile) in [true, false].into_iter().enumerate() {
                for variant in 0..VARIANTS {
                    let Some(frame) = kind.apply(&m, profile, variant) else {
                        continue;
                    };
                    applied[level] = true;
                    let what = format!(
                        "{kind:?} variant {variant} of {} (profile {profile})",
                        m["act"]
                    );
                    let err = tern_model::parse_frame(&frame)
                        .err()
                        .unwrap_or_else(|| panic!("{what} was accepted"));
                    let class = RejectClass::from(err.class);
                    assert!(
                        classes_for(kind.rules()[0]).contains(&class),
                        "{what}: refused as {class:?}: {err}"
                    );
                    if kind.rules()[0].starts_with("P-BODY") && class == RejectClass::Envelope {
                        assert!(
                            err.pointer.as_str().starts_with("/evidence"),
                            "{what}: {err}"
                        );
                    }
                }
            }
        }
        assert!(applied[0], "{kind:?} breaks no honest message");
        assert_eq!(
            applied[1],
            kind.seed_rule(),
            "{kind:?} is sent at core exactly when the seed states its rule"
        );
    }
}

/// The wire rules of the profile that a frame cannot break: each says
/// what is allowed, not what is refused.
const PERMISSIVE: [&str; 1] = [
    // Cited evidence need not be carried: there is nothing to refuse.
    "P-ENV-13",
];

/// Every wire rule of the profile can be broken by the generator, and every
/// rule a way of breaking names is one of the profile's.
#[test]
fn every_wire_rule_of_the_profile_has_a_way_of_breaking_it() {
    let profile = include_str!("../../../../docs/profile.md");
    let stated: BTreeSet<String> = profile
        .lines()
        .filter_map(|l| l.strip_prefix("| "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|id| {
            ["P-JSON-", "P-ENV-", "P-BODY-"]
                .iter()
                .any(|p| id.starts_with(p))
        })
        .map(str::to_owned)
        .collect();
    assert!(stated.len() >= 40, "the profile's wire rules: {stated:?}");
    let broken: BTreeSet<String> = Malformation::ALL
        .iter()
        .flat_map(|k| k.rules())
        .map(|r| (*r).to_owned())
        .collect();
    for rule in &stated {
        assert!(
            broken.contains(rule) || PERMISSIVE.contains(&rule.as_str()),
            "no way of breaking a frame breaks {rule}"
        );
    }
    for rule in &broken {
        assert!(stated.contains(rule), "{rule} is not a rule of the profile");
    }
}

/// The size and depth limits are broken by one unit, not by a margin: the
/// same frame one unit smaller is valid.
#[test]
fn the_limits_are_broken_at_their_boundary() {
    let ask = &honest()[0];
    let over = Malformation::Oversized
        .apply(ask, true, 0)
        .expect("applies");
    assert_eq!(over.len(), MAX_FRAME_BYTES + 1);
    let text = String::from_utf8(over).expect("UTF-8");
    let at = text.find("xx").expect("padding");
    let just = format!("{}{}", &text[..at], &text[at + 1..]);
    assert!(tern_model::parse_frame(just.as_bytes()).is_ok());

    let deep = Malformation::NestingTooDeep
        .apply(ask, true, 0)
        .expect("applies");
    let text = String::from_utf8(deep).expect("UTF-8");
    // The arrays inside `extensions`, and `to`.
    assert_eq!(text.matches('[').count(), (MAX_DEPTH - 1) + 1);
    let just = text.replacen('[', "", 1).replacen(']', "", 1);
    assert!(
        tern_model::parse_frame(just.as_bytes()).is_ok(),
        "{MAX_DEPTH} levels are allowed"
    );
}

#[test]
fn the_step_number_keeps_the_kinds_of_earlier_trace_formats() {
    assert_eq!(Malformation::of(0), Malformation::DuplicateEnvelopeKey);
    assert_eq!(Malformation::of(3), Malformation::Truncated);
    assert_eq!(Malformation::of(5), Malformation::UnknownBodyField);
    assert_eq!(Malformation::of(20), Malformation::NumberOverflow);
    assert_eq!(Malformation::variant_of(20), 0);
    let n = Malformation::ALL.len() as u8;
    assert_eq!(Malformation::of(n), Malformation::DuplicateEnvelopeKey);
    assert_eq!(Malformation::variant_of(n + 3), 1);
    assert!(Malformation::ALL.len() * VARIANTS <= 256, "`how` is a u8");
}
