//! Levels and rules agree: a `core` case expects only what the seed says
//! (docs/corpus.md section 2), so it must not rely on a rule that only the
//! profile states. The profile-only rules that a frame's rejection can rest
//! on are checked here by what the rejection needs, not by what the case
//! cites: citations name vocabulary too, which every case uses (corpus.md
//! section 3).

use serde_json::Value;
use tern_harness::corpus::case::Step;
use tern_harness::corpus::{Case, Corpus, Level};
use tern_harness::judge::compare::ComparedOutcome;
use tern_model::wire::parse_frame;

fn corpus() -> Corpus {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    Corpus::load(&root).unwrap_or_else(|e| panic!("the corpus loads: {e}"))
}

/// `v` without any member set to `null`, at any depth, except the
/// envelope's `reply` (required and nullable, so its `null` is the seed's).
fn without_nulls(v: &Value, top: bool) -> Value {
    match v {
        Value::Object(members) => Value::Object(
            members
                .iter()
                .filter(|(k, m)| !m.is_null() || (top && k.as_str() == "reply"))
                .map(|(k, m)| (k.clone(), without_nulls(m, false)))
                .collect(),
        ),
        Value::Array(items) => {
            Value::Array(items.iter().map(|i| without_nulls(i, false)).collect())
        }
        other => other.clone(),
    }
}

/// The frames of `case` that it expects rejected although their only defect
/// is a member set to `null`: "optional, never null" is the profile's
/// (P-BODY-2, and the "never null: profile" notes of profile.md section 4),
/// while a member that is required is missing once its `null` is dropped, so
/// that frame stays rejected and is not listed.
fn rejected_only_for_null(case: &Case) -> Vec<usize> {
    let mut found = Vec::new();
    for (i, step) in case.steps.iter().enumerate() {
        let Step::Deliver {
            frame,
            expect: Some(expect),
            ..
        } = step
        else {
            continue;
        };
        let rejected = expect
            .events
            .first()
            .is_some_and(|e| matches!(e.verdict, ComparedOutcome::Rejected(_)));
        if !rejected || parse_frame(frame).is_ok() {
            continue;
        }
        let Ok(value) = serde_json::from_slice::<Value>(frame) else {
            continue;
        };
        let stripped = without_nulls(&value, true);
        if stripped != value && parse_frame(stripped.to_string().as_bytes()).is_ok() {
            found.push(i);
        }
    }
    found
}

#[test]
fn no_core_case_expects_a_rejection_that_only_never_null_explains() {
    let offenders: Vec<String> = corpus()
        .cases
        .iter()
        .filter(|c| c.level == Level::Core)
        .flat_map(|c| {
            rejected_only_for_null(c)
                .into_iter()
                .map(move |i| format!("{} step {i}", c.id))
        })
        .collect();
    assert!(offenders.is_empty(), "{offenders:?}");
}

#[test]
fn the_never_null_rule_is_checked_by_profile_cases() {
    // The check above must see something to be worth anything: the profile
    // cases that hold the never-null expectations trip it.
    let c = corpus();
    for id in [
        "envelope.extensions-never-null",
        "epistemics.top-level-evidence-never-null",
    ] {
        let case = c
            .cases
            .iter()
            .find(|k| k.id == id)
            .unwrap_or_else(|| panic!("{id} exists"));
        assert_eq!(case.level, Level::Profile, "{id}");
        assert!(!rejected_only_for_null(case).is_empty(), "{id}");
        assert!(case.rules.iter().any(|r| r == "P-BODY-2"), "{id}");
    }
}
