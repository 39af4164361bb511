//! Properties of the wire layer over generated messages.

mod common;

use common::*;
use proptest::prelude::*;
use serde_json::Value;
use tern_model::wire::{parse_frame, ErrorClass};

fn expected_class(pointer: &str) -> ErrorClass {
    if pointer.starts_with("/body/") {
        ErrorClass::Body
    } else {
        ErrorClass::Envelope
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// No input makes the parser panic; whatever it says is well formed.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        if let Err(e) = parse_frame(&bytes) {
            prop_assert!(!e.message.is_empty());
        }
    }

    /// Bytes that are almost a message: a valid frame with one byte changed,
    /// inserted or removed, which reaches far deeper than random bytes.
    #[test]
    fn mutated_frames_never_panic(
        message in message(),
        at in any::<prop::sample::Index>(),
        byte in any::<u8>(),
        how in 0..3u8,
    ) {
        let mut bytes = serde_json::to_vec(&message).unwrap();
        let i = at.index(bytes.len());
        match how {
            0 => bytes[i] = byte,
            1 => bytes.insert(i, byte),
            _ => { bytes.remove(i); }
        }
        let _ = parse_frame(&bytes);
    }

    /// Every generated valid message parses, prints back to the same JSON, and
    /// that print parses to an equal message.
    #[test]
    fn valid_messages_round_trip(message in message()) {
        let bytes = serde_json::to_vec(&message).unwrap();
        let parsed = parse_frame(&bytes).map_err(|e| TestCaseError::fail(format!("{e}\n{message}")))?;
        let printed = parsed.to_json_line();
        let reprinted: Value = serde_json::from_str(&printed).unwrap();
        prop_assert_eq!(&reprinted, &message);
        let reparsed = parse_frame(printed.as_bytes()).unwrap();
        prop_assert_eq!(reparsed, parsed);
    }

    /// A parsed message's canonical text, which views show, is exactly
    /// what printing its JSON tree gives: sorted keys at every depth,
    /// numbers as written, strings escaped as serde_json escapes them.
    #[test]
    fn canonical_text_is_the_printed_tree(message in message()) {
        let parsed = parse_frame(&serde_json::to_vec(&message).unwrap()).unwrap();
        let canonical = tern_model::canonical::to_canonical_string(&parsed).unwrap();
        prop_assert_eq!(canonical, serde_json::to_value(&parsed).unwrap().to_string());
    }

    /// Pretty-printing and key order change nothing (section 1).
    #[test]
    fn whitespace_and_key_order_are_irrelevant(message in message()) {
        let compact = parse_frame(&serde_json::to_vec(&message).unwrap()).unwrap();
        let pretty = parse_frame(serde_json::to_string_pretty(&message).unwrap().as_bytes()).unwrap();
        prop_assert_eq!(&pretty, &compact);
        // Reverse every object's key order by writing keys in descending order.
        let reversed = reverse_keys(&message);
        prop_assert_eq!(parse_frame(reversed.as_bytes()).unwrap(), compact);
    }

    /// Removing any one required field is an envelope or body error that
    /// points at the field.
    #[test]
    fn a_removed_required_field_is_named(message in message(), pick in any::<prop::sample::Index>()) {
        let paths = required_paths(&message);
        let path = &paths[pick.index(paths.len())];
        let mut broken = message.clone();
        remove(&mut broken, path);
        let err = parse_frame(&serde_json::to_vec(&broken).unwrap()).unwrap_err();
        let ptr = pointer(path);
        prop_assert_eq!(err.pointer.as_str(), ptr.as_str(), "{}", err);
        prop_assert_eq!(err.class, expected_class(&ptr), "{}", err);
    }

    /// Giving any one required field a value of another JSON type is an
    /// envelope or body error that points at the field.
    #[test]
    fn a_retyped_required_field_is_named(message in message(), pick in any::<prop::sample::Index>()) {
        let paths = required_paths(&message);
        let path = &paths[pick.index(paths.len())];
        let mut broken = message.clone();
        let slot = get_mut(&mut broken, path);
        *slot = retyped(slot);
        let err = parse_frame(&serde_json::to_vec(&broken).unwrap()).unwrap_err();
        let ptr = pointer(path);
        prop_assert_eq!(err.pointer.as_str(), ptr.as_str(), "{}", err);
        prop_assert_eq!(err.class, expected_class(&ptr), "{}", err);
    }

    /// Writing any one required field twice is a parse error (duplicate key)
    /// that points at the field, even with an identical value.
    #[test]
    fn a_duplicated_required_field_is_a_parse_error(message in message(), pick in any::<prop::sample::Index>()) {
        let paths = required_paths(&message);
        let path = &paths[pick.index(paths.len())];
        let text = with_duplicate(&message, path);
        let err = parse_frame(text.as_bytes()).unwrap_err();
        let ptr = pointer(path);
        prop_assert_eq!(err.class, ErrorClass::Parse, "{}", err);
        prop_assert_eq!(err.pointer.as_str(), ptr.as_str(), "{}", err);
    }

    /// A key written with a \u escape is the same key (section 1 duplicate rule).
    #[test]
    fn escaped_keys_are_the_same_keys(message in message()) {
        let escaped = map_keys(&message, &|k| k.to_owned());
        let text = serde_json::to_string(&escaped).unwrap().replace("\"tern\":", "\"t\\u0065rn\":");
        prop_assert_eq!(parse_frame(text.as_bytes()).unwrap(), parse_frame(&serde_json::to_vec(&message).unwrap()).unwrap());
        let doubled = text.replacen('{', "{\"tern\":\"0.1\",", 1);
        let err = parse_frame(doubled.as_bytes()).unwrap_err();
        prop_assert_eq!(err.class, ErrorClass::Parse);
        prop_assert_eq!(err.pointer.as_str(), "/tern");
    }
}

fn reverse_keys(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let parts: Vec<String> = m
                .iter()
                .rev()
                .map(|(k, v)| format!("{}:{}", serde_json::to_string(k).unwrap(), reverse_keys(v)))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(items) => {
            format!(
                "[{}]",
                items.iter().map(reverse_keys).collect::<Vec<_>>().join(",")
            )
        }
        other => serde_json::to_string(other).unwrap(),
    }
}
