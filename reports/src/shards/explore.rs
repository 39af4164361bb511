//! Merging `explore` parts: each shard explores its share of the scopes
//! (by hash of their names); the scopes go back in the order given.

use serde::{Deserialize, Serialize};

use super::{MergeError, Read};
use crate::explore::Explored;

/// An exploration's outcome as `explore` prints it; a part holds its
/// shard's scopes.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Body {
    pub implementation: String,
    /// Whether schedules reaching one state were merged (not `--no-merge`).
    pub merge: bool,
    pub max_states: u64,
    pub scopes: Vec<Explored>,
    /// A counterexample's trace could not be saved.
    pub unsaved: bool,
    /// What a crash takes, for an implementation over the protocol (the
    /// label `run` prints): power loss, or kill only and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub durability: Option<String>,
}

/// The scopes of every part in `order` (the scopes' names as given).
pub fn merge(parts: &[Read], order: &[String]) -> Result<Body, MergeError> {
    let bodies: Vec<Body> = parts.iter().map(Read::body).collect::<Result<_, _>>()?;
    // A name given twice is explored twice, by the same shard: each is
    // taken in turn.
    let mut waiting: std::collections::BTreeMap<&str, std::collections::VecDeque<&Explored>> =
        Default::default();
    for (read, b) in parts.iter().zip(&bodies) {
        for x in &b.scopes {
            read.owns_name("scope", &x.scope)?;
            waiting.entry(x.scope.as_str()).or_default().push_back(x);
        }
    }
    let mut scopes = Vec::with_capacity(order.len());
    for name in order {
        let x = waiting
            .get_mut(name.as_str())
            .and_then(|q| q.pop_front())
            .ok_or_else(|| MergeError::Inconsistent {
                path: parts[0].path.clone(),
                why: format!("scope `{name}` is in no part"),
            })?;
        scopes.push(x.clone());
    }
    if let Some((name, _)) = waiting.iter().find(|(_, q)| !q.is_empty()) {
        return Err(MergeError::Inconsistent {
            path: parts[0].path.clone(),
            why: format!("scope `{name}` is not in the work to split"),
        });
    }
    Ok(Body {
        implementation: bodies[0].implementation.clone(),
        merge: bodies[0].merge,
        max_states: bodies[0].max_states,
        scopes,
        unsaved: bodies.iter().any(|b| b.unsaved),
        durability: bodies[0].durability.clone(),
    })
}
