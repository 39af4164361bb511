//! The strict JSON value: what tern-sim keeps of free-form data, and the
//! walker that enforces Tern's JSON rules (section 1) on any value.
//!
//! `serde_json::Value` silently keeps the last of two duplicate keys, so it can
//! neither detect the duplicate-key rule nor serve as the ground truth for
//! structural equality. [`Json`] is built by [`StrictSeed`], which rejects a
//! key seen twice in one object (compared after unescaping, so `"q\u0075estion"`
//! equals `"question"`), rejects numbers that do not fit a finite binary64, and
//! can record the JSON pointer of the place where reading stopped.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

use crate::wire::Pointer;

/// A JSON value read under Tern's strict rules.
///
/// Objects are kept sorted by key because key order carries no meaning
/// (section 1: "Object key order is irrelevant"); derived equality on this
/// type is therefore exactly the profile's structural equality.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Json>),
    Object(BTreeMap<String, Json>),
}

/// A finite JSON number, compared by its binary64 value (profile rule P-EQ-3):
/// `1`, `1.0` and `10e-1` are equal, and `-0` equals `0`.
#[derive(Debug, Clone, Copy)]
pub struct Number(f64);

impl Number {
    /// Rejects the non-finite values that JSON text cannot carry.
    pub fn new(value: f64) -> Option<Number> {
        value.is_finite().then_some(Number(value))
    }

    pub fn get(self) -> f64 {
        self.0
    }
}

impl PartialEq for Number {
    fn eq(&self, other: &Number) -> bool {
        // IEEE equality: finite by construction, and -0 == 0 as the profile says.
        self.0 == other.0
    }
}

impl Eq for Number {}
impl Eq for Json {}

impl Serialize for Number {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Integral values within the exactly representable range print without
        // a fraction so that re-serialised extensions stay readable.
        const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
        if self.0.fract() == 0.0 && self.0.abs() < EXACT {
            // -0 prints as 0: the two are equal (P-EQ-3), so one spelling
            // keeps views independent of which arrived first.
            serializer.serialize_i64(self.0 as i64)
        } else {
            serializer.serialize_f64(self.0)
        }
    }
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => serializer.serialize_unit(),
            Json::Bool(b) => serializer.serialize_bool(*b),
            Json::Number(n) => n.serialize(serializer),
            Json::String(s) => serializer.serialize_str(s),
            Json::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Json::Object(members) => {
                let mut map = serializer.serialize_map(Some(members.len()))?;
                for (k, v) in members {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> de::Deserialize<'de> for Json {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Json, D::Error> {
        StrictSeed { tracker: None }.deserialize(deserializer)
    }
}

/// Remembers where in the document reading currently is, so that the first
/// error can be reported with a JSON pointer.
///
/// Segments are pushed before a child is read and popped only when it was read
/// successfully; an error propagates straight up, which leaves the stack
/// holding exactly the path of the failure.
#[derive(Debug, Default)]
pub struct PathTracker {
    stack: RefCell<Vec<Segment>>,
}

#[derive(Debug, Clone)]
enum Segment {
    Key(String),
    Index(usize),
}

impl PathTracker {
    fn push(&self, segment: Segment) {
        self.stack.borrow_mut().push(segment);
    }

    fn pop(&self) {
        self.stack.borrow_mut().pop();
    }

    /// The pointer of the place where reading stopped.
    pub fn pointer(&self) -> Pointer {
        let mut pointer = Pointer::root();
        for segment in self.stack.borrow().iter() {
            match segment {
                Segment::Key(k) => pointer.push_key(k),
                Segment::Index(i) => pointer.push_index(*i),
            }
        }
        pointer
    }
}

/// Deserialises one value into [`Json`] under the strict rules, optionally
/// tracking the path for error reports.
#[derive(Clone, Copy)]
pub struct StrictSeed<'t> {
    pub tracker: Option<&'t PathTracker>,
}

impl StrictSeed<'_> {
    fn push(&self, segment: Segment) {
        if let Some(t) = self.tracker {
            t.push(segment);
        }
    }

    fn pop(&self) {
        if let Some(t) = self.tracker {
            t.pop();
        }
    }
}

impl<'de> DeserializeSeed<'de> for StrictSeed<'_> {
    type Value = Json;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Json, D::Error> {
        deserializer.deserialize_any(self)
    }
}

/// A key read without losing its unescaped text, borrowed where the input allows.
struct Key(String);

impl<'de> de::Deserialize<'de> for Key {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Key, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
                Ok(Key(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Key, E> {
                Ok(Key(v))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

impl<'de> Visitor<'de> for StrictSeed<'_> {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Bool(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Json, E> {
        // Round-to-nearest once, exactly as parsing the lexeme as binary64 would.
        Ok(Json::Number(Number(v as f64)))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Json, E> {
        Ok(Json::Number(Number(v as f64)))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Json, E> {
        Number::new(v)
            .map(Json::Number)
            .ok_or_else(|| E::custom("number is not finite"))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Json, E> {
        Ok(Json::String(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Json, E> {
        Ok(Json::String(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        loop {
            self.push(Segment::Index(items.len()));
            match seq.next_element_seed(self)? {
                Some(item) => {
                    self.pop();
                    items.push(item);
                }
                None => {
                    self.pop();
                    return Ok(Json::Array(items));
                }
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut members = BTreeMap::new();
        while let Some(Key(key)) = map.next_key()? {
            self.push(Segment::Key(key.clone()));
            if members.contains_key(&key) {
                return Err(de::Error::custom(DuplicateKey(&key)));
            }
            let value = map.next_value_seed(self)?;
            self.pop();
            members.insert(key, value);
        }
        Ok(Json::Object(members))
    }
}

/// The one wording of the duplicate-key error, shared by every reader.
pub struct DuplicateKey<'a>(pub &'a str);

impl fmt::Display for DuplicateKey<'_> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "duplicate key `{}`", self.0)
    }
}
