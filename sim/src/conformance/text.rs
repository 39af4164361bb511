//! A failure for people: the violation, the world, and the run.

use crate::simulator::runner::{RunConfig, Violation};

/// How much of expected and actual is shown: a view can be long.
const CLIP: usize = 2_000;
/// How many of the run's last events are shown: enough to see what led to
/// the violation in a shrunk run, without burying it in a long one.
const LAST_EVENTS: usize = 60;

/// The violation as `tern-sim run` words it, the world it happened in, and
/// the end of the run in shorthand.
pub(super) fn failure(config: &RunConfig, v: &Violation, notes: &[String]) -> String {
    let mut text = format!(
        "violation of {} (seed section {}) at step {}{}\n  rule: {}\n  expected: {}\n  actual:   {}\n",
        v.invariant.name,
        v.invariant.section,
        v.step,
        v.agent
            .as_ref()
            .map(|a| format!(", agent {a}"))
            .unwrap_or_default(),
        v.invariant.says,
        clip(&v.expected),
        clip(&v.actual),
    );
    text.push_str(&format!(
        "  world: seed {}, {} agents, laid out for {} steps, faults: {}\n",
        config.seed,
        config.agents,
        config.steps,
        config.faults.names()
    ));
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

/// At most [`CLIP`] bytes of `s`, cut at a character boundary.
fn clip(s: &str) -> String {
    if s.len() <= CLIP {
        return s.to_owned();
    }
    let end = (0..=CLIP)
        .rev()
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(0);
    format!("{}… ({} bytes)", &s[..end], s.len())
}

#[cfg(test)]
mod tests {
    use super::clip;

    #[test]
    fn clips_long_text_at_a_character_boundary() {
        let long = "é".repeat(super::CLIP);
        let clipped = clip(&long);
        assert!(clipped.starts_with(&"é".repeat(super::CLIP / 2)));
        assert!(clipped.ends_with(&format!("… ({} bytes)", long.len())));
        assert_eq!(clip("short"), "short");
    }
}
