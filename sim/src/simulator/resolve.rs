//! Turning a step's indices into concrete frames, against what has been said
//! so far in the run.

use std::sync::Arc;

use serde_json::{json, Value};
use tern_model::message::{Act, GrantRef, MessageRef, Principal, ThreadId};

mod attack;
mod boast;
mod talk;

use super::scenario::{principal, thread_in, Scenario, ADVERSARY, THREADS};
use crate::catalogue::boast::Boasted;
use crate::catalogue::malformed::Malformation;

/// A participant no identity context binds.
const STRANGER: &str = "zed";
use super::workload::Mix;

/// One frame put on the network.
#[derive(Debug, Clone)]
pub struct Outgoing {
    pub frame: Vec<u8>,
    /// The principal the transport authenticates.
    pub principal: Principal,
    /// The agent that really sent it (it also receives its own message), or
    /// `None` for the adversary.
    pub actor: Option<usize>,
    /// Agents it is delivered to, besides the actor.
    pub recipients: Vec<usize>,
    /// Who the frame claims to be from, for notes.
    pub claimed: String,
    /// Sent under a principal other than the claimed sender's.
    pub spoofed: bool,
    /// How the frame was broken, when the workload broke it.
    pub malformed: Option<Malformation>,
    /// The boast it is, when the workload boasts.
    pub boast: Option<Boasted>,
}

/// A message the workload said: the JSON that later messages copy and
/// attacks break, and what choosing among the messages reads of it, typed
/// once when it is said rather than looked up in the JSON at every choice
/// (every execution step weighs each commitment of each agent).
#[derive(Debug, Clone)]
pub struct Spoken {
    pub message: Value,
    pub act: Option<Act>,
    pub id: Option<String>,
    pub from: Option<String>,
    /// Its thread and ID, as an execution names a commitment, when both
    /// are valid names.
    pub names: Option<(ThreadId, MessageRef)>,
    /// The grant its body cites as `authority_ref`, when that is a grant's
    /// name.
    pub authority: Option<GrantRef>,
}

impl Spoken {
    fn new(message: Value) -> Spoken {
        let text = |v: &Value| v.as_str().map(str::to_owned);
        let names = (|| {
            let thread = ThreadId::new(message["thread"].as_str()?).ok()?;
            let id = MessageRef::new(message["id"].as_str()?).ok()?;
            Some((thread, id))
        })();
        Spoken {
            act: message["act"].as_str().and_then(Act::from_name),
            id: text(&message["id"]),
            from: text(&message["from"]),
            names,
            authority: message["body"]["authority_ref"]
                .as_str()
                .and_then(|g| GrantRef::new(g).ok()),
            message,
        }
    }

    fn is(&self, acts: &[Act]) -> bool {
        self.act.is_some_and(|a| acts.contains(&a))
    }

    pub fn is_from(&self, who: &str) -> bool {
        self.from.as_deref() == Some(who)
    }
}

/// What has been said, for resolving indices.
#[derive(Debug, Default)]
pub struct Said {
    /// Honest messages in the order sent.
    pub messages: Vec<Spoken>,
    /// COMMITs of the current conversation whose effect was performed, so
    /// that later revisions and reused IDs can meet an execution (the
    /// conflicts a receiver must reconcile with what it already did, S4.23).
    pub executed: Vec<Value>,
    /// IDs of the commitments of the current conversation that boasts
    /// naming a grant that would authorise them were about, the latest
    /// last, so that their committers are asked to execute them: what such
    /// a boast is for.
    pub boasted: Vec<Value>,
    counters: std::collections::BTreeMap<String, u32>,
}

/// The item a step's index `i` picks among `items`, counting round: every
/// index picks one while there is any, so a step keeps its pick when
/// shrinking removes unrelated items.
pub(crate) fn picked<T>(items: &[T], i: usize) -> Option<&T> {
    (!items.is_empty()).then(|| &items[i % items.len()])
}

fn pick<T: Clone>(items: &[T], i: u8) -> Option<T> {
    picked(items, i.into()).cloned()
}

/// Picks among borrowed messages and takes a copy of the one picked.
fn pick_ref(items: &[&Value], i: u8) -> Option<Value> {
    picked(items, i.into()).map(|m| (*m).clone())
}

/// The JSON of borrowed said messages.
fn bodies<'s>(said: impl IntoIterator<Item = &'s Spoken>) -> Vec<&'s Value> {
    said.into_iter().map(|s| &s.message).collect()
}

impl Said {
    fn next_id(&mut self, from: &str) -> String {
        let n = self.counters.entry(from.to_owned()).or_default();
        *n += 1;
        format!("{from}:{n}")
    }

    /// Remembers an honest message as said.
    pub fn push(&mut self, message: Value) {
        self.messages.push(Spoken::new(message));
    }

    /// A copy of the message `i` picks.
    fn pick(&self, i: u8) -> Option<Value> {
        picked(&self.messages, i.into()).map(|s| s.message.clone())
    }

    /// Messages of one act, by reference; callers copy only what they pick.
    fn of_act(&self, act: Act) -> Vec<&Value> {
        self.of_acts(&[act])
    }

    fn of_acts(&self, acts: &[Act]) -> Vec<&Value> {
        bodies(self.messages.iter().filter(|m| m.is(acts)))
    }

    /// Messages of `act` whose body's `field` names `id`: the reports on a
    /// commitment, the revisions of a target.
    fn about(&self, act: Act, field: &str, id: &Value) -> Vec<&Value> {
        self.of_act(act)
            .into_iter()
            .filter(|m| m["body"][field] == *id)
            .collect()
    }

    pub fn commitments_of(&self, agent: &str) -> Vec<&Spoken> {
        self.commitments().filter(|c| c.is_from(agent)).collect()
    }

    pub fn all_commitments(&self) -> Vec<&Spoken> {
        self.commitments().collect()
    }

    fn commitments(&self) -> impl Iterator<Item = &Spoken> {
        self.messages.iter().filter(|c| c.is(&[Act::Commit]))
    }

    /// Notes that the effect of the COMMIT `id` was performed.
    pub fn note_executed(&mut self, id: &str) {
        if self.executed.iter().any(|c| c["id"] == id) {
            return;
        }
        if let Some(commit) = self.find(id) {
            self.executed.push(commit.message.clone());
        }
    }

    /// Looks a message up by ID.
    pub fn find(&self, id: &str) -> Option<&Spoken> {
        self.messages.iter().find(|m| m.id.as_deref() == Some(id))
    }
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Builds frames from steps. It shares the run's scenario, so that a run
/// can keep its resolver between steps.
pub struct Resolver {
    pub scenario: Arc<Scenario>,
    pub said: Said,
    /// See [`Mix::profile_rules`].
    profile_rules: bool,
    /// The conversation under way (see [`super::scenario::EPOCH_STEPS`]).
    epoch: usize,
    /// The run's virtual time when the step is played, so that a boast can
    /// tell a grant that still holds at its committer's clock from one
    /// that has expired.
    pub now: i64,
}

impl Resolver {
    pub fn new(scenario: Arc<Scenario>, mix: Mix) -> Resolver {
        Resolver {
            scenario,
            said: Said::default(),
            profile_rules: mix.profile_rules,
            epoch: 0,
            now: 0,
        }
    }

    /// Moves on to conversation `epoch`: what was said before is no longer
    /// referred to (IDs keep counting, since threads share contexts).
    pub fn enter_epoch(&mut self, epoch: usize) {
        if epoch != self.epoch {
            self.epoch = epoch;
            self.said.messages.clear();
            self.said.executed.clear();
            self.said.boasted.clear();
        }
    }

    /// Thread `i` of the current conversation.
    fn thread(&self, i: u8) -> String {
        thread_in(THREADS[i as usize % THREADS.len()], self.epoch)
    }

    fn agent_index(&self, name: &str) -> Option<usize> {
        self.scenario.agents.iter().position(|a| a == name)
    }

    fn person(&self, i: u8) -> String {
        self.scenario.agents[i as usize % self.scenario.agents.len()].clone()
    }

    /// An honest message from `from`, delivered to `from` itself and `to`.
    #[allow(clippy::too_many_arguments)] // one parameter per envelope member
    fn message(
        &mut self,
        from: &str,
        to: Vec<String>,
        thread: &str,
        reply: Option<String>,
        act: &str,
        body: Value,
        evidence: bool,
    ) -> Outgoing {
        let id = self.said.next_id(from);
        let to = if to.is_empty() {
            vec![self
                .scenario
                .speakers()
                .into_iter()
                .find(|p| p != from)
                .unwrap_or_else(|| ADVERSARY.to_owned())]
        } else {
            to
        };
        let mut m = json!({"tern": "0.1", "id": id, "from": from, "to": to, "thread": thread,
                           "reply": reply, "act": act, "body": body});
        if evidence {
            m["evidence"] = json!([{"id": "ev:log", "source": "the run's own log", "collected_at": "2026-11-30T12:00:00Z",
                                    "method": "inspection", "result": "As stated."}]);
        }
        self.honest(m)
    }

    fn honest(&mut self, m: Value) -> Outgoing {
        let from = m["from"].as_str().unwrap_or("").to_owned();
        let thread = m["thread"].as_str().unwrap_or("plan").to_owned();
        let frame = serde_json::to_vec(&m).unwrap_or_default();
        let sent = self.sent_by(frame, from, &thread, &m);
        self.said.push(m);
        sent
    }

    /// `frame` (whose message is `m`) sent by the participant `from` it
    /// names, under that participant's own principal in `thread`, to the
    /// agents among its `to` but the sender: what an honest sender and a
    /// misbehaving one both send.
    fn sent_by(&self, frame: Vec<u8>, from: String, thread: &str, m: &Value) -> Outgoing {
        let actor = self.agent_index(&from);
        let recipients = strings(&m["to"])
            .iter()
            .filter_map(|r| self.agent_index(r))
            .filter(|r| Some(*r) != actor)
            .collect();
        Outgoing {
            frame,
            principal: principal(&from, thread),
            actor,
            recipients,
            claimed: from,
            spoofed: false,
            malformed: None,
            boast: None,
        }
    }

    fn others(&self, from: &str, mask: u8) -> Vec<String> {
        let mut out: Vec<String> = self
            .scenario
            .agents
            .iter()
            .enumerate()
            .filter(|(i, p)| *p != from && (mask >> (i % 8)) & 1 == 1)
            .map(|(_, p)| p.clone())
            .collect();
        if out.is_empty() {
            out = self
                .scenario
                .agents
                .iter()
                .filter(|p| *p != from)
                .take(1)
                .cloned()
                .collect();
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(messages: &[Value]) -> Said {
        let mut said = Said::default();
        messages.iter().cloned().for_each(|m| said.push(m));
        said
    }

    #[test]
    fn a_said_message_is_typed_as_its_json_reads() {
        let commit = json!({"id": "bob:1", "from": "bob", "thread": "plan", "act": "COMMIT",
                            "body": {"request": "ann:1", "authority_ref": "grant:bob-ops"}});
        let s = Spoken::new(commit.clone());
        assert_eq!(s.act, Some(Act::Commit));
        assert!(s.is_from("bob") && !s.is_from("ann"));
        let (thread, id) = s.names.clone().expect("valid names");
        assert_eq!((thread.as_str(), id.as_str()), ("plan", "bob:1"));
        assert_eq!(
            s.authority.as_ref().map(|g| g.as_str()),
            Some("grant:bob-ops")
        );
        assert_eq!(s.message, commit);
        // What is not a name stays untyped: no names, no grant, no act.
        let odd = Spoken::new(
            json!({"id": 7, "from": "bob", "thread": "plan", "act": "SHOUT",
                                     "body": {"authority_ref": ""}}),
        );
        assert_eq!((odd.act, odd.id.clone()), (None, None));
        assert!(odd.names.is_none() && odd.authority.is_none());
    }

    #[test]
    fn choices_among_said_messages_go_by_act_author_and_id() {
        let said = said(&[
            json!({"id": "ann:1", "from": "ann", "thread": "plan", "act": "REQUEST", "body": {}}),
            json!({"id": "bob:1", "from": "bob", "thread": "plan", "act": "COMMIT",
                   "body": {"request": "ann:1"}}),
            json!({"id": "bob:2", "from": "bob", "thread": "plan", "act": "REPORT",
                   "body": {"commitment": "bob:1"}}),
            json!({"id": "cy:1", "from": "cy", "thread": "plan", "act": "COMMIT",
                   "body": {"request": "ann:1"}}),
        ]);
        let ids = |ms: Vec<&Value>| -> Vec<String> {
            ms.iter()
                .map(|m| m["id"].as_str().unwrap().to_owned())
                .collect()
        };
        assert_eq!(
            ids(said.of_acts(&[Act::Commit, Act::Request])),
            ["ann:1", "bob:1", "cy:1"]
        );
        assert_eq!(
            ids(said.about(Act::Report, "commitment", &json!("bob:1"))),
            ["bob:2"]
        );
        assert!(said
            .about(Act::Report, "commitment", &json!("cy:1"))
            .is_empty());
        let of_bob: Vec<_> = said
            .commitments_of("bob")
            .iter()
            .map(|c| c.id.clone())
            .collect();
        assert_eq!(of_bob, [Some("bob:1".to_owned())]);
        assert_eq!(said.all_commitments().len(), 2);
        assert_eq!(said.find("bob:2").map(|m| m.act), Some(Some(Act::Report)));
        assert!(said.find("bob:9").is_none());
        assert_eq!(said.pick(5).map(|m| m["id"].clone()), Some(json!("bob:1")));
    }
}
