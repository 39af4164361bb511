//! Only `execute` may act on the world. A start-up, a delivery and a view
//! are judged by the world's effect count before and after them: an
//! effect there bypasses every authority check (S5.4, S5.6, S8.10), since
//! the harness asked for no execution. The simulator, the explorer and the
//! corpus player start receivers and ask views through here, so that none
//! of them can forget the rule.

use tern_model::message::ThreadId;

use super::delivery::{crash_judged, Breach, Call, Came};
use crate::contract::plugin::{Implementation, InitParams, Receiver, View, ViewDigest};
use crate::contract::storage::{CrashPoint, Storage};
use crate::contract::world::World;

/// Effects counted by `call` between `before` and `after`.
pub fn no_effects(call: Call, before: usize, after: usize) -> Result<(), Breach> {
    match after.saturating_sub(before) {
        0 => Ok(()),
        count => Err(Breach::Effects { call, count }),
    }
}

/// Starts `implementation` as `init`'s participant on `storage` and
/// `world`, with `crash` armed for the start-up's first sync, and judges
/// the start-up: the crash exactly as scheduled, then no effect, whether
/// or not it crashed. A receiver that started is put in `slot` even when
/// the start-up broke the effect rule, so that the driver shuts it down
/// as it shuts down any other.
pub fn start(
    implementation: &dyn Implementation,
    init: &InitParams,
    storage: &Storage,
    world: &World,
    crash: Option<CrashPoint>,
    slot: &mut Option<Box<dyn Receiver>>,
) -> Result<Came, Breach> {
    let before = world.len();
    let for_agent = world.for_agent(init.participant.as_str(), storage);
    let (started, fired) = storage.with_crash(crash, || {
        implementation.start(init, storage.clone(), for_agent)
    });
    let came = match crash_judged(Call::StartUp, started, fired)? {
        None => Came::Crashed,
        Some(receiver) => {
            *slot = Some(receiver);
            Came::Answered
        }
    };
    no_effects(Call::StartUp, before, world.len())?;
    Ok(came)
}

/// The receiver's views of the threads `wanted` names, each asked against
/// the oracle's view it is paired with, together (over the protocol one
/// round trip for all). Effects come first: an effect makes any answer
/// moot.
pub fn views(
    receiver: &mut dyn Receiver,
    world: &World,
    wanted: &[(ThreadId, View)],
) -> Result<Vec<View>, Breach> {
    let before = world.len();
    let answer = receiver.views_against(wanted);
    quiet_view(before, world, wanted.iter().map(|(t, _)| t))?;
    answer.map_err(Breach::Failed)
}

/// The digests of the receiver's views of `threads`, if it gives them
/// ([`Receiver::view_digests`]), judged as views are: effects first.
pub fn digests(
    receiver: &mut dyn Receiver,
    world: &World,
    threads: &[ThreadId],
) -> Result<Option<Vec<ViewDigest>>, Breach> {
    let before = world.len();
    let answer = receiver.view_digests(threads);
    quiet_view(before, world, threads.iter())?;
    answer.transpose().map_err(Breach::Failed)
}

/// The receiver's view of one thread, asked with no expectation.
pub fn view(receiver: &mut dyn Receiver, world: &World, thread: &ThreadId) -> Result<View, Breach> {
    let before = world.len();
    let answer = receiver.view(thread);
    quiet_view(before, world, std::iter::once(thread))?;
    answer.map_err(Breach::Failed)
}

fn quiet_view<'t>(
    before: usize,
    world: &World,
    threads: impl Iterator<Item = &'t ThreadId>,
) -> Result<(), Breach> {
    match world.len().saturating_sub(before) {
        0 => Ok(()),
        count => Err(Breach::EffectsInView {
            threads: threads.map(ThreadId::as_str).collect::<Vec<_>>().join(", "),
            count,
        }),
    }
}

#[cfg(test)]
mod tests {
    use tern_model::ledger::EffectKey;
    use tern_model::message::{MessageRef, Principal};

    use super::*;
    use crate::contract::plugin::{Delivered, Identity, ImplError};
    use crate::implementations::reference::ReferenceImpl;
    use crate::judge::invariants as inv;
    use tern_model::ledger::{Execution, LocalTime};

    /// A receiver that acts on the world while answering a view (when
    /// `in_view`): the smallest model of the defect the rule catches.
    struct Acting {
        world: crate::contract::world::AgentWorld,
        in_view: bool,
    }

    impl Receiver for Acting {
        fn identity(&self) -> Identity {
            Identity::builtin("acting")
        }
        fn deliver(
            &mut self,
            _: &[u8],
            _: &Principal,
            _: LocalTime,
        ) -> Result<Delivered, ImplError> {
            Err(ImplError::Misbehaved("not used".into()))
        }
        fn execute(
            &mut self,
            _: &ThreadId,
            _: &MessageRef,
            _: LocalTime,
        ) -> Result<Execution, ImplError> {
            Err(ImplError::Misbehaved("not used".into()))
        }
        fn view(&mut self, thread: &ThreadId) -> Result<View, ImplError> {
            if self.in_view {
                self.world.perform(&EffectKey(format!("c1/{thread}")))?;
            }
            Err(ImplError::Misbehaved("no view either".into()))
        }
    }

    struct ActsAtStart;

    impl Implementation for ActsAtStart {
        fn name(&self) -> String {
            "acts-at-start".into()
        }
        fn start(
            &self,
            _: &InitParams,
            storage: Storage,
            world: crate::contract::world::AgentWorld,
        ) -> Result<Box<dyn Receiver>, ImplError> {
            world.perform(&EffectKey("c1/bob:1".into()))?;
            storage.sync()?;
            Ok(Box::new(Acting {
                world,
                in_view: true,
            }))
        }
    }

    fn init() -> InitParams {
        let config = tern_model::ledger::LedgerConfig::from_json(
            r#"{"participant": "bob", "contexts": {"c1": {"bob": "pk-bob"}}, "threads": {"t": "c1"}}"#,
        )
        .expect("a valid configuration");
        InitParams {
            participant: tern_model::message::Participant::new("bob").expect("a name"),
            principal: Principal::new("pk-bob").expect("a principal"),
            config: std::sync::Arc::new(config),
        }
    }

    #[test]
    fn an_effect_while_starting_breaks_authority_crash_or_not() {
        let world = World::new();
        let mut slot = None;
        let b = start(
            &ActsAtStart,
            &init(),
            &Storage::new(),
            &world,
            None,
            &mut slot,
        )
        .unwrap_err();
        assert_eq!(b.invariant(), inv::AUTHORITY);
        assert_eq!(b.expected(), "no effect while starting");
        assert_eq!(b.actual(), "1 effect(s) performed during start-up");
        assert!(
            slot.is_some(),
            "the receiver is handed over to be shut down"
        );
        // A start-up that crashed at its first sync acted all the same.
        let mut slot = None;
        let b = start(
            &ActsAtStart,
            &init(),
            &Storage::new(),
            &world,
            Some(CrashPoint::BeforeSync),
            &mut slot,
        )
        .unwrap_err();
        assert_eq!(b.actual(), "1 effect(s) performed during start-up");
        assert!(slot.is_none());
    }

    #[test]
    fn the_reference_starts_quietly_and_its_views_act_on_nothing() {
        let world = World::new();
        let mut slot = None;
        let came = start(
            &ReferenceImpl,
            &init(),
            &Storage::new(),
            &world,
            None,
            &mut slot,
        );
        assert_eq!(came, Ok(Came::Answered));
        let mut r = slot.expect("started");
        let t = ThreadId::new("t").unwrap();
        assert!(view(r.as_mut(), &world, &t).is_ok());
        assert!(views(r.as_mut(), &world, &[]).unwrap().is_empty());
    }

    #[test]
    fn an_effect_while_answering_a_view_is_named_before_the_failed_answer() {
        let world = World::new();
        let storage = Storage::new();
        let mut r = Acting {
            world: world.for_agent("bob", &storage),
            in_view: true,
        };
        let t = ThreadId::new("t").unwrap();
        let b = view(&mut r, &world, &t).unwrap_err();
        assert_eq!(b.expected(), "no effect while answering a view");
        assert_eq!(
            b.actual(),
            "1 effect(s) performed while answering a view of t"
        );
        // Without the effect, the failed answer is what is left.
        r.in_view = false;
        assert!(matches!(view(&mut r, &world, &t), Err(Breach::Failed(_))));
    }

    #[test]
    fn an_effect_during_a_delivery_breaks_authority() {
        assert_eq!(no_effects(Call::Delivery, 3, 3), Ok(()));
        let b = no_effects(Call::Delivery, 3, 4).unwrap_err();
        assert_eq!(b.invariant(), inv::AUTHORITY);
        assert_eq!(b.expected(), "no effect during a delivery");
    }
}
