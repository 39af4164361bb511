//! How a receiver's answers are held against what was expected. One set of
//! rules serves both sources of expectations: the reference model during a
//! simulated run, and a corpus case's file.

use std::collections::BTreeSet;

use serde_json::Value;
use tern_model::ledger::{Event, EventKind, Execution, Outcome, RejectClass};

/// The outcome part of an event, as compared: the class of a rejection, not
/// its wording or pointer (which the profile leaves to each
/// implementation), and the missing references of a pending message as a set.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum ComparedOutcome {
    Accepted,
    Duplicate,
    Pending(BTreeSet<String>),
    Rejected(RejectClass),
}

/// An execution decision in words, for every report: the simulator's
/// notes and violations and the corpus player's failures say it alike.
pub fn execution_text(e: &Execution) -> String {
    match e {
        Execution::Executed { effect } => format!("executed, effect {effect}"),
        Execution::Refused(r) => format!("refused: {r}"),
    }
}

/// One event in the words a case's expectation uses.
fn event_text(e: &ComparedEvent) -> String {
    let v = match &e.verdict {
        ComparedOutcome::Accepted => "accepted".to_owned(),
        ComparedOutcome::Duplicate => "duplicate".to_owned(),
        ComparedOutcome::Pending(m) => format!(
            "pending on {}",
            m.iter().cloned().collect::<Vec<_>>().join(", ")
        ),
        ComparedOutcome::Rejected(c) => format!("rejected {}", c.as_str()),
    };
    let id = e.id.as_deref().unwrap_or("(no id)");
    match e.kind {
        EventKindKey::Delivered => format!("{id} {v}"),
        k => format!("{} {id} {v}", k.as_str()),
    }
}

/// A delivery's events, `;`-separated, or `no event`.
pub fn events_text(events: &[ComparedEvent]) -> String {
    if events.is_empty() {
        return "no event".to_owned();
    }
    events.iter().map(event_text).collect::<Vec<_>>().join("; ")
}

impl ComparedOutcome {
    pub fn of(o: &Outcome) -> ComparedOutcome {
        match o {
            Outcome::Accepted => ComparedOutcome::Accepted,
            Outcome::Duplicate => ComparedOutcome::Duplicate,
            Outcome::Pending { missing } => {
                ComparedOutcome::Pending(missing.iter().map(|m| m.to_string()).collect())
            }
            Outcome::Rejected(r) => ComparedOutcome::Rejected(r.class),
        }
    }
}

/// An event as compared, expected or actual: its kind, its message, its
/// verdict. Delivery
/// numbers are each receiver's own bookkeeping (a restarted one replays its
/// log), so they are not part of it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ComparedEvent {
    pub kind: EventKindKey,
    pub id: Option<String>,
    pub verdict: ComparedOutcome,
}

impl ComparedEvent {
    pub fn of(e: &Event) -> ComparedEvent {
        ComparedEvent {
            kind: e.kind.into(),
            id: e.id.as_ref().map(|i| i.to_string()),
            verdict: ComparedOutcome::of(&e.outcome),
        }
    }
}

/// [`EventKind`] with an order, so that events compare as a multiset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum EventKindKey {
    Delivered,
    Released,
    Invalidated,
}

impl From<EventKind> for EventKindKey {
    fn from(k: EventKind) -> EventKindKey {
        match k {
            EventKind::Delivered => EventKindKey::Delivered,
            EventKind::Released => EventKindKey::Released,
            EventKind::Invalidated => EventKindKey::Invalidated,
        }
    }
}

impl EventKindKey {
    pub fn as_str(self) -> &'static str {
        match self {
            EventKindKey::Delivered => "delivered",
            EventKindKey::Released => "released",
            EventKindKey::Invalidated => "invalidated",
        }
    }
}

/// Whether reject classes and refusal reasons must equal the expected ones.
/// The seed says what is rejected and what is refused, not under which
/// name: the names are the profile's, so a `core` certification ignores
/// them (and the `class` of rejected messages in views), and compares the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RejectNames {
    #[default]
    Compared,
    Ignored,
}

impl RejectNames {
    pub fn as_str(self) -> &'static str {
        match self {
            RejectNames::Compared => "compared",
            RejectNames::Ignored => "ignored",
        }
    }

    /// A verdict as compared under this setting: with names ignored, one
    /// class stands for every rejection.
    fn verdict(self, v: &ComparedOutcome) -> ComparedOutcome {
        match (self, v) {
            (RejectNames::Ignored, ComparedOutcome::Rejected(_)) => {
                ComparedOutcome::Rejected(RejectClass::Parse)
            }
            (_, v) => v.clone(),
        }
    }

    /// The frame's own event (its message and verdict) first, then the
    /// other events as a multiset: the order in which earlier messages
    /// settle within one delivery is not specified. The first event's kind
    /// is left to the caller, which knows whether it was expected.
    pub fn same_events(self, expected: &[ComparedEvent], actual: &[ComparedEvent]) -> bool {
        let (Some(e0), Some(a0)) = (expected.first(), actual.first()) else {
            return expected.is_empty() && actual.is_empty();
        };
        if e0.id != a0.id || self.verdict(&e0.verdict) != self.verdict(&a0.verdict) {
            return false;
        }
        let rest = |events: &[ComparedEvent]| {
            let mut keys: Vec<(EventKindKey, Option<String>, ComparedOutcome)> = events[1..]
                .iter()
                .map(|e| (e.kind, e.id.clone(), self.verdict(&e.verdict)))
                .collect();
            keys.sort();
            keys
        };
        rest(expected) == rest(actual)
    }

    /// Whether two executions agree: with names ignored, every refusal is
    /// the same refusal.
    pub fn same_execution(self, a: &Execution, b: &Execution) -> bool {
        match (self, a, b) {
            (RejectNames::Ignored, Execution::Refused(_), Execution::Refused(_)) => true,
            _ => a == b,
        }
    }

    pub fn same_view(self, a: &Value, b: &Value) -> bool {
        if self == RejectNames::Compared {
            return a == b;
        }
        let strip = |v: &Value| {
            let mut v = v.clone();
            if let Some(ms) = v["messages"].as_array_mut() {
                for m in ms {
                    if let Some(o) = m.as_object_mut() {
                        o.remove("class");
                    }
                }
            }
            v
        };
        strip(a) == strip(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tern_model::ledger::Refusal;

    fn ev(kind: EventKindKey, id: &str, verdict: ComparedOutcome) -> ComparedEvent {
        ComparedEvent {
            kind,
            id: Some(id.to_owned()),
            verdict,
        }
    }

    fn delivered(id: &str, verdict: ComparedOutcome) -> ComparedEvent {
        ev(EventKindKey::Delivered, id, verdict)
    }

    fn released(id: &str) -> ComparedEvent {
        ev(EventKindKey::Released, id, ComparedOutcome::Accepted)
    }

    /// The delivered frame's own event comes first and must match; the
    /// messages it released may come in any order.
    #[test]
    fn the_frames_event_is_first_and_the_rest_a_multiset() {
        let names = RejectNames::Compared;
        let a = delivered("bob:3", ComparedOutcome::Accepted);
        let expected = [a.clone(), released("bob:1"), released("bob:2")];
        let shuffled = [a.clone(), released("bob:2"), released("bob:1")];
        assert!(names.same_events(&expected, &shuffled));
        let first_moved = [released("bob:1"), a.clone(), released("bob:2")];
        assert!(!names.same_events(&expected, &first_moved));
        let one_short = [a.clone(), released("bob:1")];
        assert!(!names.same_events(&expected, &one_short));
        let twice = [a.clone(), released("bob:1"), released("bob:1")];
        assert!(!names.same_events(&expected, &twice));
        assert!(names.same_events(&[], &[]));
        assert!(!names.same_events(&[], &[a]));
    }

    #[test]
    fn names_ignored_make_every_rejection_and_every_refusal_one() {
        let body = [delivered(
            "bob:1",
            ComparedOutcome::Rejected(RejectClass::Body),
        )];
        let envelope = [delivered(
            "bob:1",
            ComparedOutcome::Rejected(RejectClass::Envelope),
        )];
        let accepted = [delivered("bob:1", ComparedOutcome::Accepted)];
        assert!(!RejectNames::Compared.same_events(&body, &envelope));
        assert!(RejectNames::Ignored.same_events(&body, &envelope));
        assert!(!RejectNames::Ignored.same_events(&body, &accepted));

        let terminal = Execution::Refused(Refusal::Terminal);
        let withdrawn = Execution::Refused(Refusal::Withdrawn);
        assert!(!RejectNames::Compared.same_execution(&terminal, &withdrawn));
        assert!(RejectNames::Ignored.same_execution(&terminal, &withdrawn));

        let a = json!({"messages": [{"id": "bob:1", "class": "body"}], "effects": []});
        let b = json!({"messages": [{"id": "bob:1", "class": "envelope"}], "effects": []});
        let c = json!({"messages": [{"id": "bob:2", "class": "body"}], "effects": []});
        assert!(!RejectNames::Compared.same_view(&a, &b));
        assert!(RejectNames::Ignored.same_view(&a, &b));
        assert!(!RejectNames::Ignored.same_view(&a, &c));
    }
}
