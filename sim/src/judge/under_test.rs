//! One receiver under test, with what the harness keeps beside it: its
//! storage, its oracle, the frames it owes an answer for, and the IDs its
//! views have shown. The simulator's agents and the explorer's subject are
//! each one of these inside a driver that chooses the calls (which frame,
//! which crash, when); the corpus player starts, crashes and delivers
//! through one too. So the rules of a call live here once: what a crash
//! takes, which frames a crash leaves owed, what an answered delivery
//! leaves to confirm, how an execution is judged against the oracle and
//! the world, and how views confirm what they show.
//!
//! A call that a crash cuts leaves the receiver down here, and where the
//! crash fell is recorded here ([`Fell`], the moment every driver's
//! coverage counts), before the driver counts the crash in its own way
//! (faults, a restart time).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use tern_model::ledger::{EffectKey, Event, Execution, Ledger, LocalTime, SharedMessage};
use tern_model::message::{MessageRef, Principal, ThreadId};
use tern_model::WireError;

use super::compare::RejectNames;
use super::delivery::{self, Breach, Call, Came, Delivery};
use super::failure::Failure;
use super::no_effect;
use super::oracle;
use super::views::{self, Compared};
use crate::contract::error::ImplError;
use crate::contract::plugin::{Delivered, Implementation, InitParams, Receiver};
use crate::contract::storage::{CrashPoint, Storage};
use crate::contract::world::World;

/// A frame whose delivery was not acknowledged: a crash cut it (`point`)
/// or came right after its answer (`None`), so its sender sends it again.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Unacked<Tag = ()> {
    pub frame: Vec<u8>,
    pub principal: Principal,
    pub point: Option<CrashPoint>,
    /// What the driver keeps with the frame (the simulator: which of its
    /// sends it is).
    pub tag: Tag,
}

/// What a delivery that broke no crash rule came to.
#[derive(Debug)]
pub enum Asked {
    /// The scheduled crash fired: the receiver is down and the frame is
    /// owed again.
    Crashed,
    Answered {
        reply: Delivered,
        /// `Some` when the frame was owed again: the crash point that cut
        /// its earlier delivery, or `None` for a lost acknowledgement.
        owed: Option<Option<CrashPoint>>,
    },
}

/// An execution asked, before it is judged: what the driver counts of it
/// first (situations, effects), then hands to [`UnderTest::settle`].
#[derive(Debug)]
pub struct Executing {
    result: Result<Execution, ImplError>,
    pub fired: bool,
    /// The effects the world saw during the call, by whom.
    pub performed: Vec<(String, EffectKey)>,
    /// What the oracle would decide, asked before it learns the outcome.
    pub decision: Execution,
}

/// What an execution came to, once judged.
#[derive(Debug)]
pub enum Executed {
    /// The scheduled crash fired: the receiver is down.
    Crashed,
    /// The receiver's decision, and its judgement against the oracle's,
    /// kept apart so that a driver can record the answer before the
    /// failure it may be.
    Answered {
        actual: Execution,
        judged: Result<(), Failure>,
    },
}

/// Where a call's crash fell, or that a call redelivered a frame a crash
/// had left owed: what a driver's coverage counts of the calls (the
/// catalogue names each a moment), recorded here, where the calls are
/// judged, so that every driver counts the same thing at the same call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fell {
    /// A start-up the crash armed for `point` cut.
    Starting(Option<CrashPoint>),
    /// A crash between operations.
    Idle,
    /// A delivery the crash armed for `point` cut.
    Delivering(Option<CrashPoint>),
    /// An answered delivery of a frame a crash had cut at `point` (`None`:
    /// right after its answer).
    Redelivered(Option<CrashPoint>),
    /// An execution cut at `point`.
    Executing(CrashPoint),
}

pub struct UnderTest<'i, Tag = ()> {
    implementation: &'i dyn Implementation,
    /// What every start is given, made once: its configuration lists every
    /// thread and grant of a run, so making it at each restart would cost
    /// a run the square of its length.
    init: InitParams,
    me: String,
    storage: Storage,
    receiver: Option<Box<dyn Receiver>>,
    oracle: Ledger,
    /// Frames whose delivery a crash cut, until they are answered.
    cut: Vec<Unacked<Tag>>,
    /// The last frame answered: a crash between operations loses its
    /// acknowledgement.
    last_answered: Option<Unacked<Tag>>,
    /// Per thread: IDs the receiver's views have shown (the history check).
    seen: BTreeMap<ThreadId, BTreeSet<String>>,
    /// Per thread: IDs the oracle's events named since the last view that
    /// matched the oracle's. A view equal to the oracle's shows exactly the
    /// oracle's IDs, so these (those the oracle shows) join `seen` without
    /// reading the view.
    unconfirmed: BTreeMap<ThreadId, Vec<MessageRef>>,
    /// What the calls came to since the driver last took it.
    fell: Vec<Fell>,
}

impl<'i, Tag: Clone> UnderTest<'i, Tag> {
    /// A receiver not started yet, on empty storage, with a fresh oracle.
    pub fn new(implementation: &'i dyn Implementation, init: InitParams) -> UnderTest<'i, Tag> {
        UnderTest {
            implementation,
            me: init.participant.to_string(),
            oracle: Ledger::new(init.config.clone()),
            init,
            storage: Storage::new(),
            receiver: None,
            cut: Vec::new(),
            last_answered: None,
            seen: BTreeMap::new(),
            unconfirmed: BTreeMap::new(),
            fell: Vec::new(),
        }
    }

    /// A copy that shares nothing with this one, on `world` (the driver's
    /// copy of the world): storage, oracle, the harness's memory and the
    /// receiver ([`Receiver::fork`]). `None` when the receiver cannot be
    /// copied (a subprocess).
    pub fn fork(&self, world: &World) -> Option<UnderTest<'i, Tag>> {
        let storage = self.storage.fork();
        let receiver = match &self.receiver {
            Some(r) => Some(r.fork(&storage, &world.for_agent(&self.me, &storage))?),
            None => None,
        };
        Some(UnderTest {
            implementation: self.implementation,
            init: self.init.clone(),
            me: self.me.clone(),
            storage,
            receiver,
            oracle: self.oracle.clone(),
            cut: self.cut.clone(),
            last_answered: self.last_answered.clone(),
            seen: self.seen.clone(),
            unconfirmed: self.unconfirmed.clone(),
            fell: Vec::new(),
        })
    }

    /// Where the calls' crashes fell, and the redeliveries, since last
    /// asked: for the driver's coverage.
    pub fn take_fell(&mut self) -> Vec<Fell> {
        std::mem::take(&mut self.fell)
    }

    pub fn implementation(&self) -> &'i dyn Implementation {
        self.implementation
    }

    pub fn init(&self) -> &InitParams {
        &self.init
    }

    /// The participant it runs as.
    pub fn me(&self) -> &str {
        &self.me
    }

    pub fn storage(&self) -> &Storage {
        &self.storage
    }

    pub fn oracle(&self) -> &Ledger {
        &self.oracle
    }

    pub fn is_up(&self) -> bool {
        self.receiver.is_some()
    }

    /// The receiver, while it is up.
    pub fn receiver(&mut self) -> Option<&mut dyn Receiver> {
        // Not `as_deref_mut`: the box holds a `dyn Receiver + 'static`, and
        // a mutable reference to it cannot shorten that lifetime.
        match self.receiver.as_mut() {
            Some(r) => Some(r.as_mut()),
            None => None,
        }
    }

    /// The frames owed again: those a crash cut, and the one whose
    /// acknowledgement a crash between operations lost.
    pub fn owed(&self) -> &[Unacked<Tag>] {
        &self.cut
    }

    /// The frame last answered, whose acknowledgement a crash between
    /// operations would lose.
    pub fn last_answered(&self) -> Option<&Unacked<Tag>> {
        self.last_answered.as_ref()
    }

    /// Whether the receiver's views of `thread` have shown `id`.
    pub fn has_shown(&self, thread: &ThreadId, id: &MessageRef) -> bool {
        self.seen
            .get(thread)
            .is_some_and(|s| s.contains(id.as_str()))
    }

    /// Starts the receiver on its storage, with `crash` armed for the
    /// start-up's first sync: the rule that starting acts on nothing
    /// ([`no_effect::start`]). A start-up the crash cut leaves it down.
    pub fn start(&mut self, world: &World, crash: Option<CrashPoint>) -> Result<Came, Breach> {
        let came = no_effect::start(
            self.implementation,
            &self.init,
            &self.storage,
            world,
            crash,
            &mut self.receiver,
        )?;
        if came == Came::Crashed {
            self.fell.push(Fell::Starting(crash));
            self.crash();
        }
        Ok(came)
    }

    /// The harness's crash: kill, drop, lose what was not durable.
    pub fn crash(&mut self) {
        if let Some(r) = self.receiver.as_mut() {
            r.kill();
        }
        self.receiver = None;
        self.storage.crash();
    }

    /// A crash between operations: the last answer's acknowledgement is
    /// lost with it, so its frame is owed again. That frame, if an answer
    /// came since the last crash.
    pub fn crash_idle(&mut self) -> Option<&Unacked<Tag>> {
        self.fell.push(Fell::Idle);
        self.crash();
        let last = self.last_answered.take()?;
        // Answering a frame settles what it owed, and a crash inside a
        // call forgets the last answer: the two are never the same frame.
        debug_assert!(
            !self.cut.iter().any(|u| u.frame == last.frame),
            "the last answer is not owed already"
        );
        self.cut.push(last);
        self.cut.last()
    }

    /// Shuts the receiver down and lets the implementation release its
    /// storage: the end of a run, a subject or a case.
    pub fn dismiss(&mut self) {
        if let Some(r) = self.receiver.as_mut() {
            r.dismiss();
        }
        self.implementation.release(&self.storage);
    }

    /// Delivers `frame` to the receiver, which must be up, with `crash`
    /// armed for exactly this call. `follow` names the views asked right
    /// after it, for a receiver that pipelines them. A delivery the crash
    /// cut leaves the receiver down and the frame owed again (with `tag`
    /// if it was not owed already); an answered one is no longer owed.
    pub fn deliver(
        &mut self,
        frame: &[u8],
        principal: &Principal,
        at: LocalTime,
        crash: Option<CrashPoint>,
        follow: &[ThreadId],
        tag: Tag,
    ) -> Result<Asked, Breach> {
        let receiver = self
            .receiver
            .as_mut()
            .expect("deliveries reach a receiver that is up");
        if !follow.is_empty() {
            receiver.views_follow(follow);
        }
        match delivery::deliver(
            receiver.as_mut(),
            &self.storage,
            crash,
            frame,
            principal,
            at,
        )? {
            Delivery::Crashed => {
                match self.cut.iter_mut().find(|u| u.frame == frame) {
                    Some(u) => u.point = crash,
                    None => self.cut.push(Unacked {
                        frame: frame.to_vec(),
                        principal: principal.clone(),
                        point: crash,
                        tag,
                    }),
                }
                self.last_answered = None;
                self.fell.push(Fell::Delivering(crash));
                self.crash();
                Ok(Asked::Crashed)
            }
            Delivery::Answered(reply) => {
                let owed = self.cut.iter().find(|u| u.frame == frame).map(|u| u.point);
                if let Some(point) = owed {
                    self.fell.push(Fell::Redelivered(point));
                }
                self.cut.retain(|u| u.frame != frame);
                Ok(Asked::Answered { reply, owed })
            }
        }
    }

    /// What the oracle makes of a delivery the receiver answered: its
    /// events, whose IDs the next view equal to the oracle's confirms.
    pub fn expect(
        &mut self,
        parsed: Result<Arc<SharedMessage>, WireError>,
        principal: &Principal,
        at: LocalTime,
    ) -> Vec<Event> {
        let expected = self.oracle.deliver_shared(parsed, principal, at);
        for e in &expected {
            if let (Some(t), Some(id)) = (&e.thread, &e.id) {
                match self.unconfirmed.get_mut(t) {
                    Some(ids) => ids.push(id.clone()),
                    None => {
                        self.unconfirmed.insert(t.clone(), vec![id.clone()]);
                    }
                }
            }
        }
        expected
    }

    /// A delivery judged sound: its frame is the last answered.
    pub fn answered(&mut self, frame: &[u8], principal: &Principal, tag: Tag) {
        self.last_answered = Some(Unacked {
            frame: frame.to_vec(),
            principal: principal.clone(),
            point: None,
            tag,
        });
    }

    /// Asks the receiver, which must be up, to execute `id`, with `crash`
    /// armed for exactly this call: what it answered, the effects the
    /// world saw, and what the oracle would decide.
    pub fn ask_to_execute(
        &mut self,
        world: &World,
        thread: &ThreadId,
        id: &MessageRef,
        at: LocalTime,
        crash: Option<CrashPoint>,
    ) -> Executing {
        let before = world.len();
        let receiver = self
            .receiver
            .as_mut()
            .expect("executions reach a receiver that is up");
        let (result, fired) = self
            .storage
            .with_crash(crash, || receiver.execute(thread, id, at));
        if let (true, Some(point)) = (fired, crash) {
            self.fell.push(Fell::Executing(point));
        }
        Executing {
            result,
            fired,
            performed: world.log_since(before),
            decision: self.oracle.would_execute(thread, id, at),
        }
    }

    /// An execution judged: the effects against the oracle's decision and
    /// the world's history, then the answer against the crash schedule and
    /// the oracle's decision. A crash leaves the receiver down, the oracle
    /// having executed exactly when the world saw the effect.
    pub fn settle(
        &mut self,
        asked: Executing,
        world: &World,
        thread: &ThreadId,
        id: &MessageRef,
        at: LocalTime,
        names: RejectNames,
    ) -> Result<Executed, Failure> {
        oracle::effects(&asked.decision, &asked.performed, &self.me, world)?;
        match delivery::crash_judged(Call::Execution, asked.result, asked.fired) {
            Err(b) => Err(b.into_failure("an answer to execute")),
            Ok(None) => {
                if !asked.performed.is_empty() {
                    self.oracle.execute(thread, id, at);
                }
                self.last_answered = None;
                self.crash();
                Ok(Executed::Crashed)
            }
            Ok(Some(actual)) => {
                let expected = self.oracle.execute(thread, id, at);
                let judged = oracle::decision(&expected, &actual, asked.performed.len(), names);
                Ok(Executed::Answered { actual, judged })
            }
        }
    }

    /// The receiver's views of `threads` against the oracle's, the receiver
    /// being up: a view equal to the oracle's confirms the IDs it newly
    /// shows; one that differs is judged as a tree and named.
    pub fn check_views(
        &mut self,
        world: &World,
        threads: &[ThreadId],
        names: RejectNames,
    ) -> Result<(), Failure> {
        let receiver = self
            .receiver
            .as_mut()
            .expect("views are asked of a receiver that is up");
        let compared = views::against_oracle(receiver.as_mut(), world, &self.oracle, threads)
            .map_err(|b| b.into_failure("a view"))?;
        for (t, compared) in threads.iter().zip(compared) {
            match compared {
                Compared::Same => {
                    if let Some(new) = self.unconfirmed.remove(t) {
                        let seen = self.seen.entry(t.clone()).or_default();
                        views::confirm_shown(&self.oracle, t, &new, seen);
                    }
                }
                Compared::Differs { expected, actual } => {
                    let seen = self.seen.entry(t.clone()).or_default();
                    oracle::view_tree(
                        t.as_str(),
                        &expected.to_value(),
                        &actual.to_value(),
                        seen,
                        world,
                        names,
                    )?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use tern_model::ledger::{Outcome, SharedMessage};

    use super::*;
    use crate::corpus::Corpus;
    use crate::explore::builtin;
    use crate::explore::scope::{Action, Scope};
    use crate::implementations::reference::ReferenceImpl;

    /// A REQUEST, the COMMIT that answers it and an ask to execute it: the
    /// smallest conversation with a durable delivery and an effect.
    fn scope() -> Scope {
        let scenarios = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
        let corpus = Corpus::load(&scenarios).expect("the corpus loads");
        builtin::by_name("commit-execute-crash", Some(&corpus)).expect("a built-in scope")
    }

    type Frame = (Vec<u8>, Principal, LocalTime);

    fn deliveries(scope: &Scope) -> Vec<Frame> {
        let frames: Vec<Frame> = scope
            .actions
            .iter()
            .filter_map(|a| match a {
                Action::Deliver {
                    frame,
                    principal,
                    at,
                } => Some((frame.to_vec(), principal.clone(), *at)),
                Action::Execute { .. } => None,
            })
            .collect();
        assert!(
            frames.len() >= 2,
            "the scope delivers a REQUEST and a COMMIT"
        );
        frames
    }

    fn execution(scope: &Scope) -> (ThreadId, MessageRef, LocalTime) {
        scope
            .actions
            .iter()
            .find_map(|a| match a {
                Action::Execute {
                    thread,
                    commitment,
                    at,
                } => Some((thread.clone(), commitment.clone(), at[0])),
                Action::Deliver { .. } => None,
            })
            .expect("the scope asks for an execution")
    }

    fn started<'i>(scope: &Scope, world: &World) -> UnderTest<'i, u8> {
        let mut ut = UnderTest::new(&ReferenceImpl, scope.setup.init());
        assert_eq!(ut.start(world, None), Ok(Came::Answered));
        ut
    }

    /// Delivers `frame` with no crash and lets the oracle learn it, as
    /// every driver does with an answer it judged sound.
    fn deliver_sound(ut: &mut UnderTest<'_, u8>, (frame, principal, at): &Frame, tag: u8) {
        let asked = ut.deliver(frame, principal, *at, None, &[], tag);
        assert!(matches!(asked, Ok(Asked::Answered { .. })), "{asked:?}");
        let parsed = tern_model::parse_frame(frame).map(SharedMessage::new);
        let expected = ut.expect(parsed, principal, *at);
        assert!(
            matches!(expected[0].outcome, Outcome::Accepted | Outcome::Duplicate),
            "{expected:?}"
        );
        ut.answered(frame, principal, tag);
    }

    #[test]
    fn a_delivery_a_crash_cut_is_owed_until_it_is_answered() {
        let scope = scope();
        let world = World::new();
        let mut ut = started(&scope, &world);
        let (frame, principal, at) = deliveries(&scope).remove(0);
        let crash = Some(CrashPoint::AfterSync);
        let asked = ut.deliver(&frame, &principal, at, crash, &[], 7);
        assert!(matches!(asked, Ok(Asked::Crashed)), "{asked:?}");
        assert!(!ut.is_up(), "a crash leaves the receiver down");
        let owed = Unacked {
            frame: frame.clone(),
            principal: principal.clone(),
            point: crash,
            tag: 7,
        };
        assert_eq!(ut.owed(), [owed]);
        assert_eq!(ut.take_fell(), [Fell::Delivering(crash)]);
        assert_eq!(ut.start(&world, None), Ok(Came::Answered));
        match ut.deliver(&frame, &principal, at, None, &[], 9) {
            Ok(Asked::Answered { owed, .. }) => assert_eq!(owed, Some(crash)),
            other => panic!("the redelivery is answered: {other:?}"),
        }
        assert!(ut.owed().is_empty(), "an answered frame is no longer owed");
        assert_eq!(ut.take_fell(), [Fell::Redelivered(crash)]);
        assert!(ut.take_fell().is_empty(), "each is told once");
        // A start-up cut at its first sync.
        ut.crash();
        let cut = Some(CrashPoint::BeforeSync);
        assert_eq!(ut.start(&world, cut), Ok(Came::Crashed));
        assert_eq!(ut.take_fell(), [Fell::Starting(cut)]);
    }

    #[test]
    fn a_crash_between_operations_owes_the_last_answer_once() {
        let scope = scope();
        let world = World::new();
        let mut ut = started(&scope, &world);
        let frames = deliveries(&scope);
        deliver_sound(&mut ut, &frames[0], 1);
        let owed = ut.crash_idle().cloned().expect("the last answer is owed");
        assert_eq!(ut.take_fell(), [Fell::Idle]);
        assert_eq!(
            (owed.frame.as_slice(), owed.point, owed.tag),
            (&frames[0].0[..], None, 1)
        );
        assert!(!ut.is_up());
        assert_eq!(ut.start(&world, None), Ok(Came::Answered));
        assert!(ut.crash_idle().is_none(), "an acknowledgement is lost once");
        assert_eq!(ut.owed().len(), 1);

        // A crash inside a later delivery: the earlier answer's
        // acknowledgement came before it, so only the cut frame is owed.
        assert_eq!(ut.start(&world, None), Ok(Came::Answered));
        deliver_sound(&mut ut, &frames[0], 1);
        let (frame, principal, at) = &frames[1];
        let asked = ut.deliver(frame, principal, *at, Some(CrashPoint::BeforeSync), &[], 2);
        assert!(matches!(asked, Ok(Asked::Crashed)), "{asked:?}");
        assert!(ut.last_answered().is_none());
        let points: Vec<_> = ut.owed().iter().map(|u| (u.tag, u.point)).collect();
        assert_eq!(points, [(2, Some(CrashPoint::BeforeSync))]);
    }

    /// An effect done is done in the oracle exactly when the world saw
    /// it, whatever the crash took of the answer.
    #[test]
    fn an_execution_a_crash_cut_counts_as_done_exactly_when_its_effect_happened() {
        let scope = scope();
        let (thread, id, at) = execution(&scope);
        for (point, done) in [
            (CrashPoint::BeforeEffect, false),
            (CrashPoint::AfterEffect, true),
        ] {
            let world = World::new();
            let mut ut = started(&scope, &world);
            for (i, f) in deliveries(&scope).iter().enumerate() {
                deliver_sound(&mut ut, f, i as u8);
            }
            let asked = ut.ask_to_execute(&world, &thread, &id, at, Some(point));
            assert!(asked.fired, "{point:?} fires");
            assert_eq!(ut.take_fell(), [Fell::Executing(point)]);
            assert!(matches!(asked.decision, Execution::Executed { .. }));
            assert_eq!(asked.performed.len(), usize::from(done));
            let settled = ut.settle(asked, &world, &thread, &id, at, RejectNames::Compared);
            assert!(matches!(settled, Ok(Executed::Crashed)), "{settled:?}");
            assert!(!ut.is_up());
            let again = ut.oracle().would_execute(&thread, &id, at);
            assert_eq!(
                matches!(again, Execution::Refused(_)),
                done,
                "after {point:?} the oracle would decide {again:?}"
            );
        }
    }

    #[test]
    fn an_execution_answered_is_judged_against_the_oracle_and_the_world() {
        let scope = scope();
        let (thread, id, at) = execution(&scope);
        let world = World::new();
        let mut ut = started(&scope, &world);
        for (i, f) in deliveries(&scope).iter().enumerate() {
            deliver_sound(&mut ut, f, i as u8);
        }
        let asked = ut.ask_to_execute(&world, &thread, &id, at, None);
        assert_eq!(asked.performed.len(), 1);
        match ut.settle(asked, &world, &thread, &id, at, RejectNames::Compared) {
            Ok(Executed::Answered { actual, judged }) => {
                assert!(matches!(actual, Execution::Executed { .. }));
                assert_eq!(judged, Ok(()));
            }
            other => panic!("the execution is answered: {other:?}"),
        }
        // Asked again, the receiver refuses, and the oracle agrees.
        let asked = ut.ask_to_execute(&world, &thread, &id, at, None);
        assert!(asked.performed.is_empty());
        match ut.settle(asked, &world, &thread, &id, at, RejectNames::Compared) {
            Ok(Executed::Answered { judged, .. }) => assert_eq!(judged, Ok(())),
            other => panic!("the second ask is answered: {other:?}"),
        }
    }

    #[test]
    fn a_view_equal_to_the_oracles_confirms_what_it_shows() {
        let scope = scope();
        let world = World::new();
        let mut ut = started(&scope, &world);
        let frames = deliveries(&scope);
        deliver_sound(&mut ut, &frames[0], 0);
        let message = tern_model::parse_frame(&frames[0].0).expect("a valid frame");
        let (thread, id) = (message.thread.clone(), message.id.clone());
        assert!(
            !ut.has_shown(&thread, &id),
            "nothing is shown before a view"
        );
        ut.check_views(&world, std::slice::from_ref(&thread), RejectNames::Compared)
            .expect("the reference's view is the oracle's");
        assert!(ut.has_shown(&thread, &id));
    }
}
