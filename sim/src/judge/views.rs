//! A receiver's views against the oracle's: the check the simulator and
//! the explorer make after nearly every step.
//!
//! A receiver on the reference ledger answers with digests, compared with
//! the oracle's without writing either view out; the texts are asked only
//! of views whose digests differ, to name the difference (a digest that
//! differs is a hint: the texts decide). Debug builds, the tests, ask the
//! texts of every view and check each digest against them. A receiver
//! without digests (a subprocess, a mutant that edits its views) is asked
//! the texts, each against the oracle's, as before.

use std::collections::BTreeSet;

use tern_model::ledger::Ledger;
use tern_model::message::{MessageRef, ThreadId};

use super::delivery::Breach;
use super::no_effect;
use crate::contract::plugin::{Receiver, View};
use crate::contract::world::World;

/// One view, judged against the oracle's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Compared {
    Same,
    /// The texts differ: both, to explain how.
    Differs {
        expected: View,
        actual: View,
    },
}

/// The receiver's views of `threads` against `oracle`'s, in order. An
/// effect while answering, or a failed answer, is a breach.
pub fn against_oracle(
    receiver: &mut dyn Receiver,
    world: &World,
    oracle: &Ledger,
    threads: &[ThreadId],
) -> Result<Vec<Compared>, Breach> {
    let Some(digests) = no_effect::digests(receiver, world, threads)?
        .filter(|digests| digests.len() == threads.len())
    else {
        return by_text(receiver, world, oracle, threads);
    };
    let same: Vec<bool> = threads
        .iter()
        .zip(&digests)
        .map(|(t, digest)| oracle.view_digest(t) == *digest)
        .collect();
    if !cfg!(debug_assertions) && same.iter().all(|s| *s) {
        return Ok(vec![Compared::Same; threads.len()]);
    }
    let compared = by_text(receiver, world, oracle, threads)?;
    for ((t, same), compared) in threads.iter().zip(same).zip(&compared) {
        debug_assert!(
            !same || *compared == Compared::Same,
            "the digests of two different views of {t} are equal"
        );
    }
    Ok(compared)
}

/// A view found equal to the oracle's. Of `new`, the IDs the oracle's
/// events named since the last such view, those the view shows join
/// `seen`, the IDs the receiver has shown: the oracle's view keeps every
/// ID it ever showed, so the history checks hold of them.
pub fn confirm_shown(
    oracle: &Ledger,
    thread: &ThreadId,
    new: &[MessageRef],
    seen: &mut BTreeSet<String>,
) {
    for id in new.iter().filter(|id| oracle.shows(thread, id)) {
        if !seen.contains(id.as_str()) {
            seen.insert(id.as_str().to_owned());
        }
    }
}

/// The receiver's views of `threads` as texts, each asked against the
/// oracle's and compared byte for byte.
fn by_text(
    receiver: &mut dyn Receiver,
    world: &World,
    oracle: &Ledger,
    threads: &[ThreadId],
) -> Result<Vec<Compared>, Breach> {
    let wanted: Vec<(ThreadId, View)> = threads
        .iter()
        .map(|t| (t.clone(), oracle.view_text(t)))
        .collect();
    let actual = no_effect::views(receiver, world, &wanted)?;
    Ok(wanted
        .into_iter()
        .zip(actual)
        .map(|((_, expected), actual)| {
            if actual == expected {
                Compared::Same
            } else {
                Compared::Differs { expected, actual }
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use tern_model::ledger::{Execution, LedgerConfig, LocalTime, ViewDigest};
    use tern_model::message::{MessageRef, Participant, Principal};

    use super::*;
    use crate::contract::plugin::{Delivered, Identity, ImplError, InitParams};
    use crate::contract::storage::Storage;
    use crate::implementations::reference::ReferenceImpl;
    use crate::judge::no_effect;

    /// A receiver on the reference ledger whose view texts may be edited
    /// (`edit`) and whose digests may be given or not (`digests`) or
    /// spoiled (`spoil`): the smallest models of the cases the judgement
    /// tells apart.
    struct Wrapped {
        inner: Box<dyn Receiver>,
        edit: bool,
        digests: bool,
        spoil: bool,
    }

    impl Receiver for Wrapped {
        fn identity(&self) -> Identity {
            self.inner.identity()
        }
        fn deliver(
            &mut self,
            frame: &[u8],
            principal: &Principal,
            now: LocalTime,
        ) -> Result<Delivered, ImplError> {
            self.inner.deliver(frame, principal, now)
        }
        fn execute(
            &mut self,
            thread: &ThreadId,
            commitment: &MessageRef,
            now: LocalTime,
        ) -> Result<Execution, ImplError> {
            self.inner.execute(thread, commitment, now)
        }
        fn view(&mut self, thread: &ThreadId) -> Result<View, ImplError> {
            let view = self.inner.view(thread)?;
            if !self.edit {
                return Ok(view);
            }
            let mut v = view.to_value();
            v["pending"] = serde_json::json!(["edited"]);
            Ok(View::from_value(&v))
        }
        fn view_digests(
            &mut self,
            threads: &[ThreadId],
        ) -> Option<Result<Vec<ViewDigest>, ImplError>> {
            if !self.digests {
                return None;
            }
            let mut answer = self.inner.view_digests(threads)?;
            if self.spoil {
                // Another thread's digest: certainly not this view's.
                let other = self.inner.view_digests(&[ThreadId::new("zz").unwrap()])?;
                if let (Ok(digests), Ok(other)) = (&mut answer, other) {
                    digests.iter_mut().for_each(|d| *d = other[0]);
                }
            }
            Some(answer)
        }
    }

    fn started(edit: bool, digests: bool, spoil: bool) -> (Wrapped, Ledger, World) {
        let config = LedgerConfig::from_json(
            r#"{"participant": "bob", "contexts": {"c1": {"alice": "pk-alice", "bob": "pk-bob"}}, "threads": {"t": "c1", "zz": "c1"}}"#,
        )
        .expect("a valid configuration");
        let config = Arc::new(config);
        let init = InitParams {
            participant: Participant::new("bob").unwrap(),
            principal: Principal::new("pk-bob").unwrap(),
            config: config.clone(),
        };
        let world = World::new();
        let mut slot = None;
        no_effect::start(
            &ReferenceImpl,
            &init,
            &Storage::new(),
            &world,
            None,
            &mut slot,
        )
        .expect("the reference starts");
        let mut wrapped = Wrapped {
            inner: slot.expect("started"),
            edit,
            digests,
            spoil,
        };
        let mut oracle = Ledger::new(config);
        let frame = br#"{"tern":"0.1","id":"alice:1","from":"alice","to":["bob"],"thread":"t","reply":null,"act":"ASK","body":{"question":"why?"}}"#;
        let alice = Principal::new("pk-alice").unwrap();
        oracle.deliver(frame, &alice, LocalTime(0));
        wrapped
            .deliver(frame, &alice, LocalTime(0))
            .expect("delivered");
        let shown = oracle.view(&ThreadId::new("t").unwrap());
        assert_eq!(shown["messages"][0]["status"], "accepted", "{shown}");
        (wrapped, oracle, world)
    }

    fn t() -> Vec<ThreadId> {
        vec![ThreadId::new("t").unwrap()]
    }

    #[test]
    fn equal_views_are_the_same_with_or_without_digests() {
        for digests in [true, false] {
            let (mut r, oracle, world) = started(false, digests, false);
            assert_eq!(
                against_oracle(&mut r, &world, &oracle, &t()),
                Ok(vec![Compared::Same])
            );
        }
    }

    #[test]
    fn a_digest_that_differs_is_only_a_hint_the_texts_decide() {
        let (mut r, oracle, world) = started(false, true, true);
        assert_eq!(
            against_oracle(&mut r, &world, &oracle, &t()),
            Ok(vec![Compared::Same])
        );
    }

    #[test]
    fn views_that_differ_are_given_as_both_texts() {
        let (mut r, oracle, world) = started(true, false, false);
        let compared = against_oracle(&mut r, &world, &oracle, &t()).unwrap();
        let [Compared::Differs { expected, actual }] = &compared[..] else {
            panic!("the edited view differs: {compared:?}");
        };
        assert_eq!(*expected, oracle.view_text(&t()[0]));
        assert_eq!(actual.to_value()["pending"][0], "edited");
    }

    /// A receiver whose digest is its ledger's while its text is not
    /// breaks the contract of `view_digests`: debug builds, the tests,
    /// check every digest against the texts and stop there.
    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "the digests of two different views of t are equal")]
    fn a_digest_that_hides_a_different_text_is_caught_in_debug_builds() {
        let (mut r, oracle, world) = started(true, true, false);
        let _ = against_oracle(&mut r, &world, &oracle, &t());
    }
}
