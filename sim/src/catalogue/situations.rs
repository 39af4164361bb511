//! The situations a run can reach, and how often each was reached.
//!
//! A random simulation is only as good as the situations it reaches: an
//! invariant checked a million times in easy states says little about the
//! one state where an implementation goes wrong. So every situation the
//! spec's clauses need exercising in has a name and the clauses it serves,
//! and every run counts how often it reached each. A budget that leaves one
//! at zero has not tested what that situation guards, and `run` and
//! `certify` say so.

use tern_model::ledger::{Refusal, RejectClass};

use super::boast::Shape;
use super::malformed::Malformation;
use crate::contract::storage::{CrashPoint, FileOp, PowerNote};
use crate::judge::invariants;
use crate::judge::under_test::Fell;

/// Which moment a crash at a given point is, said once for every driver
/// that crashes an agent (the simulator and the explorer): the crash point
/// is the harness's, the moment is the catalogue's name for it.
impl Moment {
    /// The moment a call came to, as the agent under test recorded it.
    pub fn of(fell: Fell) -> Moment {
        match fell {
            Fell::Starting(point) => Moment::crashed_in_recovery(point),
            Fell::Idle => Moment::CrashIdle,
            Fell::Delivering(point) => Moment::crashed_in_delivery(point),
            Fell::Redelivered(point) => Moment::redelivered(point),
            Fell::Executing(point) => Moment::crashed_in_execution(point),
        }
    }

    /// A start-up that crashed at its first sync: before or after it.
    fn crashed_in_recovery(point: Option<CrashPoint>) -> Moment {
        match point {
            Some(CrashPoint::AfterSync) => Moment::CrashInRecoveryDurable,
            _ => Moment::CrashInRecovery,
        }
    }

    /// A delivery that crashed before its outcome was reported.
    fn crashed_in_delivery(point: Option<CrashPoint>) -> Moment {
        match point {
            Some(CrashPoint::AfterSync) => Moment::CrashAfterDurable,
            _ => Moment::CrashBeforeDurable,
        }
    }

    /// A frame delivered again after a crash cut its first delivery at
    /// `point` (`None`: the crash fell after the answer, losing only the
    /// transport's acknowledgement).
    fn redelivered(point: Option<CrashPoint>) -> Moment {
        match point {
            Some(CrashPoint::AfterSync) => Moment::RedeliveredDurable,
            Some(_) => Moment::RedeliveredNotDurable,
            None => Moment::RedeliveredAfterAnswer,
        }
    }

    /// An execution that crashed at `point`, before or after its effect.
    fn crashed_in_execution(point: CrashPoint) -> Moment {
        match point {
            CrashPoint::BeforeEffect => Moment::CrashBeforeEffect,
            _ => Moment::CrashAfterEffect,
        }
    }
}

macro_rules! moments {
    ($($id:ident = $name:literal, [$($clause:literal),*], $says:literal;)*) => {
        /// A situation that is not one outcome, refusal or broken frame.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Moment { $($id),* }

        impl Moment {
            pub const ALL: &'static [Moment] = &[$(Moment::$id),*];

            pub fn name(self) -> &'static str {
                match self { $(Moment::$id => $name),* }
            }

            pub fn clauses(self) -> &'static [&'static str] {
                match self { $(Moment::$id => &[$($clause),*]),* }
            }

            pub fn says(self) -> &'static str {
                match self { $(Moment::$id => $says),* }
            }
        }
    };
}

moments! {
    Accepted = "accepted", ["S4.22"], "A delivery the model accepts.";
    Duplicate = "duplicate", ["S1.27", "S8.8"], "A delivery of an ID and content already stored.";
    Pending = "pending", ["S1.32", "S8.7"], "A delivery the model holds as pending on a missing reference.";
    Released = "released", ["S1.32"], "A pending message released by a later delivery.";
    Invalidated = "invalidated", ["S1.28"], "An earlier verdict changed by a later delivery (an ID conflict revealed).";
    Executed = "executed", ["S5.6", "S1.30"], "An execution the model allows: an effect is performed.";
    CrashIdle = "crash between operations", ["S1.30"], "A crash while no operation runs.";
    CrashBeforeDurable = "crash before a delivery is durable", ["S1.30", "S8.8"], "A crash during a delivery, before its outcome is durable.";
    CrashAfterDurable = "crash after a delivery is durable", ["S1.30", "S8.8"], "A crash during a delivery, after its outcome is durable but before it is reported.";
    CrashBeforeEffect = "crash between intent and effect", ["S1.30", "S1.31"], "A crash during an execution, after its intent is durable and before its effect.";
    CrashInRecovery = "crash during recovery before it is durable", ["S1.30", "S1.31"], "A crash while the receiver starts up from its storage, before what the recovery writes is durable.";
    CrashInRecoveryDurable = "crash during recovery once durable", ["S1.30", "S1.31"], "A crash while the receiver starts up from its storage, once what the recovery wrote is durable.";
    CrashAfterEffect = "crash right after an effect", ["S1.30", "S1.31"], "A crash during an execution, right after its effect.";
    PowerLossUnsynced = "power loss with unsynced data", ["S1.30"], "Over the protocol: a power loss dropped data the implementation had written to its state directory and not synced.";
    TornWrite = "torn write", ["S1.30"], "Over the protocol: a power loss kept part of a write that was not synced, cut at a byte.";
    CrashBetweenWrites = "crash between two writes of one request", ["S1.30", "S8.8"], "Over the protocol: a crash at a write of a request that had already written.";
    CrashBetweenWriteAndSync = "crash between a write and its sync", ["S1.30", "S8.8"], "Over the protocol: a crash at the sync that follows a write.";
    CrashBetweenSyncAndAnswer = "crash between a sync and the answer", ["S1.30", "S8.8"], "Over the protocol: a crash after a request's last sync, before tern-sim took its answer.";
    CrashInRename = "crash during a rename", ["S1.30"], "Over the protocol: a crash at a rename in the state directory.";
    RedeliveredNotDurable = "redelivery after a crash before durability", ["S1.27", "S1.30"], "A frame redelivered after its delivery crashed before it was durable.";
    RedeliveredDurable = "redelivery after a crash once durable", ["S1.27", "S1.30"], "A frame redelivered after its delivery crashed once it was durable.";
    RedeliveredAfterAnswer = "redelivery after a crash once answered", ["S1.27", "S1.30"], "A frame redelivered after its receiver answered it and then crashed (the acknowledgement was lost).";
    EffectThenRedelivered = "commitment redelivered after its effect", ["S1.27", "S1.30", "S8.8"], "A COMMIT delivered again to its executor after its effect was performed.";
    ReleasedAfterRestart = "pending released after a restart", ["S1.32", "S1.30"], "A message pending when its receiver crashed, released after the restart.";
    ExpiryOneBefore = "execution 1 ms before expiry", ["S5.6"], "An execution under a grant, one millisecond before the grant expires, in the executor's local time.";
    ExpiryExactly = "execution at the expiry instant", ["S5.6"], "An execution under a grant at exactly its expiry instant, in the executor's local time.";
    ExpiryOneAfter = "execution 1 ms after expiry", ["S5.6"], "An execution under a grant, one millisecond after the grant expires, in the executor's local time.";
    ExpiredSinceArrival = "grant expired since the COMMIT arrived", ["S5.6"], "An execution refused for an expired grant whose COMMIT arrived before the expiry.";
    IdConflictAfterEffect = "ID conflict revealed after an effect", ["S1.28", "S4.23"], "A second content for a commitment's ID arrives after its effect was performed.";
    RevisionConflictAfterEffect = "revision conflict revealed after an effect", ["S4.18", "S4.23"], "Competing revisions of a commitment are known after its effect was performed.";
    ReviseOfRevise = "REVISE targeting a REVISE", ["S4.16"], "A REVISE whose target is itself a REVISE.";
    PreviousSkipsLink = "REVISE whose previous skips a link", ["S4.17", "S4.18"], "A REVISE whose `previous` is not the latest link of its target's chain.";
    SameIdTwoContexts = "one ID in two identity contexts", ["S5.1", "S1.28"], "A message ID delivered in one identity context after it was used in another.";
    SkewedExecution = "execution under clock skew", ["S5.6"], "An execution by an agent whose clock is skewed.";
}

/// A situation: one of the moments above, an outcome the model can give, a
/// refusal it can give, a way of breaking a frame, or a shape of authority
/// boast accepted by the receiver it could sway.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Situation {
    Moment(Moment),
    Rejected(RejectClass),
    Refused(Refusal),
    Malformed(Malformation),
    Boast(Shape),
}

impl Situation {
    /// Every situation, in the order of the tables.
    pub fn all() -> impl Iterator<Item = Situation> {
        Moment::ALL
            .iter()
            .map(|m| Situation::Moment(*m))
            .chain(RejectClass::ALL.iter().map(|c| Situation::Rejected(*c)))
            .chain(Refusal::ALL.iter().map(|r| Situation::Refused(*r)))
            .chain(Malformation::ALL.iter().map(|m| Situation::Malformed(*m)))
            .chain(Shape::ALL.iter().map(|s| Situation::Boast(*s)))
    }

    pub fn count() -> usize {
        Moment::ALL.len()
            + RejectClass::ALL.len()
            + Refusal::ALL.len()
            + Malformation::ALL.len()
            + Shape::ALL.len()
    }

    /// The situation's place in [`Situation::all`].
    fn index(self) -> usize {
        let (m, c, r, k) = (
            Moment::ALL.len(),
            RejectClass::ALL.len(),
            Refusal::ALL.len(),
            Malformation::ALL.len(),
        );
        match self {
            Situation::Moment(x) => x as usize,
            Situation::Rejected(x) => m + x as usize,
            Situation::Refused(x) => m + c + x as usize,
            Situation::Malformed(x) => m + c + r + x as usize,
            Situation::Boast(x) => m + c + r + k + x.index(),
        }
    }

    /// The kind of situation, for grouping in tables.
    pub fn family(self) -> &'static str {
        match self {
            Situation::Moment(_) => "moment",
            Situation::Rejected(_) => "rejected",
            Situation::Refused(_) => "refused",
            Situation::Malformed(_) => "malformed",
            Situation::Boast(_) => "boast",
        }
    }

    pub fn name(self) -> String {
        match self {
            Situation::Moment(m) => m.name().to_owned(),
            Situation::Rejected(c) => format!("rejected: {c}"),
            Situation::Refused(r) => format!("refused: {r}"),
            Situation::Malformed(m) => format!("malformed: {}", m.name()),
            Situation::Boast(s) => s.name(),
        }
    }

    /// The seed clauses the situation exercises.
    pub fn clauses(self) -> &'static [&'static str] {
        match self {
            Situation::Moment(m) => m.clauses(),
            Situation::Rejected(c) => invariants::by_class(c).clauses,
            Situation::Refused(r) => invariants::by_refusal(r).clauses,
            Situation::Malformed(m) => m.clauses(),
            Situation::Boast(s) => s.clauses(),
        }
    }

    /// Whether only a run with its state directories on tern-statefs (fault
    /// `power-loss`) can reach it: elsewhere it is left out of the tables,
    /// not counted as missed.
    pub fn needs_power_loss(self) -> bool {
        matches!(
            self,
            Situation::Moment(
                Moment::PowerLossUnsynced
                    | Moment::TornWrite
                    | Moment::CrashBetweenWrites
                    | Moment::CrashBetweenWriteAndSync
                    | Moment::CrashBetweenSyncAndAnswer
                    | Moment::CrashInRename
            )
        )
    }

    /// Whether a run that judges by the seed's rules alone (`--level core`)
    /// can reach it: the broken frames of profile readings, frames into a
    /// thread no context knows (L-ID-2) and misrouted frames (L-ID-5) are
    /// not sent then.
    pub fn at_core(self) -> bool {
        match self {
            Situation::Malformed(m) => m.seed_rule(),
            Situation::Rejected(RejectClass::UnknownThread | RejectClass::NotAddressed) => false,
            _ => true,
        }
    }
}

/// The situations a note of a power-loss state directory reaches.
pub fn power_moments(note: &PowerNote) -> Vec<Moment> {
    match note {
        PowerNote::Held { op, earlier } => {
            let mut m = Vec::new();
            if *op == FileOp::Write && earlier.contains(&FileOp::Write) {
                m.push(Moment::CrashBetweenWrites);
            }
            if *op == FileOp::Sync && earlier.last() == Some(&FileOp::Write) {
                m.push(Moment::CrashBetweenWriteAndSync);
            }
            if *op == FileOp::Rename {
                m.push(Moment::CrashInRename);
            }
            m
        }
        PowerNote::Answered { last } => {
            if matches!(last, Some(FileOp::Sync | FileOp::SyncDir)) {
                vec![Moment::CrashBetweenSyncAndAnswer]
            } else {
                Vec::new()
            }
        }
        PowerNote::Lost { dropped_data, torn } => {
            let mut m = Vec::new();
            if *dropped_data {
                m.push(Moment::PowerLossUnsynced);
            }
            if *torn {
                m.push(Moment::TornWrite);
            }
            m
        }
    }
}

/// How often each situation was reached: one count per situation, in
/// table order (which is also its serialised form).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "Vec<u64>", into = "Vec<u64>")]
pub struct Coverage {
    counts: Vec<u64>,
}

impl TryFrom<Vec<u64>> for Coverage {
    type Error = String;
    fn try_from(counts: Vec<u64>) -> Result<Coverage, String> {
        if counts.len() == Situation::count() {
            Ok(Coverage { counts })
        } else {
            Err(format!(
                "{} situation counts, where this catalogue has {}",
                counts.len(),
                Situation::count()
            ))
        }
    }
}

impl From<Coverage> for Vec<u64> {
    fn from(c: Coverage) -> Vec<u64> {
        c.counts
    }
}

impl Default for Coverage {
    fn default() -> Coverage {
        Coverage {
            counts: vec![0; Situation::count()],
        }
    }
}

impl Coverage {
    pub fn reach(&mut self, s: Situation) {
        self.counts[s.index()] += 1;
    }

    pub fn get(&self, s: Situation) -> u64 {
        self.counts[s.index()]
    }

    pub fn add(&mut self, other: &Coverage) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
    }

    /// Every situation with its count, in table order.
    pub fn iter(&self) -> impl Iterator<Item = (Situation, u64)> + '_ {
        Situation::all().map(|s| (s, self.get(s)))
    }

    /// The situations never reached.
    pub fn missed(&self) -> Vec<Situation> {
        self.iter()
            .filter(|(_, n)| *n == 0)
            .map(|(s, _)| s)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crash_point_names_its_moment_whichever_driver_crashed() {
        use CrashPoint::*;
        assert_eq!(
            Moment::crashed_in_recovery(Some(AfterSync)),
            Moment::CrashInRecoveryDurable
        );
        assert_eq!(
            Moment::crashed_in_recovery(Some(BeforeSync)),
            Moment::CrashInRecovery
        );
        assert_eq!(Moment::crashed_in_recovery(None), Moment::CrashInRecovery);
        assert_eq!(
            Moment::crashed_in_delivery(Some(AfterSync)),
            Moment::CrashAfterDurable
        );
        assert_eq!(
            Moment::crashed_in_delivery(Some(BeforeSync)),
            Moment::CrashBeforeDurable
        );
        assert_eq!(
            Moment::redelivered(Some(AfterSync)),
            Moment::RedeliveredDurable
        );
        assert_eq!(
            Moment::redelivered(Some(BeforeSync)),
            Moment::RedeliveredNotDurable
        );
        assert_eq!(Moment::redelivered(None), Moment::RedeliveredAfterAnswer);
        assert_eq!(
            Moment::crashed_in_execution(BeforeEffect),
            Moment::CrashBeforeEffect
        );
        assert_eq!(
            Moment::crashed_in_execution(AfterEffect),
            Moment::CrashAfterEffect
        );
    }

    #[test]
    fn indices_are_the_table_order() {
        for (i, s) in Situation::all().enumerate() {
            assert_eq!(s.index(), i, "{s:?}");
        }
        assert_eq!(Situation::all().count(), Situation::count());
    }

    #[test]
    fn every_situation_names_a_clause_and_has_a_unique_name() {
        let mut names = std::collections::BTreeSet::new();
        for s in Situation::all() {
            assert!(!s.clauses().is_empty(), "{s:?} names no clause");
            assert!(names.insert(s.name()), "{} named twice", s.name());
        }
    }

    #[test]
    fn coverage_counts_and_adds() {
        let mut a = Coverage::default();
        a.reach(Situation::Moment(Moment::Released));
        a.reach(Situation::Moment(Moment::Released));
        let mut b = Coverage::default();
        b.reach(Situation::Refused(Refusal::GrantExpired));
        b.add(&a);
        assert_eq!(b.get(Situation::Moment(Moment::Released)), 2);
        assert_eq!(b.get(Situation::Refused(Refusal::GrantExpired)), 1);
        assert_eq!(b.missed().len(), Situation::count() - 2);
    }
}
