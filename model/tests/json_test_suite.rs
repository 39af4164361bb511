//! The JSONTestSuite parsing corpus against the strict wire layer (profile
//! rules P-JSON-*): every `n_` file is a `parse` error, no `y_` file is one
//! except the two with duplicate keys, and every `i_` file gets a verdict
//! without panicking, the one docs/profile.md lists.

use std::path::PathBuf;

use tern_model::wire::{parse_frame, ErrorClass};

/// The corpus is vendored in the repository (`tests/data/JSONTestSuite`, MIT,
/// with its source and commit in `SOURCE.md`), so a lone clone runs this test.
fn corpus_dir() -> PathBuf {
    let dir =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/JSONTestSuite/test_parsing");
    assert!(
        dir.is_dir(),
        "JSONTestSuite corpus not found at {}",
        dir.display()
    );
    dir
}

fn files(prefix: &str) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(corpus_dir())
        .expect("corpus directory is readable")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix) && n.ends_with(".json"))
        })
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).expect("corpus file is readable"))
        })
        .collect();
    out.sort();
    out
}

#[test]
fn every_n_file_is_a_parse_error() {
    let cases = files("n_");
    assert_eq!(cases.len(), 188, "the corpus has 188 n_ files");
    let wrong: Vec<String> = cases
        .iter()
        .filter_map(|(name, bytes)| match parse_frame(bytes) {
            Err(e) if e.class == ErrorClass::Parse => None,
            other => Some(format!("{name}: {other:?}")),
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "not rejected as parse:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_y_file_is_a_parse_error_except_duplicate_keys() {
    let cases = files("y_");
    assert_eq!(cases.len(), 95, "the corpus has 95 y_ files");
    for (name, bytes) in &cases {
        let result = parse_frame(bytes);
        let duplicate = name.starts_with("y_object_duplicated_key");
        match result {
            Err(e) if duplicate => {
                assert_eq!(e.class, ErrorClass::Parse, "{name}: {e}");
                assert!(e.message.contains("duplicate key"), "{name}: {e}");
            }
            Err(e) => assert_ne!(e.class, ErrorClass::Parse, "{name}: {e}"),
            Ok(m) => panic!("{name} is not a Tern message, yet parsed as {m:?}"),
        }
    }
}

/// The verdict of every implementation-defined file, as docs/profile.md states it.
#[test]
fn every_i_file_gets_the_documented_verdict() {
    let cases = files("i_");
    assert_eq!(cases.len(), 35, "the corpus has 35 i_ files");
    for (name, bytes) in &cases {
        let err = parse_frame(bytes).expect_err("no i_ file is a Tern message");
        // These five numbers (one underflowing, four large but finite) are
        // valid strict JSON; they fail later because they are not a message.
        let strict_json = matches!(
            name.as_str(),
            "i_number_double_huge_neg_exp.json"
                | "i_number_real_underflow.json"
                | "i_number_too_big_neg_int.json"
                | "i_number_too_big_pos_int.json"
                | "i_number_very_big_negative_int.json"
        );
        if strict_json {
            assert_eq!(err.class, ErrorClass::Envelope, "{name}: {err}");
        } else {
            assert_eq!(err.class, ErrorClass::Parse, "{name}: {err}");
        }
    }
}
