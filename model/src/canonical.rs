//! Canonical JSON (sorted keys, no spaces) written straight from any
//! `Serialize` value, byte for byte what printing its `serde_json::Value`
//! gives.
//!
//! Views carry every stored message's canonical JSON. Going through a
//! `Value` tree allocates a string per field and a node per key, and cost
//! more than parsing the frame did; here each object's members are written
//! once into a scratch buffer, then copied out in key order.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use serde::ser::{self, Serialize};

/// The name under which `serde_json` (built with `arbitrary_precision`)
/// passes a number as its literal text.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";
/// The same for a `RawValue`: JSON text to copy as it is.
const RAW_TOKEN: &str = "$serde_json::private::RawValue";

/// Why a value has no canonical JSON: a map key that is not a string or a
/// number, or a value `Serialize` itself refused.
#[derive(Debug)]
pub struct CanonicalError(String);

impl fmt::Display for CanonicalError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CanonicalError {}

impl ser::Error for CanonicalError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        CanonicalError(msg.to_string())
    }
}

/// `value` as canonical JSON: what `serde_json::to_value(value)?.to_string()`
/// gives, without building the tree.
pub fn to_canonical_string<T: Serialize + ?Sized>(value: &T) -> Result<String, CanonicalError> {
    let mut out = Vec::with_capacity(256);
    value.serialize(Writer { out: &mut out })?;
    // Everything written is UTF-8: punctuation, escaped strings, numbers.
    String::from_utf8(out).map_err(|e| CanonicalError(e.to_string()))
}

/// Calls `$each!` with every scalar serializer method a map key may spell
/// out too (every scalar but the floats), so both serializers list them
/// once.
macro_rules! with_keyable_scalars {
    ($each:ident) => {
        $each! {
            serialize_bool: bool,
            serialize_i8: i8,
            serialize_i16: i16,
            serialize_i32: i32,
            serialize_i64: i64,
            serialize_i128: i128,
            serialize_u8: u8,
            serialize_u16: u16,
            serialize_u32: u32,
            serialize_u64: u64,
            serialize_u128: u128,
            serialize_char: char,
        }
    };
}

/// Serializer methods that write a scalar as `serde_json` spells it.
macro_rules! scalars {
    ($($method:ident: $ty:ty),* $(,)?) => {$(
        fn $method(self, v: $ty) -> Result<(), CanonicalError> {
            self.scalar(&v)
        }
    )*};
}

/// Key serializer methods that spell a scalar out as a string.
macro_rules! spelt_keys {
    ($($method:ident: $ty:ty),* $(,)?) => {$(
        fn $method(self, v: $ty) -> Result<String, CanonicalError> {
            Ok(v.to_string())
        }
    )*};
}

/// Writes one value at the end of `out`.
struct Writer<'a> {
    out: &'a mut Vec<u8>,
}

impl Writer<'_> {
    /// A scalar, spelt as `serde_json` prints it.
    fn scalar<T: Serialize + ?Sized>(self, v: &T) -> Result<(), CanonicalError> {
        serde_json::to_writer(&mut *self.out, v).map_err(|e| CanonicalError(e.to_string()))
    }
}

/// `{"variant":` before a value, `}` after it: how `serde_json` writes a
/// variant that carries data.
fn open_variant(out: &mut Vec<u8>, variant: &str) -> Result<(), CanonicalError> {
    out.push(b'{');
    Writer { out: &mut *out }.scalar(variant)?;
    out.push(b':');
    Ok(())
}

impl<'a> ser::Serializer for Writer<'a> {
    type Ok = ();
    type Error = CanonicalError;
    type SerializeSeq = Seq<'a>;
    type SerializeTuple = Seq<'a>;
    type SerializeTupleStruct = Seq<'a>;
    type SerializeTupleVariant = Seq<'a>;
    type SerializeMap = Object<'a>;
    type SerializeStruct = Object<'a>;
    type SerializeStructVariant = Object<'a>;

    with_keyable_scalars!(scalars);
    scalars! {
        serialize_f32: f32,
        serialize_f64: f64,
    }
    fn serialize_str(self, v: &str) -> Result<(), CanonicalError> {
        self.scalar(v)
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), CanonicalError> {
        self.scalar(v)
    }
    fn serialize_none(self) -> Result<(), CanonicalError> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), CanonicalError> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), CanonicalError> {
        self.serialize_none()
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), CanonicalError> {
        self.serialize_none()
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), CanonicalError> {
        self.scalar(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), CanonicalError> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), CanonicalError> {
        open_variant(self.out, variant)?;
        value.serialize(Writer {
            out: &mut *self.out,
        })?;
        self.out.push(b'}');
        Ok(())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Seq<'a>, CanonicalError> {
        self.out.push(b'[');
        Ok(Seq {
            out: self.out,
            first: true,
            variant: false,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<Seq<'a>, CanonicalError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Seq<'a>, CanonicalError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Seq<'a>, CanonicalError> {
        open_variant(self.out, variant)?;
        self.out.push(b'[');
        Ok(Seq {
            out: self.out,
            first: true,
            variant: true,
        })
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Object<'a>, CanonicalError> {
        Ok(Object::new(self.out, ObjectKind::Plain))
    }
    fn serialize_struct(
        self,
        name: &'static str,
        _len: usize,
    ) -> Result<Object<'a>, CanonicalError> {
        let kind = match name {
            NUMBER_TOKEN => ObjectKind::Number,
            RAW_TOKEN => ObjectKind::Raw,
            _ => ObjectKind::Plain,
        };
        Ok(Object::new(self.out, kind))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Object<'a>, CanonicalError> {
        open_variant(self.out, variant)?;
        Ok(Object::new(self.out, ObjectKind::Variant))
    }
}

/// A list being written.
struct Seq<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
    /// Inside `{"variant":`, which `end` closes too.
    variant: bool,
}

impl Seq<'_> {
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), CanonicalError> {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        value.serialize(Writer {
            out: &mut *self.out,
        })
    }

    fn close(self) -> Result<(), CanonicalError> {
        self.out.push(b']');
        if self.variant {
            self.out.push(b'}');
        }
        Ok(())
    }
}

/// The list traits serde splits by what is listed; all write the same.
macro_rules! list_impls {
    ($($trait:ident :: $method:ident),* $(,)?) => {$(
        impl ser::$trait for Seq<'_> {
            type Ok = ();
            type Error = CanonicalError;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), CanonicalError> {
                self.element(value)
            }
            fn end(self) -> Result<(), CanonicalError> {
                self.close()
            }
        }
    )*};
}

list_impls! {
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ObjectKind {
    Plain,
    /// Inside `{"variant":`, which `end` closes too.
    Variant,
    /// `serde_json`'s private number: its one field is the literal,
    /// written as it is.
    Number,
    /// `serde_json`'s raw value: its one field is JSON text, which a
    /// `Value` would hold parsed, so it is written canonically.
    Raw,
}

/// An object being written: members go to a scratch buffer as they come,
/// and out in key order at the end.
struct Object<'a> {
    out: &'a mut Vec<u8>,
    kind: ObjectKind,
    scratch: Vec<u8>,
    /// Each member's key and where its value lies in `scratch`.
    members: Vec<(Cow<'static, str>, Range<usize>)>,
    /// The key given by `serialize_key`, until its value comes.
    key: Option<String>,
}

impl<'a> Object<'a> {
    fn new(out: &'a mut Vec<u8>, kind: ObjectKind) -> Object<'a> {
        Object {
            out,
            kind,
            scratch: Vec::new(),
            members: Vec::new(),
            key: None,
        }
    }

    fn member<T: Serialize + ?Sized>(
        &mut self,
        key: Cow<'static, str>,
        value: &T,
    ) -> Result<(), CanonicalError> {
        match self.kind {
            ObjectKind::Number => {
                let literal = value.serialize(KeyWriter)?;
                self.out.extend_from_slice(literal.as_bytes());
                return Ok(());
            }
            ObjectKind::Raw => {
                let text = value.serialize(KeyWriter)?;
                let parsed: serde_json::Value =
                    serde_json::from_str(&text).map_err(|e| CanonicalError(e.to_string()))?;
                parsed.serialize(Writer {
                    out: &mut *self.out,
                })?;
                return Ok(());
            }
            ObjectKind::Plain | ObjectKind::Variant => {}
        }
        let start = self.scratch.len();
        value.serialize(Writer {
            out: &mut self.scratch,
        })?;
        self.members.push((key, start..self.scratch.len()));
        Ok(())
    }

    fn close(mut self) -> Result<(), CanonicalError> {
        if matches!(self.kind, ObjectKind::Number | ObjectKind::Raw) {
            return Ok(());
        }
        // A later member under the same key replaces an earlier one, as
        // it does in a `Value`'s map: the stable sort keeps arrival order
        // among equal keys, and only the last of them is written.
        self.members.sort_by(|a, b| a.0.cmp(&b.0));
        self.out.push(b'{');
        let mut first = true;
        for (i, (key, range)) in self.members.iter().enumerate() {
            if self.members.get(i + 1).is_some_and(|next| next.0 == *key) {
                continue;
            }
            if !first {
                self.out.push(b',');
            }
            first = false;
            Writer {
                out: &mut *self.out,
            }
            .scalar(key.as_ref())?;
            self.out.push(b':');
            self.out.extend_from_slice(&self.scratch[range.clone()]);
        }
        self.out.push(b'}');
        if self.kind == ObjectKind::Variant {
            self.out.push(b'}');
        }
        Ok(())
    }
}

impl ser::SerializeMap for Object<'_> {
    type Ok = ();
    type Error = CanonicalError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), CanonicalError> {
        self.key = Some(key.serialize(KeyWriter)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), CanonicalError> {
        let key = self
            .key
            .take()
            .ok_or_else(|| CanonicalError("a map value came before its key".into()))?;
        self.member(Cow::Owned(key), value)
    }
    fn end(self) -> Result<(), CanonicalError> {
        self.close()
    }
}

/// Structs and struct variants, whose field names are static.
macro_rules! struct_impls {
    ($($trait:ident),*) => {$(
        impl ser::$trait for Object<'_> {
            type Ok = ();
            type Error = CanonicalError;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), CanonicalError> {
                self.member(Cow::Borrowed(key), value)
            }
            fn end(self) -> Result<(), CanonicalError> {
                self.close()
            }
        }
    )*};
}

struct_impls!(SerializeStruct, SerializeStructVariant);

/// A map key as the string a `Value`'s map keeps: strings as they are,
/// numbers, booleans and characters spelt out; nothing else is a key.
struct KeyWriter;

fn not_a_key() -> CanonicalError {
    CanonicalError("a map key must be a string".into())
}

impl ser::Serializer for KeyWriter {
    type Ok = String;
    type Error = CanonicalError;
    type SerializeSeq = ser::Impossible<String, CanonicalError>;
    type SerializeTuple = ser::Impossible<String, CanonicalError>;
    type SerializeTupleStruct = ser::Impossible<String, CanonicalError>;
    type SerializeTupleVariant = ser::Impossible<String, CanonicalError>;
    type SerializeMap = ser::Impossible<String, CanonicalError>;
    type SerializeStruct = ser::Impossible<String, CanonicalError>;
    type SerializeStructVariant = ser::Impossible<String, CanonicalError>;

    with_keyable_scalars!(spelt_keys);
    fn serialize_f32(self, _v: f32) -> Result<String, CanonicalError> {
        Err(not_a_key())
    }
    fn serialize_f64(self, _v: f64) -> Result<String, CanonicalError> {
        Err(not_a_key())
    }
    fn serialize_str(self, v: &str) -> Result<String, CanonicalError> {
        Ok(v.to_owned())
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<String, CanonicalError> {
        Err(not_a_key())
    }
    fn serialize_none(self) -> Result<String, CanonicalError> {
        Err(not_a_key())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<String, CanonicalError> {
        Err(not_a_key())
    }
    fn serialize_unit(self) -> Result<String, CanonicalError> {
        Err(not_a_key())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<String, CanonicalError> {
        Err(not_a_key())
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<String, CanonicalError> {
        Ok(variant.to_owned())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<String, CanonicalError> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<String, CanonicalError> {
        Err(not_a_key())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, CanonicalError> {
        Err(not_a_key())
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, CanonicalError> {
        Err(not_a_key())
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, CanonicalError> {
        Err(not_a_key())
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, CanonicalError> {
        Err(not_a_key())
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, CanonicalError> {
        Err(not_a_key())
    }
    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStruct, CanonicalError> {
        Err(not_a_key())
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, CanonicalError> {
        Err(not_a_key())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The one property: the same bytes as printing the `Value`.
    fn same_as_value<T: Serialize>(v: &T) {
        let expected = serde_json::to_value(v).expect("value").to_string();
        assert_eq!(to_canonical_string(v).expect("canonical"), expected);
    }

    #[test]
    fn sorts_keys_at_every_depth() {
        same_as_value(&json!({"b": 1, "a": {"z": [3, {"y": null, "x": true}], "m": "s"}}));
        assert_eq!(
            to_canonical_string(&json!({"b": 1, "a": 2})).expect("ok"),
            r#"{"a":2,"b":1}"#
        );
    }

    #[test]
    fn numbers_keep_their_literal() {
        for literal in [
            "0",
            "-1",
            "1.5",
            "1e400000",
            "1E+2",
            "-0.0",
            "123456789012345678901234567890",
        ] {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(literal) {
                same_as_value(&v);
            }
        }
        same_as_value(&1.0f64);
        same_as_value(&0.1f32);
        same_as_value(&u64::MAX);
        same_as_value(&i64::MIN);
        let raw = serde_json::value::RawValue::from_string(r#"{ "b" : 1, "a" : [2.50] }"#.into())
            .expect("raw");
        same_as_value(&raw);
    }

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        same_as_value(&json!({"q\"\\\u{1}\n": "tab\there é 😀 \u{7f}"}));
    }

    #[test]
    fn enums_structs_and_options() {
        #[derive(serde::Serialize)]
        enum E {
            Unit,
            New(u8),
            Tuple(u8, String),
            Struct { b: u8, a: Option<u8> },
        }
        #[derive(serde::Serialize)]
        struct S {
            z: Vec<E>,
            a: Option<String>,
            m: std::collections::BTreeMap<u32, bool>,
            t: (u8, char),
        }
        same_as_value(&S {
            z: vec![
                E::Unit,
                E::New(1),
                E::Tuple(2, "x".into()),
                E::Struct { b: 3, a: None },
            ],
            a: Some("y".into()),
            m: [(10, true), (2, false)].into_iter().collect(),
            t: (4, 'c'),
        });
    }

    #[test]
    fn a_later_duplicate_key_wins() {
        use ser::{SerializeMap, Serializer};
        struct Twice;
        impl Serialize for Twice {
            fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut m = s.serialize_map(None)?;
                m.serialize_entry("k", &1)?;
                m.serialize_entry("a", &0)?;
                m.serialize_entry("k", &2)?;
                m.end()
            }
        }
        same_as_value(&Twice);
        let mut out = Vec::new();
        let mut map = Writer { out: &mut out }.serialize_map(None).expect("map");
        map.serialize_entry(&1u8, &"one").expect("numeric key");
        map.end().expect("end");
        assert_eq!(out, br#"{"1":"one"}"#);
    }
}
