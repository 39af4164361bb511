//! Matching a view against a case's pattern (docs/corpus.md section 2.3):
//! objects match on the members the pattern names, arrays element by
//! element with the same length, everything else by equality. Partial
//! objects let a case state what it is about without freezing every other
//! detail of the view; full-length arrays keep "nothing else is there"
//! checkable. The one pattern that is not a value, [`ABSENT`], says that a
//! member is not there at all, which no value can say: `null` matches only
//! a member that is present and null.

use serde_json::Value;

/// The key of the absent marker, `{"$absent": true}`: as the pattern of an
/// object's member, it matches only when the member is missing.
pub const ABSENT: &str = "$absent";

/// Whether `pattern` is the absent marker.
pub fn is_absent_marker(pattern: &Value) -> bool {
    pattern
        .as_object()
        .is_some_and(|m| m.len() == 1 && m.get(ABSENT) == Some(&Value::Bool(true)))
}

/// The pointer of the first absent marker in `pattern` that is not the
/// pattern of an object's member (the whole pattern, or an array element),
/// where "absent" means nothing: a case with one is malformed.
pub fn misplaced_absent(pattern: &Value) -> Option<String> {
    fn walk(v: &Value, member: bool, at: &mut String) -> Option<String> {
        if is_absent_marker(v) {
            return (!member).then(|| at.clone());
        }
        let children: Vec<(String, &Value, bool)> = match v {
            Value::Object(m) => m
                .iter()
                .map(|(k, x)| (k.replace('~', "~0").replace('/', "~1"), x, true))
                .collect(),
            Value::Array(a) => a
                .iter()
                .enumerate()
                .map(|(i, x)| (i.to_string(), x, false))
                .collect(),
            _ => Vec::new(),
        };
        for (seg, child, member) in children {
            let len = at.len();
            at.push('/');
            at.push_str(&seg);
            let found = walk(child, member, at);
            at.truncate(len);
            if found.is_some() {
                return found;
            }
        }
        None
    }
    walk(pattern, false, &mut String::new())
}

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
                    None if is_absent_marker(want) => None,
                    Some(got) if is_absent_marker(want) => Some((
                        at.clone(),
                        format!("expected the member to be absent, got {}", short(got)),
                    )),
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
    fn the_absent_marker_matches_only_a_missing_member() {
        let absent = json!({"content": {"evidence": {"$absent": true}}});
        assert_eq!(mismatch(&absent, &json!({"content": {"body": {}}})), None);
        for present in [json!(null), json!([]), json!({"$absent": true})] {
            assert_eq!(
                mismatch(&absent, &json!({"content": {"evidence": present}})).map(|m| m.0),
                Some("/content/evidence".into())
            );
        }
        // Anything else keyed `$absent` is an ordinary object pattern.
        let literal = json!({"x": {"$absent": false}});
        assert_eq!(mismatch(&literal, &json!({"x": {"$absent": false}})), None);
        assert!(mismatch(&literal, &json!({})).is_some());
    }

    #[test]
    fn an_absent_marker_outside_a_member_is_misplaced() {
        assert_eq!(misplaced_absent(&json!({"a": {"$absent": true}})), None);
        assert_eq!(
            misplaced_absent(&json!({"a": [{"$absent": true}]})),
            Some("/a/0".into())
        );
        assert_eq!(misplaced_absent(&json!({"$absent": true})), Some("".into()));
    }

    #[test]
    fn scalars_and_types_compare_exactly() {
        assert!(mismatch(&json!(1), &json!("1")).is_some());
        assert!(mismatch(&json!(null), &json!({})).is_some());
        assert!(mismatch(&json!({"a~b/c": 1}), &json!({"a~b/c": 2}))
            .is_some_and(|(p, _)| p == "/a~0b~1c"));
    }
}
