//! What the mutants that keep notes beside the reference's log read back
//! from durable storage on a restart.

use std::collections::{BTreeMap, BTreeSet};

use tern_model::ledger::LocalTime;

use crate::plugin::ImplError;
use crate::reference::Record;
use crate::storage::Durable;

/// The durable log, decoded.
pub(super) struct Log(Vec<Record>);

impl Log {
    pub(super) fn read<S: Durable>(storage: &S) -> Result<Log, ImplError> {
        storage
            .records()?
            .iter()
            .map(|r| {
                Record::decode(r).ok_or_else(|| ImplError::Misbehaved("corrupt log record".into()))
            })
            .collect::<Result<_, _>>()
            .map(Log)
    }

    /// An empty log, for the mutants that keep no notes (no need to parse
    /// every stored frame on each restart).
    pub(super) fn none() -> Log {
        Log(Vec::new())
    }

    /// Each stored frame's thread/ID with the local time it arrived, first
    /// arrival first.
    fn deliveries(&self) -> impl Iterator<Item = (tern_model::Message, LocalTime)> + '_ {
        self.0.iter().filter_map(|r| match r {
            Record::Deliver { now, frame, .. } => tern_model::parse_frame(frame)
                .ok()
                .map(|m| (m, LocalTime(*now))),
            _ => None,
        })
    }

    /// Thread/ID of every stored COMMIT → when it first arrived.
    pub(super) fn commit_arrivals(&self) -> BTreeMap<String, LocalTime> {
        let mut out = BTreeMap::new();
        for (m, at) in self.deliveries() {
            if m.act() == tern_model::Act::Commit {
                out.entry(super::key_of(&m)).or_insert(at);
            }
        }
        out
    }

    /// Thread/ID of every stored frame whose `Seen` note is not durable.
    pub(super) fn answered_unseen(&self) -> BTreeSet<String> {
        let seen: BTreeSet<&str> = self
            .0
            .iter()
            .filter_map(|r| match r {
                Record::Seen { key } => Some(key.as_str()),
                _ => None,
            })
            .collect();
        self.deliveries()
            .map(|(m, _)| super::key_of(&m))
            .filter(|k| !seen.contains(k.as_str()))
            .collect()
    }
}
