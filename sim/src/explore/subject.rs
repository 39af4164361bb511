//! One receiver under test beside its oracle, judged at every call by the
//! same rules as the simulator's agents (`judge::delivery` and
//! `judge::oracle`). The explorer drives it one move at a time; a fresh
//! subject replays a schedule's prefix, since an implementation's state
//! cannot be copied.

use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};

use tern_model::ledger::{Execution, Ledger, LocalTime, ViewDigest};
use tern_model::message::{MessageRef, Principal, ThreadId};

use super::search::Parsed;
use crate::catalogue::reach::{Reach, Sent};
use crate::catalogue::situations::{power_moments, Coverage, Moment, Situation};
use crate::contract::plugin::{Implementation, InitParams, Receiver};
use crate::contract::storage::{CrashPoint, FileOp, Loss, PowerCut, Storage};
use crate::contract::world::World;
use crate::judge::compare::RejectNames;
use crate::judge::delivery::{self, Call, Came, Delivery, Judged};
use crate::judge::failure::Failure;
use crate::judge::no_effect;
use crate::judge::oracle;
use crate::judge::replies::KnownAcks;
use crate::judge::views::{self, Compared};

/// A frame whose delivery was not acknowledged: a crash cut it (`point`)
/// or came right after its answer (`None`), so its sender sends it again.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Unacked {
    pub frame: Vec<u8>,
    pub principal: Principal,
    pub point: Option<CrashPoint>,
}

pub struct Subject<'i> {
    implementation: &'i dyn Implementation,
    init: InitParams,
    me: String,
    names: RejectNames,
    threads: Vec<ThreadId>,
    storage: Storage,
    world: World,
    receiver: Option<Box<dyn Receiver>>,
    oracle: Ledger,
    acks: KnownAcks,
    /// The frame cut by a crash, if any, until it is answered.
    cut: Vec<Unacked>,
    /// The last frame answered: a crash between operations loses its
    /// acknowledgement.
    last_answered: Option<Unacked>,
    /// Per thread: IDs the receiver's views have shown, and IDs the
    /// oracle's events named since the last view that matched the oracle's.
    seen: BTreeMap<ThreadId, BTreeSet<String>>,
    unconfirmed: BTreeMap<ThreadId, Vec<MessageRef>>,
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
        if let Some(r) = self.receiver.as_mut() {
            r.dismiss();
        }
        self.implementation.release(&self.storage);
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
            implementation,
            init: init.clone(),
            me: init.participant.to_string(),
            names,
            threads: threads.to_vec(),
            storage: Storage::new(),
            world: World::new(),
            receiver: None,
            oracle: Ledger::new(init.config.clone()),
            acks: KnownAcks::default(),
            cut: Vec::new(),
            last_answered: None,
            seen: BTreeMap::new(),
            unconfirmed: BTreeMap::new(),
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
        let storage = self.storage.fork();
        let world = self.world.fork();
        let receiver = match &self.receiver {
            Some(r) => Some(r.fork(&storage, &world.for_agent(&self.me, &storage))?),
            None => None,
        };
        Some(Subject {
            implementation: self.implementation,
            init: self.init.clone(),
            me: self.me.clone(),
            names: self.names,
            threads: self.threads.clone(),
            storage,
            world,
            receiver,
            oracle: self.oracle.clone(),
            acks: self.acks.clone(),
            cut: self.cut.clone(),
            last_answered: self.last_answered.clone(),
            seen: self.seen.clone(),
            unconfirmed: self.unconfirmed.clone(),
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
        &self.oracle
    }

    /// Hashes the oracle's views at the last check: what the state key
    /// knows of the oracle.
    pub fn hash_oracle_views(&self, h: &mut impl Hasher) {
        self.views.hash(h);
    }

    pub fn is_up(&self) -> bool {
        self.receiver.is_some()
    }

    /// The frame the last crash cut, or whose acknowledgement it lost.
    pub fn last_answered(&self) -> Option<&Unacked> {
        self.last_answered.as_ref()
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
                    .and_then(|g| self.init.config.grants.get(g))
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
        let came = no_effect::start(
            self.implementation,
            &self.init,
            &self.storage,
            &self.world,
            crash,
            &mut self.receiver,
        )
        .map_err(|b| b.into_failure("the implementation starts"))?;
        if came == Came::Crashed {
            self.reached(Situation::Moment(Moment::crashed_in_recovery(crash)));
            self.crash();
        }
        self.power_notes();
        Ok(came)
    }

    /// How the next crash falls over a power-loss state directory (read
    /// only there).
    pub fn set_cut(&mut self, cut: PowerCut) {
        self.storage.set_cut(Some(cut));
    }

    /// A crash scheduled for the next start, at its `at_op`-th file
    /// operation if set: it takes what the crash it recovers from took
    /// (a state directory makes one kind of loss per crash cut).
    pub fn set_recovery_crash_op(&mut self, at_op: Option<u8>) {
        let loss = self.storage.cut().map_or(Loss::Power, |c| c.loss);
        self.storage.set_cut(Some(PowerCut { loss, at_op }));
    }

    /// The mutating file operations the state directory saw so far, where
    /// tern-sim serves it.
    pub fn file_ops_mark(&self) -> Option<u64> {
        self.implementation.file_ops_mark(&self.storage)
    }

    /// The state directory's mutating file operations since `mark`.
    pub fn file_ops_since(&self, mark: u64) -> Vec<FileOp> {
        self.implementation.file_ops_since(&self.storage, mark)
    }

    /// What the state directory told of the crashes, as situations.
    fn power_notes(&mut self) {
        for note in self.storage.take_notes() {
            for m in power_moments(&note) {
                self.reached(Situation::Moment(m));
            }
        }
    }

    fn crash(&mut self) {
        self.power_notes();
        self.reach.on_crash(0);
        if let Some(r) = self.receiver.as_mut() {
            r.kill();
        }
        self.receiver = None;
        self.storage.crash();
    }

    /// A crash between operations: the last answer's acknowledgement is
    /// lost, so its frame is returned for the sender to send again.
    pub fn crash_idle(&mut self) -> Option<Unacked> {
        self.reached(Situation::Moment(Moment::CrashIdle));
        self.crash();
        let last = self.last_answered.take()?;
        (!self.cut.iter().any(|u| u.frame == last.frame)).then(|| {
            self.cut.push(last.clone());
            last
        })
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
        let receiver = self
            .receiver
            .as_mut()
            .expect("deliveries reach a receiver that is up");
        let reply = match delivery::deliver(
            receiver.as_mut(),
            &self.storage,
            crash,
            frame,
            principal,
            at,
        ) {
            Err(b) => return Err(b.into_failure("an answer to deliver")),
            Ok(Delivery::Crashed) => {
                self.reached(Situation::Moment(Moment::crashed_in_delivery(crash)));
                match self.cut.iter_mut().find(|u| u.frame == frame) {
                    Some(u) => u.point = crash,
                    None => self.cut.push(Unacked {
                        frame: frame.to_vec(),
                        principal: principal.clone(),
                        point: crash,
                    }),
                }
                self.last_answered = None;
                self.crash();
                return Ok(Came::Crashed);
            }
            Ok(Delivery::Answered(reply)) => reply,
        };
        let cut = self.cut.iter().find(|u| u.frame == frame).map(|u| u.point);
        if let Some(point) = cut {
            self.reached(Situation::Moment(Moment::redelivered(point)));
        }
        let redelivered = cut.is_some();
        self.cut.retain(|u| u.frame != frame);
        let expected = self.oracle.deliver_shared(parsed.clone(), principal, at);
        let coverage = if self.counting {
            &mut self.coverage
        } else {
            &mut self.uncounted
        };
        self.reach
            .on_delivery(coverage, 0, &self.me, at.0, &sent, &expected);
        self.reach
            .on_revision_conflict(coverage, &sent, &self.oracle);
        for e in &expected {
            if let (Some(t), Some(id)) = (&e.thread, &e.id) {
                self.unconfirmed
                    .entry(t.clone())
                    .or_default()
                    .push(id.clone());
            }
        }
        self.acks.note_frame(frame);
        let names = self.names;
        delivery::answered(
            before,
            self.world.len(),
            || oracle::delivery_events(&expected, &reply.events, redelivered, names),
            &oracle::first_outcome(&expected),
            &reply.outgoing,
            &self.me,
            &mut self.acks,
        )
        .map_err(|j| match j {
            Judged::Breach(b) => b.into_failure("an answer to deliver"),
            Judged::Events(m) => m,
        })?;
        self.last_answered = Some(Unacked {
            frame: frame.to_vec(),
            principal: principal.clone(),
            point: None,
        });
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
        let before = self.world.len();
        let receiver = self
            .receiver
            .as_mut()
            .expect("executions reach a receiver that is up");
        let (result, fired) = self
            .storage
            .with_crash(crash, || receiver.execute(thread, id, at));
        let performed = self.world.log_since(before);
        let decision = self.oracle.would_execute(thread, id, at);
        let expiry = self.expiries.get(&(thread.clone(), id.clone())).copied();
        let coverage = if self.counting {
            &mut self.coverage
        } else {
            &mut self.uncounted
        };
        self.reach
            .on_execution(coverage, 0, id.as_str(), at.0, false, expiry, &decision);
        if !performed.is_empty() {
            self.reach.on_effect(thread.as_str(), id.as_str());
        }
        if let (true, Some(p)) = (fired, crash) {
            self.reached(Situation::Moment(Moment::crashed_in_execution(p)));
        }
        oracle::effects(&decision, &performed, &self.me, &self.world)?;
        match delivery::crash_judged(Call::Execution, result, fired) {
            Err(b) => Err(b.into_failure("an answer to execute")),
            Ok(None) => {
                // The effect counts as done exactly when the world saw it.
                if !performed.is_empty() {
                    self.oracle.execute(thread, id, at);
                }
                self.last_answered = None;
                self.crash();
                Ok(Came::Crashed)
            }
            Ok(Some(actual)) => {
                let expected: Execution = self.oracle.execute(thread, id, at);
                oracle::decision(&expected, &actual, performed.len(), self.names)?;
                Ok(Came::Answered)
            }
        }
    }

    /// The receiver's view of every thread against the oracle's (nothing
    /// while it is down, or unless `compare`: only the oracle's digests are
    /// kept).
    pub fn check_views(&mut self, compare: bool) -> Result<(), Failure> {
        if let Some(receiver) = self.receiver.as_mut().filter(|_| compare) {
            let compared =
                views::against_oracle(receiver.as_mut(), &self.world, &self.oracle, &self.threads)
                    .map_err(|b| b.into_failure("a view"))?;
            for (t, compared) in self.threads.iter().zip(compared) {
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
                            &self.world,
                            self.names,
                        )?;
                    }
                }
            }
        }
        self.views = self
            .threads
            .iter()
            .map(|t| self.oracle.view_digest(t))
            .collect();
        Ok(())
    }

    /// What a later move can depend on, as the oracle and the harness see
    /// it: the oracle's views (which a conforming receiver's equal), the
    /// world's effects, the frames owed again, whether the receiver is up,
    /// and the records the receiver keeps in the harness's storage, as a
    /// multiset. Two schedules that agree on these, and, while a crash is
    /// left, on [`Subject::last_answered`], are merged (docs/explore.md §3).
    pub fn key(&self, h: &mut impl Hasher) {
        self.storage.unordered_hash(h);
        // A subprocess's records are in its state directory: what it holds,
        // live and after a power loss, where tern-sim serves it.
        self.implementation.hash_state_dir(&self.storage, h);
        if !self.is_up() {
            // What the restart will make of it.
            self.storage.cut().hash(h);
        }
        self.views.hash(h);
        self.world.log().hash(h);
        self.cut.hash(h);
        self.is_up().hash(h);
    }
}
