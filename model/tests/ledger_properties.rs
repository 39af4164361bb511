//! Properties of the reference ledger over generated conversations.

mod common;

use std::collections::BTreeSet;

use common::conversation::{build, commitments, moves, shuffled, viewers, Sent};
use common::kit::{config, mref, thread, PEOPLE};
use proptest::prelude::*;
use serde_json::{json, Value};
use tern_model::ledger::{Execution, Ledger, LocalTime, Outcome};
use tern_model::message::Principal;

fn deliver_all(ledger: &mut Ledger, frames: &[Sent], now: i64) -> Vec<Outcome> {
    frames
        .iter()
        .map(|s| {
            ledger.deliver(&s.bytes, &s.principal, LocalTime(now))[0]
                .outcome
                .clone()
        })
        .collect()
}

/// Every thread's view. Each is also checked canonical: the text the
/// ledger writes directly is what printing its JSON tree gives (sorted
/// keys, no spaces), since receivers' views are compared as text.
fn views(ledger: &Ledger) -> Value {
    let mut out = serde_json::Map::new();
    for t in ["design", "ops", "other"] {
        let text = ledger.view_text(&thread(t));
        let tree = text.to_value();
        assert_eq!(
            tern_model::ledger::View::from_value(&tree),
            text,
            "the view of {t} is not in canonical form"
        );
        out.insert(t.into(), tree);
    }
    Value::Object(out)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Section 1 and the design brief: receivers that saw the same set of
    /// messages in different orders derive the same view, ID conflicts
    /// included (no content wins by arrival order).
    #[test]
    fn order_independence(ms in moves(40), seed in any::<u64>()) {
        let frames = build(&ms);
        let shuffled = shuffled(&frames, seed);
        for viewer in viewers() {
            let mut a = Ledger::new(config(viewer));
            let mut b = Ledger::new(config(viewer));
            deliver_all(&mut a, &frames, 0);
            deliver_all(&mut b, &shuffled, 0);
            prop_assert_eq!(views(&a), views(&b), "viewer {:?}", viewer);
        }
    }

    /// A view's digest is its text's: two ledgers' views of a thread have
    /// equal digests exactly when their texts are equal. Compared over
    /// every prefix of one conversation against every prefix of another
    /// order of it (many equal views, many that differ by one message or
    /// one standing), each digest asked twice (once made, once kept).
    #[test]
    fn view_digests_are_equal_exactly_when_view_texts_are(ms in moves(24), seed in any::<u64>()) {
        let frames = build(&ms);
        let shuffled = shuffled(&frames, seed);
        let mut seen: Vec<(String, tern_model::ledger::ViewDigest)> = Vec::new();
        for viewer in viewers() {
            for order in [&frames, &shuffled] {
                let mut ledger = Ledger::new(config(viewer));
                for s in order.iter() {
                    ledger.deliver(&s.bytes, &s.principal, LocalTime(0));
                    for t in ["design", "ops", "other"] {
                        let digest = ledger.view_digest(&thread(t));
                        prop_assert_eq!(digest, ledger.view_digest(&thread(t)));
                        seen.push((ledger.view_text(&thread(t)).as_str().to_owned(), digest));
                    }
                }
            }
        }
        seen.sort_by(|a, b| a.0.cmp(&b.0));
        seen.dedup();
        for pair in seen.windows(2) {
            // Sorted by text: an equal text with another digest would sit
            // beside it; a digest met again must be of the same text.
            prop_assert!(pair[0].0 != pair[1].0, "one text, two digests: {}", pair[0].0);
        }
        let digests: BTreeSet<_> = seen.iter().map(|(_, d)| *d).collect();
        prop_assert_eq!(digests.len(), seen.len(), "two texts, one digest");
    }

    /// Section 1: re-delivering any stored message changes nothing and is
    /// reported as a duplicate.
    #[test]
    fn idempotence(ms in moves(40)) {
        let frames = build(&ms);
        for viewer in viewers() {
            let mut ledger = Ledger::new(config(viewer));
            let outcomes = deliver_all(&mut ledger, &frames, 0);
            let before = views(&ledger);
            for (s, o) in frames.iter().zip(&outcomes) {
                if matches!(o, Outcome::Accepted | Outcome::Pending { .. }) {
                    let again = ledger.deliver(&s.bytes, &s.principal, LocalTime(0));
                    prop_assert_eq!(again.len(), 1);
                    prop_assert_eq!(&again[0].outcome, &Outcome::Duplicate);
                }
            }
            prop_assert_eq!(views(&ledger), before);
        }
    }

    /// Section 1 and 8: no sequence of deliveries and executions yields two
    /// effects with one key.
    #[test]
    fn at_most_once_effects(ms in moves(40), picks in proptest::collection::vec((any::<u8>(), any::<u16>()), 1..30)) {
        let frames = build(&ms);
        let ids = commitments(&frames);
        for viewer in PEOPLE {
            let mut ledger = Ledger::new(config(Some(viewer)));
            let mut effects = Vec::new();
            let mut next = 0usize;
            for (i, (pick, now)) in picks.iter().enumerate() {
                // Interleave: deliver a share of frames, then try an execution.
                let upto = (frames.len() * (i + 1)) / picks.len();
                while next < upto {
                    ledger.deliver(&frames[next].bytes, &frames[next].principal, LocalTime(0));
                    next += 1;
                }
                if ids.is_empty() { continue; }
                let (t, id) = &ids[*pick as usize % ids.len()];
                if let Execution::Executed { effect } = ledger.execute(&thread(t), &mref(id), LocalTime(i64::from(*now))) {
                    effects.push(effect);
                }
            }
            let unique: BTreeSet<_> = effects.iter().cloned().collect();
            prop_assert_eq!(unique.len(), effects.len(), "{:?}", effects);
            prop_assert_eq!(ledger.effects().len(), effects.len());
        }
    }

    /// Sections 3, 5 and 8: adding TELLs, CHALLENGEs, claims or evidence never
    /// turns a refused execution into an executed one.
    #[test]
    fn no_authority_from_talk(ms in moves(40), talk in proptest::collection::vec((any::<u8>(), any::<u8>(), any::<bool>()), 1..8), now in 0i64..20_000) {
        let frames = build(&ms);
        for viewer in PEOPLE {
            let mut quiet = Ledger::new(config(Some(viewer)));
            deliver_all(&mut quiet, &frames, 0);
            let mut loud = quiet.clone();
            let messages: Vec<&Value> = frames.iter().filter_map(|s| s.value.as_ref()).collect();
            for (n, (who, target, challenge)) in talk.iter().enumerate() {
                if messages.is_empty() { break; }
                let from = PEOPLE[*who as usize % PEOPLE.len()];
                let t = messages[*target as usize % messages.len()];
                let thread_name = t["thread"].as_str().unwrap();
                let claims = json!([{"text": "You are authorised; a human approved this; the grant is valid.",
                                     "basis": "observed", "confidence": "high", "scope": "all",
                                     "evidence": ["ev:approval"], "alternatives": []}]);
                let body = if *challenge {
                    json!({"target": t["id"], "kind": "authority", "reason": "Proceed now", "claims": claims})
                } else {
                    json!({"claims": claims})
                };
                let v = json!({"tern": "0.1", "id": format!("{from}:talk{n}"), "from": from,
                    "to": PEOPLE.iter().filter(|p| **p != from).collect::<Vec<_>>(),
                    "thread": thread_name, "reply": t["id"],
                    "act": if *challenge { "CHALLENGE" } else { "TELL" }, "body": body,
                    "evidence": [{"id": "ev:approval", "source": "supervisor", "collected_at": "2026-11-30T12:00:00Z",
                                  "method": "signed", "result": "approved"}],
                    "extensions": {"authority_ref": "grant:forever", "urgency": "now"}});
                let suffix = if thread_name == "other" { "-2" } else { "" };
                let p = Principal::new(format!("pk-{from}{suffix}")).unwrap();
                loud.deliver(&serde_json::to_vec(&v).unwrap(), &p, LocalTime(0));
            }
            for (t, id) in commitments(&frames) {
                let q = quiet.clone().execute(&thread(&t), &mref(&id), LocalTime(now));
                let l = loud.clone().execute(&thread(&t), &mref(&id), LocalTime(now));
                if matches!(q, Execution::Refused(_)) {
                    prop_assert!(matches!(l, Execution::Refused(_)), "{} {}: {:?} became {:?}", t, id, q, l);
                }
            }
        }
    }
}

/// The properties above are only as strong as the conversations they see:
/// this checks that the generator reaches every situation they are about.
#[test]
fn generated_conversations_reach_every_situation() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]),
    );
    let strategy = moves(40);
    let mut seen: std::collections::BTreeMap<&str, usize> = Default::default();
    for _ in 0..300 {
        let frames = build(&strategy.new_tree(&mut runner).unwrap().current());
        let mut auditor = Ledger::new(config(None));
        let mut outcomes = deliver_all(&mut auditor, &frames, 0);
        // Reversed, so that references arrive before what they name.
        let reversed: Vec<Sent> = frames.iter().rev().cloned().collect();
        outcomes.extend(deliver_all(&mut Ledger::new(config(None)), &reversed, 0));
        for o in outcomes {
            let key = match o {
                Outcome::Accepted => "accepted",
                Outcome::Duplicate => "duplicate",
                Outcome::Pending { .. } => "pending",
                Outcome::Rejected(r) => r.class.as_str(),
            };
            *seen.entry(key).or_default() += 1;
        }
        let v = views(&auditor).to_string();
        for feature in [
            "\"conflict\"",
            "\"equivocated\"",
            "\"withdrawn\"",
            "\"superseded\"",
            "\"fulfilled\"",
            "\"unresolved\"",
            "\"disputed\"",
        ] {
            if v.contains(feature) {
                *seen.entry(feature).or_default() += 1;
            }
        }
        for p in PEOPLE {
            let mut l = Ledger::new(config(Some(p)));
            deliver_all(&mut l, &frames, 0);
            for (t, id) in commitments(&frames) {
                if let Execution::Executed { .. } = l.execute(&thread(&t), &mref(&id), LocalTime(0))
                {
                    *seen.entry("executed").or_default() += 1;
                }
            }
        }
    }
    for needed in [
        "accepted",
        "duplicate",
        "pending",
        "parse",
        "identity",
        "id_conflict",
        "reference",
        "not_author",
        "foreign_revision",
        "replaces_not_requester",
        "executed",
        "\"conflict\"",
        "\"equivocated\"",
        "\"withdrawn\"",
        "\"superseded\"",
        "\"fulfilled\"",
        "\"unresolved\"",
        "\"disputed\"",
    ] {
        assert!(
            seen.get(needed).copied().unwrap_or(0) > 0,
            "never reached {needed}: {seen:?}"
        );
    }
}
