//! Matching a view against a case's pattern (docs/corpus.md section 2.3):
//! objects match on the members the pattern names, arrays element by
//! element with the same length, everything else by equality. Partial
//! objects let a case state what it is about without freezing every other
//! detail of the view; full-length arrays keep "nothing else is there"
//! checkable.

use serde_json::Value;

/// The first place where `actual` does not match `pattern`: a JSON pointer
/// and a sentence, or `None` when it matches.
pub fn mismatch(pattern: &Value, actual: &Value) -> Option<(String, String)> {
    walk(pattern, actual, &mut String::new())
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 160 {
        format!("{}…", s.chars().take(160).collect::<String>())
    } else {
        s
    }
}

fn walk(pattern: &Value, actual: &Value, at: &mut String) -> Option<(String, String)> {
    match (pattern, actual) {
        (Value::Object(p), Value::Object(a)) => {
            for (key, want) in p {
                let len = at.len();
                at.push('/');
                at.push_str(&key.replace('~', "~0").replace('/', "~1"));
                let found = match a.get(key) {
                    None => Some((
                        at.clone(),
                        format!("expected {}, but the member is missing", short(want)),
                    )),
                    Some(got) => walk(want, got, at),
                };
                at.truncate(len);
                if found.is_some() {
                    return found;
                }
            }
            None
        }
        (Value::Array(p), Value::Array(a)) => {
            if p.len() != a.len() {
                return Some((
                    at.clone(),
                    format!(
                        "expected {} element(s), got {}: {}",
                        p.len(),
                        a.len(),
                        short(actual)
                    ),
                ));
            }
            for (i, (want, got)) in p.iter().zip(a).enumerate() {
                let len = at.len();
                at.push('/');
                at.push_str(&i.to_string());
                let found = walk(want, got, at);
                at.truncate(len);
                if found.is_some() {
                    return found;
                }
            }
            None
        }
        (p, a) if p == a => None,
        (p, a) => Some((
            at.clone(),
            format!("expected {}, got {}", short(p), short(a)),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn objects_match_on_named_members_only() {
        let view = json!({"thread": "t", "pending": [], "commitments": [{"id": "b:1", "progress": "blocked", "reports": ["b:2"]}]});
        assert_eq!(
            mismatch(&json!({"commitments": [{"progress": "blocked"}]}), &view),
            None
        );
        assert_eq!(
            mismatch(&json!({"commitments": [{"progress": "fulfilled"}]}), &view),
            Some((
                "/commitments/0/progress".into(),
                "expected \"fulfilled\", got \"blocked\"".into()
            ))
        );
        assert_eq!(
            mismatch(&json!({"effects": []}), &view).map(|m| m.0),
            Some("/effects".into())
        );
    }

    #[test]
    fn arrays_must_have_the_same_length() {
        let view = json!({"pending": [{"id": "a:1"}]});
        assert_eq!(
            mismatch(&json!({"pending": []}), &view).map(|m| m.0),
            Some("/pending".into())
        );
        assert_eq!(mismatch(&json!({"pending": [{}]}), &view), None);
    }

    #[test]
    fn scalars_and_types_compare_exactly() {
        assert!(mismatch(&json!(1), &json!("1")).is_some());
        assert!(mismatch(&json!(null), &json!({})).is_some());
        assert!(mismatch(&json!({"a~b/c": 1}), &json!({"a~b/c": 2}))
            .is_some_and(|(p, _)| p == "/a~0b~1c"));
    }
}
