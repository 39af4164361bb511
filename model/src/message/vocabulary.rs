//! The closed vocabularies of Tern 0.1: acts and the enumerated body fields.
//! Values are case-sensitive (section 1: "IDs and text are case-sensitive").

use std::fmt;

use serde::{Deserialize, Serialize};

/// The nine speech acts (section 2: "Exactly one act per message").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Act {
    Ask,
    Tell,
    Propose,
    Request,
    Commit,
    Report,
    Revise,
    Ack,
    Challenge,
}

impl Act {
    pub const ALL: [Act; 9] = [
        Act::Ask,
        Act::Tell,
        Act::Propose,
        Act::Request,
        Act::Commit,
        Act::Report,
        Act::Revise,
        Act::Ack,
        Act::Challenge,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Act::Ask => "ASK",
            Act::Tell => "TELL",
            Act::Propose => "PROPOSE",
            Act::Request => "REQUEST",
            Act::Commit => "COMMIT",
            Act::Report => "REPORT",
            Act::Revise => "REVISE",
            Act::Ack => "ACK",
            Act::Challenge => "CHALLENGE",
        }
    }

    /// Section 4: "REVISE may target only one's own TELL, PROPOSE, REQUEST,
    /// COMMIT, or REPORT."
    pub fn is_revisable(self) -> bool {
        matches!(
            self,
            Act::Tell | Act::Propose | Act::Request | Act::Commit | Act::Report
        )
    }
}

impl fmt::Display for Act {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// REPORT.state (section 2). Progress only: lifecycle annotations such as
/// withdrawn are derived from history and are deliberately not in this enum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProgressState {
    Active,
    Blocked,
    Fulfilled,
    Failed,
}

impl ProgressState {
    /// Section 4: "A reported terminal state (fulfilled or failed) cannot
    /// silently become active again".
    pub fn is_terminal(self) -> bool {
        matches!(self, ProgressState::Fulfilled | ProgressState::Failed)
    }
}

/// CHALLENGE.kind (section 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChallengeKind {
    Factual,
    Inference,
    Scope,
    Feasibility,
    Authority,
}

/// Claim.basis (section 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Basis {
    Observed,
    Inferred,
    Reported,
    Assumed,
}

/// Claim.confidence (section 3): qualitative, never a permission level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    Low,
    Medium,
    High,
    Unspecified,
}

/// REVISE.mode (section 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReviseMode {
    Replace,
    Withdraw,
}

/// REVISE impact assessment (section 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Assessment {
    Paused,
    Unaffected,
    AwaitingInstruction,
}
