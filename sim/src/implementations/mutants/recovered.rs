//! What the mutants that keep notes beside the reference's log read back
//! from durable storage on a restart.

use std::collections::{BTreeMap, BTreeSet};

use tern_model::ledger::LocalTime;

use crate::contract::plugin::ImplError;
use crate::contract::storage::Durable;
use crate::implementations::reference::Record;

/// A mutant's storage as its reference part sees it: some records are
/// hidden from a restart, as if they had never been written.
pub(super) struct Hiding<S> {
    inner: S,
    hidden: BTreeSet<usize>,
}

impl<S: Durable> Hiding<S> {
    pub(super) fn new(inner: S, hidden: BTreeSet<usize>) -> Hiding<S> {
        Hiding { inner, hidden }
    }
}

impl<S: Durable> Durable for Hiding<S> {
    fn append(&self, record: Vec<u8>) -> Result<(), ImplError> {
        self.inner.append(record)
    }

    fn fork_onto(&self, storage: &crate::contract::storage::Storage) -> Option<Self> {
        Some(Hiding {
            inner: self.inner.fork_onto(storage)?,
            hidden: self.hidden.clone(),
        })
    }

    fn sync(&self) -> Result<(), ImplError> {
        self.inner.sync()
    }

    fn records(&self) -> Result<Vec<Vec<u8>>, ImplError> {
        let records = self.inner.records()?;
        if self.hidden.is_empty() {
            return Ok(records);
        }
        Ok(records
            .into_iter()
            .enumerate()
            .filter(|(i, _)| !self.hidden.contains(i))
            .map(|(_, r)| r)
            .collect())
    }
}

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

    /// Thread/ID of every `Seen` note whose frame is not durable: a crash
    /// came between the note and the frame's record.
    pub(super) fn seen_unstored(&self) -> BTreeSet<String> {
        let stored: BTreeSet<String> = self.deliveries().map(|(m, _)| super::key_of(&m)).collect();
        self.0
            .iter()
            .filter_map(|r| match r {
                Record::Seen { key } if !stored.contains(key) => Some(key.clone()),
                _ => None,
            })
            .collect()
    }

    /// For every start-up that began and never ended, the place of the
    /// last delivery record written before it: what a receiver that
    /// blames a failed start on a torn log drops.
    pub(super) fn torn_tails(&self) -> BTreeSet<usize> {
        let mut out = BTreeSet::new();
        let mut last_delivery = None;
        let mut open_start = None;
        for (i, r) in self.0.iter().enumerate() {
            match r {
                Record::Deliver { .. } | Record::Invalid { .. } => last_delivery = Some(i),
                Record::Started => {
                    if let Some(Some(d)) = open_start.take() {
                        out.insert(d);
                    }
                    open_start = Some(last_delivery);
                }
                Record::Ready => open_start = None,
                _ => {}
            }
        }
        if let Some(Some(d)) = open_start {
            out.insert(d);
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
