//! The frame surgery behind each [`Malformation`]: a valid message in, the
//! bytes of a frame that breaks exactly the kind's rule out.

use serde_json::{json, Value};
use tern_model::wire::{MAX_DEPTH, MAX_FRAME_BYTES};

use super::Malformation;

/// Body members that hold text (P-BODY-1), in the order they are tried.
const TEXT_FIELDS: [&str; 7] = [
    "question",
    "proposal",
    "action",
    "done_when",
    "deliverable",
    "reason",
    "next",
];

/// The body fields the seed itself shows for an act (section 1's ASK and
/// section 6's exchange): the only ones removed at `--level core`.
fn seed_fields(act: &str) -> &'static [&'static str] {
    match act {
        "ASK" => &["question"],
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
        "ACK" => &["target"],
        _ => &[],
    }
}

/// Every required body field of an act (P-BODY-6 to P-BODY-14).
fn required_fields(act: &str) -> &'static [&'static str] {
    match act {
        "TELL" => &["claims"],
        "PROPOSE" => &["proposal", "request"],
        "REVISE" => &["target", "previous", "mode", "replacement", "impact"],
        "CHALLENGE" => &["target", "kind", "reason", "claims"],
        other => seed_fields(other),
    }
}

/// A path into a message, as JSON pointer tokens.
type Path = Vec<&'static str>;

fn get<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, seg| match v {
        Value::Object(o) => o.get(*seg),
        Value::Array(a) => a.get(seg.parse::<usize>().ok()?),
        _ => None,
    })
}

fn get_mut<'a>(v: &'a mut Value, path: &[&str]) -> Option<&'a mut Value> {
    path.iter().try_fold(v, |v, seg| match v {
        Value::Object(o) => o.get_mut(*seg),
        Value::Array(a) => a.get_mut(seg.parse::<usize>().ok()?),
        _ => None,
    })
}

/// The text leaves of the body (P-BODY-1).
fn text_paths(m: &Value) -> Vec<Path> {
    let mut out: Vec<Path> = TEXT_FIELDS
        .iter()
        .map(|f| vec!["body", *f])
        .filter(|p| get(m, p).is_some_and(Value::is_string))
        .collect();
    for f in ["text", "scope"] {
        let p = vec!["body", "claims", "0", f];
        if get(m, &p).is_some_and(Value::is_string) {
            out.push(p);
        }
    }
    out
}

/// The lists of text or evidence IDs in the body (P-BODY-3).
fn list_paths(m: &Value) -> Vec<Path> {
    [
        vec!["body", "constraints"],
        vec!["body", "conditions"],
        vec!["body", "claims", "0", "alternatives"],
        vec!["body", "claims", "0", "evidence"],
    ]
    .into_iter()
    .filter(|p| get(m, p).is_some_and(Value::is_array))
    .collect()
}

/// The enumerated values of the body (P-BODY-4).
fn enum_paths(m: &Value) -> Vec<Path> {
    [
        vec!["body", "state"],
        vec!["body", "kind"],
        vec!["body", "mode"],
        vec!["body", "claims", "0", "basis"],
        vec!["body", "claims", "0", "confidence"],
        vec!["body", "impact", "0", "assessment"],
    ]
    .into_iter()
    .filter(|p| get(m, p).is_some_and(Value::is_string))
    .collect()
}

fn act(m: &Value) -> &str {
    m["act"].as_str().unwrap_or("")
}

pub(super) fn fits(kind: Malformation, m: &Value) -> bool {
    match kind {
        Malformation::DuplicateClaimKey => m["body"]["claims"][0].is_object(),
        Malformation::EmptyText => !text_paths(m).is_empty(),
        Malformation::BadListElement => !list_paths(m).is_empty(),
        Malformation::MiscasedEnumeration => !enum_paths(m).is_empty(),
        Malformation::MissingBodyField => !required_fields(act(m)).is_empty(),
        Malformation::EmptyAuthority => m["body"].get("authority_ref").is_some(),
        _ => true,
    }
}

/// `m` with one edit, written out.
fn edited(m: &Value, edit: impl FnOnce(&mut Value) -> Option<()>) -> Option<Vec<u8>> {
    let mut v = m.clone();
    edit(&mut v)?;
    serde_json::to_vec(&v).ok()
}

/// `m` carrying one evidence object (any message may, P-ENV-11).
fn with_evidence(m: &Value) -> Value {
    let mut m = m.clone();
    if !m["evidence"][0].is_object() {
        if let Some(o) = m.as_object_mut() {
            o.insert(
                "evidence".into(),
                json!([{"id": "ev:log", "source": "the run's own log",
                        "collected_at": "2026-11-30T12:00:00Z", "method": "inspection",
                        "result": "As stated."}]),
            );
        }
    }
    m
}

fn pick<T>(items: &[T], variant: usize) -> Option<&T> {
    (!items.is_empty()).then(|| &items[variant % items.len()])
}

pub(super) fn apply(
    kind: Malformation,
    m: &Value,
    profile: bool,
    variant: usize,
) -> Option<Vec<u8>> {
    if !kind.fits(m) || (!profile && !kind.seed_rule()) {
        return None;
    }
    let text = serde_json::to_string(m).ok()?;
    let with_extensions = |ext: &str| text.replacen('{', &format!("{{\"extensions\":{ext},"), 1);
    let with_version = |tern: &str| {
        text.replacen("\"tern\":\"0.1\"", &format!("\"tern\":{tern}"), 1)
            .into_bytes()
    };
    let set = |path: &[&str], value: Value| set_at(m, path, value);
    Some(match kind {
        Malformation::DuplicateEnvelopeKey => with_version("\"0.1\",\"tern\":\"0.1\""),
        Malformation::NonFinite if profile => with_extensions("{\"n\":1e999}").into_bytes(),
        Malformation::NonFinite => with_extensions("{\"n\":NaN}").into_bytes(),
        Malformation::InvalidUtf8 => {
            let mut b = text.into_bytes();
            let at = b.len() / 2;
            b.insert(at, 0xff);
            b
        }
        Malformation::Truncated => text.as_bytes()[..text.len() / 2].to_vec(),
        Malformation::OtherVersion => with_version("\"0.2\""),
        Malformation::UnknownBodyField => text
            .replacen("\"body\":{", "\"body\":{\"priority\":\"urgent\",", 1)
            .into_bytes(),
        Malformation::DuplicateBodyKey => duplicated(m, &[Seg::Key("body")], false)?,
        Malformation::DuplicateClaimKey => duplicated(
            m,
            &[Seg::Key("body"), Seg::Key("claims"), Seg::Index(0)],
            false,
        )?,
        Malformation::DuplicateEvidenceKey => duplicated(
            &with_evidence(m),
            &[Seg::Key("evidence"), Seg::Index(0)],
            false,
        )?,
        Malformation::DuplicateExtensionsKey => {
            with_extensions("{\"note\":\"a\",\"note\":\"b\"}").into_bytes()
        }
        Malformation::DuplicateNestedKey => {
            with_extensions("{\"deep\":[{\"x\":{\"k\":1,\"k\":1}}]}").into_bytes()
        }
        Malformation::DuplicateAfterUnescape => duplicated(m, &[Seg::Key("body")], true)?,
        Malformation::OverlongUtf8 => {
            let mut b = with_extensions("{\"s\":\"\"}").into_bytes();
            let at = b.windows(6).position(|w| w == b"\"s\":\"\"")? + 5;
            b.splice(at..at, [0xc0, 0xaf]);
            b
        }
        Malformation::LoneSurrogate => with_extensions("{\"s\":\"\\ud800\"}").into_bytes(),
        Malformation::VersionNotString => with_version("0.1"),
        Malformation::VersionThreeParts => with_version("\"0.1.0\""),
        Malformation::VersionMissing => edited(m, |v| v.as_object_mut()?.remove("tern").map(drop))?,
        Malformation::UnknownEnvelopeField => text
            .replacen('{', "{\"priority\":\"urgent\",", 1)
            .into_bytes(),
        Malformation::TrailingValue => format!("{text} {{}}").into_bytes(),
        Malformation::ByteOrderMark => {
            let mut b = vec![0xef, 0xbb, 0xbf];
            b.extend_from_slice(text.as_bytes());
            b
        }
        Malformation::NumberOverflow => with_extensions("{\"n\":-1.5e+9999}").into_bytes(),
        Malformation::NestingTooDeep => {
            // The envelope is level 1 and `extensions` level 2: the arrays
            // inside it reach exactly one level past the limit.
            let arrays = MAX_DEPTH + 1 - 2;
            let deep = format!("{}0{}", "[".repeat(arrays), "]".repeat(arrays));
            with_extensions(&format!("{{\"deep\":{deep}}}")).into_bytes()
        }
        Malformation::Oversized => {
            let base = with_extensions("{\"pad\":\"\"}");
            let pad = (MAX_FRAME_BYTES + 1).checked_sub(base.len())?;
            with_extensions(&format!("{{\"pad\":\"{}\"}}", "x".repeat(pad))).into_bytes()
        }
        Malformation::BadParticipant => bad_participant(m, profile, variant)?,
        Malformation::BadReference => bad_reference(m, variant)?,
        Malformation::ForeignId => foreign_id(m)?,
        Malformation::BadRecipients => bad_recipients(m, variant)?,
        Malformation::EmptyThread => set(&["thread"], json!(""))?,
        Malformation::ReplyMissing => edited(m, |v| v.as_object_mut()?.remove("reply").map(drop))?,
        Malformation::UnknownAct => unknown_act(m, variant)?,
        Malformation::BodyNotObject => body_not_object(m, variant)?,
        Malformation::EvidenceIdRepeated => evidence_id_repeated(m)?,
        Malformation::ExtensionsNotObject => {
            with_extensions(if variant % 2 == 0 { "[]" } else { "\"note\"" }).into_bytes()
        }
        Malformation::EmptyText => {
            let paths = text_paths(m);
            set(pick(&paths, variant)?, json!(""))?
        }
        Malformation::NullOptional => null_optional(m)?,
        Malformation::BadListElement => bad_list_element(m, variant)?,
        Malformation::MiscasedEnumeration => miscased_enumeration(m, variant)?,
        Malformation::MissingBodyField => missing_body_field(m, profile, variant)?,
        Malformation::ExtraObjectMember => extra_object_member(m, variant)?,
        Malformation::BadTimestampOrEvidenceId => bad_timestamp_or_evidence_id(m, variant)?,
        Malformation::EmptyAuthority => set(&["body", "authority_ref"], json!(""))?,
        Malformation::TypeConverted => type_converted(m, variant)?,
    })
}

/// The message with the value at `path` replaced by `value`.
fn set_at(m: &Value, path: &[&str], value: Value) -> Option<Vec<u8>> {
    edited(m, |v| {
        *get_mut(v, path)? = value;
        Some(())
    })
}

/// A recipient with a name no participant can have.
fn bad_participant(m: &Value, profile: bool, variant: usize) -> Option<Vec<u8>> {
    // A colon in a recipient's name is the profile's reading (the
    // seed forbids it in senders); an empty name breaks the seed.
    let name = if profile && variant % 2 == 0 {
        "desk:ops"
    } else {
        ""
    };
    edited(m, |v| {
        v.get_mut("to")?.as_array_mut()?.push(json!(name));
        Some(())
    })
}

/// A `reply` that is not a message reference.
fn bad_reference(m: &Value, variant: usize) -> Option<Vec<u8>> {
    let from = m["from"].as_str()?;
    let reply = match variant % 3 {
        0 => format!("{from}:"),
        1 => ":1".to_owned(),
        _ => from.to_owned(),
    };
    set_at(m, &["reply"], json!(reply))
}

/// An ID whose prefix names another participant than `from`.
fn foreign_id(m: &Value) -> Option<Vec<u8>> {
    let from = m["from"].as_str()?;
    let (_, suffix) = m["id"].as_str()?.split_once(':')?;
    let other = m["to"]
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .find(|n| *n != from)
        .map_or_else(|| format!("{from}x"), str::to_owned);
    set_at(m, &["id"], json!(format!("{other}:{suffix}")))
}

/// A `to` that names someone twice, or nobody.
fn bad_recipients(m: &Value, variant: usize) -> Option<Vec<u8>> {
    edited(m, |v| {
        let to = v.get_mut("to")?.as_array_mut()?;
        if variant % 2 == 0 {
            let first = to.first()?.clone();
            to.push(first);
        } else {
            to.clear();
        }
        Some(())
    })
}

/// An `act` the language does not have (or miscased).
fn unknown_act(m: &Value, variant: usize) -> Option<Vec<u8>> {
    let act = act(m);
    let wrong = if variant % 2 == 0 {
        act.to_lowercase()
    } else {
        "INFORM".to_owned()
    };
    set_at(m, &["act"], json!(wrong))
}

/// A `body` that is not an object.
fn body_not_object(m: &Value, variant: usize) -> Option<Vec<u8>> {
    let body = m["body"].clone();
    let wrong = match variant % 3 {
        0 => json!([body]),
        1 => Value::Null,
        _ => json!("the body"),
    };
    set_at(m, &["body"], wrong)
}

/// Two pieces of evidence with one ID.
fn evidence_id_repeated(m: &Value) -> Option<Vec<u8>> {
    edited(&with_evidence(m), |v| {
        let ev = v.get_mut("evidence")?.as_array_mut()?;
        let first = ev.first()?.clone();
        ev.push(first);
        Some(())
    })
}

/// An optional member of the body present as `null`.
fn null_optional(m: &Value) -> Option<Vec<u8>> {
    let field = match act(m) {
        "REQUEST" => "replaces",
        "REPORT" => "next",
        _ => "extensions",
    };
    edited(m, |v| {
        v.get_mut("body")?
            .as_object_mut()?
            .insert(field.into(), Value::Null);
        Some(())
    })
}

/// A list of the body with an element of the wrong type.
fn bad_list_element(m: &Value, variant: usize) -> Option<Vec<u8>> {
    edited(m, |v| {
        let path = pick(&list_paths(m), variant)?.clone();
        get_mut(v, &path)?.as_array_mut()?.insert(0, json!(7));
        Some(())
    })
}

/// A value of an enumeration in the wrong case.
fn miscased_enumeration(m: &Value, variant: usize) -> Option<Vec<u8>> {
    let paths = enum_paths(m);
    let path = pick(&paths, variant)?;
    let value = get(m, path)?.as_str()?;
    let mut chars = value.chars();
    let first = chars.next()?;
    let wrong = if first.is_lowercase() {
        first.to_uppercase().chain(chars).collect::<String>()
    } else {
        value.to_lowercase()
    };
    set_at(m, path, json!(wrong))
}

/// A body without one of its required members (of the seed's, at core).
fn missing_body_field(m: &Value, profile: bool, variant: usize) -> Option<Vec<u8>> {
    let fields = if profile {
        required_fields(act(m))
    } else {
        seed_fields(act(m))
    };
    let field = *pick(fields, variant)?;
    edited(m, |v| {
        v.get_mut("body")?.as_object_mut()?.remove(field).map(drop)
    })
}

/// A claim or an evidence object with a member it does not have.
fn extra_object_member(m: &Value, variant: usize) -> Option<Vec<u8>> {
    let in_claim = m["body"]["claims"][0].is_object() && variant % 2 == 0;
    let (m, path) = if in_claim {
        (m.clone(), vec!["body", "claims", "0"])
    } else {
        (with_evidence(m), vec!["evidence", "0"])
    };
    edited(&m, |v| {
        get_mut(v, &path)?
            .as_object_mut()?
            .insert("note".into(), json!("an extra member"));
        Some(())
    })
}

/// A timestamp that is not one, or an evidence ID that is not an ID.
fn bad_timestamp_or_evidence_id(m: &Value, variant: usize) -> Option<Vec<u8>> {
    let m = with_evidence(m);
    let (path, wrong): (Path, &str) = match variant % 3 {
        // 30 November is the last day of the month.
        0 => (
            vec!["evidence", "0", "collected_at"],
            "2026-11-31T12:00:00Z",
        ),
        1 => (vec!["evidence", "0", "id"], "ev:"),
        _ if m["body"]["due"].is_string() || act(&m) == "COMMIT" => {
            (vec!["body", "due"], "tomorrow")
        }
        _ => (vec!["evidence", "0", "collected_at"], "yesterday"),
    };
    edited(&m, |v| {
        *get_mut(v, &path)? = json!(wrong);
        Some(())
    })
}

/// A member of the body of another JSON type than its schema's.
fn type_converted(m: &Value, variant: usize) -> Option<Vec<u8>> {
    let body = m["body"].as_object()?;
    let strings: Vec<&String> = body
        .iter()
        .filter(|(_, x)| x.is_string())
        .map(|(k, _)| k)
        .collect();
    let lists: Vec<&String> = body
        .iter()
        .filter(|(_, x)| x.is_array())
        .map(|(k, _)| k)
        .collect();
    let (field, wrong) = match pick(&strings, variant) {
        Some(k) => (k.as_str(), json!(42)),
        None => (pick(&lists, variant)?.as_str(), json!("a list")),
    };
    set_at(m, &["body", field], wrong)
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
