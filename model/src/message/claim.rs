//! Claims and evidence (section 3): how a sender says what it believes and why.

use serde::{Deserialize, Serialize};

use super::fields::object_only;
use super::names::{EvidenceId, Text};
use super::timestamp::Timestamp;
use super::vocabulary::{Basis, Confidence};

/// "A Claim has exactly these required fields" (section 3): no more, no fewer,
/// and no extensions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, remote = "Self")]
pub struct Claim {
    pub text: Text,
    pub basis: Basis,
    pub confidence: Confidence,
    pub scope: Text,
    /// May be empty: "Empty evidence means unsupported here, not necessarily false."
    pub evidence: Vec<EvidenceId>,
    /// May be empty: "an empty list does not prove none exist."
    pub alternatives: Vec<Text>,
}

/// An entry of the optional top-level `evidence` array (section 3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, remote = "Self")]
pub struct Evidence {
    pub id: EvidenceId,
    pub source: Text,
    pub collected_at: Timestamp,
    pub method: Text,
    pub result: Text,
}

object_only!(Claim, Evidence);
