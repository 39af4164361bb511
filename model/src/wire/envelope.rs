//! Reading the envelope in one pass.
//!
//! The body's schema depends on `act`, but key order is irrelevant (section 1),
//! so `body` may arrive before `act`. When `act` is already known the body is
//! read straight into its typed struct; otherwise its text is borrowed and read
//! once the object ends. Either way each byte is parsed once on the common path.

use std::fmt;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::message::{
    Act, Body, BodySeed, Evidence, Extensions, MessageRef, NonEmptyVec, Participant, ThreadId,
};

pub(crate) const ENVELOPE_FIELDS: &[&str] = &[
    "tern",
    "id",
    "from",
    "to",
    "thread",
    "reply",
    "act",
    "body",
    "evidence",
    "extensions",
];

/// The body as found: typed if `act` came first, raw text otherwise.
// Lives on the stack for the length of one parse; boxing the typed variant
// would add an allocation to every message.
#[allow(clippy::large_enum_variant)]
pub(crate) enum DraftBody<'a> {
    Typed(Body),
    Raw(&'a RawValue),
}

/// Every envelope field read and type-checked, before the cross-field rules.
/// `B` is the body as found ([`DraftBody`]) or, once resolved, a [`Body`].
pub(crate) struct Draft<B> {
    pub tern: String,
    pub id: MessageRef,
    pub from: Participant,
    pub to: NonEmptyVec<Participant>,
    pub thread: ThreadId,
    pub reply: Option<MessageRef>,
    pub act: Act,
    pub body: B,
    pub evidence: Option<Vec<Evidence>>,
    pub extensions: Option<Extensions>,
}

impl<B> Draft<B> {
    /// Replaces the body, keeping every envelope field as read.
    pub fn try_with_body<C, E>(
        self,
        resolve: impl FnOnce(Act, B) -> Result<C, E>,
    ) -> Result<Draft<C>, E> {
        Ok(Draft {
            body: resolve(self.act, self.body)?,
            tern: self.tern,
            id: self.id,
            from: self.from,
            to: self.to,
            thread: self.thread,
            reply: self.reply,
            act: self.act,
            evidence: self.evidence,
            extensions: self.extensions,
        })
    }
}

enum Field {
    Tern,
    Id,
    From,
    To,
    Thread,
    Reply,
    Act,
    Body,
    Evidence,
    Extensions,
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Field, D::Error> {
        struct FieldVisitor;
        impl Visitor<'_> for FieldVisitor {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an envelope field name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Field, E> {
                Ok(match v {
                    "tern" => Field::Tern,
                    "id" => Field::Id,
                    "from" => Field::From,
                    "to" => Field::To,
                    "thread" => Field::Thread,
                    "reply" => Field::Reply,
                    "act" => Field::Act,
                    "body" => Field::Body,
                    "evidence" => Field::Evidence,
                    "extensions" => Field::Extensions,
                    other => return Err(E::unknown_field(other, ENVELOPE_FIELDS)),
                })
            }
        }
        deserializer.deserialize_identifier(FieldVisitor)
    }
}

/// Stores a field once; a second occurrence is a duplicate key.
fn once<T, E: de::Error>(slot: &mut Option<T>, name: &'static str, value: T) -> Result<(), E> {
    if slot.is_some() {
        return Err(E::duplicate_field(name));
    }
    *slot = Some(value);
    Ok(())
}

fn required<T, E: de::Error>(slot: Option<T>, name: &'static str) -> Result<T, E> {
    slot.ok_or_else(|| E::missing_field(name))
}

impl<'de: 'a, 'a> Deserialize<'de> for Draft<DraftBody<'a>> {
    fn deserialize<D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Draft<DraftBody<'a>>, D::Error> {
        DraftSeed { defer_body: false }.deserialize(deserializer)
    }
}

/// Reads the envelope; with `defer_body` the body is always kept raw, so that
/// a diagnosis can judge the envelope first whatever the key order.
pub(crate) struct DraftSeed {
    pub defer_body: bool,
}

impl<'de> DeserializeSeed<'de> for DraftSeed {
    type Value = Draft<DraftBody<'de>>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(DraftVisitor {
            defer_body: self.defer_body,
            marker: std::marker::PhantomData,
        })
    }
}

struct DraftVisitor<'a> {
    defer_body: bool,
    marker: std::marker::PhantomData<&'a ()>,
}

impl<'de: 'a, 'a> Visitor<'de> for DraftVisitor<'a> {
    type Value = Draft<DraftBody<'a>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Tern message (a JSON object)")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Draft<DraftBody<'a>>, M::Error> {
        let mut tern = None;
        let mut id = None;
        let mut from = None;
        let mut to = None;
        let mut thread = None;
        let mut reply = None;
        let mut act = None;
        let mut body = None;
        let mut evidence = None;
        let mut extensions = None;
        while let Some(field) = map.next_key::<Field>()? {
            match field {
                Field::Tern => once(&mut tern, "tern", map.next_value::<String>()?)?,
                Field::Id => once(&mut id, "id", map.next_value()?)?,
                Field::From => once(&mut from, "from", map.next_value()?)?,
                Field::To => once(&mut to, "to", map.next_value()?)?,
                Field::Thread => once(&mut thread, "thread", map.next_value()?)?,
                Field::Reply => once(&mut reply, "reply", map.next_value::<Option<MessageRef>>()?)?,
                Field::Act => once(&mut act, "act", map.next_value::<Act>()?)?,
                Field::Body => {
                    let value = match act {
                        Some(act) if !self.defer_body => {
                            DraftBody::Typed(map.next_value_seed(BodySeed(act))?)
                        }
                        _ => DraftBody::Raw(map.next_value::<&'a RawValue>()?),
                    };
                    once(&mut body, "body", value)?
                }
                Field::Evidence => once(&mut evidence, "evidence", map.next_value()?)?,
                Field::Extensions => once(&mut extensions, "extensions", map.next_value()?)?,
            }
        }
        Ok(Draft {
            tern: required(tern, "tern")?,
            id: required(id, "id")?,
            from: required(from, "from")?,
            to: required(to, "to")?,
            thread: required(thread, "thread")?,
            reply: required(reply, "reply")?,
            act: required(act, "act")?,
            body: required(body, "body")?,
            evidence,
            extensions,
        })
    }
}
