//! An implementation's answers held against the oracle's, one rule for
//! every driver that keeps a reference ledger beside the receiver (the
//! simulator and the explorer): how events, views and executions are
//! compared, which latitude a crash leaves, and which invariant a
//! difference breaks.

use std::collections::BTreeSet;

use serde_json::Value;
use tern_model::ledger::{EffectKey, Event, Execution, Outcome, RejectClass};

use super::compare::{execution_text, ComparedEvent, RejectNames};
use super::failure::Failure;
use super::invariants as inv;
use crate::contract::world::World;

/// Admission rejections: the frame is not stored by a correct receiver.
pub fn admission(class: RejectClass) -> bool {
    matches!(
        class,
        RejectClass::Parse
            | RejectClass::Version
            | RejectClass::Envelope
            | RejectClass::Body
            | RejectClass::UnknownThread
            | RejectClass::UnknownParticipant
            | RejectClass::Identity
            | RejectClass::NotAddressed
    )
}

/// Whether a correct receiver stores a frame that came to `outcome`.
pub fn stores(outcome: &Outcome) -> bool {
    !matches!(outcome, Outcome::Rejected(r) if admission(r.class))
}

pub fn outcome_summary(o: &Outcome) -> String {
    match o {
        Outcome::Accepted => "accepted".into(),
        Outcome::Duplicate => "duplicate".into(),
        Outcome::Pending { missing } => format!(
            "pending on {}",
            missing
                .iter()
                .map(|m| m.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Outcome::Rejected(r) => format!("rejected [{}] {}", r.class, r.message),
    }
}

pub fn events_summary(events: &[Event]) -> String {
    events
        .iter()
        .map(|e| {
            format!(
                "{} {}",
                e.id.as_ref().map_or("(no id)", |i| i.as_str()),
                outcome_summary(&e.outcome)
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The first event's outcome, or `duplicate` for an answer with none.
pub fn first_outcome(events: &[Event]) -> Outcome {
    events
        .first()
        .map(|e| e.outcome.clone())
        .unwrap_or(Outcome::Duplicate)
}

/// A delivery's events against the oracle's. A receiver that stored a
/// frame before a crash cut its delivery (`redelivered`) may call the
/// frame's next delivery a duplicate, but only if a correct receiver would
/// have stored it at all: where its first sync falls is its own business.
pub fn delivery_events(
    expected: &[Event],
    actual: &[Event],
    redelivered: bool,
    names: RejectNames,
) -> Result<(), Failure> {
    let first = first_outcome(expected);
    let actual_first = first_outcome(actual);
    let relaxed = redelivered && actual_first == Outcome::Duplicate && stores(&first);
    let keys = |events: &[Event]| events.iter().map(ComparedEvent::of).collect::<Vec<_>>();
    let same_thread = actual.first().map(|e| &e.thread) == expected.first().map(|e| &e.thread);
    let same = same_thread && names.same_events(&keys(expected), &keys(actual));
    if same || relaxed {
        return Ok(());
    }
    Err(Failure::new(
        inv::classify_outcome(&first, &actual_first),
        events_summary(expected),
        events_summary(actual),
    ))
}

/// A view whose text differs from the oracle's, as trees: the history it
/// must keep (`seen`, the IDs the receiver has shown of this thread, which
/// learns the new ones), commitments from COMMITs only, effects the world
/// saw, and then agreement with the oracle.
pub fn view_tree(
    thread: &str,
    expected: &Value,
    actual: &Value,
    seen: &mut BTreeSet<String>,
    world: &World,
    names: RejectNames,
) -> Result<(), Failure> {
    let ids: BTreeSet<String> = actual["messages"]
        .as_array()
        .map(|ms| {
            ms.iter()
                .filter_map(|m| m["id"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    if let Some(lost) = seen.difference(&ids).next() {
        return Err(Failure::new(
            inv::HISTORY,
            format!("{lost} still in the view of {thread}"),
            "it is gone",
        ));
    }
    seen.extend(ids.iter().cloned());
    let message_act = |id: &str| -> Option<String> {
        actual["messages"]
            .as_array()?
            .iter()
            .find(|m| m["id"] == id)?["act"]
            .as_str()
            .map(str::to_owned)
    };
    if let Some(commitments) = actual["commitments"].as_array() {
        for c in commitments {
            let id = c["id"].as_str().unwrap_or("").to_owned();
            if message_act(&id).as_deref() != Some("COMMIT") {
                return Err(Failure::new(
                    inv::NO_COMMITMENT_FROM_TALK,
                    "commitments come from COMMITs only",
                    format!("{id} is listed as a commitment"),
                ));
            }
        }
    }
    if names.same_view(expected, actual) {
        return Ok(());
    }
    // An effect the receiver counts as done that the world never saw: a
    // crash came between its intent and its effect, and it did not
    // reconcile (seed §1: "reconciliation after crashes").
    let never = actual["effects"].as_array().and_then(|effects| {
        effects
            .iter()
            .filter_map(Value::as_str)
            .find(|e| world.count(&EffectKey((*e).to_owned())) == 0)
    });
    if let Some(never) = never {
        return Err(Failure::new(
            inv::EXECUTIONS,
            "only effects the world saw counted as executed",
            format!("{never} counted as executed, but it was never performed"),
        ));
    }
    Err(Failure::new(
        inv::classify_view(expected, actual),
        expected.to_string(),
        actual.to_string(),
    ))
}

/// The effects an execution performed (`performed`, by whom and which)
/// against the oracle's decision: only the executor's approved effect, and
/// none twice in the world's whole history.
pub fn effects(
    decision: &Execution,
    performed: &[(String, EffectKey)],
    me: &str,
    world: &World,
) -> Result<(), Failure> {
    for (who, key) in performed {
        let approved =
            matches!(decision, Execution::Executed { effect } if effect == key) && who == me;
        if !approved {
            return Err(Failure::new(
                inv::classify_execution(
                    decision,
                    &Execution::Executed {
                        effect: key.clone(),
                    },
                ),
                execution_text(decision),
                format!("{who} performed effect {key}"),
            ));
        }
    }
    for (_, key) in performed {
        if world.count(key) > 1 {
            return Err(Failure::new(
                inv::AT_MOST_ONCE,
                format!("effect {key} performed once"),
                format!("performed {} times", world.count(key)),
            ));
        }
    }
    Ok(())
}

/// A reported decision against the oracle's, and against what the world
/// saw (`performed` effects during the call).
pub fn decision(
    expected: &Execution,
    actual: &Execution,
    performed: usize,
    names: RejectNames,
) -> Result<(), Failure> {
    if !names.same_execution(expected, actual) {
        return Err(Failure::new(
            inv::classify_execution(expected, actual),
            execution_text(expected),
            execution_text(actual),
        ));
    }
    if matches!(actual, Execution::Executed { .. }) && performed == 0 {
        return Err(Failure::new(
            inv::EXECUTIONS,
            "the effect performed through the world",
            "reported executed, but nothing was performed",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::storage::Storage;
    use serde_json::json;
    use tern_model::ledger::{EventKind, Refusal, Rejection};
    use tern_model::message::{MessageRef, ThreadId};
    use tern_model::Pointer;

    fn event(id: &str, outcome: Outcome) -> Event {
        Event {
            kind: EventKind::Delivered,
            origin: 0,
            id: Some(MessageRef::new(id).unwrap()),
            thread: Some(ThreadId::new("t").unwrap()),
            outcome,
        }
    }

    fn rejected(class: RejectClass) -> Outcome {
        Outcome::Rejected(Rejection::new(class, Pointer::root(), "why"))
    }

    const COMPARED: RejectNames = RejectNames::Compared;

    #[test]
    fn a_delivery_is_named_by_the_outcome_it_should_have_had() {
        let accepted = [event("alice:1", Outcome::Accepted)];
        assert_eq!(
            delivery_events(&accepted, &accepted, false, COMPARED),
            Ok(())
        );
        let spoofed = [event("alice:1", rejected(RejectClass::Identity))];
        let err = delivery_events(&spoofed, &accepted, false, COMPARED).unwrap_err();
        assert_eq!(err.invariant, inv::IDENTITY);
        let dup = [event("alice:1", Outcome::Duplicate)];
        let err = delivery_events(&accepted, &dup, false, COMPARED).unwrap_err();
        assert_eq!(err.invariant, inv::DEDUP);
    }

    /// A crash may have cut a delivery after the receiver stored the frame:
    /// calling its redelivery a duplicate is then allowed, but only for a
    /// frame a correct receiver stores at all.
    #[test]
    fn a_redelivered_frame_may_be_a_duplicate_only_if_it_is_stored() {
        let accepted = [event("alice:1", Outcome::Accepted)];
        let dup = [event("alice:1", Outcome::Duplicate)];
        assert_eq!(delivery_events(&accepted, &dup, true, COMPARED), Ok(()));
        let refused_reference = [event("alice:1", rejected(RejectClass::Reference))];
        assert_eq!(
            delivery_events(&refused_reference, &dup, true, COMPARED),
            Ok(())
        );
        let not_admitted = [event("alice:1", rejected(RejectClass::Envelope))];
        let err = delivery_events(&not_admitted, &dup, true, COMPARED).unwrap_err();
        assert_eq!(err.invariant, inv::SCHEMA);
    }

    fn view(ids: &[(&str, &str)], commitments: &[&str], effects: &[&str]) -> Value {
        json!({
            "commitments": commitments.iter().map(|c| json!({"id": c})).collect::<Vec<_>>(),
            "effects": effects,
            "messages": ids.iter().map(|(id, act)| json!({"id": id, "act": act})).collect::<Vec<_>>(),
        })
    }

    #[test]
    fn a_view_keeps_what_it_showed_lists_commitments_of_commits_and_effects_the_world_saw() {
        let world = World::new();
        let mut seen = BTreeSet::new();
        let one = view(&[("bob:1", "TELL")], &[], &[]);
        assert_eq!(
            view_tree("t", &one, &one, &mut seen, &world, COMPARED),
            Ok(())
        );
        assert!(seen.contains("bob:1"));

        // Lost once shown, whatever else the views disagree on (here the
        // model's view holds no message either).
        let empty = view(&[], &[], &[]);
        let mut other = empty.clone();
        other["pending"] = json!([{"id": "carol:1"}]);
        let lost = view_tree("t", &other, &empty, &mut seen, &world, COMPARED).unwrap_err();
        assert_eq!(lost.invariant, inv::HISTORY);
        assert_eq!(lost.expected, "bob:1 still in the view of t");

        let talk = view(&[("bob:1", "TELL")], &["bob:1"], &[]);
        let err = view_tree("t", &one, &talk, &mut seen, &world, COMPARED).unwrap_err();
        assert_eq!(err.invariant, inv::NO_COMMITMENT_FROM_TALK);

        let never = view(&[("bob:1", "TELL")], &[], &["effect-1"]);
        let err = view_tree("t", &one, &never, &mut seen, &world, COMPARED).unwrap_err();
        assert_eq!(err.invariant, inv::EXECUTIONS);

        // Seen in the world, the same effect is a disagreement with the
        // model instead: an effect the model refused.
        let storage = Storage::new();
        world
            .for_agent("bob", &storage)
            .perform(&EffectKey("effect-1".into()))
            .unwrap();
        let err = view_tree("t", &one, &never, &mut seen, &world, COMPARED).unwrap_err();
        assert_eq!(err.invariant, inv::AUTHORITY);
    }

    #[test]
    fn effects_are_the_executors_approved_one_and_never_twice() {
        let world = World::new();
        let storage = Storage::new();
        let key = EffectKey("e".into());
        let executed = Execution::Executed {
            effect: key.clone(),
        };
        let by_bob = [("bob".to_owned(), key.clone())];
        world.for_agent("bob", &storage).perform(&key).unwrap();
        assert_eq!(effects(&executed, &by_bob, "bob", &world), Ok(()));

        let refused = Execution::Refused(Refusal::GrantExpired);
        let err = effects(&refused, &by_bob, "bob", &world).unwrap_err();
        assert_eq!(err.invariant, inv::AUTHORITY);
        let err = effects(&executed, &by_bob, "carol", &world).unwrap_err();
        assert_eq!(err.invariant, inv::EXECUTIONS);

        world.for_agent("bob", &storage).perform(&key).unwrap();
        let err = effects(&executed, &by_bob, "bob", &world).unwrap_err();
        assert_eq!(err.invariant, inv::AT_MOST_ONCE);
    }

    #[test]
    fn a_decision_agrees_with_the_models_and_with_what_was_performed() {
        let executed = Execution::Executed {
            effect: EffectKey("e".into()),
        };
        let refused = Execution::Refused(Refusal::Withdrawn);
        assert_eq!(decision(&executed, &executed, 1, COMPARED), Ok(()));
        let err = decision(&refused, &executed, 1, COMPARED).unwrap_err();
        assert_eq!(err.invariant, inv::LIFECYCLE);
        let err = decision(&executed, &executed, 0, COMPARED).unwrap_err();
        assert_eq!(err.invariant, inv::EXECUTIONS);
        let other = Execution::Refused(Refusal::Terminal);
        assert!(decision(&refused, &other, 0, COMPARED).is_err());
        assert_eq!(decision(&refused, &other, 0, RejectNames::Ignored), Ok(()));
    }
}
