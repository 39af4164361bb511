//! The one shape of a broken rule, whichever driver found it: the
//! simulator places it at a step and an agent, the explorer at a move of a
//! schedule, the corpus player at a step of a case. Each driver used to
//! carry its own copy of these fields, and each turned a [`Breach`] into
//! them with its own code.

use super::delivery::Breach;
use super::invariants::{self as inv, Invariant};
use crate::contract::error::ImplError;

/// A broken invariant: which, and what a conforming receiver does against
/// what this one did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub invariant: Invariant,
    pub expected: String,
    pub actual: String,
    /// The implementation did not answer in time: a hang, which shrinking
    /// need not wait out in full again.
    pub timed_out: bool,
}

impl Failure {
    pub fn new(
        invariant: Invariant,
        expected: impl Into<String>,
        actual: impl Into<String>,
    ) -> Self {
        Failure {
            invariant,
            expected: expected.into(),
            actual: actual.into(),
            timed_out: false,
        }
    }

    /// An implementation that failed a call on its own (garbage, a crash
    /// of its own, a hang): `implementation-sound`, `answering` saying what
    /// was awaited.
    pub fn unsound(answering: &str, e: &ImplError) -> Self {
        Failure {
            timed_out: matches!(e, ImplError::TimedOut(_)),
            ..Failure::new(inv::ALIVE, answering, e.to_string())
        }
    }

    /// The failure on one line: the invariant, its section, expected
    /// against actual.
    pub fn line(&self) -> String {
        format!(
            "{} (section {}): expected {}; got {}",
            self.invariant.name, self.invariant.section, self.expected, self.actual
        )
    }

    /// Whether the implementation misbehaved rather than broke a rule of
    /// Tern: a corpus case that ends so is an error, not a failure.
    pub fn is_unsound(&self) -> bool {
        self.invariant == inv::ALIVE
    }
}

impl Breach {
    /// The breach as the failure of its invariant; a call the
    /// implementation failed on its own is `implementation-sound`, with
    /// `answering` saying what was awaited.
    pub fn into_failure(self, answering: &str) -> Failure {
        match self {
            Breach::Failed(e) => Failure::unsound(answering, &e),
            breach => Failure::new(breach.invariant(), breach.expected(), breach.actual()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::delivery::Call;

    #[test]
    fn a_breach_names_its_invariant_and_a_failed_call_is_unsound() {
        let effects = Breach::Effects {
            call: Call::Delivery,
            count: 1,
        }
        .into_failure("a delivery");
        assert_eq!(effects.invariant, inv::AUTHORITY);
        assert_eq!(effects.expected, "no effect during a delivery");
        assert!(!effects.is_unsound() && !effects.timed_out);

        let hang = Breach::Failed(ImplError::TimedOut("no answer in 2s".into()))
            .into_failure("an answer to view");
        assert_eq!(hang.invariant, inv::ALIVE);
        assert_eq!(hang.expected, "an answer to view");
        assert!(hang.is_unsound() && hang.timed_out);

        let garbage = Failure::unsound("x", &ImplError::Misbehaved("not JSON".into()));
        assert!(garbage.is_unsound() && !garbage.timed_out);
    }
}
