//! Raw frame bytes → a typed [`Message`] or the first [`WireError`].
//!
//! Two paths give one answer. The fast path reads the frame once, straight
//! into the typed message, with every strict-JSON rule enforced on the way
//! (serde's derived readers reject repeated fields, [`crate::json::Json`]
//! rejects repeated keys inside free-form data). Only when it fails does the
//! slow path run, which decides *which* error to report: strict JSON first
//! (anywhere in the frame), then the version, then the envelope and the body,
//! each with a JSON pointer. Valid frames, the common case, never pay for the
//! diagnosis.

use serde::de::DeserializeSeed;
use serde_json::value::RawValue;

use super::envelope::{Draft, DraftBody, DraftSeed};
use super::error::{ErrorClass, Pointer, Position, WireError};
use crate::json::{Json, PathTracker, StrictSeed};
use crate::message::{Act, Body, BodySeed, JsonKind, Message, ReviseMode, VERSION};

/// Frames larger than this are refused before any parsing, so that a flood of
/// bytes costs bounded memory (profile rule P-JSON-7).
pub const MAX_FRAME_BYTES: usize = 1 << 20;

/// The deepest nesting accepted, counting the message object as level 1
/// (profile rule P-JSON-6). The JSON reader refuses to enter level 128; a body
/// read on its own (when it precedes `act`) is held to the same bound by
/// [`nesting_depth`], so the limit does not depend on key order.
pub const MAX_DEPTH: usize = 127;

/// Validates one frame against every stateless rule of the profile.
pub fn parse_frame(bytes: &[u8]) -> Result<Message, WireError> {
    if bytes.len() > MAX_FRAME_BYTES {
        return Err(WireError::oversized(bytes.len(), MAX_FRAME_BYTES));
    }
    match fast(bytes) {
        Ok(message) => Ok(message),
        Err(Fast::Checks(err)) => Err(err),
        Err(Fast::Reading) => Err(diagnose(bytes)),
    }
}

/// Reads a body of `act` from strict JSON text, as a REVISE's replacement is
/// read once the target's act is known. `at` is where the text sits in the
/// message, for the pointer.
pub fn parse_body(act: Act, replacement: &Json, at: &Pointer) -> Result<Body, WireError> {
    let text = serde_json::to_string(replacement).unwrap_or_default();
    let mut de = serde_json::Deserializer::from_str(&text);
    let body = match Body::deserialize_for(act, &mut de) {
        Ok(body) => body,
        // Only a failure pays for tracking the path.
        Err(_) => {
            let mut de = serde_json::Deserializer::from_str(&text);
            let Err(e) = tracked(&mut de, BodySeed(act)) else {
                unreachable!("the same reader failed on the same text")
            };
            return Err(schema_error(e, at.clone(), None));
        }
    };
    check_body(&body, at)?;
    Ok(body)
}

enum Fast {
    /// The reader stopped; the slow path will say why.
    Reading,
    /// Everything was read; a cross-field rule failed with this error.
    Checks(WireError),
}

fn fast(bytes: &[u8]) -> Result<Message, Fast> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let draft: Draft<DraftBody> =
        serde::Deserialize::deserialize(&mut de).map_err(|_| Fast::Reading)?;
    de.end().map_err(|_| Fast::Reading)?;
    // A body that came before `act` is still unread text, which may hide a
    // strict-JSON error; that error outranks any envelope error (P-ERR-2),
    // so the slow path decides.
    let body_unread = matches!(draft.body, DraftBody::Raw(_));
    check_envelope(&draft).map_err(|e| {
        if body_unread {
            Fast::Reading
        } else {
            Fast::Checks(e)
        }
    })?;
    let draft = draft.try_with_body(|act, body| match body {
        DraftBody::Typed(body) => Ok(body),
        DraftBody::Raw(raw) if nesting_depth(raw.get().as_bytes()) < MAX_DEPTH => {
            read_raw_body(act, raw).map_err(|_| Fast::Reading)
        }
        DraftBody::Raw(_) => Err(Fast::Reading),
    })?;
    finish(draft).map_err(Fast::Checks)
}

/// How deeply `text` (one valid JSON value) nests, the value itself being
/// level 1. Only strings need care: brackets inside them do not count.
fn nesting_depth(text: &[u8]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut in_string = false;
    let mut escaped = false;
    for &b in text {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

fn read_raw_body(act: Act, raw: &RawValue) -> Result<Body, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(raw.get());
    Body::deserialize_for(act, &mut de)
}

/// The slow path: finds the first error in precedence order.
fn diagnose(bytes: &[u8]) -> WireError {
    // 1. Strict JSON over the whole frame.
    let tracker = PathTracker::default();
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let tree = StrictSeed {
        tracker: Some(&tracker),
    }
    .deserialize(&mut de)
    .and_then(|tree| de.end().map(|()| tree));
    let tree = match tree {
        Ok(tree) => tree,
        Err(e) => {
            let position = position_of(&e);
            // The JSON reader meets a byte that is not UTF-8 as "expected
            // value" outside strings and "invalid unicode code point" inside;
            // when that byte is where reading stopped (or before), say what
            // it is and where (P-JSON-1).
            if let Some(at) = invalid_utf8_at(bytes) {
                if position.is_none_or(|p| at <= byte_offset(bytes, p)) {
                    return WireError {
                        class: ErrorClass::Parse,
                        pointer: tracker.pointer(),
                        message: format!("invalid UTF-8 at byte offset {at}"),
                        position: Some(position_at(bytes, at)),
                    };
                }
            }
            return WireError {
                class: ErrorClass::Parse,
                pointer: tracker.pointer(),
                message: message_of(&e),
                position,
            };
        }
    };

    // 2. The version, before anything else is looked at.
    if let Json::Object(members) = &tree {
        if let Some(Json::String(v)) = members.get("tern") {
            if !v.is_empty() && v != VERSION {
                return WireError::new(
                    ErrorClass::Version,
                    Pointer::of(&["tern"]),
                    format!("unsupported version `{v}`: this profile accepts only \"{VERSION}\""),
                );
            }
        }
    }

    // 3. The envelope, then the body, with the path of the failure.
    let mut de = serde_json::Deserializer::from_slice(bytes);
    // The body is always read after the envelope here, so that envelope
    // errors come first whatever the key order.
    let draft: Draft<DraftBody> = match tracked(&mut de, DraftSeed { defer_body: true }) {
        Ok(draft) => draft,
        Err(e) => return schema_error(e, Pointer::root(), None),
    };
    if let Err(err) = check_envelope(&draft) {
        return err;
    }
    let draft = draft.try_with_body(|act, body| match body {
        DraftBody::Typed(body) => Ok(body),
        DraftBody::Raw(raw) => {
            let mut de = serde_json::Deserializer::from_str(raw.get());
            tracked(&mut de, BodySeed(act)).map_err(|e| {
                let offset = (raw.get().as_ptr() as usize).saturating_sub(bytes.as_ptr() as usize);
                schema_error(e, Pointer::of(&["body"]), Some((bytes, offset)))
            })
        }
    });
    let draft = match draft {
        Ok(draft) => draft,
        Err(err) => return err,
    };
    match finish(draft) {
        Err(err) => err,
        // The fast path failed to read what the slow path read: a reader
        // disagreement. Report it rather than accept the frame.
        Ok(_) => WireError::new(
            ErrorClass::Parse,
            Pointer::root(),
            "frame could not be read (internal reader disagreement)",
        ),
    }
}

type Located = (serde_path_to_error::Path, serde_json::Error);

/// Reads `seed` with the path of every value it enters recorded.
fn tracked<'de, R, S>(de: &mut serde_json::Deserializer<R>, seed: S) -> Result<S::Value, Located>
where
    R: serde_json::de::Read<'de>,
    S: DeserializeSeed<'de>,
{
    let mut track = serde_path_to_error::Track::new();
    let result = seed.deserialize(serde_path_to_error::Deserializer::new(de, &mut track));
    result.map_err(|e| (track.path(), e))
}

/// Converts a located serde error into an envelope or body error.
///
/// serde reports unknown, missing and repeated fields at their parent object;
/// the pointer is extended to name the field itself, which is where a person
/// looks.
fn schema_error(
    (path, inner): (serde_path_to_error::Path, serde_json::Error),
    prefix: Pointer,
    embedded: Option<(&[u8], usize)>,
) -> WireError {
    let mut pointer = prefix;
    pointer.push_path(&path);
    let message = message_of(&inner);
    // An unknown key is already on the path (it was read before it was
    // refused); a missing one cannot be, so it is named here.
    if let Some(rest) = message.strip_prefix("missing field `") {
        if let Some((name, _)) = rest.split_once('`') {
            pointer.push_key(name);
        }
    }
    let mut position = position_of(&inner);
    if let (Some((frame, offset)), Some(p)) = (embedded, position) {
        position = Some(shift(frame, offset, p));
    }
    WireError {
        class: class_of(&pointer),
        pointer,
        message,
        position,
    }
}

/// Inside the body is a body error; `body` itself (missing, or not an object)
/// breaks the envelope rule "body is an object" (section 1).
fn class_of(pointer: &Pointer) -> ErrorClass {
    if pointer.is_inside(&Pointer::of(&["body"])) {
        ErrorClass::Body
    } else {
        ErrorClass::Envelope
    }
}

/// Maps a position inside an embedded body back to the frame.
fn shift(frame: &[u8], offset: usize, inner: Position) -> Position {
    let before = &frame[..offset.min(frame.len())];
    let base_line = 1 + before.iter().filter(|&&b| b == b'\n').count();
    let base_column = 1 + before.iter().rev().take_while(|&&b| b != b'\n').count();
    if inner.line == 1 {
        Position {
            line: base_line,
            column: base_column + inner.column - 1,
        }
    } else {
        Position {
            line: base_line + inner.line - 1,
            column: inner.column,
        }
    }
}

/// The offset of the first byte that is not well-formed UTF-8, if any.
fn invalid_utf8_at(bytes: &[u8]) -> Option<usize> {
    std::str::from_utf8(bytes).err().map(|e| e.valid_up_to())
}

/// The 0-based byte offset of a 1-based line and byte column.
fn byte_offset(bytes: &[u8], p: Position) -> usize {
    let line_start = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(p.line.saturating_sub(2))
        .map_or(0, |(i, _)| i + 1);
    let line_start = if p.line <= 1 { 0 } else { line_start };
    line_start + p.column.saturating_sub(1)
}

/// The 1-based line and byte column of a 0-based byte offset.
fn position_at(bytes: &[u8], at: usize) -> Position {
    let before = &bytes[..at.min(bytes.len())];
    let line_start = before
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1);
    Position {
        line: 1 + before.iter().filter(|b| **b == b'\n').count(),
        column: at - line_start + 1,
    }
}

fn position_of(e: &serde_json::Error) -> Option<Position> {
    // serde_json says column 0 for "before the first byte of the line".
    (e.line() > 0).then(|| Position {
        line: e.line(),
        column: e.column().max(1),
    })
}

/// serde_json's text without its " at line L column C" tail, which the
/// report prints from [`Position`] instead, or which a pointer replaces.
pub fn message_of(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let tail = format!(" at line {} column {}", e.line(), e.column());
    let text = text.strip_suffix(&tail).unwrap_or(&text);
    if text == "recursion limit exceeded" {
        return format!("nesting deeper than {MAX_DEPTH} levels");
    }
    text.to_owned()
}

/// The envelope rules that relate fields to each other, checked once the
/// envelope is read and before the body is looked at.
fn check_envelope<B>(draft: &Draft<B>) -> Result<(), WireError> {
    if draft.tern.is_empty() {
        return Err(WireError::new(
            ErrorClass::Envelope,
            Pointer::of(&["tern"]),
            "must be a nonempty string",
        ));
    }
    if draft.tern != VERSION {
        return Err(WireError::new(
            ErrorClass::Version,
            Pointer::of(&["tern"]),
            format!(
                "unsupported version `{}`: this profile accepts only \"{VERSION}\"",
                draft.tern
            ),
        ));
    }
    if draft.id.sender() != draft.from.as_str() {
        return Err(WireError::new(
            ErrorClass::Envelope,
            Pointer::of(&["id"]),
            format!(
                "ID `{}` is not in the namespace of its sender `{}`: the prefix before the colon must equal `from`",
                draft.id, draft.from
            ),
        ));
    }
    for (i, name) in draft.to.iter().enumerate() {
        if draft.to[..i].contains(name) {
            return Err(WireError::new(
                ErrorClass::Envelope,
                Pointer::of(&["to"]).index(i),
                format!("recipient `{name}` is listed twice: recipients must be distinct"),
            ));
        }
    }
    if let Some(evidence) = &draft.evidence {
        for (i, item) in evidence.iter().enumerate() {
            if evidence[..i].iter().any(|e| e.id == item.id) {
                return Err(WireError::new(
                    ErrorClass::Envelope,
                    Pointer::of(&["evidence"]).index(i).key("id"),
                    format!("evidence ID `{}` is defined twice in this message", item.id),
                ));
            }
        }
    }
    Ok(())
}

/// Assembles the message once envelope and body have passed their checks.
fn finish(draft: Draft<Body>) -> Result<Message, WireError> {
    check_body(&draft.body, &Pointer::of(&["body"]))?;
    Ok(Message {
        id: draft.id,
        from: draft.from,
        to: draft.to,
        thread: draft.thread,
        reply: draft.reply,
        body: draft.body,
        evidence: draft.evidence,
        extensions: draft.extensions,
    })
}

/// Body rules that tie one field to another.
fn check_body(body: &Body, at: &Pointer) -> Result<(), WireError> {
    match body {
        Body::Report(report)
            if report.state == crate::message::ProgressState::Blocked
                && report.claims.is_empty() =>
        {
            Err(WireError::new(
                ErrorClass::Body,
                at.clone().key("claims"),
                "a blocked REPORT must name the obstacle in its claims (at least one claim)",
            ))
        }
        Body::Revise(revise) => match (revise.mode, &revise.replacement) {
            (ReviseMode::Replace, Some(Json::Object(_))) | (ReviseMode::Withdraw, None) => Ok(()),
            (ReviseMode::Replace, Some(other)) => Err(WireError::new(
                ErrorClass::Body,
                at.clone().key("replacement"),
                format!(
                    "mode `replace` needs a complete body object as replacement, found {}",
                    JsonKind(other)
                ),
            )),
            (ReviseMode::Replace, None) => Err(WireError::new(
                ErrorClass::Body,
                at.clone().key("replacement"),
                "mode `replace` needs a complete body object as replacement, found null",
            )),
            (ReviseMode::Withdraw, Some(other)) => Err(WireError::new(
                ErrorClass::Body,
                at.clone().key("replacement"),
                format!(
                    "mode `withdraw` needs replacement null, found {}",
                    JsonKind(other)
                ),
            )),
        },
        _ => Ok(()),
    }
}
