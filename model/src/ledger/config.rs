//! What a receiver knows before the first message: who it is, which identity
//! context governs each thread, which grants exist, and its local policy.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::marker::PhantomData;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;

use crate::message::{
    ContextName, GrantRef, MessageRef, Participant, Principal, ThreadId, Timestamp,
};

/// A receiver's local clock reading, in milliseconds since the Unix epoch.
/// Time is an input: the model never reads a clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LocalTime(pub i64);

impl LocalTime {
    pub fn from_timestamp(t: &Timestamp) -> LocalTime {
        LocalTime((t.unix_nanos() / 1_000_000) as i64)
    }
}

/// Whose ledger this is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Viewer {
    /// One participant's receiver: it records what it sent and what was
    /// addressed to it, and executes only its own commitments.
    Participant(Participant),
    /// An auditor sees every message of every thread and executes nothing.
    Auditor,
}

/// One identity context: participant names bound to principals. Bindings
/// cannot change; rebinding needs a new context and thread (section 1).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IdentityContext {
    pub bindings: BTreeMap<Participant, Principal>,
}

/// How threads map to identity contexts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Contexts {
    /// Every `from` is taken as authenticated: each thread is a context of its
    /// own in which each participant's principal is its name. For reading a
    /// bare message stream, where no transport exists to authenticate anyone.
    Open,
    /// Explicit contexts; threads not listed are unknown.
    Fixed {
        contexts: BTreeMap<ContextName, IdentityContext>,
        threads: BTreeMap<ThreadId, ContextName>,
    },
}

/// A grant in the executor's registry (section 5: `authority_ref` refers to a
/// pre-existing grant independently checked by the executor).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub id: GrantRef,
    /// The only participant this grant lets act.
    pub grantee: Participant,
    /// The resource scope: the threads whose commitments it covers.
    pub threads: BTreeSet<ThreadId>,
    /// Expired at and after this instant of the executor's clock.
    pub expires_at: Option<LocalTime>,
    /// A human must approve each execution under this grant.
    pub requires_approval: bool,
}

/// The executor's local policy (section 5: "local policy may already permit
/// the requested action").
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    /// Threads whose commitments may be executed without any grant.
    pub permitted_without_grant: BTreeSet<ThreadId>,
    /// Threads whose executions always need a recorded human approval.
    pub approval_required: BTreeSet<ThreadId>,
    /// Recorded human approvals, per thread and commitment.
    pub approvals: BTreeSet<(ThreadId, MessageRef)>,
}

/// Everything a ledger is initialised with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerConfig {
    pub viewer: Viewer,
    pub contexts: Contexts,
    pub grants: BTreeMap<GrantRef, Grant>,
    pub policy: Policy,
}

impl LedgerConfig {
    /// An auditor over a bare stream: every sender taken as authenticated,
    /// no grants, no policy.
    pub fn open_auditor() -> LedgerConfig {
        LedgerConfig {
            viewer: Viewer::Auditor,
            contexts: Contexts::Open,
            grants: BTreeMap::new(),
            policy: Policy::default(),
        }
    }

    /// Reads the configuration file format documented in docs/ledger.md.
    /// A key repeated in an object is refused, never resolved silently with
    /// the last one winning: every map is read as a [`UniqueMap`], and the
    /// objects of fixed form refuse a repeated field themselves. One pass,
    /// since a subprocess reads its configuration at every start.
    pub fn from_json(text: &str) -> Result<LedgerConfig, ConfigError> {
        let file: ConfigFile = serde_json::from_str(text).map_err(|e| ConfigError {
            message: e.to_string(),
        })?;
        file.into_config()
    }
}

/// Why a configuration file could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid ledger configuration: {message}")]
pub struct ConfigError {
    pub message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    participant: Option<Participant>,
    #[serde(default)]
    contexts: Option<UniqueMap<ContextName, UniqueMap<Participant, Principal>>>,
    #[serde(default)]
    threads: Option<UniqueMap<ThreadId, ContextName>>,
    #[serde(default)]
    grants: Vec<GrantFile>,
    #[serde(default)]
    policy: PolicyFile,
}

/// A JSON object read as a map that refuses a repeated key.
struct UniqueMap<K, V>(BTreeMap<K, V>);

impl<'de, K, V> Deserialize<'de> for UniqueMap<K, V>
where
    K: Deserialize<'de> + Ord + fmt::Display,
    V: Deserialize<'de>,
{
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Unique<K, V>(PhantomData<(K, V)>);
        impl<'de, K, V> Visitor<'de> for Unique<K, V>
        where
            K: Deserialize<'de> + Ord + fmt::Display,
            V: Deserialize<'de>,
        {
            type Value = UniqueMap<K, V>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = BTreeMap::new();
                while let Some(key) = map.next_key::<K>()? {
                    if out.contains_key(&key) {
                        return Err(serde::de::Error::custom(format!("duplicate key `{key}`")));
                    }
                    let value = map.next_value()?;
                    out.insert(key, value);
                }
                Ok(UniqueMap(out))
            }
        }
        deserializer.deserialize_map(Unique(PhantomData))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GrantFile {
    id: GrantRef,
    grantee: Participant,
    threads: BTreeSet<ThreadId>,
    #[serde(default)]
    expires_at: Option<Timestamp>,
    #[serde(default)]
    requires_approval: bool,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    #[serde(default)]
    permitted_without_grant: BTreeSet<ThreadId>,
    #[serde(default)]
    approval_required: BTreeSet<ThreadId>,
    #[serde(default)]
    approvals: Vec<ApprovalFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ApprovalFile {
    thread: ThreadId,
    commitment: MessageRef,
}

impl ConfigFile {
    fn into_config(self) -> Result<LedgerConfig, ConfigError> {
        let fail = |message: String| Err(ConfigError { message });
        let contexts = match (self.contexts, self.threads) {
            (None, None) => Contexts::Open,
            (Some(UniqueMap(contexts)), Some(UniqueMap(threads))) => {
                for (thread, context) in &threads {
                    if !contexts.contains_key(context) {
                        return fail(format!(
                            "thread `{thread}` is bound to context `{context}`, which is not defined"
                        ));
                    }
                }
                Contexts::Fixed {
                    contexts: contexts
                        .into_iter()
                        .map(|(name, UniqueMap(bindings))| (name, IdentityContext { bindings }))
                        .collect(),
                    threads,
                }
            }
            _ => return fail("`contexts` and `threads` must be given together".to_owned()),
        };
        let mut grants = BTreeMap::new();
        for g in self.grants {
            if grants.contains_key(&g.id) {
                return fail(format!("grant `{}` is defined twice", g.id));
            }
            grants.insert(
                g.id.clone(),
                Grant {
                    id: g.id,
                    grantee: g.grantee,
                    threads: g.threads,
                    expires_at: g.expires_at.as_ref().map(LocalTime::from_timestamp),
                    requires_approval: g.requires_approval,
                },
            );
        }
        Ok(LedgerConfig {
            viewer: self
                .participant
                .map_or(Viewer::Auditor, Viewer::Participant),
            contexts,
            grants,
            policy: Policy {
                permitted_without_grant: self.policy.permitted_without_grant,
                approval_required: self.policy.approval_required,
                approvals: self
                    .policy
                    .approvals
                    .into_iter()
                    .map(|a| (a.thread, a.commitment))
                    .collect(),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_keys_in_a_configuration_are_refused() {
        let text = r#"{"contexts": {"c": {"a": "pk-a", "a": "pk-evil"}}, "threads": {"t": "c"}}"#;
        let err = LedgerConfig::from_json(text).unwrap_err();
        assert!(err.message.contains("duplicate key `a`"), "{err}");
        for text in [
            r#"{"contexts": {"c": {"a": "pk-a"}, "c": {"a": "pk-b"}}, "threads": {"t": "c"}}"#,
            r#"{"contexts": {"c": {"a": "pk-a"}}, "threads": {"t": "c", "t": "c"}}"#,
            r#"{"participant": "a", "participant": "b"}"#,
            r#"{"grants": [{"id": "g", "id": "h", "grantee": "a", "threads": ["t"]}]}"#,
            r#"{"policy": {"approvals": [], "approvals": []}}"#,
        ] {
            let err = LedgerConfig::from_json(text).unwrap_err();
            assert!(err.message.contains("duplicate"), "{text}: {err}");
        }
    }

    #[test]
    fn context_names_cannot_contain_a_slash() {
        let text = r#"{"contexts": {"a/b": {"a": "pk-a"}}, "threads": {"t": "a/b"}}"#;
        assert!(LedgerConfig::from_json(text).is_err());
    }

    #[test]
    fn expiry_is_read_as_local_milliseconds() {
        let text = r#"{"grants": [{"id": "g", "grantee": "a", "threads": ["t"], "expires_at": "1970-01-01T00:00:01.5Z"}]}"#;
        let config = LedgerConfig::from_json(text).unwrap();
        let grant = config.grants.values().next().unwrap();
        assert_eq!(grant.expires_at, Some(LocalTime(1_500)));
        assert_eq!(config.viewer, Viewer::Auditor);
        assert_eq!(config.contexts, Contexts::Open);
    }
}
