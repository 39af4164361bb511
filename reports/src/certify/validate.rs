//! What `diff` demands of a report it reads back, beyond its shape: every
//! closed value (an outcome, a level, a simulation verdict) is one tern-sim
//! writes, case IDs are unique within an implementation, and the corpus
//! hash is a hash. A report that breaks one is refused with the JSON
//! pointer (RFC 6901) of the offending value, rather than compared wrongly.

use std::collections::BTreeSet;

use tern_harness::corpus::play::Status;
use tern_harness::corpus::Level;

use super::{Report, SCHEMA};

/// A report that is well-formed JSON of the right shape but says
/// something tern-sim never writes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("at {pointer}: {message}")]
pub struct Malformed {
    /// JSON pointer to the value.
    pub pointer: String,
    pub message: String,
}

/// One segment of a JSON pointer, `~` and `/` escaped as RFC 6901 says.
pub fn pointer_segment(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

/// The JSON pointer of what `serde_path_to_error` reports as the place of
/// a deserialization error.
pub fn pointer_of(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for segment in path.iter() {
        out.push('/');
        match segment {
            Segment::Seq { index } => out.push_str(&index.to_string()),
            Segment::Map { key } => out.push_str(&pointer_segment(key)),
            Segment::Enum { variant } => out.push_str(&pointer_segment(variant)),
            Segment::Unknown => out.push('?'),
        }
    }
    out
}

fn one_of(pointer: String, value: &str, allowed: &[&str]) -> Result<(), Malformed> {
    if allowed.contains(&value) {
        return Ok(());
    }
    Err(Malformed {
        pointer,
        message: format!(
            "`{value}` is not one of {}",
            allowed
                .iter()
                .map(|a| format!("`{a}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    })
}

fn level(pointer: String, value: &str) -> Result<(), Malformed> {
    match Level::from_name(value) {
        Some(_) => Ok(()),
        None => one_of(pointer, value, &["core", "profile"]),
    }
}

/// Checks everything `diff` relies on (see the module comment).
pub fn validate(report: &Report) -> Result<(), Malformed> {
    if report.schema != SCHEMA {
        return Err(Malformed {
            pointer: "/schema".into(),
            message: format!(
                "schema `{}`, but this tern-sim reads `{SCHEMA}`",
                report.schema
            ),
        });
    }
    let hash = &report.corpus.hash;
    if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Malformed {
            pointer: "/corpus/hash".into(),
            message: "not a SHA-256 in hexadecimal (64 digits)".into(),
        });
    }
    let statuses: Vec<&str> = Status::ALL.iter().map(|s| s.as_str()).collect();
    let mut labels = std::collections::BTreeMap::new();
    for (n, i) in report.implementations.iter().enumerate() {
        let at = format!("/implementations/{n}");
        // A label names one column: `diff` matches implementations by it.
        if let Some(first) = labels.insert(i.label.as_str(), n) {
            return Err(Malformed {
                pointer: format!("{at}/label"),
                message: format!(
                    "the label `{}` is already that of /implementations/{first}: each implementation is listed once",
                    i.label
                ),
            });
        }
        for (l, tally) in &i.tally {
            level(format!("{at}/tally/{}", pointer_segment(l)), l)?;
            for s in tally.keys() {
                one_of(
                    format!("{at}/tally/{}/{}", pointer_segment(l), pointer_segment(s)),
                    s,
                    &statuses,
                )?;
            }
        }
        let mut seen = BTreeSet::new();
        for (k, c) in i.cases.iter().enumerate() {
            let at = format!("{at}/cases/{k}");
            if !seen.insert(c.id.as_str()) {
                return Err(Malformed {
                    pointer: format!("{at}/id"),
                    message: format!("case `{}` appears twice", c.id),
                });
            }
        }
    }
    Ok(())
}
