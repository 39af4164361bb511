//! A failure for people: the violation, the world, and the run.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::simulator::happening::Happening;
use crate::simulator::runner::{RunConfig, Violation};

/// How much of expected and actual is shown: a view can be long.
const CLIP: usize = 2_000;
/// How many differing paths are listed: the first few say where to look.
const MAX_PATHS: usize = 8;
/// How many of the run's last events are shown: enough to see what led to
/// the violation in a shrunk run, without burying it in a long one.
const LAST_EVENTS: usize = 60;

/// The violation as `tern-sim run` words it, the world it happened in, and
/// the end of the run in shorthand.
pub(super) fn failure(config: &RunConfig, v: &Violation, run: &[Happening]) -> String {
    let mut text = format!(
        "violation of {} (seed section {}) at step {}{}\n  rule: {}\n  expected: {}\n  actual:   {}\n",
        v.failure.invariant.name,
        v.failure.invariant.section,
        v.step,
        v.agent
            .as_ref()
            .map(|a| format!(", agent {a}"))
            .unwrap_or_default(),
        v.failure.invariant.says,
        clip(&v.failure.expected),
        clip(&v.failure.actual),
    );
    let paths = differing_paths(&v.failure.expected, &v.failure.actual);
    if !paths.is_empty() {
        text.push_str("  differs at:\n");
        for p in paths {
            text.push_str(&format!("    {p}\n"));
        }
    }
    text.push_str(&format!(
        "  world: seed {}, {} agents, laid out for {} steps, faults: {}\n",
        config.seed,
        config.agents,
        config.steps,
        config.faults.names()
    ));
    // The record's own line for the violation repeats what is said above,
    // unclipped.
    let notes: Vec<String> = run
        .iter()
        .filter(|h| !matches!(h, Happening::Violation { .. }))
        .map(Happening::note)
        .collect();
    if !notes.is_empty() {
        let skipped = notes.len().saturating_sub(LAST_EVENTS);
        if skipped > 0 {
            text.push_str(&format!(
                "  the run in shorthand, its last {LAST_EVENTS} events of {}:\n",
                notes.len()
            ));
        } else {
            text.push_str("  the run in shorthand:\n");
        }
        for note in &notes[skipped..] {
            text.push_str(&format!("    {note}\n"));
        }
    }
    text.truncate(text.trim_end().len());
    text
}

/// Where expected and actual differ, when both are JSON documents (views):
/// two long views often differ in one member, which clipping may hide.
fn differing_paths(expected: &str, actual: &str) -> Vec<String> {
    let parse = |s: &str| {
        serde_json::from_str::<Value>(s)
            .ok()
            .filter(|v| v.is_object() || v.is_array())
    };
    let (Some(e), Some(a)) = (parse(expected), parse(actual)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    walk(String::new(), Some(&e), Some(&a), &mut out);
    out
}

fn walk(path: String, e: Option<&Value>, a: Option<&Value>, out: &mut Vec<String>) {
    if out.len() >= MAX_PATHS || e == a {
        return;
    }
    match (e, a) {
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                walk(format!("{path}/{k}"), x.get(k), y.get(k), out);
            }
        }
        (Some(Value::Array(x)), Some(Value::Array(y))) => {
            for i in 0..x.len().max(y.len()) {
                walk(format!("{path}/{i}"), x.get(i), y.get(i), out);
            }
        }
        _ => {
            let show = |v: Option<&Value>| {
                v.map_or("nothing".to_owned(), |v| clip_to(&v.to_string(), 200))
            };
            let at = if path.is_empty() { "/" } else { &path };
            out.push(format!("{at}: expected {}, got {}", show(e), show(a)));
        }
    }
}

/// At most [`CLIP`] bytes of `s`, cut at a character boundary.
fn clip(s: &str) -> String {
    clip_to(s, CLIP)
}

fn clip_to(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let end = (0..=max)
        .rev()
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(0);
    format!("{}… ({} bytes)", &s[..end], s.len())
}

#[cfg(test)]
mod tests {
    use super::{clip, differing_paths};

    #[test]
    fn clips_long_text_at_a_character_boundary() {
        let long = "é".repeat(super::CLIP);
        let clipped = clip(&long);
        assert!(clipped.starts_with(&"é".repeat(super::CLIP / 2)));
        assert!(clipped.ends_with(&format!("… ({} bytes)", long.len())));
        assert_eq!(clip("short"), "short");
    }

    #[test]
    fn names_the_paths_where_two_views_differ() {
        let expected = r#"{"effects":["main/bob:1"],"messages":[{"id":"a"}]}"#;
        let actual = r#"{"effects":[],"messages":[{"id":"a"}],"extra":1}"#;
        assert_eq!(
            differing_paths(expected, actual),
            [
                "/effects/0: expected \"main/bob:1\", got nothing",
                "/extra: expected nothing, got 1"
            ]
        );
        assert!(differing_paths("accepted", "rejected").is_empty());
    }
}
