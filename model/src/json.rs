//! The strict JSON value: what tern-sim keeps of free-form data, and the
//! walker that enforces Tern's JSON rules (section 1) on any value.
//!
//! `serde_json::Value` silently keeps the last of two duplicate keys, so it can
//! neither detect the duplicate-key rule nor serve as the ground truth for
//! structural equality. [`Json`] is built by [`StrictSeed`], which rejects a
//! key seen twice in one object (compared after unescaping, so `"q\u0075estion"`
//! equals `"question"`), keeps numbers as exact decimals, rejects those that a
//! binary64 reader would make infinite, and can record the JSON pointer of the
//! place where reading stopped.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::ser::{self, Serialize, SerializeMap, SerializeSeq, Serializer};

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

/// A finite JSON number, held as its exact decimal value (profile rule
/// P-EQ-3): `1`, `1.0`, `1e0`, `10e-1` and `0.1e1` are one value, `-0` is
/// `0`, and `9007199254740993` is not `9007199254740992` even though both
/// round to one binary64.
///
/// The value is `(-1)^negative × digits × 10^exponent`, normalised so that
/// equal values have equal fields (which is why equality can be derived):
/// `digits` has no leading or trailing zeros, and zero is the empty string
/// with exponent 0 and no sign. The exponent saturates at the bounds of
/// `i128`; only a literal whose exponent is written with about 39 digits or
/// more gets there (see P-EQ-3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Number {
    negative: bool,
    digits: Box<str>,
    exponent: i128,
}

/// Why a number literal was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NumberError {
    /// Not the JSON number grammar (RFC 8259 section 6).
    #[error("invalid number")]
    Syntax,
    /// Rounds to an infinite binary64 (P-JSON-8).
    #[error("number out of range")]
    OutOfRange,
}

impl Number {
    /// Reads a JSON number literal exactly. A literal whose value would round
    /// to infinity as a binary64 is refused (P-JSON-8: the seed rejects
    /// non-finite numbers, and such a literal is one for most readers); one
    /// that underflows is kept, exactly.
    pub fn parse(literal: &str) -> Result<Number, NumberError> {
        let bytes = literal.as_bytes();
        let mut at = 0;
        let negative = bytes.first() == Some(&b'-');
        if negative {
            at += 1;
        }
        let int_start = at;
        while bytes.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
        let int = &literal[int_start..at];
        if int.is_empty() || (int.len() > 1 && int.starts_with('0')) {
            return Err(NumberError::Syntax);
        }
        let mut frac = "";
        if bytes.get(at) == Some(&b'.') {
            let start = at + 1;
            at = start;
            while bytes.get(at).is_some_and(u8::is_ascii_digit) {
                at += 1;
            }
            frac = &literal[start..at];
            if frac.is_empty() {
                return Err(NumberError::Syntax);
            }
        }
        let mut written: i128 = 0;
        if matches!(bytes.get(at), Some(b'e' | b'E')) {
            at += 1;
            let minus = match bytes.get(at) {
                Some(b'-') => {
                    at += 1;
                    true
                }
                Some(b'+') => {
                    at += 1;
                    false
                }
                _ => false,
            };
            let start = at;
            while let Some(d) = bytes.get(at).filter(|b| b.is_ascii_digit()) {
                let d = i128::from(d - b'0');
                written = written
                    .saturating_mul(10)
                    .saturating_add(if minus { -d } else { d });
                at += 1;
            }
            if at == start {
                return Err(NumberError::Syntax);
            }
        }
        if at != bytes.len() {
            return Err(NumberError::Syntax);
        }
        // Overflow is judged on the literal as a binary64 reader would see
        // it, so exactly the literals that such a reader makes infinite are
        // refused (Rust's reader is correctly rounded).
        let rounded: f64 = literal.parse().map_err(|_| NumberError::Syntax)?;
        if !rounded.is_finite() {
            return Err(NumberError::OutOfRange);
        }
        let frac_len = i128::try_from(frac.len()).unwrap_or(i128::MAX);
        Ok(Number::normalised(
            negative,
            format!("{int}{frac}"),
            written.saturating_sub(frac_len),
        ))
    }

    /// Sign, digits and exponent, as a snapshot keeps them (crate::binary).
    pub(crate) fn parts(&self) -> (bool, &str, i128) {
        (self.negative, &self.digits, self.exponent)
    }

    /// A number from [`Number::parts`] of one: normalised again, so that
    /// equality stays structural whatever the parts.
    pub(crate) fn from_parts(negative: bool, digits: &str, exponent: i128) -> Number {
        Number::normalised(negative, digits.to_owned(), exponent)
    }

    /// The number of an integer the JSON reader already holds exactly.
    fn integer(value: i128) -> Number {
        Number::normalised(value < 0, value.unsigned_abs().to_string(), 0)
    }

    fn normalised(negative: bool, mut digits: String, mut exponent: i128) -> Number {
        let trailing = digits.len() - digits.trim_end_matches('0').len();
        digits.truncate(digits.len() - trailing);
        exponent = exponent.saturating_add(i128::try_from(trailing).unwrap_or(i128::MAX));
        let digits = digits.trim_start_matches('0');
        if digits.is_empty() {
            return Number {
                negative: false,
                digits: "".into(),
                exponent: 0,
            };
        }
        Number {
            negative,
            digits: digits.into(),
            exponent,
        }
    }
}

/// The canonical spelling of the value, as views print it (docs/ledger.md
/// section 9.1): the layout of ECMAScript's Number-to-String (the one RFC
/// 8785 uses) applied to the exact digits instead of a binary64's shortest
/// ones. So `1e16` prints `10000000000000000`, `1e21` prints `1e+21`,
/// `0.000001` prints `0.000001`, `1e-7` prints `1e-7`, `-0` prints `0`, and
/// equal numbers always print the same bytes.
impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let digits = &*self.digits;
        if digits.is_empty() {
            return f.write_str("0");
        }
        if self.negative {
            f.write_str("-")?;
        }
        let k = i128::try_from(digits.len()).unwrap_or(i128::MAX);
        // The value is 0.digits × 10^n.
        let n = k.saturating_add(self.exponent);
        let zeros = |count: i128| "0".repeat(usize::try_from(count).unwrap_or(0));
        if (k..=21).contains(&n) {
            write!(f, "{digits}{}", zeros(n - k))
        } else if (1..=21).contains(&n) {
            let (int, frac) = digits.split_at(usize::try_from(n).unwrap_or(0));
            write!(f, "{int}.{frac}")
        } else if (-5..=0).contains(&n) {
            write!(f, "0.{}{digits}", zeros(-n))
        } else {
            let (first, rest) = digits.split_at(1);
            let e = n.saturating_sub(1);
            let sign = if e < 0 { '-' } else { '+' };
            if rest.is_empty() {
                write!(f, "{first}e{sign}{}", e.unsigned_abs())
            } else {
                write!(f, "{first}.{rest}e{sign}{}", e.unsigned_abs())
            }
        }
    }
}

impl Eq for Json {}

impl Serialize for Number {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // serde_json (built with `arbitrary_precision`) writes a number it
        // was given as text verbatim, so the canonical spelling survives.
        let text = self.to_string();
        let number: serde_json::Number = text.parse().map_err(ser::Error::custom)?;
        number.serialize(serializer)
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
        // The reader hands over integers that fit 64 bits already exact.
        Ok(Json::Number(Number::integer(i128::from(v))))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Json, E> {
        Ok(Json::Number(Number::integer(i128::from(v))))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Json, E> {
        // Only a reader other than serde_json's text reader gets here (that
        // one hands over the literal); a binary64's shortest decimal is the
        // value it holds.
        Number::parse(&v.to_string())
            .map(Json::Number)
            .map_err(|_| E::custom(NumberError::OutOfRange))
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
            let value = if members.is_empty() && key == NUMBER_TOKEN {
                match map.next_value_seed(MaybeLiteral(self))? {
                    Literal::Number(text) => {
                        // Not a member after all: the path is the number's.
                        self.pop();
                        return Number::parse(&text)
                            .map(Json::Number)
                            .map_err(de::Error::custom);
                    }
                    Literal::Value(value) => value,
                }
            } else {
                map.next_value_seed(self)?
            };
            self.pop();
            members.insert(key, value);
        }
        Ok(Json::Object(members))
    }
}

/// The key under which serde_json's `arbitrary_precision` reader hands over a
/// number's literal, as a one-member map.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// What the value under [`NUMBER_TOKEN`] turned out to be.
enum Literal {
    /// The literal of a number: serde_json hands it over as an owned string,
    /// while a string in the text always arrives borrowed or as `&str`. So an
    /// object in a frame that really has this key is still read as an object.
    Number(String),
    Value(Json),
}

struct MaybeLiteral<'t>(StrictSeed<'t>);

impl<'de> DeserializeSeed<'de> for MaybeLiteral<'_> {
    type Value = Literal;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Literal, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for MaybeLiteral<'_> {
    type Value = Literal;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Literal, E> {
        Ok(Literal::Number(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Literal, E> {
        self.0.visit_str(v).map(Literal::Value)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Literal, E> {
        self.0.visit_unit().map(Literal::Value)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Literal, E> {
        self.0.visit_bool(v).map(Literal::Value)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Literal, E> {
        self.0.visit_u64(v).map(Literal::Value)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Literal, E> {
        self.0.visit_i64(v).map(Literal::Value)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Literal, E> {
        self.0.visit_f64(v).map(Literal::Value)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Literal, A::Error> {
        self.0.visit_seq(seq).map(Literal::Value)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Literal, A::Error> {
        self.0.visit_map(map).map(Literal::Value)
    }
}

/// The one wording of the duplicate-key error, shared by every reader.
pub struct DuplicateKey<'a>(pub &'a str);

impl fmt::Display for DuplicateKey<'_> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "duplicate key `{}`", self.0)
    }
}
