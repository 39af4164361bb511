//! A message in the binary form of snapshots ([`crate::binary`]): every
//! field in declaration order, names and text as strings (checked again
//! by their rules when read: cheap, and bytes that are not a snapshot then
//! cannot make a name that breaks one), vocabularies by index, timestamps
//! with their instant so that the text is not parsed again.

use std::collections::BTreeMap;

use crate::binary::{In, Out, StateError};
use crate::json::{Json, Number};

use super::{
    AckBody, AskBody, Body, ChallengeBody, Claim, CommitBody, Evidence, Extensions, Impact,
    Message, NonEmptyVec, ProposeBody, ReportBody, RequestBody, ReviseBody, TellBody, Timestamp,
};
use super::{Act, Assessment, Basis, ChallengeKind, Confidence, ProgressState, ReviseMode};
use super::{EvidenceId, GrantRef, MessageRef, Participant, Text, ThreadId};

/// A closed vocabulary by its index in `ALL`.
fn word<T: Copy + PartialEq>(all: &[T], v: T) -> u8 {
    all.iter().position(|w| *w == v).unwrap_or(0) as u8
}

fn read_word<T: Copy>(r: &mut In, all: &[T], what: &str) -> Result<T, StateError> {
    let i = usize::from(r.u8()?);
    all.get(i)
        .copied()
        .ok_or_else(|| StateError::new(format!("{i} is not {what}")))
}

macro_rules! name {
    ($fn:ident, $ty:ty) => {
        fn $fn(r: &mut In) -> Result<$ty, StateError> {
            <$ty>::new(r.str()?).map_err(StateError::new)
        }
    };
}

name!(read_text, Text);
name!(read_ref, MessageRef);
name!(read_participant, Participant);
name!(read_thread, ThreadId);
name!(read_grant, GrantRef);
name!(read_evidence_id, EvidenceId);

fn texts(o: &mut Out, items: &[Text]) {
    o.list(items.iter(), |o, t| o.str(t.as_str()));
}

fn timestamp(o: &mut Out, t: &Timestamp) {
    o.str(t.as_str());
    o.i128(t.unix_nanos());
}

fn read_timestamp(r: &mut In) -> Result<Timestamp, StateError> {
    let text = r.str()?.to_owned();
    Ok(Timestamp::from_parts(text, r.i128()?))
}

pub(crate) fn json(o: &mut Out, v: &Json) {
    match v {
        Json::Null => o.u8(0),
        Json::Bool(b) => o.u8(1 + u8::from(*b)),
        Json::Number(n) => {
            o.u8(3);
            let (negative, digits, exponent) = n.parts();
            o.bool(negative);
            o.str(digits);
            o.i128(exponent);
        }
        Json::String(s) => {
            o.u8(4);
            o.str(s);
        }
        Json::Array(items) => {
            o.u8(5);
            o.list(items.iter(), json);
        }
        Json::Object(members) => {
            o.u8(6);
            members_out(o, members);
        }
    }
}

fn members_out(o: &mut Out, members: &BTreeMap<String, Json>) {
    o.usize(members.len());
    for (k, v) in members {
        o.str(k);
        json(o, v);
    }
}

/// How deep a value read back may nest: the wire refuses more than 127
/// levels, so a snapshot never holds more.
const MAX_DEPTH: usize = 128;

fn read_json(r: &mut In, depth: usize) -> Result<Json, StateError> {
    if depth > MAX_DEPTH {
        return Err(StateError::new("a JSON value nests too deep"));
    }
    Ok(match r.u8()? {
        0 => Json::Null,
        1 => Json::Bool(false),
        2 => Json::Bool(true),
        3 => {
            let negative = r.bool()?;
            let digits = r.str()?;
            if !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(StateError::new("a number's digits are not digits"));
            }
            Json::Number(Number::from_parts(negative, digits, r.i128()?))
        }
        4 => Json::String(r.str()?.to_owned()),
        5 => Json::Array(r.list(|r| read_json(r, depth + 1))?),
        6 => Json::Object(read_members(r, depth + 1)?),
        t => return Err(StateError::new(format!("{t} is not a JSON tag"))),
    })
}

fn read_members(r: &mut In, depth: usize) -> Result<BTreeMap<String, Json>, StateError> {
    let n = r.count()?;
    let mut members = BTreeMap::new();
    for _ in 0..n {
        let key = r.str()?.to_owned();
        members.insert(key, read_json(r, depth)?);
    }
    Ok(members)
}

fn extensions(o: &mut Out, e: Option<&Extensions>) {
    o.option(e, |o, e| members_out(o, e.members()));
}

fn read_extensions(r: &mut In) -> Result<Option<Extensions>, StateError> {
    r.option(|r| read_members(r, 1).map(Extensions::new))
}

fn claim(o: &mut Out, c: &Claim) {
    o.str(c.text.as_str());
    o.u8(word(Basis::ALL, c.basis));
    o.u8(word(Confidence::ALL, c.confidence));
    o.str(c.scope.as_str());
    o.list(c.evidence.iter(), |o, e| o.str(e.as_str()));
    texts(o, &c.alternatives);
}

fn read_claim(r: &mut In) -> Result<Claim, StateError> {
    Ok(Claim {
        text: read_text(r)?,
        basis: read_word(r, Basis::ALL, "a basis")?,
        confidence: read_word(r, Confidence::ALL, "a confidence")?,
        scope: read_text(r)?,
        evidence: r.list(read_evidence_id)?,
        alternatives: r.list(read_text)?,
    })
}

fn evidence(o: &mut Out, e: &Evidence) {
    o.str(e.id.as_str());
    o.str(e.source.as_str());
    timestamp(o, &e.collected_at);
    o.str(e.method.as_str());
    o.str(e.result.as_str());
}

fn read_evidence(r: &mut In) -> Result<Evidence, StateError> {
    Ok(Evidence {
        id: read_evidence_id(r)?,
        source: read_text(r)?,
        collected_at: read_timestamp(r)?,
        method: read_text(r)?,
        result: read_text(r)?,
    })
}

fn body(o: &mut Out, b: &Body) {
    let opt_ref = |o: &mut Out, v: Option<&MessageRef>| o.option(v, |o, v| o.str(v.as_str()));
    let opt_grant = |o: &mut Out, v: Option<&GrantRef>| o.option(v, |o, v| o.str(v.as_str()));
    match b {
        Body::Ask(b) => {
            o.str(b.question.as_str());
            extensions(o, b.extensions.as_ref());
        }
        Body::Tell(b) => {
            o.list(b.claims.iter(), claim);
            extensions(o, b.extensions.as_ref());
        }
        Body::Propose(b) => {
            o.str(b.proposal.as_str());
            opt_ref(o, b.request.as_ref());
            extensions(o, b.extensions.as_ref());
        }
        Body::Request(b) => {
            o.str(b.action.as_str());
            o.str(b.done_when.as_str());
            texts(o, &b.constraints);
            opt_grant(o, b.authority_ref.as_ref());
            opt_ref(o, b.replaces.as_ref());
            extensions(o, b.extensions.as_ref());
        }
        Body::Commit(b) => {
            o.str(b.request.as_str());
            o.str(b.action.as_str());
            o.str(b.deliverable.as_str());
            o.str(b.done_when.as_str());
            o.option(b.due.as_ref(), timestamp);
            texts(o, &b.conditions);
            opt_grant(o, b.authority_ref.as_ref());
            extensions(o, b.extensions.as_ref());
        }
        Body::Report(b) => {
            o.str(b.commitment.as_str());
            o.u8(word(ProgressState::ALL, b.state));
            o.list(b.claims.iter(), claim);
            o.option(b.next.as_ref(), |o, t| o.str(t.as_str()));
            extensions(o, b.extensions.as_ref());
        }
        Body::Revise(b) => {
            o.str(b.target.as_str());
            o.str(b.previous.as_str());
            o.u8(word(ReviseMode::ALL, b.mode));
            o.option(b.replacement.as_ref(), json);
            o.list(b.impact.iter(), |o, i| {
                o.str(i.commitment.as_str());
                o.u8(word(Assessment::ALL, i.assessment));
                o.str(i.reason.as_str());
            });
            extensions(o, b.extensions.as_ref());
        }
        Body::Ack(b) => {
            o.str(b.target.as_str());
            extensions(o, b.extensions.as_ref());
        }
        Body::Challenge(b) => {
            o.str(b.target.as_str());
            o.u8(word(ChallengeKind::ALL, b.kind));
            o.str(b.reason.as_str());
            o.list(b.claims.iter(), claim);
            extensions(o, b.extensions.as_ref());
        }
    }
}

fn read_body(r: &mut In, act: Act) -> Result<Body, StateError> {
    Ok(match act {
        Act::Ask => Body::Ask(AskBody {
            question: read_text(r)?,
            extensions: read_extensions(r)?,
        }),
        Act::Tell => Body::Tell(TellBody {
            claims: NonEmptyVec::new(r.list(read_claim)?)
                .ok_or_else(|| StateError::new("a TELL without claims"))?,
            extensions: read_extensions(r)?,
        }),
        Act::Propose => Body::Propose(ProposeBody {
            proposal: read_text(r)?,
            request: r.option(read_ref)?,
            extensions: read_extensions(r)?,
        }),
        Act::Request => Body::Request(RequestBody {
            action: read_text(r)?,
            done_when: read_text(r)?,
            constraints: r.list(read_text)?,
            authority_ref: r.option(read_grant)?,
            replaces: r.option(read_ref)?,
            extensions: read_extensions(r)?,
        }),
        Act::Commit => Body::Commit(CommitBody {
            request: read_ref(r)?,
            action: read_text(r)?,
            deliverable: read_text(r)?,
            done_when: read_text(r)?,
            due: r.option(read_timestamp)?,
            conditions: r.list(read_text)?,
            authority_ref: r.option(read_grant)?,
            extensions: read_extensions(r)?,
        }),
        Act::Report => Body::Report(ReportBody {
            commitment: read_ref(r)?,
            state: read_word(r, ProgressState::ALL, "a progress state")?,
            claims: r.list(read_claim)?,
            next: r.option(read_text)?,
            extensions: read_extensions(r)?,
        }),
        Act::Revise => Body::Revise(ReviseBody {
            target: read_ref(r)?,
            previous: read_ref(r)?,
            mode: read_word(r, ReviseMode::ALL, "a revision mode")?,
            replacement: r.option(|r| read_json(r, 1))?,
            impact: r.list(|r| {
                Ok(Impact {
                    commitment: read_ref(r)?,
                    assessment: read_word(r, Assessment::ALL, "an assessment")?,
                    reason: read_text(r)?,
                })
            })?,
            extensions: read_extensions(r)?,
        }),
        Act::Ack => Body::Ack(AckBody {
            target: read_ref(r)?,
            extensions: read_extensions(r)?,
        }),
        Act::Challenge => Body::Challenge(ChallengeBody {
            target: read_ref(r)?,
            kind: read_word(r, ChallengeKind::ALL, "a challenge kind")?,
            reason: read_text(r)?,
            claims: r.list(read_claim)?,
            extensions: read_extensions(r)?,
        }),
    })
}

/// Writes `m`.
pub(crate) fn message(o: &mut Out, m: &Message) {
    o.str(m.id.as_str());
    o.str(m.from.as_str());
    o.list(m.to.iter(), |o, p| o.str(p.as_str()));
    o.str(m.thread.as_str());
    o.option(m.reply.as_ref(), |o, r| o.str(r.as_str()));
    o.u8(word(Act::ALL, m.act()));
    body(o, &m.body);
    o.option(m.evidence.as_ref(), |o, e| o.list(e.iter(), evidence));
    extensions(o, m.extensions.as_ref());
}

/// Reads a message [`message`] wrote.
pub(crate) fn read_message(r: &mut In) -> Result<Message, StateError> {
    let id = read_ref(r)?;
    let from = read_participant(r)?;
    let to = NonEmptyVec::new(r.list(read_participant)?)
        .ok_or_else(|| StateError::new("a message to nobody"))?;
    let thread = read_thread(r)?;
    let reply = r.option(read_ref)?;
    let act = read_word(r, Act::ALL, "an act")?;
    Ok(Message {
        id,
        from,
        to,
        thread,
        reply,
        body: read_body(r, act)?,
        evidence: r.option(|r| r.list(read_evidence))?,
        extensions: read_extensions(r)?,
    })
}
