//! Where an expected value and an actual one differ, path by path. Two
//! views of 900 bytes that differ in one effect are unreadable side by
//! side; `/effects/0: expected "c1/bob:1", got nothing` is not.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::certify::validate::pointer_segment;

/// One place where two JSON values differ.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Difference {
    /// A JSON pointer (RFC 6901) into both values; empty for the whole.
    pub path: String,
    /// The expected value there, as compact JSON; null when absent.
    pub expected: Option<String>,
    /// The actual value there; null when absent.
    pub actual: Option<String>,
}

/// At most this many differences are kept: past it, the values are
/// unrelated and the full texts say more.
pub const MOST: usize = 20;

/// The differences between `expected` and `actual` when both are JSON
/// texts (a view, an answer); nothing when either is prose.
pub fn of_texts(expected: &str, actual: &str) -> Vec<Difference> {
    match (
        serde_json::from_str::<Value>(expected),
        serde_json::from_str::<Value>(actual),
    ) {
        (Ok(e), Ok(a)) if e.is_object() || e.is_array() => of_values(&e, &a),
        _ => Vec::new(),
    }
}

/// The differences between two values, in document order: members by
/// name, array elements by position, at most [`MOST`].
pub fn of_values(expected: &Value, actual: &Value) -> Vec<Difference> {
    let mut out = Vec::new();
    walk(String::new(), Some(expected), Some(actual), &mut out);
    out
}

fn walk(path: String, e: Option<&Value>, a: Option<&Value>, out: &mut Vec<Difference>) {
    if out.len() >= MOST || e == a {
        return;
    }
    match (e, a) {
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                walk(
                    format!("{path}/{}", pointer_segment(k)),
                    x.get(k),
                    y.get(k),
                    out,
                );
            }
        }
        (Some(Value::Array(x)), Some(Value::Array(y))) => {
            for i in 0..x.len().max(y.len()) {
                walk(format!("{path}/{i}"), x.get(i), y.get(i), out);
            }
        }
        _ => out.push(Difference {
            path,
            expected: e.map(Value::to_string),
            actual: a.map(Value::to_string),
        }),
    }
}

/// One difference in words, for the terminal.
pub fn line(d: &Difference) -> String {
    let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "nothing".to_owned());
    format!(
        "{}: expected {}, got {}",
        if d.path.is_empty() { "/" } else { &d.path },
        show(&d.expected),
        show(&d.actual)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_every_path_that_differs_and_only_those() {
        let e = r#"{"effects":["c1/bob:1"],"messages":[{"id":"a","status":"accepted"}],"thread":"t","a/b":1}"#;
        let a = r#"{"effects":[],"messages":[{"id":"a","status":"rejected"}],"thread":"t","extra":true,"a/b":1}"#;
        let d = of_texts(e, a);
        let lines: Vec<String> = d.iter().map(line).collect();
        assert_eq!(
            lines,
            [
                "/effects/0: expected \"c1/bob:1\", got nothing",
                "/extra: expected nothing, got true",
                "/messages/0/status: expected \"accepted\", got \"rejected\"",
            ]
        );
        assert!(of_texts(e, e).is_empty());
        let escaped = of_texts(r#"{"a/b":1}"#, r#"{"a/b":2}"#);
        assert_eq!(escaped[0].path, "/a~1b");
    }

    #[test]
    fn prose_has_no_paths_and_long_lists_are_cut() {
        assert!(of_texts("refused: already_executed", "executed").is_empty());
        assert!(of_texts("1", "2").is_empty());
        let e: Vec<u32> = (0..100).collect();
        let d = of_values(&serde_json::json!(e), &serde_json::json!([]));
        assert_eq!(d.len(), MOST);
        let whole = of_values(&serde_json::json!({"a": 1}), &serde_json::json!([1]));
        assert_eq!(whole.len(), 1);
        assert_eq!(line(&whole[0]), "/: expected {\"a\":1}, got [1]");
    }
}
