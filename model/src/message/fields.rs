//! Field shapes shared by every body: how "required but may be null",
//! "optional but never null", nonempty lists and extensions are read.
//!
//! The distinction matters for deduplication: an absent key and a key set to
//! `null` are different JSON, so the profile never lets both mean "nothing".

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Deref;

use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde::{Serialize, Serializer};

use crate::json::Json;

/// For fields that must be present and may be `null` (`reply`, `due`,
/// `authority_ref`, ...). Using `deserialize_with` stops serde from treating a
/// missing key as `None`.
pub(crate) fn nullable<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer)
}

/// For fields that may be absent but, when present, must hold a value: `null`
/// is a type error rather than a second spelling of "absent".
pub(crate) fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

/// A list that must hold at least one element (e.g. `to`, a TELL's claims).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NonEmptyVec<T>(Vec<T>);

impl<T> NonEmptyVec<T> {
    pub fn new(items: Vec<T>) -> Option<NonEmptyVec<T>> {
        (!items.is_empty()).then_some(NonEmptyVec(items))
    }

    pub fn into_vec(self) -> Vec<T> {
        self.0
    }

    /// Gives back the room the list grew into while it was read, for
    /// values that are kept.
    pub fn shrink_to_fit(&mut self) {
        self.0.shrink_to_fit();
    }

    /// The items, to change in place (the list stays nonempty).
    pub fn items_mut(&mut self) -> &mut [T] {
        &mut self.0
    }
}

impl<T> Deref for NonEmptyVec<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.0
    }
}

impl<T: Serialize> Serialize for NonEmptyVec<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for NonEmptyVec<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<NonEmptyVec<T>, D::Error> {
        let items = Vec::<T>::deserialize(deserializer)?;
        NonEmptyVec::new(items).ok_or_else(|| de::Error::custom("must be a nonempty list"))
    }
}

/// The `extensions` object (section 1): the only place unknown fields may
/// appear. Its content is kept as strict JSON and never interpreted, because
/// "Extensions must never change core semantics".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extensions(BTreeMap<String, Json>);

impl Extensions {
    pub fn new(members: BTreeMap<String, Json>) -> Extensions {
        Extensions(members)
    }

    pub fn members(&self) -> &BTreeMap<String, Json> {
        &self.0
    }
}

impl Serialize for Extensions {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Extensions {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Extensions, D::Error> {
        match Json::deserialize(deserializer)? {
            Json::Object(members) => Ok(Extensions(members)),
            other => Err(de::Error::custom(format_args!(
                "extensions must be an object, found {}",
                JsonKind(&other)
            ))),
        }
    }
}

/// Names a JSON value's type in error messages.
pub(crate) struct JsonKind<'a>(pub &'a Json);

impl fmt::Display for JsonKind<'_> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self.0 {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Number(_) => "a number",
            Json::String(_) => "a string",
            Json::Array(_) => "an array",
            Json::Object(_) => "an object",
        })
    }
}

/// Makes a derived struct accept only a JSON object.
///
/// serde's derived readers also accept an array of positional fields, which
/// would let `["x"]` stand for `{"question": "x"}`: an implicit conversion
/// that section 1 forbids. Every struct of the vocabulary is read through this
/// wrapper, which asks the underlying reader for a map and nothing else.
pub(crate) struct ObjectOnly<D>(pub D);

impl<'de, D: Deserializer<'de>> Deserializer<'de> for ObjectOnly<D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_map(visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

/// Implements `Serialize` and `Deserialize` for structs derived with
/// `#[serde(remote = "Self")]`, reading them through [`ObjectOnly`].
macro_rules! object_only {
    ($($ty:ty),* $(,)?) => {$(
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                <$ty>::serialize(self, serializer)
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<$ty, D::Error> {
                <$ty>::deserialize($crate::message::fields::ObjectOnly(deserializer))
            }
        }
    )*};
}
pub(crate) use object_only;
