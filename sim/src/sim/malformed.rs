//! Breaking an honest message, one wire rule at a time.
//!
//! Each way of breaking a frame names the profile rules it breaks and
//! whether the seed itself states them. At `--level core` only the seed's
//! rules are broken, so that a receiver that reads the profile's silent spots
//! another way is never failed for it.
//!
//! Kinds 0 to 5 keep the numbers they had in trace format 2, so recorded
//! traces replay the same frames.

use serde_json::Value;

/// One way of breaking a message on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Malformation {
    DuplicateEnvelopeKey,
    /// `NaN` at core, `1e999` with the profile's rules (P-JSON-8).
    NonFinite,
    InvalidUtf8,
    Truncated,
    OtherVersion,
    UnknownBodyField,
    DuplicateBodyKey,
    DuplicateClaimKey,
    DuplicateEvidenceKey,
    DuplicateExtensionsKey,
    DuplicateNestedKey,
    DuplicateAfterUnescape,
    LoneSurrogate,
    OverlongUtf8,
    VersionNotString,
    VersionThreeParts,
    VersionMissing,
    UnknownEnvelopeField,
    TrailingValue,
    ByteOrderMark,
    NumberOverflow,
}

impl Malformation {
    /// In the order of the step's `how` number.
    pub const ALL: [Malformation; 21] = [
        Malformation::DuplicateEnvelopeKey,
        Malformation::NonFinite,
        Malformation::InvalidUtf8,
        Malformation::Truncated,
        Malformation::OtherVersion,
        Malformation::UnknownBodyField,
        Malformation::DuplicateBodyKey,
        Malformation::DuplicateClaimKey,
        Malformation::DuplicateEvidenceKey,
        Malformation::DuplicateExtensionsKey,
        Malformation::DuplicateNestedKey,
        Malformation::DuplicateAfterUnescape,
        Malformation::LoneSurrogate,
        Malformation::OverlongUtf8,
        Malformation::VersionNotString,
        Malformation::VersionThreeParts,
        Malformation::VersionMissing,
        Malformation::UnknownEnvelopeField,
        Malformation::TrailingValue,
        Malformation::ByteOrderMark,
        Malformation::NumberOverflow,
    ];

    /// The kind a step's `how` number draws.
    pub fn of(how: u8) -> Malformation {
        Malformation::ALL[how as usize % Malformation::ALL.len()]
    }

    pub fn name(self) -> &'static str {
        match self {
            Malformation::DuplicateEnvelopeKey => "duplicate key in the envelope",
            Malformation::NonFinite => "non-finite number",
            Malformation::InvalidUtf8 => "invalid UTF-8 byte",
            Malformation::Truncated => "truncated frame",
            Malformation::OtherVersion => "another version (0.2)",
            Malformation::UnknownBodyField => "unknown body field",
            Malformation::DuplicateBodyKey => "duplicate key in the body",
            Malformation::DuplicateClaimKey => "duplicate key in a claim",
            Malformation::DuplicateEvidenceKey => "duplicate key in evidence",
            Malformation::DuplicateExtensionsKey => "duplicate key in extensions",
            Malformation::DuplicateNestedKey => "duplicate key deep in extensions",
            Malformation::DuplicateAfterUnescape => "keys equal only after unescaping",
            Malformation::LoneSurrogate => "lone surrogate escape",
            Malformation::OverlongUtf8 => "overlong UTF-8 encoding",
            Malformation::VersionNotString => "version as a number",
            Malformation::VersionThreeParts => "version 0.1.0",
            Malformation::VersionMissing => "no version member",
            Malformation::UnknownEnvelopeField => "unknown envelope field",
            Malformation::TrailingValue => "a second value after the object",
            Malformation::ByteOrderMark => "byte order mark",
            Malformation::NumberOverflow => "number overflowing binary64",
        }
    }

    /// The profile rules the broken frame breaks.
    pub fn rules(self) -> &'static [&'static str] {
        match self {
            Malformation::DuplicateEnvelopeKey
            | Malformation::DuplicateBodyKey
            | Malformation::DuplicateClaimKey
            | Malformation::DuplicateEvidenceKey
            | Malformation::DuplicateExtensionsKey
            | Malformation::DuplicateNestedKey => &["P-JSON-9"],
            Malformation::DuplicateAfterUnescape => &["P-JSON-9", "P-JSON-10"],
            Malformation::NonFinite => &["P-JSON-5"],
            Malformation::NumberOverflow => &["P-JSON-8"],
            Malformation::InvalidUtf8 | Malformation::OverlongUtf8 => &["P-JSON-1"],
            Malformation::LoneSurrogate => &["P-JSON-2"],
            Malformation::ByteOrderMark => &["P-JSON-3"],
            Malformation::Truncated => &["P-JSON-5"],
            Malformation::TrailingValue => &["P-JSON-4"],
            Malformation::OtherVersion
            | Malformation::VersionNotString
            | Malformation::VersionThreeParts
            | Malformation::VersionMissing => &["P-ENV-2"],
            Malformation::UnknownBodyField | Malformation::UnknownEnvelopeField => &["P-ENV-1"],
        }
    }

    /// The seed clauses the broken frame breaks.
    pub fn clauses(self) -> &'static [&'static str] {
        match self {
            Malformation::OtherVersion
            | Malformation::VersionThreeParts
            | Malformation::VersionNotString
            | Malformation::VersionMissing => &["S1.16", "S8.4"],
            Malformation::UnknownBodyField | Malformation::UnknownEnvelopeField => {
                &["S1.14", "S8.5"]
            }
            _ => &["S1.5", "S8.2", "S1.1"],
        }
    }

    /// Whether the seed states the rule broken (rather than the profile
    /// reading a silent spot). Lone surrogates are well-formed RFC 8259
    /// text, byte order marks and overflowing literals are the profile's
    /// readings, and keys equal only after unescaping rest on P-JSON-10.
    pub fn seed_rule(self) -> bool {
        !matches!(
            self,
            Malformation::LoneSurrogate
                | Malformation::ByteOrderMark
                | Malformation::NumberOverflow
                | Malformation::DuplicateAfterUnescape
        )
    }

    /// Whether `m` has what this way breaks (a claim to break).
    pub fn fits(self, m: &Value) -> bool {
        self != Malformation::DuplicateClaimKey || m["body"]["claims"][0].is_object()
    }

    /// The frame of `m` broken this way, or `None` when `m` has nothing to
    /// break this way (no claim, no evidence). `profile` says whether the
    /// profile's readings may be relied on.
    pub fn apply(self, m: &Value, profile: bool) -> Option<Vec<u8>> {
        let text = serde_json::to_string(m).ok()?;
        let with_extensions =
            |ext: &str| text.replacen('{', &format!("{{\"extensions\":{ext},"), 1);
        Some(match self {
            Malformation::DuplicateEnvelopeKey => text
                .replacen("\"tern\":\"0.1\"", "\"tern\":\"0.1\",\"tern\":\"0.1\"", 1)
                .into_bytes(),
            Malformation::NonFinite if profile => with_extensions("{\"n\":1e999}").into_bytes(),
            Malformation::NonFinite => with_extensions("{\"n\":NaN}").into_bytes(),
            Malformation::InvalidUtf8 => {
                let mut b = text.into_bytes();
                let at = b.len() / 2;
                b.insert(at, 0xff);
                b
            }
            Malformation::Truncated => text.as_bytes()[..text.len() / 2].to_vec(),
            Malformation::OtherVersion => text
                .replacen("\"tern\":\"0.1\"", "\"tern\":\"0.2\"", 1)
                .into_bytes(),
            Malformation::UnknownBodyField => text
                .replacen("\"body\":{", "\"body\":{\"priority\":\"urgent\",", 1)
                .into_bytes(),
            Malformation::DuplicateBodyKey => duplicated(m, &[Seg::Key("body")], false)?,
            Malformation::DuplicateClaimKey => duplicated(
                m,
                &[Seg::Key("body"), Seg::Key("claims"), Seg::Index(0)],
                false,
            )?,
            Malformation::DuplicateEvidenceKey => {
                // Any message may carry evidence (P-ENV-11): give it some.
                let mut m = m.clone();
                if !m["evidence"][0].is_object() {
                    m.as_object_mut()?.insert(
                        "evidence".into(),
                        serde_json::json!([{"id": "ev:log",
                        "source": "the run's own log", "collected_at": "2026-11-30T12:00:00Z",
                        "method": "inspection", "result": "As stated."}]),
                    );
                }
                duplicated(&m, &[Seg::Key("evidence"), Seg::Index(0)], false)?
            }
            Malformation::DuplicateExtensionsKey => {
                with_extensions("{\"note\":\"a\",\"note\":\"b\"}").into_bytes()
            }
            Malformation::DuplicateNestedKey => {
                with_extensions("{\"deep\":[{\"x\":{\"k\":1,\"k\":1}}]}").into_bytes()
            }
            Malformation::DuplicateAfterUnescape if profile => {
                duplicated(m, &[Seg::Key("body")], true)?
            }
            Malformation::OverlongUtf8 => {
                let mut b = with_extensions("{\"s\":\"\"}").into_bytes();
                let at = b.windows(6).position(|w| w == b"\"s\":\"\"")? + 5;
                b.splice(at..at, [0xc0, 0xaf]);
                b
            }
            Malformation::LoneSurrogate if profile => {
                with_extensions("{\"s\":\"\\ud800\"}").into_bytes()
            }
            Malformation::VersionNotString => text
                .replacen("\"tern\":\"0.1\"", "\"tern\":0.1", 1)
                .into_bytes(),
            Malformation::VersionThreeParts => text
                .replacen("\"tern\":\"0.1\"", "\"tern\":\"0.1.0\"", 1)
                .into_bytes(),
            Malformation::VersionMissing => {
                let mut v = m.clone();
                v.as_object_mut()?.remove("tern");
                serde_json::to_vec(&v).ok()?
            }
            Malformation::UnknownEnvelopeField => text
                .replacen('{', "{\"priority\":\"urgent\",", 1)
                .into_bytes(),
            Malformation::TrailingValue => format!("{text} {{}}").into_bytes(),
            Malformation::ByteOrderMark if profile => {
                let mut b = vec![0xef, 0xbb, 0xbf];
                b.extend_from_slice(text.as_bytes());
                b
            }
            Malformation::NumberOverflow if profile => {
                with_extensions("{\"n\":-1.5e+9999}").into_bytes()
            }
            // A profile reading at core level: the seed's own rule instead.
            Malformation::DuplicateAfterUnescape
            | Malformation::LoneSurrogate
            | Malformation::ByteOrderMark
            | Malformation::NumberOverflow => return None,
        })
    }
}

/// A step on the way to the object whose first member is written twice.
enum Seg {
    Key(&'static str),
    Index(usize),
}

/// `m` written out with the first member of the object at `path` twice;
/// with `escaped`, the second copy spells its key's first character as a
/// `\u` escape, so the two keys are equal only once unescaped.
fn duplicated(m: &Value, path: &[Seg], escaped: bool) -> Option<Vec<u8>> {
    let mut out = String::new();
    write(m, path, escaped, &mut out)?;
    Some(out.into_bytes())
}

fn write(v: &Value, path: &[Seg], escaped: bool, out: &mut String) -> Option<()> {
    let Some((seg, rest)) = path.split_first() else {
        let members = v.as_object()?;
        let (k, first) = members.iter().next()?;
        out.push('{');
        out.push_str(&serde_json::to_string(k).ok()?);
        out.push(':');
        out.push_str(&serde_json::to_string(first).ok()?);
        out.push(',');
        if escaped {
            let mut chars = k.chars();
            let c = chars.next()?;
            out.push_str(&format!("\"\\u{:04x}", c as u32));
            let tail = serde_json::to_string(chars.as_str()).ok()?;
            out.push_str(&tail[1..]);
        } else {
            out.push_str(&serde_json::to_string(k).ok()?);
        }
        out.push(':');
        out.push_str(&serde_json::to_string(first).ok()?);
        for (k, x) in members.iter().skip(1) {
            out.push(',');
            out.push_str(&serde_json::to_string(k).ok()?);
            out.push(':');
            out.push_str(&serde_json::to_string(x).ok()?);
        }
        out.push('}');
        return Some(());
    };
    match (seg, v) {
        (Seg::Key(key), Value::Object(members)) => {
            members.get(*key)?;
            out.push('{');
            for (i, (k, x)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::to_string(k).ok()?);
                out.push(':');
                if k == key {
                    write(x, rest, escaped, out)?;
                } else {
                    out.push_str(&serde_json::to_string(x).ok()?);
                }
            }
            out.push('}');
        }
        (Seg::Index(at), Value::Array(items)) => {
            items.get(*at)?;
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if i == *at {
                    write(x, rest, escaped, out)?;
                } else {
                    out.push_str(&serde_json::to_string(x).ok()?);
                }
            }
            out.push(']');
        }
        _ => return None,
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tern_model::ledger::RejectClass;

    fn tell() -> Value {
        json!({"tern": "0.1", "id": "alice:1", "from": "alice", "to": ["bob"], "thread": "plan",
               "reply": null, "act": "TELL",
               "body": {"claims": [{"text": "It is done.", "basis": "observed", "confidence": "high",
                                    "scope": "This run.", "evidence": ["ev:log"], "alternatives": []}]},
               "evidence": [{"id": "ev:log", "source": "the run's own log",
                             "collected_at": "2026-11-30T12:00:00Z", "method": "inspection",
                             "result": "As stated."}]})
    }

    /// Every way of breaking a frame yields one the strict parser refuses,
    /// and the class it refuses it with is the one its rules name.
    #[test]
    fn every_malformation_is_refused_by_the_rule_it_names() {
        let honest = serde_json::to_vec(&tell()).expect("serialises");
        assert!(
            tern_model::parse_frame(&honest).is_ok(),
            "the honest frame is valid"
        );
        for kind in Malformation::ALL {
            for profile in [true, false] {
                let Some(frame) = kind.apply(&tell(), profile) else {
                    assert!(
                        !profile && !kind.seed_rule(),
                        "{kind:?} applies at profile level"
                    );
                    continue;
                };
                let err = tern_model::parse_frame(&frame)
                    .err()
                    .unwrap_or_else(|| panic!("{kind:?} (profile {profile}) was accepted"));
                let class = RejectClass::from(err.class);
                let expected = match kind.rules()[0] {
                    "P-ENV-2" if kind == Malformation::VersionMissing => RejectClass::Envelope,
                    "P-ENV-2" if kind == Malformation::VersionNotString => RejectClass::Envelope,
                    "P-ENV-2" => RejectClass::Version,
                    "P-ENV-1" if kind == Malformation::UnknownBodyField => RejectClass::Body,
                    "P-ENV-1" => RejectClass::Envelope,
                    _ => RejectClass::Parse,
                };
                assert_eq!(class, expected, "{kind:?} (profile {profile}): {err}");
            }
        }
    }

    #[test]
    fn the_step_number_keeps_the_kinds_of_trace_format_2() {
        assert_eq!(Malformation::of(0), Malformation::DuplicateEnvelopeKey);
        assert_eq!(Malformation::of(3), Malformation::Truncated);
        assert_eq!(Malformation::of(5), Malformation::UnknownBodyField);
        assert_eq!(Malformation::of(21), Malformation::DuplicateEnvelopeKey);
    }
}
