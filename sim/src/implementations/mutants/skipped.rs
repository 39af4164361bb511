//! For the `skips-*` mutants: a receiver whose wire layer lacks the check of
//! one rule, and so takes a frame that breaks only that rule as valid.
//!
//! The reference's wire layer knows no rule numbers in its errors, so the
//! mutant recognises "the check I lack" from where and how the strict
//! reader refused the frame. The test below holds each recogniser to the
//! frames of its own kind and to none of the others', so that every such
//! mutant is wrong in exactly one situation of the catalogue.

use tern_model::{ErrorClass, WireError};

use crate::catalogue::malformed::Malformation;

/// Whether the strict reader's refusal `err` of `frame` is the one the
/// check against `kind` gives: the check the mutant lacks.
pub(super) fn recognises(kind: Malformation, frame: &[u8], err: &WireError) -> bool {
    let ptr = err.pointer.as_str();
    let msg = err.message.as_str();
    let segments = ptr.split('/').count() - 1;
    let last_is_index = ptr
        .rsplit('/')
        .next()
        .is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()));
    let contains = |needle: &[u8]| frame.windows(needle.len()).any(|w| w == needle);
    let duplicate = err.class == ErrorClass::Parse && msg.starts_with("duplicate key");
    match (kind, err.class) {
        (Malformation::Truncated, ErrorClass::Parse) => msg.starts_with("EOF while parsing"),
        (Malformation::DuplicateClaimKey, _) => duplicate && ptr.starts_with("/body/claims/"),
        (Malformation::DuplicateEvidenceKey, _) => duplicate && ptr.starts_with("/evidence/"),
        (Malformation::DuplicateExtensionsKey, _) => {
            duplicate && ptr.starts_with("/extensions/") && segments == 2
        }
        (Malformation::DuplicateNestedKey, _) => {
            duplicate && ptr.starts_with("/extensions/") && segments > 2
        }
        (Malformation::DuplicateAfterUnescape, _) => duplicate && contains(b"\"\\u00"),
        (Malformation::LoneSurrogate, ErrorClass::Parse) => msg.contains("escape"),
        (Malformation::OverlongUtf8, ErrorClass::Parse) => {
            msg.starts_with("invalid UTF-8") && contains(&[0xc0, 0xaf])
        }
        (Malformation::VersionNotString, ErrorClass::Envelope) => {
            ptr == "/tern" && msg.starts_with("invalid type")
        }
        (Malformation::VersionThreeParts, ErrorClass::Version) => msg.contains("`0.1.0`"),
        (Malformation::VersionMissing, ErrorClass::Envelope) => {
            ptr == "/tern" && msg.starts_with("missing field")
        }
        (Malformation::UnknownEnvelopeField, ErrorClass::Envelope) => {
            msg.starts_with("unknown field") && segments == 1
        }
        (Malformation::TrailingValue, ErrorClass::Parse) => msg == "trailing characters",
        (Malformation::ByteOrderMark, ErrorClass::Parse) => frame.starts_with(&[0xef, 0xbb, 0xbf]),
        (Malformation::NumberOverflow, ErrorClass::Parse) => {
            msg == "number out of range" && contains(b"e+9999")
        }
        (Malformation::NestingTooDeep, ErrorClass::Parse) => msg.starts_with("nesting deeper"),
        (Malformation::Oversized, ErrorClass::Parse) => msg.contains("exceeds the limit"),
        (Malformation::BadParticipant, ErrorClass::Envelope) => {
            ptr.starts_with("/to/") && msg.starts_with("participant name")
        }
        (Malformation::BadReference, ErrorClass::Envelope) => {
            ptr == "/reply" && msg.contains("is not a message reference")
        }
        (Malformation::ForeignId, ErrorClass::Envelope) => {
            ptr == "/id" && msg.contains("not in the namespace")
        }
        (Malformation::BadRecipients, ErrorClass::Envelope) => {
            (ptr == "/to" && msg.contains("nonempty list")) || msg.contains("listed twice")
        }
        (Malformation::EmptyThread, ErrorClass::Envelope) => ptr == "/thread",
        (Malformation::ReplyMissing, ErrorClass::Envelope) => {
            ptr == "/reply" && msg.starts_with("missing field")
        }
        (Malformation::UnknownAct, ErrorClass::Envelope) => ptr == "/act",
        (Malformation::BodyNotObject, ErrorClass::Envelope) => {
            ptr == "/body" && msg.starts_with("invalid type")
        }
        (Malformation::EvidenceIdRepeated, ErrorClass::Envelope) => msg.contains("defined twice"),
        (Malformation::ExtensionsNotObject, ErrorClass::Envelope) => {
            ptr == "/extensions" && msg.contains("must be an object")
        }
        (Malformation::EmptyText, ErrorClass::Body) => {
            msg == "must be a nonempty string" && !ptr.ends_with("/authority_ref")
        }
        (Malformation::NullOptional, ErrorClass::Body) => {
            msg.ends_with("found null") || msg.starts_with("invalid type: null")
        }
        (Malformation::BadListElement, ErrorClass::Body) => {
            last_is_index && msg.starts_with("invalid type: integer `7`")
        }
        (Malformation::MiscasedEnumeration, ErrorClass::Body) => msg.starts_with("unknown variant"),
        (Malformation::MissingBodyField, ErrorClass::Body) => msg.starts_with("missing field"),
        (Malformation::ExtraObjectMember, ErrorClass::Body | ErrorClass::Envelope) => {
            msg.starts_with("unknown field `note`")
        }
        (Malformation::BadTimestampOrEvidenceId, ErrorClass::Body | ErrorClass::Envelope) => {
            (msg.contains("is not an RFC 3339 timestamp")) || msg.contains("is not an evidence ID")
        }
        (Malformation::EmptyAuthority, ErrorClass::Body) => {
            ptr.ends_with("/authority_ref") && msg == "must be a nonempty string"
        }
        (Malformation::TypeConverted, ErrorClass::Body) => {
            !last_is_index
                && (msg.starts_with("invalid type: integer `42`")
                    || msg.starts_with("invalid type: string"))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::malformed::VARIANTS;
    use crate::catalogue::situations::Situation;
    use crate::implementations::mutants::{Kin, Mutant};
    use serde_json::{json, Value};

    fn honest() -> Vec<Value> {
        let claim = json!({"text": "It is done.", "basis": "observed", "confidence": "high",
                           "scope": "This run.", "evidence": ["ev:log"], "alternatives": []});
        let m = |act: &str, body: Value| {
            json!({"tern": "0.1", "id": "alice:1", "from": "alice", "to": ["bob"],
                   "thread": "plan", "reply": null, "act": act, "body": body})
        };
        vec![
            m("ASK", json!({"question": "Is it done?"})),
            m("TELL", json!({"claims": [claim.clone()]})),
            m(
                "REQUEST",
                json!({"action": "Deploy.", "done_when": "It runs.",
                                "constraints": ["Only staging."], "authority_ref": "grant:ops"}),
            ),
            m(
                "COMMIT",
                json!({"request": "bob:1", "action": "Deploy.", "deliverable": "A release.",
                               "done_when": "It runs.", "due": null, "conditions": [],
                               "authority_ref": null}),
            ),
            m(
                "REPORT",
                json!({"commitment": "alice:0", "state": "active", "claims": [claim]}),
            ),
            m(
                "REVISE",
                json!({"target": "alice:0", "previous": "alice:0", "mode": "withdraw",
                               "replacement": null, "impact": []}),
            ),
            m(
                "CHALLENGE",
                json!({"target": "bob:1", "kind": "scope", "reason": "No.", "claims": []}),
            ),
        ]
    }

    /// Each `skips-*` mutant recognises the frames of its own kind, in
    /// every variant, and those of no other kind: it is wrong in one
    /// situation only.
    #[test]
    fn each_recogniser_knows_its_own_kind_and_no_other() {
        let skipping: Vec<Malformation> = Mutant::ALL
            .iter()
            .filter(|m| m.kin() == Kin::SkipsCheck)
            .map(|m| match m.situation() {
                Situation::Malformed(k) => k,
                other => panic!("{m:?} skips a check but needs {other:?}"),
            })
            .collect();
        assert!(skipping.len() >= 30);
        for &kind in Malformation::ALL {
            for m in honest() {
                for variant in 0..VARIANTS {
                    let Some(frame) = kind.apply(&m, true, variant) else {
                        continue;
                    };
                    let err = tern_model::parse_frame(&frame).expect_err("refused");
                    for &k in &skipping {
                        assert_eq!(
                            recognises(k, &frame, &err),
                            k == kind,
                            "the check of {k:?} on a frame broken by {kind:?} (variant {variant}, {}): {err}",
                            m["act"]
                        );
                    }
                }
            }
        }
    }
}
