//! The world of a run: who the agents are, which threads and identity
//! contexts exist, which grants and policies apply. Derived from the run's
//! seed and the agent count alone.

use std::collections::{BTreeMap, BTreeSet};

use tern_model::ledger::{
    Contexts, Grant, IdentityContext, LedgerConfig, LocalTime, Policy, Viewer,
};
use tern_model::message::{ContextName, GrantRef, Participant, Principal, ThreadId};

use crate::contract::plugin::InitParams;

/// Names for honest agents, in order; the adversary is `mallory`.
pub const NAMES: [&str; 16] = [
    "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "ken",
    "liam", "mia", "nina", "oscar", "peggy",
];
pub const ADVERSARY: &str = "mallory";
pub const MAX_AGENTS: usize = NAMES.len();
/// The longest run: every agent's ledger keeps every message of the run,
/// about 6.5 KB a step at five agents, so 100,000 steps is some 700 MB,
/// and a run of that length is a soak's work in one seed. Longer runs,
/// and traces of them, are refused before any step is played.
pub const MAX_STEPS: usize = 100_000;

/// Threads `plan` and `ops` share context `main`; `side` is alone in
/// `annex`, where everyone has another principal. That keeps the rule "keys
/// are qualified by the identity context" exercised.
pub const THREADS: [&str; 3] = ["plan", "ops", "side"];

/// Steps per conversation. A longer run moves on to fresh threads every
/// `EPOCH_STEPS` steps (`plan.1`, `ops.1`, `side.1`, then `.2`...), and its
/// workload refers only to what was said in the current conversation: so a
/// step costs the same at step 10 and at step 100,000, as a long soak of
/// many conversations needs, while each conversation is as long as a whole
/// default run.
pub const EPOCH_STEPS: usize = 250;

/// The conversation step `step` belongs to.
pub fn epoch_of(step: usize) -> usize {
    step / EPOCH_STEPS
}

/// Thread `base` (one of [`THREADS`]) in conversation `epoch`.
pub fn thread_in(base: &str, epoch: usize) -> String {
    if epoch == 0 {
        base.to_owned()
    } else {
        format!("{base}.{epoch}")
    }
}

pub use crate::catalogue::context_of;

/// The principal the transport authenticates for `who` in `thread`.
pub fn principal(who: &str, thread: &str) -> Principal {
    let suffix = if context_of(thread) == "annex" {
        "@annex"
    } else {
        ""
    };
    Principal::new(format!("pk:{who}{suffix}")).expect("nonempty")
}

#[derive(Debug, Clone)]
pub struct Scenario {
    pub agents: Vec<String>,
    /// Clock skew per agent, in milliseconds.
    pub skew: Vec<i64>,
    pub grants: BTreeMap<GrantRef, Grant>,
    pub policy: Policy,
    /// How many conversations the run has (see [`EPOCH_STEPS`]).
    pub epochs: usize,
}

impl Scenario {
    /// `pick` supplies the run's random choices (grantees, expiries, skews).
    /// A run of `steps` steps.
    pub fn new(
        agents: usize,
        steps: usize,
        skewed: bool,
        mut pick: impl FnMut(u64) -> u64,
    ) -> Scenario {
        let epochs = epoch_of(steps.max(1) - 1) + 1;
        let every = |base: &str| -> BTreeSet<ThreadId> {
            (0..epochs)
                .map(|e| ThreadId::new(thread_in(base, e)).expect("valid"))
                .collect()
        };
        let names: Vec<String> = NAMES[..agents].iter().map(|s| s.to_string()).collect();
        let skew = names
            .iter()
            .map(|_| {
                if skewed {
                    pick(10_001) as i64 - 5_000
                } else {
                    0
                }
            })
            .collect();
        let mut grants = BTreeMap::new();
        // A run's virtual clock advances about 20 ms a step: the three
        // `ops` grants of an agent expire in the first, second and third
        // third of that time, so a run of any length meets their instants.
        let span = (steps.clamp(30, EPOCH_STEPS) as u64) * 6;
        // A grant for `ops` with no approval needed, expiring at `expires`.
        let ops_grant = |id: String, name: &str, expires: i64| {
            let id = GrantRef::new(id).expect("nonempty");
            let grant = Grant {
                id: id.clone(),
                grantee: Participant::new(name).expect("valid name"),
                threads: every("ops"),
                expires_at: Some(LocalTime(expires)),
                requires_approval: false,
            };
            (id, grant)
        };
        for (i, name) in names.iter().enumerate() {
            // Each agent has a grant for `ops` that expires during the run,
            // and every other one a grant needing human approval for `plan`.
            let expires = 300 + pick(span) as i64;
            let (id, grant) = ops_grant(format!("grant:{name}-ops"), name, expires);
            grants.insert(id, grant);
            if i % 2 == 0 {
                let id = GrantRef::new(format!("grant:{name}-plan")).expect("nonempty");
                grants.insert(
                    id.clone(),
                    Grant {
                        id,
                        grantee: Participant::new(name.as_str()).expect("valid name"),
                        threads: every("plan"),
                        expires_at: None,
                        requires_approval: true,
                    },
                );
            }
        }
        // Two more `ops` grants each, expiring later, so that a run meets
        // several expiry instants: each can be crossed only once.
        for name in &names {
            for k in 1..=2i64 {
                let expires = 300 + span as i64 * k + pick(span) as i64;
                let (id, grant) = ops_grant(format!("grant:{name}-ops-{}", k + 1), name, expires);
                grants.insert(id, grant);
            }
        }
        // Human approvals recorded ahead of time for about half of the
        // commitments each agent could make in `plan` (IDs are predictable:
        // sender and a counter), so grants needing approval both succeed and
        // fail.
        let mut approvals = BTreeSet::new();
        for name in &names {
            for n in 1..=60 {
                if pick(2) == 0 {
                    approvals.insert((
                        ThreadId::new("plan").expect("valid"),
                        tern_model::message::MessageRef::new(format!("{name}:{n}")).expect("valid"),
                    ));
                }
            }
        }
        Scenario {
            agents: names,
            skew,
            grants,
            policy: Policy {
                permitted_without_grant: every("side"),
                approval_required: BTreeSet::new(),
                approvals,
            },
            epochs,
        }
    }

    /// Everyone who can speak: the agents and the adversary.
    pub fn speakers(&self) -> Vec<String> {
        let mut all = self.agents.clone();
        all.push(ADVERSARY.to_owned());
        all
    }

    /// The threads of conversation `epoch`.
    pub fn threads_of(&self, epoch: usize) -> Vec<String> {
        let epoch = epoch.min(self.epochs - 1);
        THREADS.iter().map(|b| thread_in(b, epoch)).collect()
    }

    /// Every thread of the run, conversation by conversation.
    pub fn threads(&self) -> Vec<String> {
        (0..self.epochs).flat_map(|e| self.threads_of(e)).collect()
    }

    /// The grant references a message may cite (including one nobody has).
    pub fn grant_refs(&self) -> Vec<String> {
        let mut refs: Vec<String> = self.grants.keys().map(|g| g.to_string()).collect();
        refs.push("grant:forged".to_owned());
        refs
    }

    pub fn config_for(&self, viewer: Option<&str>) -> LedgerConfig {
        let bind = |ctx: &str| IdentityContext {
            bindings: self
                .speakers()
                .iter()
                .map(|p| {
                    let thread = if ctx == "annex" { "side" } else { "plan" };
                    (
                        Participant::new(p.as_str()).expect("valid"),
                        principal(p, thread),
                    )
                })
                .collect(),
        };
        LedgerConfig {
            viewer: viewer.map_or(Viewer::Auditor, |v| {
                Viewer::Participant(Participant::new(v).expect("valid"))
            }),
            contexts: Contexts::Fixed {
                contexts: ["main", "annex"]
                    .into_iter()
                    .map(|c| (ContextName::new(c).expect("valid"), bind(c)))
                    .collect(),
                threads: self
                    .threads()
                    .into_iter()
                    .map(|t| {
                        let context = ContextName::new(context_of(&t)).expect("valid");
                        (ThreadId::new(t).expect("valid"), context)
                    })
                    .collect(),
            },
            grants: self.grants.clone(),
            policy: self.policy.clone(),
        }
    }

    pub fn init_for(&self, agent: &str) -> InitParams {
        InitParams {
            participant: Participant::new(agent).expect("valid"),
            principal: principal(agent, "plan"),
            config: self.config_for(Some(agent)).into(),
        }
    }
}
