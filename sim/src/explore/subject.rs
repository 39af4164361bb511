//! One receiver under test beside its oracle, judged at every call by the
//! same rules as the simulator's agents (`judge::delivery` and
//! `judge::oracle`). The explorer drives it one move at a time; a fresh
//! subject replays a schedule's prefix, since an implementation's state
//! cannot be copied.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

use tern_model::ledger::{Ledger, LocalTime, ViewDigest};
use tern_model::message::{MessageRef, Principal, ThreadId};

use super::search::Parsed;
use crate::catalogue::reach::{Reach, Sent};
use crate::catalogue::situations::{power_moments, Coverage, Moment, Situation};
use crate::contract::plugin::{Implementation, InitParams};
use crate::contract::storage::{CrashPoint, FileOp, Loss, PowerCut};
use crate::contract::world::World;
use crate::judge::compare::RejectNames;
use crate::judge::delivery::{self, Came, Judged};
use crate::judge::failure::Failure;
use crate::judge::oracle;
use crate::judge::replies::KnownAcks;
use crate::judge::under_test::{Asked, Executed, Unacked, UnderTest};

pub struct Subject<'i> {
    under_test: UnderTest<'i>,
    names: RejectNames,
    threads: Vec<ThreadId>,
    world: World,
    acks: KnownAcks,
    /// The oracle's views at the last check, for the state key.
    views: Vec<ViewDigest>,
    /// The situations of the catalogue reached, counted only while
    /// `counting` (the last move of a replay, so that a prefix replayed
    /// for every child is not counted again).
    reach: Reach,
    /// Shared by the forks of a subject until one of them meets a frame
    /// none met before: after the first layers, all have met every frame.
    sent: std::sync::Arc<BTreeMap<Vec<u8>, Sent>>,
    /// The expiry of the grant each COMMIT delivered cites, by (thread, ID).
    expiries: BTreeMap<(ThreadId, MessageRef), i64>,
    pub coverage: Coverage,
    /// Where the moves of a replayed prefix are recognised: never read,
    /// kept so that replays allocate nothing.
    uncounted: Coverage,
    pub counting: bool,
}

impl Drop for Subject<'_> {
    fn drop(&mut self) {
        self.under_test.dismiss();
    }
}

impl<'i> Subject<'i> {
    /// A receiver started on empty storage; `Err` if even that breaks a rule.
    pub fn start(
        implementation: &'i dyn Implementation,
        init: &InitParams,
        threads: &[ThreadId],
        names: RejectNames,
    ) -> Result<Subject<'i>, Failure> {
        let mut s = Subject {
            under_test: UnderTest::new(implementation, init.clone()),
            names,
            threads: threads.to_vec(),
            world: World::new(),
            acks: KnownAcks::default(),
            views: Vec::new(),
            reach: Reach::default(),
            sent: Default::default(),
            expiries: BTreeMap::new(),
            coverage: Coverage::default(),
            uncounted: Coverage::default(),
            counting: false,
        };
        s.restart(None)?;
        Ok(s)
    }

    /// A copy of this subject that shares nothing with it: storage, world,
    /// oracle, the harness's memory and the receiver ([`Receiver::fork`]);
    /// `None` when the receiver cannot be copied (a subprocess). The
    /// search forks the state it expands once per move instead of
    /// replaying its schedule for every move. Nothing is counted in the
    /// copy until the search says so.
    pub fn fork(&self) -> Option<Subject<'i>> {
        debug_assert!(!self.counting, "a subject is forked before it counts");
        let world = self.world.fork();
        let under_test = self.under_test.fork(&world)?;
        Some(Subject {
            under_test,
            names: self.names,
            threads: self.threads.clone(),
            world,
            acks: self.acks.clone(),
            views: self.views.clone(),
            reach: self.reach.clone(),
            sent: self.sent.clone(),
            expiries: self.expiries.clone(),
            coverage: Coverage::default(),
            uncounted: Coverage::default(),
            counting: false,
        })
    }

    /// The oracle's ledger as this subject's moves left it: what the
    /// search asks whether two deliveries commute.
    pub fn oracle(&self) -> &Ledger {
        self.under_test.oracle()
    }

    /// Hashes the oracle's views at the last check: what the state key
    /// knows of the oracle.
    pub fn hash_oracle_views(&self, h: &mut impl Hasher) {
        self.views.hash(h);
    }

    pub fn is_up(&self) -> bool {
        self.under_test.is_up()
    }

    /// The frame the last crash cut, or whose acknowledgement it lost.
    pub fn last_answered(&self) -> Option<&Unacked> {
        self.under_test.last_answered()
    }

    /// Counts the moments the calls came to (see [`Fell`](crate::judge::under_test::Fell)).
    fn count_fell(&mut self) {
        for fell in self.under_test.take_fell() {
            self.reached(Situation::Moment(Moment::of(fell)));
        }
    }

    fn reached(&mut self, s: Situation) {
        if self.counting {
            self.coverage.reach(s);
        }
    }

    /// A frame's facts for the catalogue, from its first delivery (when
    /// its sender sent it).
    fn sent(&mut self, frame: &[u8]) -> Sent {
        if let Some(s) = self.sent.get(frame) {
            return s.clone();
        }
        let parsed = tern_model::parse_frame(frame).ok();
        if let Some(m) = &parsed {
            if let tern_model::Body::Commit(c) = &m.body {
                let expiry = c
                    .authority_ref
                    .as_ref()
                    .and_then(|g| self.under_test.init().config.grants.get(g))
                    .and_then(|g| g.expires_at);
                if let Some(t) = expiry {
                    self.expiries.insert((m.thread.clone(), m.id.clone()), t.0);
                }
            }
        }
        let s = self.reach.on_send(parsed.as_ref(), None);
        std::sync::Arc::make_mut(&mut self.sent).insert(frame.to_vec(), s.clone());
        s
    }

    /// Starts the receiver on its storage, with `crash` armed for its
    /// first sync.
    pub fn restart(&mut self, crash: Option<CrashPoint>) -> Result<Came, Failure> {
        let came = self
            .under_test
            .start(&self.world, crash)
            .map_err(|b| b.into_failure("the implementation starts"))?;
        self.count_fell();
        if came == Came::Crashed {
            self.crashed();
        }
        self.power_notes();
        Ok(came)
    }

    /// How the next crash falls over a power-loss state directory (read
    /// only there).
    pub fn set_cut(&mut self, cut: PowerCut) {
        self.under_test.storage().set_cut(Some(cut));
    }

    /// A crash scheduled for the next start, at its `at_op`-th file
    /// operation if set: it takes what the crash it recovers from took
    /// (a state directory makes one kind of loss per crash cut).
    pub fn set_recovery_crash_op(&mut self, at_op: Option<u8>) {
        let storage = self.under_test.storage();
        let loss = storage.cut().map_or(Loss::Power, |c| c.loss);
        storage.set_cut(Some(PowerCut { loss, at_op }));
    }

    /// The mutating file operations the state directory saw so far, where
    /// tern-sim serves it.
    pub fn file_ops_mark(&self) -> Option<u64> {
        self.under_test
            .implementation()
            .file_ops_mark(self.under_test.storage())
    }

    /// The state directory's mutating file operations since `mark`.
    pub fn file_ops_since(&self, mark: u64) -> Vec<FileOp> {
        self.under_test
            .implementation()
            .file_ops_since(self.under_test.storage(), mark)
    }

    /// What the state directory told of the crashes, as situations.
    fn power_notes(&mut self) {
        for note in self.under_test.storage().take_notes() {
            for m in power_moments(&note) {
                self.reached(Situation::Moment(m));
            }
        }
    }

    /// Counts a crash that left the receiver down.
    fn crashed(&mut self) {
        self.power_notes();
        self.reach.on_crash(0);
    }

    /// A crash between operations: the last answer's acknowledgement is
    /// lost, so its frame is returned for the sender to send again.
    pub fn crash_idle(&mut self) -> Option<Unacked> {
        let owed = self.under_test.crash_idle().cloned();
        self.count_fell();
        self.crashed();
        owed
    }

    /// One delivery, with every check.
    pub fn deliver(
        &mut self,
        frame: &[u8],
        parsed: &Parsed,
        principal: &Principal,
        at: LocalTime,
        crash: Option<CrashPoint>,
    ) -> Result<Came, Failure> {
        let before = self.world.len();
        let sent = self.sent(frame);
        let asked = self
            .under_test
            .deliver(frame, principal, at, crash, &[], ())
            .map_err(|b| b.into_failure("an answer to deliver"))?;
        self.count_fell();
        let (reply, owed) = match asked {
            Asked::Crashed => {
                self.crashed();
                return Ok(Came::Crashed);
            }
            Asked::Answered { reply, owed } => (reply, owed),
        };
        let expected = self.under_test.expect(parsed.clone(), principal, at);
        let coverage = if self.counting {
            &mut self.coverage
        } else {
            &mut self.uncounted
        };
        let me = self.under_test.me();
        self.reach
            .on_delivery(coverage, 0, me, at.0, &sent, &expected);
        self.reach
            .on_revision_conflict(coverage, &sent, self.under_test.oracle());
        self.acks.note_frame(frame);
        let names = self.names;
        delivery::answered(
            before,
            self.world.len(),
            || oracle::delivery_events(&expected, &reply.events, owed.is_some(), names),
            &oracle::first_outcome(&expected),
            &reply.outgoing,
            me,
            &mut self.acks,
        )
        .map_err(|j| match j {
            Judged::Effects(b) | Judged::Sent { breach: b, .. } => {
                b.into_failure("an answer to deliver")
            }
            Judged::Events(m) => m,
        })?;
        self.under_test.answered(frame, principal, ());
        Ok(Came::Answered)
    }

    /// One ask to execute, with every check.
    pub fn execute(
        &mut self,
        thread: &ThreadId,
        id: &MessageRef,
        at: LocalTime,
        crash: Option<CrashPoint>,
    ) -> Result<Came, Failure> {
        let asked = self
            .under_test
            .ask_to_execute(&self.world, thread, id, at, crash);
        let expiry = self.expiries.get(&(thread.clone(), id.clone())).copied();
        let coverage = if self.counting {
            &mut self.coverage
        } else {
            &mut self.uncounted
        };
        self.reach.on_execution(
            coverage,
            0,
            id.as_str(),
            at.0,
            false,
            expiry,
            &asked.decision,
        );
        if !asked.performed.is_empty() {
            self.reach.on_effect(thread.as_str(), id.as_str());
        }
        self.count_fell();
        match self
            .under_test
            .settle(asked, &self.world, thread, id, at, self.names)?
        {
            Executed::Crashed => {
                self.crashed();
                Ok(Came::Crashed)
            }
            Executed::Answered { judged, .. } => judged.map(|()| Came::Answered),
        }
    }

    /// The receiver's view of every thread against the oracle's (nothing
    /// while it is down, or unless `compare`: only the oracle's digests are
    /// kept).
    pub fn check_views(&mut self, compare: bool) -> Result<(), Failure> {
        if compare && self.is_up() {
            self.under_test
                .check_views(&self.world, &self.threads, self.names)?;
        }
        let oracle = self.under_test.oracle();
        self.views = self.threads.iter().map(|t| oracle.view_digest(t)).collect();
        Ok(())
    }

    /// What a later move can depend on, as the oracle and the harness see
    /// it: the oracle's views (which a conforming receiver's equal), the
    /// world's effects, the frames owed again, whether the receiver is up,
    /// and the records the receiver keeps in the harness's storage, as a
    /// multiset. Two schedules that agree on these, and, while a crash is
    /// left, on [`Subject::last_answered`], are merged (docs/explore.md §3).
    pub fn key(&self, h: &mut impl Hasher) {
        let storage = self.under_test.storage();
        storage.unordered_hash(h);
        // A subprocess's records are in its state directory: what it holds,
        // live and after a power loss, where tern-sim serves it.
        self.under_test.implementation().hash_state_dir(storage, h);
        if !self.is_up() {
            // What the restart will make of it.
            storage.cut().hash(h);
        }
        self.views.hash(h);
        self.world.log().hash(h);
        self.under_test.owed().hash(h);
        self.is_up().hash(h);
    }
}
