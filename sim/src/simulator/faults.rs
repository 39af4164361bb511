//! The faults a run can inject. Each is a flag; `--faults` enables the
//! default mix, and every run of a swarm enables a random subset of those
//! asked for, so rare combinations come up.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Fault {
    /// Random extra latency, so messages overtake each other.
    Reorder,
    /// A second copy of a message, later.
    Duplicate,
    /// A long delay for some messages.
    Delay,
    /// A lost copy, retransmitted by the sender after a timeout.
    Drop,
    /// An agent crashes (before an outcome is durable, after it is durable
    /// but unreported, right after an effect, or between deliveries) and
    /// restarts from its storage.
    Crash,
    /// Links cut for a while, both ways or one way; the senders retransmit.
    Partition,
    /// Each agent's clock is off by up to five seconds.
    Skew,
    /// Over the protocol, with every state directory on tern-statefs: a
    /// crash can be a power loss that drops what was not synced (whole, or
    /// torn at a byte), and can fall inside a request, at any of its
    /// mutating file operations. Not one of `--faults`: tern-sim adds it to
    /// `crash` when the implementation runs as a process and FUSE works,
    /// so that traces say how their crashes fall.
    PowerLoss,
}

impl Fault {
    pub const ALL: [Fault; 7] = [
        Fault::Reorder,
        Fault::Duplicate,
        Fault::Delay,
        Fault::Drop,
        Fault::Crash,
        Fault::Partition,
        Fault::Skew,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Fault::Reorder => "reorder",
            Fault::Duplicate => "duplicate",
            Fault::Delay => "delay",
            Fault::Drop => "drop",
            Fault::Crash => "crash",
            Fault::Partition => "partition",
            Fault::Skew => "skew",
            Fault::PowerLoss => "power-loss",
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Fault {
    type Err = String;
    fn from_str(s: &str) -> Result<Fault, String> {
        // `power-loss` is read too (traces name it), though no flag asks
        // for it.
        Fault::ALL
            .iter()
            .copied()
            .chain([Fault::PowerLoss])
            .find(|f| f.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown fault `{s}` (expected one of: {})",
                    Fault::ALL.map(|f| f.as_str()).join(", ")
                )
            })
    }
}

/// A set of enabled faults.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct FaultSet(pub BTreeSet<Fault>);

impl FaultSet {
    pub fn none() -> FaultSet {
        FaultSet::default()
    }

    /// The default mix of `--faults`: everything.
    pub fn all() -> FaultSet {
        FaultSet(Fault::ALL.into_iter().collect())
    }

    pub fn has(&self, f: Fault) -> bool {
        self.0.contains(&f)
    }

    /// RejectNames, comma-separated, for reports and traces.
    pub fn names(&self) -> String {
        if self.0.is_empty() {
            return "none".to_owned();
        }
        self.0
            .iter()
            .map(|f| f.as_str())
            .collect::<Vec<_>>()
            .join(",")
    }

    pub fn parse_list(s: &str) -> Result<FaultSet, String> {
        if s == "none" {
            return Ok(FaultSet::none());
        }
        s.split(',')
            .filter(|p| !p.is_empty())
            .map(str::parse)
            .collect::<Result<BTreeSet<_>, _>>()
            .map(FaultSet)
    }
}

/// Serde for counts by fault name (`Stats::faults`), whose keys are the
/// static names of [`Fault::as_str`].
pub mod counts {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::Fault;

    pub fn serialize<S: Serializer>(
        counts: &BTreeMap<&'static str, u64>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        counts.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<BTreeMap<&'static str, u64>, D::Error> {
        BTreeMap::<String, u64>::deserialize(d)?
            .into_iter()
            .map(|(name, n)| {
                name.parse::<Fault>()
                    .map(|f| (f.as_str(), n))
                    .map_err(serde::de::Error::custom)
            })
            .collect()
    }
}
