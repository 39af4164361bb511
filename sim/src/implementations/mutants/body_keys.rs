//! For `accepts-duplicate-keys-in-body`: a reader that is strict about the
//! envelope but lets a lenient JSON library read the body, the way an
//! implementation that parses the body as a free-form map in a second pass
//! would.

use std::fmt;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Value;

/// The top-level members of a frame, in order, repeated keys kept.
struct Members(Vec<(String, Box<RawValue>)>);

impl<'de> serde::Deserialize<'de> for Members {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Members, D::Error> {
        struct Each;
        impl<'de> Visitor<'de> for Each {
            type Value = Members;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members, A::Error> {
                let mut out = Vec::new();
                while let Some(entry) = map.next_entry::<String, Box<RawValue>>()? {
                    out.push(entry);
                }
                Ok(Members(out))
            }
        }
        d.deserialize_map(Each)
    }
}

/// The frame with its `body` re-read leniently (the last of repeated keys
/// wins) and everything else byte for byte, or `None` when the body has no
/// repeated key to forgive or the frame is not JSON at all. Repeated keys
/// outside the body stay, so the strict reader still rejects them.
pub(super) fn body_forgiven(frame: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(frame).ok()?;
    let Members(members) = serde_json::from_str(text).ok()?;
    let mut changed = false;
    let mut parts = Vec::with_capacity(members.len());
    for (key, raw) in &members {
        let value = if key == "body" {
            let lenient: Value = serde_json::from_str(raw.get()).ok()?;
            let rewritten = serde_json::to_string(&lenient).ok()?;
            changed |= rewritten != raw.get();
            rewritten
        } else {
            raw.get().to_owned()
        };
        parts.push(format!("{}:{value}", serde_json::to_string(key).ok()?));
    }
    changed.then(|| format!("{{{}}}", parts.join(",")).into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forgives_the_body_only() {
        let body_dup = br#"{"tern":"0.1","act":"TELL","body":{"text":"a","text":"b"}}"#;
        assert_eq!(
            body_forgiven(body_dup).as_deref(),
            Some(br#"{"tern":"0.1","act":"TELL","body":{"text":"b"}}"#.as_slice())
        );
        let both = br#"{"tern":"0.1","tern":"0.1","body":{"text":"a","text":"b"}}"#;
        let forgiven = body_forgiven(both).expect("the body changes");
        assert!(String::from_utf8_lossy(&forgiven).contains(r#""tern":"0.1","tern":"0.1""#));
        assert_eq!(
            body_forgiven(br#"{"tern":"0.1","body":{"text":"a"}}"#),
            None
        );
        assert_eq!(body_forgiven(b"not json"), None);
    }
}
