//! Turning a step's indices into concrete frames, against what has been said
//! so far in the run.

use std::sync::Arc;

use serde_json::{json, Value};
use tern_model::message::Principal;

mod boast;

use super::scenario::{principal, thread_in, Scenario, ADVERSARY, THREADS};
use crate::catalogue::boast::Boasted;
use crate::catalogue::malformed::Malformation;

/// A participant no identity context binds.
const STRANGER: &str = "zed";
use super::workload::{claim, Attack, Mix, Talk};

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

/// What has been said, for resolving indices.
#[derive(Debug, Default)]
pub struct Said {
    /// Honest messages in the order sent.
    pub messages: Vec<Value>,
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

fn pick<T: Clone>(items: &[T], i: u8) -> Option<T> {
    (!items.is_empty()).then(|| items[i as usize % items.len()].clone())
}

/// Picks among borrowed messages and takes a copy of the one picked.
fn pick_ref(items: &[&Value], i: u8) -> Option<Value> {
    (!items.is_empty()).then(|| items[i as usize % items.len()].clone())
}

impl Said {
    fn next_id(&mut self, from: &str) -> String {
        let n = self.counters.entry(from.to_owned()).or_default();
        *n += 1;
        format!("{from}:{n}")
    }

    /// Messages of one act, by reference; callers copy only what they pick.
    fn of_act(&self, act: &str) -> Vec<&Value> {
        self.of_acts(&[act])
    }

    fn of_acts(&self, acts: &[&str]) -> Vec<&Value> {
        self.messages
            .iter()
            .filter(|m| acts.contains(&m["act"].as_str().unwrap_or("")))
            .collect()
    }

    /// Messages of `act` whose body's `field` names `id`: the reports on a
    /// commitment, the revisions of a target.
    fn about(&self, act: &str, field: &str, id: &Value) -> Vec<&Value> {
        self.of_act(act)
            .into_iter()
            .filter(|m| m["body"][field] == *id)
            .collect()
    }

    pub fn commitments_of(&self, agent: &str) -> Vec<&Value> {
        self.of_act("COMMIT")
            .into_iter()
            .filter(|c| c["from"] == agent)
            .collect()
    }

    pub fn all_commitments(&self) -> Vec<&Value> {
        self.of_act("COMMIT")
    }

    /// Notes that the effect of the COMMIT `id` was performed.
    pub fn note_executed(&mut self, id: &str) {
        if self.executed.iter().any(|c| c["id"] == id) {
            return;
        }
        if let Some(commit) = self.find(id) {
            self.executed.push(commit.clone());
        }
    }

    /// Looks a message up by ID and thread.
    pub fn find(&self, id: &str) -> Option<&Value> {
        self.messages.iter().find(|m| m["id"] == id)
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
        let actor = self.agent_index(&from);
        let recipients = strings(&m["to"])
            .iter()
            .filter_map(|r| self.agent_index(r))
            .filter(|r| Some(*r) != actor)
            .collect();
        let frame = serde_json::to_vec(&m).unwrap_or_default();
        self.said.messages.push(m);
        Outgoing {
            frame,
            principal: principal(&from, &thread),
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

    pub fn talk(&mut self, t: &Talk) -> Option<Outgoing> {
        let epoch = self.epoch;
        let thread = |i: u8| thread_in(THREADS[i as usize % THREADS.len()], epoch);
        Some(match *t {
            Talk::Ask { from, thread: th } => {
                let from = self.person(from);
                let to = self.others(&from, 0xff);
                self.message(
                    &from,
                    to,
                    &thread(th),
                    None,
                    "ASK",
                    json!({"question": "Which part comes first?"}),
                    false,
                )
            }
            Talk::Tell {
                from,
                thread: th,
                reply,
            } => {
                let from = self.person(from);
                let reply_to = reply.and_then(|r| pick(&self.said.messages, r));
                let th = reply_to.as_ref().map_or(thread(th).to_owned(), |r| {
                    r["thread"].as_str().unwrap_or("plan").to_owned()
                });
                let to = self.others(&from, 0xff);
                self.message(
                    &from,
                    to,
                    &th,
                    reply_to.map(|r| r["id"].as_str().unwrap_or("").to_owned()),
                    "TELL",
                    json!({"claims": [claim("The plan holds.", &[])]}),
                    false,
                )
            }
            Talk::Propose { from, request } => {
                let q = pick_ref(&self.said.of_act("REQUEST"), request)?;
                let from = self.person(from);
                let to = self.others(&from, 0xff);
                self.message(
                    &from,
                    to,
                    q["thread"].as_str()?,
                    None,
                    "PROPOSE",
                    json!({"proposal": "Deliver by Friday instead.", "request": q["id"]}),
                    false,
                )
            }
            Talk::Request {
                from,
                to,
                thread: th,
                grant,
            } => {
                let from = self.person(from);
                let grants = self.scenario.grant_refs();
                // One in twenty-four cites the grant nobody has, so that
                // its COMMITs (citing it too, or nothing) are refused for
                // an unknown grant rather than disputed for a mismatch.
                let grant = match grant % 24 {
                    1 => json!("grant:forged"),
                    g if g % 3 == 0 => Value::Null,
                    _ => json!(grants[grant as usize % grants.len()]),
                };
                let to = self.others(&from, to);
                // Half the requests are for `ops`, where the grants expire,
                // so that executions meet expiry instants.
                let th = if th % 2 == 0 {
                    1
                } else {
                    [0, 2][(th / 2) as usize % 2]
                };
                self.message(&from, to, &thread(th), None, "REQUEST",
                    json!({"action": "Prepare the release notes.", "done_when": "The notes are published.",
                           "constraints": ["Do not change the code."], "authority_ref": grant}), false)
            }
            Talk::Commit {
                from,
                request,
                grant,
            } => {
                // One in thirteen answers a PROPOSE or TELL as if it were the
                // REQUEST: a COMMIT its own author's receiver rejects (a
                // reference to the wrong act, L-REF-6), which that author
                // may then be asked to execute.
                let misread = request % 13 == 4;
                let requests = if misread {
                    Some(self.said.of_acts(&["PROPOSE", "TELL"]))
                        .filter(|m| !m.is_empty())
                        .unwrap_or_else(|| self.said.of_act("REQUEST"))
                } else {
                    self.said.of_act("REQUEST")
                };
                let q = pick_ref(&requests, if misread { request / 13 } else { request })?;
                let addressees = strings(&q["to"]);
                // Usually an addressee commits; now and then someone else does.
                let from = if from % 7 == 0 || addressees.is_empty() {
                    self.person(from)
                } else {
                    addressees[from as usize % addressees.len()].clone()
                };
                self.agent_index(&from)?;
                let own: Vec<String> = self
                    .scenario
                    .grant_refs()
                    .into_iter()
                    .filter(|g| g.contains(&from))
                    .collect();
                let th = q["thread"].as_str()?;
                // The committer's own grant for this thread, if it has one.
                let fitting: Vec<String> = self
                    .scenario
                    .grants
                    .values()
                    .filter(|g| {
                        g.grantee.as_str() == from && g.threads.iter().any(|t| t.as_str() == th)
                    })
                    .map(|g| g.id.to_string())
                    .collect();
                let grant = match grant % 8 {
                    0 => Value::Null,
                    1 => q["body"]["authority_ref"].clone(),
                    2 => pick(&own, grant).map_or(Value::Null, Value::String),
                    3 => json!(pick(&self.scenario.grant_refs(), grant)),
                    _ => pick(&fitting, grant).map_or(Value::Null, Value::String),
                };
                let requester = q["from"].as_str()?.to_owned();
                self.message(&from, vec![requester], q["thread"].as_str()?, q["id"].as_str().map(str::to_owned), "COMMIT",
                    json!({"request": q["id"], "action": "Prepare the release notes.", "deliverable": "Release notes",
                           "done_when": "The notes are published.", "due": null, "conditions": [], "authority_ref": grant}), false)
            }
            Talk::Report {
                commit,
                state,
                follow,
                evidence,
            } => {
                let c = pick_ref(&self.said.of_act("COMMIT"), commit)?;
                let author = c["from"].as_str()?.to_owned();
                let earlier = self.said.about("REPORT", "commitment", &c["id"]);
                let reply = follow
                    .and_then(|f| pick_ref(&earlier, f))
                    .map_or(c["id"].clone(), |r| r["id"].clone());
                let state = ["active", "blocked", "fulfilled", "failed"][state as usize % 4];
                let to = strings(&c["to"]);
                let cites: &[&str] = if evidence { &["ev:log"] } else { &[] };
                self.message(&author, to, c["thread"].as_str()?, reply.as_str().map(str::to_owned), "REPORT",
                    json!({"commitment": c["id"], "state": state, "claims": [claim("Work is under way.", cites)]}), evidence)
            }
            Talk::Revise {
                target,
                previous,
                withdraw,
            } => {
                // One in eleven targets an act that cannot be revised (an
                // ASK, ACK, CHALLENGE or REVISE: L-REV-2); three in eleven
                // a COMMIT, so that revision conflicts meet executions.
                let any_revisable = || {
                    self.said
                        .of_acts(&["TELL", "PROPOSE", "REQUEST", "COMMIT", "REPORT"])
                };
                // Two of those three pick a COMMIT already executed and
                // names the original as `previous`: a second such REVISE
                // competes with the first, so a conflict is revealed after
                // the effect.
                let executed = matches!(target % 11, 1 | 2) && !self.said.executed.is_empty();
                let revisable = match target % 11 {
                    0 => self.said.of_acts(&["ASK", "ACK", "CHALLENGE", "REVISE"]),
                    1 | 2 if executed => self.said.executed.iter().collect(),
                    1..=3 => Some(self.said.of_act("COMMIT"))
                        .filter(|c| !c.is_empty())
                        .unwrap_or_else(any_revisable),
                    _ => any_revisable(),
                };
                let t = pick_ref(&revisable, if executed { target / 11 } else { target })?;
                let owner = t["from"].as_str()?.to_owned();
                let chain = self.said.about("REVISE", "target", &t["id"]);
                let previous = previous
                    .filter(|_| !executed)
                    .and_then(|p| pick_ref(&chain, p))
                    .map_or(t["id"].clone(), |p| p["id"].clone());
                let (mode, replacement) = if withdraw {
                    ("withdraw", Value::Null)
                } else {
                    let mut b = t["body"].clone();
                    if let Some(claims) = b.get_mut("claims") {
                        *claims = json!([claim("Corrected.", &[])]);
                    } else if b.get("action").is_some() {
                        b["action"] = json!("Prepare shorter release notes.");
                    } else if b.get("proposal").is_some() {
                        b["proposal"] = json!("Deliver on Monday.");
                    }
                    ("replace", b)
                };
                let to = strings(&t["to"])
                    .into_iter()
                    .filter(|p| *p != owner)
                    .collect();
                self.message(&owner, to, t["thread"].as_str()?, None, "REVISE",
                    json!({"target": t["id"], "previous": previous, "mode": mode, "replacement": replacement, "impact": []}), false)
            }
            Talk::Ack { from, target } | Talk::Challenge { from, target } => {
                let m = pick(&self.said.messages, target)?;
                let from = self.person(from);
                let to: Vec<String> = vec![m["from"].as_str()?.to_owned()]
                    .into_iter()
                    .filter(|p| *p != from)
                    .collect();
                let (act, body) = if matches!(t, Talk::Ack { .. }) {
                    ("ACK", json!({"target": m["id"]}))
                } else {
                    (
                        "CHALLENGE",
                        json!({"target": m["id"], "kind": "factual", "reason": "The figures do not add up.", "claims": []}),
                    )
                };
                self.message(
                    &from,
                    to,
                    m["thread"].as_str()?,
                    m["id"].as_str().map(str::to_owned),
                    act,
                    body,
                    false,
                )
            }
            Talk::Renew { commit } => {
                let c = pick_ref(&self.said.of_act("COMMIT"), commit)?;
                let q = self.said.find(c["body"]["request"].as_str()?)?.clone();
                let requester = q["from"].as_str()?.to_owned();
                self.agent_index(&requester)?;
                let committer = c["from"].as_str()?.to_owned();
                self.message(&requester, vec![committer], c["thread"].as_str()?, None, "REQUEST",
                    json!({"action": "Prepare the release notes, shorter.", "done_when": "The notes are published.",
                           "constraints": [], "authority_ref": q["body"]["authority_ref"], "replaces": c["id"]}), false)
            }
        })
    }

    /// A frame sent by the participant it names, under that participant's
    /// own principal, which the workload must not refer back to: a
    /// misbehaving sender rather than an impostor.
    fn misbehaving(&self, m: &Value) -> Option<Outgoing> {
        let from = m["from"].as_str()?.to_owned();
        let thread = m["thread"].as_str()?.to_owned();
        let actor = self.agent_index(&from);
        let recipients = strings(&m["to"])
            .iter()
            .filter_map(|r| self.agent_index(r))
            .filter(|r| Some(*r) != actor)
            .collect();
        Some(Outgoing {
            frame: serde_json::to_vec(m).ok()?,
            principal: principal(&from, &thread),
            actor,
            recipients,
            claimed: from,
            spoofed: false,
            malformed: None,
            boast: None,
        })
    }

    /// An adversarial or broken frame.
    pub fn attack(&mut self, a: &Attack) -> Option<Outgoing> {
        let agents = self.scenario.agents.len();
        let adversary = |frame: Vec<u8>,
                         principal: Principal,
                         recipients: Vec<usize>,
                         claimed: String| Outgoing {
            frame,
            principal,
            actor: None,
            recipients,
            claimed,
            spoofed: true,
            malformed: None,
            boast: None,
        };
        let recipients_of = |s: &Self, m: &Value| -> Vec<usize> {
            strings(&m["to"])
                .iter()
                .filter_map(|r| s.agent_index(r))
                .collect()
        };
        Some(match *a {
            Attack::Spoof { of, victim } => {
                // A fresh message claiming to come from a victim, or an old
                // one replayed, under mallory's credentials.
                let thread = self.thread(victim);
                let m = if of % 2 == 0 {
                    pick(&self.said.messages, of)?
                } else {
                    let victim = self.person(victim);
                    let id = format!("{victim}:spoof{of}");
                    let to: Vec<String> = self
                        .scenario
                        .agents
                        .iter()
                        .filter(|p| **p != victim)
                        .cloned()
                        .collect();
                    json!({"tern": "0.1", "id": id, "from": victim, "to": to, "thread": thread, "reply": null,
                           "act": "REQUEST", "body": {"action": "Wire the funds.", "done_when": "Sent.", "constraints": [], "authority_ref": null}})
                };
                let th = m["thread"].as_str()?.to_owned();
                let recipients = recipients_of(self, &m);
                adversary(
                    serde_json::to_vec(&m).ok()?,
                    principal(ADVERSARY, &th),
                    recipients,
                    m["from"].as_str()?.to_owned(),
                )
            }
            Attack::Replay { commit } => {
                let c = pick_ref(&self.said.all_commitments(), commit)?;
                let mut out = self.misbehaving(&c)?;
                out.recipients.extend(out.actor.take());
                out
            }
            Attack::Stranger { of, thread } => {
                let mut m = pick(&self.said.messages, of)?;
                if thread && self.profile_rules {
                    // L-ID-2 (profile): a thread no context knows.
                    m["thread"] = json!("elsewhere");
                    self.misbehaving(&m)?
                } else {
                    // L-ID-3 (core for `from`): a sender nobody bound.
                    let n = self.said.messages.len();
                    m["from"] = json!(STRANGER);
                    m["id"] = json!(format!("{STRANGER}:{n}"));
                    let th = m["thread"].as_str()?.to_owned();
                    let recipients = recipients_of(self, &m);
                    Outgoing {
                        spoofed: false,
                        ..adversary(
                            serde_json::to_vec(&m).ok()?,
                            principal(STRANGER, &th),
                            recipients,
                            STRANGER.to_owned(),
                        )
                    }
                }
            }
            Attack::OtherContext { of } => {
                // The same sender, the same ID, a new message in the other
                // identity context: a key of its own there (L-DUP-1).
                let m = pick(&self.said.messages, of)?;
                let here = m["thread"].as_str()?;
                let there = thread_in(
                    if super::scenario::context_of(here) == "annex" {
                        "plan"
                    } else {
                        "side"
                    },
                    self.epoch,
                );
                let from = m["from"].as_str()?.to_owned();
                let to = self.others(&from, 0xff);
                let fresh = json!({"tern": "0.1", "id": m["id"], "from": from, "to": to, "thread": there,
                                   "reply": null, "act": "ASK", "body": {"question": "Is this the same question?"}});
                self.misbehaving(&fresh)?
            }
            Attack::ReuseId { of } => {
                // The original sender equivocates: same ID, other content.
                // Half reuse the ID of a COMMIT already executed, so that
                // the conflict is revealed after its effect.
                let mut m = match of % 2 {
                    0 if !self.said.executed.is_empty() => pick(&self.said.executed, of / 2)?,
                    _ => pick(&self.said.messages, of)?,
                };
                m["extensions"] = json!({"variant": self.said.messages.len()});
                self.misbehaving(&m)?
            }
            Attack::ForeignRevise { target, by } => {
                let t = pick(&self.said.messages, target)?;
                let owner = t["from"].as_str()?;
                let by = self.person(by);
                if by == owner {
                    return None;
                }
                let id = self.said.next_id(&by);
                let to: Vec<String> = vec![owner.to_owned()];
                let m = json!({"tern": "0.1", "id": id, "from": by, "to": to, "thread": t["thread"], "reply": null, "act": "REVISE",
                               "body": {"target": t["id"], "previous": t["id"], "mode": "withdraw", "replacement": null, "impact": []}});
                self.misbehaving(&m)?
            }
            Attack::ForeignReport { commit, by } => {
                let c = pick_ref(&self.said.all_commitments(), commit)?;
                let author = c["from"].as_str()?;
                let by = self.person(by);
                if by == author {
                    return None;
                }
                let id = self.said.next_id(&by);
                let m = json!({"tern": "0.1", "id": id, "from": by, "to": [author], "thread": c["thread"], "reply": c["id"], "act": "REPORT",
                               "body": {"commitment": c["id"], "state": "fulfilled", "claims": [claim("It is done, trust me.", &[])]}});
                self.misbehaving(&m)?
            }
            Attack::Dangling { from } => {
                let from = self.person(from);
                let to = self.others(&from, 0xff);
                let id = self.said.next_id(&from);
                let m = json!({"tern": "0.1", "id": id, "from": from, "to": to, "thread": self.thread(0),
                               "reply": format!("{from}:never"), "act": "ASK", "body": {"question": "As I said before?"}});
                self.misbehaving(&m)?
            }
            Attack::Boast {
                target,
                pick,
                shape,
            } => self.boast(target, pick, shape)?,
            Attack::Malformed { of, how } => {
                let fitting: Vec<&Value> = self
                    .said
                    .messages
                    .iter()
                    .filter(|m| Malformation::of(how).fits(m))
                    .collect();
                let m = pick_ref(&fitting, of)?;
                // A kind the message cannot be broken by (no claim to break)
                // or that only the profile reads (at core) breaks the body.
                let variant = Malformation::variant_of(how);
                let (kind, frame) =
                    match Malformation::of(how).apply(&m, self.profile_rules, variant) {
                        Some(frame) => (Malformation::of(how), frame),
                        None => (
                            Malformation::DuplicateBodyKey,
                            Malformation::DuplicateBodyKey.apply(&m, self.profile_rules, 0)?,
                        ),
                    };
                let from = m["from"].as_str()?.to_owned();
                let th = m["thread"].as_str()?.to_owned();
                let recipients = recipients_of(self, &m);
                let _ = agents;
                Outgoing {
                    spoofed: false,
                    malformed: Some(kind),
                    ..adversary(frame, principal(&from, &th), recipients, from)
                }
            }
            Attack::Misroute { of, to } => {
                let m = pick(&self.said.messages, of)?;
                let listed = strings(&m["to"]);
                let sender = m["from"].as_str()?.to_owned();
                let strangers: Vec<usize> = (0..self.scenario.agents.len())
                    .filter(|&i| {
                        self.scenario.agents[i] != sender
                            && !listed.contains(&self.scenario.agents[i])
                    })
                    .collect();
                let target = *strangers.get(to as usize % strangers.len().max(1))?;
                let th = m["thread"].as_str()?.to_owned();
                Outgoing {
                    frame: serde_json::to_vec(&m).ok()?,
                    principal: principal(&sender, &th),
                    actor: None,
                    recipients: vec![target],
                    claimed: sender,
                    spoofed: false,
                    malformed: None,
                    boast: None,
                }
            }
            Attack::BadReplacement { target } => {
                let revisable = self.said.of_acts(&["TELL", "REQUEST", "COMMIT", "REPORT"]);
                let t = pick_ref(&revisable, target)?;
                let owner = t["from"].as_str()?.to_owned();
                let to: Vec<String> = strings(&t["to"])
                    .into_iter()
                    .filter(|p| *p != owner)
                    .collect();
                // A body of another act: it cannot replace the target.
                let out = self.message(
                    &owner,
                    to,
                    t["thread"].as_str()?,
                    None,
                    "REVISE",
                    json!({"target": t["id"], "previous": t["id"], "mode": "replace",
                           "replacement": {"question": "What was I saying?"}, "impact": []}),
                    false,
                );
                self.said.messages.pop();
                out
            }
            Attack::ForeignRenewal { commit, by } => {
                let c = pick_ref(&self.said.all_commitments(), commit)?;
                let q = self.said.find(c["body"]["request"].as_str()?)?.clone();
                let requester = q["from"].as_str()?.to_owned();
                let by = self.person(by);
                if by == requester {
                    return None;
                }
                let committer = c["from"].as_str()?.to_owned();
                let out = self.message(
                    &by,
                    vec![committer],
                    c["thread"].as_str()?,
                    None,
                    "REQUEST",
                    json!({"action": "Do it my way.", "done_when": "Done.", "constraints": [],
                           "authority_ref": null, "replaces": c["id"]}),
                    false,
                );
                self.said.messages.pop();
                out
            }
        })
    }
}
