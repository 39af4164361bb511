//! The invariants a run checks, each named and traced to the seed, and the
//! rules that turn a disagreement with the reference model into the name of
//! the invariant it breaks.

use serde_json::Value;
use tern_model::ledger::{Execution, Outcome, Refusal, RejectClass};

/// What one invariant is: a stable name, the seed section(s) it rests on,
/// what it says, and the seed clauses (`scenarios/clauses.json`) it checks,
/// so that a violation found by simulation names the sentence it breaks,
/// like a failed corpus case does.
#[derive(Debug, PartialEq, Eq)]
pub struct Definition {
    pub name: &'static str,
    pub section: &'static str,
    pub says: &'static str,
    /// Empty for `implementation-sound`, which rests on the contract, not
    /// on the seed.
    pub clauses: &'static [&'static str],
}

/// One invariant of [`ALL`]: a pointer to its definition, so that every
/// failure that names it carries a word, not a copy of its texts.
#[derive(Clone, Copy)]
pub struct Invariant(&'static Definition);

impl std::ops::Deref for Invariant {
    type Target = Definition;

    fn deref(&self) -> &Definition {
        self.0
    }
}

/// Names are unique ([`ALL`] is checked for it), and a constant's address
/// need not be: equal names, the same invariant.
impl PartialEq for Invariant {
    fn eq(&self, other: &Invariant) -> bool {
        self.0.name == other.0.name
    }
}

impl Eq for Invariant {}

impl std::fmt::Debug for Invariant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.name)
    }
}

macro_rules! invariants {
    ($($id:ident = $name:literal, $section:literal, $says:literal, [$($clause:literal),*];)*) => {
        $(pub const $id: Invariant = Invariant(&Definition { name: $name, section: $section, says: $says, clauses: &[$($clause),*] });)*
        /// Every invariant, in a fixed order.
        pub const ALL: &[Invariant] = &[$($id),*];
    };
}

invariants! {
    STRICT_PARSING = "strict-parsing", "1, 8", "Frames that are not strict JSON (duplicate keys, invalid UTF-8, non-finite numbers, truncation) are rejected as parse errors.", ["S1.5", "S8.2", "S1.1"];
    VERSION = "unsupported-version", "1, 8", "Unsupported versions are rejected without executing their contents.", ["S1.16", "S8.4"];
    SCHEMA = "schema", "1, 2, 8", "Malformed envelopes and bodies are rejected.", ["S8.5", "S1.14", "S2.2"];
    IDENTITY = "identity-bound", "1, 5, 8", "A sender is the principal the transport authenticated, bound to `from` in the thread's context; spoofed senders are rejected.", ["S8.1", "S1.22", "S5.2"];
    ADDRESSING = "addressing", "1", "A participant's receiver records what it sent and what was addressed to it.", ["S1.11", "S1.35"];
    DEDUP = "dedup", "1, 8", "Repeated delivery of the same ID and content is a duplicate with no new effect.", ["S1.27", "S8.8"];
    ID_CONFLICT = "id-conflict", "1, 8", "Reusing an ID with other content is a protocol error; no content wins by arrival order.", ["S1.28", "S8.3"];
    PENDING = "pending-not-inferred", "1, 8", "Unresolved references are pending, not inferred; missing references block dependent execution.", ["S1.32", "S8.7"];
    REFERENCES = "references-checked", "1, 4", "References resolve to a message of the right act in the same thread.", ["S4.2", "S1.12"];
    ONLY_AUTHOR = "only-author-reports", "2", "Only the commitment's author may report its state.", ["S2.7"];
    OWN_REVISIONS = "only-own-revisions", "4, 8", "A REVISE may target only the sender's own TELL, PROPOSE, REQUEST, COMMIT or REPORT.", ["S4.12", "S8.6"];
    REVISION_CHAIN = "revision-chain", "4", "A revision chain advances by unique valid successors; `previous` is the original or the preceding REVISE.", ["S4.17", "S4.16"];
    REPLACEMENT = "replacement-valid", "4", "A replacement is a complete valid body of the target's act about the same subject.", ["S4.14"];
    RENEWAL = "renewal-by-requester", "4", "Only the original requester may ask to replace a commitment.", ["S4.27", "S4.26"];
    VALID_ACCEPTED = "valid-accepted", "1-5", "A message valid under the profile is accepted (a conformance harness must not fail a correct implementation, and neither may a receiver refuse valid work).", ["S4.22"];
    OUTCOMES = "outcomes-agree", "1-5", "Every outcome and release equals the reference model's.", ["S1.32", "S4.22"];
    NO_COMMITMENT_FROM_TALK = "no-commitment-from-talk", "2, 8", "ASK, ACK and PROPOSE create no commitments; only a COMMIT binds, and only its sender.", ["S8.9", "S2.8", "S2.10"];
    TERMINAL = "terminal-stays-terminal", "4", "A reported terminal state never silently becomes active again.", ["S4.11"];
    BLOCKED = "blocked-not-completion", "4, 8", "Blocked reports do not imply completion.", ["S8.11"];
    NO_SILENT_BRANCH = "no-silent-branch", "4", "Competing revisions are an unresolved conflict; no branch is chosen silently.", ["S4.18", "S4.21"];
    HISTORY = "history-preserved", "4, 8", "Revisions never erase messages: what a receiver once recorded stays in its view.", ["S4.15", "S8.12"];
    LIFECYCLE = "lifecycle-respected", "4", "Withdrawn, superseded and disputed commitments are not executed.", ["S4.30", "S4.31"];
    CONFLICT_BLOCKS = "conflict-blocks-execution", "4", "Dependent actions are blocked while a revision conflict is known.", ["S4.19"];
    AUTHORITY = "authority-before-effect", "5, 8", "Identity, grant, scope, expiry and approval are checked before every effect; claims and null grants create no authority.", ["S5.6", "S5.4", "S8.10"];
    BINDS_SENDER = "commit-binds-sender", "2", "A COMMIT cannot bind another participant: a receiver executes only its own commitments.", ["S2.11"];
    AT_MOST_ONCE = "at-most-once-effects", "1, 8", "Deduplication is durable before side effects: no effect is ever performed twice, across crashes too.", ["S1.30", "S8.8"];
    EXECUTIONS = "executions-agree", "5", "Every execution decision equals the reference model's.", ["S5.6", "S8.7"];
    VIEWS = "views-agree", "1-5", "Every derived view equals the reference model's.", ["S4.18", "S1.29"];
    NO_REPLY_TO_INVALID = "no-reply-to-invalid", "1", "Invalid messages produce a transport-level error, not an automatic reply.", ["S1.34"];
    NO_ACK_OF_ACK = "no-ack-of-ack", "2", "No automatic ACK-of-ACK behaviour.", ["S2.14"];
    ORDER_INDEPENDENCE = "order-independence", "4", "Honest receivers that stored the same messages, in whatever order, derive the same view.", ["S4.18", "S4.23"];
    ALIVE = "implementation-sound", "-", "The implementation answers every request (no crash of its own, no garbage).", [];
}

/// The invariant of that name, as corpus cases, traces and reports
/// write it.
pub fn by_name(name: &str) -> Option<Invariant> {
    ALL.iter().copied().find(|i| i.name == name)
}

/// The seed clauses an invariant checks, by its name (none for an unknown
/// name).
pub fn clauses(name: &str) -> &'static [&'static str] {
    by_name(name).map_or(&[], |i| i.clauses)
}

/// The invariant behind a rejection class the model gave.
pub fn by_class(class: RejectClass) -> Invariant {
    match class {
        RejectClass::Parse => STRICT_PARSING,
        RejectClass::Version => VERSION,
        RejectClass::Envelope | RejectClass::Body => SCHEMA,
        RejectClass::UnknownThread | RejectClass::UnknownParticipant | RejectClass::Identity => {
            IDENTITY
        }
        RejectClass::NotAddressed => ADDRESSING,
        RejectClass::IdConflict => ID_CONFLICT,
        RejectClass::Reference => REFERENCES,
        RejectClass::NotAuthor => ONLY_AUTHOR,
        RejectClass::ForeignRevision | RejectClass::NotRevisable => OWN_REVISIONS,
        RejectClass::RevisionChain => REVISION_CHAIN,
        RejectClass::Replacement => REPLACEMENT,
        RejectClass::ReplacesNotRequester => RENEWAL,
    }
}

/// Names the invariant an outcome disagreement breaks.
pub fn classify_outcome(expected: &Outcome, actual: &Outcome) -> Invariant {
    match (expected, actual) {
        (Outcome::Rejected(r), Outcome::Rejected(a)) if r.class != a.class => by_class(r.class),
        (Outcome::Rejected(r), _) => by_class(r.class),
        (Outcome::Pending { .. }, Outcome::Accepted) => PENDING,
        (Outcome::Duplicate, _) | (_, Outcome::Duplicate) => DEDUP,
        (Outcome::Accepted, Outcome::Rejected(_) | Outcome::Pending { .. }) => VALID_ACCEPTED,
        _ => OUTCOMES,
    }
}

/// Names the invariant an execution disagreement breaks.
pub fn classify_execution(expected: &Execution, actual: &Execution) -> Invariant {
    match (expected, actual) {
        (Execution::Refused(r), Execution::Executed { .. }) => by_refusal(*r),
        _ => EXECUTIONS,
    }
}

/// The invariant an execution breaks when it goes ahead although the model
/// refused it for `refusal`.
pub fn by_refusal(refusal: Refusal) -> Invariant {
    match refusal {
        Refusal::NoAuthority
        | Refusal::UnknownGrant
        | Refusal::GrantNotForExecutor
        | Refusal::OutOfScope
        | Refusal::GrantExpired
        | Refusal::ApprovalRequired => AUTHORITY,
        Refusal::Terminal => TERMINAL,
        Refusal::Withdrawn | Refusal::Superseded | Refusal::Disputed => LIFECYCLE,
        Refusal::RevisionConflict => CONFLICT_BLOCKS,
        Refusal::PendingCommitment | Refusal::UnknownCommitment | Refusal::RejectedCommitment => {
            PENDING
        }
        Refusal::NotOwnCommitment => BINDS_SENDER,
        Refusal::AlreadyExecuted => AT_MOST_ONCE,
        Refusal::IdConflict => ID_CONFLICT,
        Refusal::NotACommitment => NO_COMMITMENT_FROM_TALK,
    }
}

/// Names the invariant a view disagreement breaks, from the first place the
/// two views differ in meaning.
pub fn classify_view(expected: &Value, actual: &Value) -> Invariant {
    let ids = |v: &Value, key: &str| -> Vec<String> {
        v[key]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|m| m["id"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    // Effects first: a receiver that forgot an effect it performed will
    // perform it again; one that shows an effect the model refused acted
    // without authority.
    let effects = |v: &Value| -> Vec<String> {
        v["effects"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|e| e.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (expected_effects, actual_effects) = (effects(expected), effects(actual));
    if expected_effects.iter().any(|e| !actual_effects.contains(e)) {
        return AT_MOST_ONCE;
    }
    if actual_effects.iter().any(|e| !expected_effects.contains(e)) {
        return AUTHORITY;
    }
    let expected_messages = ids(expected, "messages");
    let actual_messages = ids(actual, "messages");
    if expected_messages
        .iter()
        .any(|m| !actual_messages.contains(m))
    {
        return HISTORY;
    }
    let expected_commitments = ids(expected, "commitments");
    if ids(actual, "commitments")
        .iter()
        .any(|c| !expected_commitments.contains(c))
    {
        return NO_COMMITMENT_FROM_TALK;
    }
    let commitment = |v: &Value, id: &str| -> Value {
        v["commitments"]
            .as_array()
            .and_then(|a| a.iter().find(|c| c["id"] == id).cloned())
            .unwrap_or(Value::Null)
    };
    for id in &expected_commitments {
        let (e, a) = (commitment(expected, id), commitment(actual, id));
        let (ep, ap) = (
            e["progress"].as_str().unwrap_or(""),
            a["progress"].as_str().unwrap_or(""),
        );
        // Named by what the model's progress is, not by what its
        // annotations happen to mention: a terminal state shown otherwise
        // broke `terminal-stays-terminal`, and so did one whose terminal
        // reports disagree (still terminal, unresolved which) shown
        // active; a blocked one shown fulfilled broke
        // `blocked-not-completion`; any other disagreement falls through
        // to the checks below.
        let terminal_unresolved = ep == "unresolved"
            && e["annotations"]
                .as_array()
                .is_some_and(|a| a.iter().any(|x| x == "conflicting_terminal"));
        if ep != ap {
            if matches!(ep, "fulfilled" | "failed") || (terminal_unresolved && ap == "active") {
                return TERMINAL;
            }
            if ep == "blocked" && ap == "fulfilled" {
                return BLOCKED;
            }
        }
    }
    let conflict = |v: &Value| -> Vec<String> {
        v["revisions"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter(|r| r["state"] == "conflict")
                    .filter_map(|r| r["target"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    if conflict(expected) != conflict(actual) {
        return NO_SILENT_BRANCH;
    }
    let statuses = |v: &Value| -> Vec<(String, String)> {
        v["messages"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|m| (m["id"].to_string(), m["status"].to_string()))
                    .collect()
            })
            .unwrap_or_default()
    };
    if statuses(expected) != statuses(actual) {
        for (e, a) in statuses(expected).iter().zip(statuses(actual).iter()) {
            if e != a && e.1.contains("equivocated") {
                return ID_CONFLICT;
            }
            if e != a && e.1.contains("pending") {
                return PENDING;
            }
        }
    }
    VIEWS
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An invariant is equal to another by its name alone, so two must
    /// never share one; and a name read from a case or a trace finds its
    /// own invariant.
    #[test]
    fn names_are_unique_and_find_their_invariant() {
        for (i, a) in ALL.iter().enumerate() {
            for b in &ALL[i + 1..] {
                assert_ne!(a.name, b.name);
                assert_ne!(a, b);
            }
            assert_eq!(by_name(a.name).map(|i| i.says), Some(a.says));
        }
        assert_eq!(by_name("no-such-invariant"), None);
        assert_eq!(format!("{:?}", AUTHORITY), "authority-before-effect");
    }

    fn view(progress: &str, annotations: &[&str]) -> Value {
        json!({"messages": [{"id": "bob:1", "status": "accepted"}],
               "commitments": [{"id": "bob:1", "progress": progress, "annotations": annotations}],
               "revisions": [], "effects": []})
    }

    /// A verdict names the invariant that was broken, not one that the
    /// annotations happen to mention (issue: a progress disagreement was
    /// called `terminal-stays-terminal` because an annotation said
    /// "terminal").
    #[test]
    fn progress_disagreements_are_named_by_the_models_progress() {
        let annotated = view("active", &["terminal_report_invalidated"]);
        assert_eq!(
            classify_view(&annotated, &view("fulfilled", &[])).name,
            VIEWS.name
        );
        assert_eq!(
            classify_view(&view("fulfilled", &[]), &view("active", &[])).name,
            TERMINAL.name
        );
        assert_eq!(
            classify_view(&view("blocked", &[]), &view("fulfilled", &[])).name,
            BLOCKED.name
        );
        // Terminal reports that disagree leave it terminal, unresolved
        // which: shown active, it was reopened.
        let conflicting = view("unresolved", &["conflicting_terminal"]);
        assert_eq!(
            classify_view(&conflicting, &view("active", &[])).name,
            TERMINAL.name
        );
        // Concurrent active and blocked reports leave it unresolved too,
        // but nothing terminal was reported.
        let concurrent = view("unresolved", &["concurrent_reports"]);
        assert_eq!(
            classify_view(&concurrent, &view("active", &[])).name,
            VIEWS.name
        );
    }
}
