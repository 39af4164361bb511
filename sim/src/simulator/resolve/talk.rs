//! The honest part of a workload: each kind of talk turned into a frame
//! that answers, follows or revises what has been said, as a participant
//! of the run would send it. One helper per act whose choices take more
//! than a few lines.

use serde_json::{json, Value};
use tern_model::message::Act;

use super::{pick, pick_ref, strings, Outgoing, Resolver};
use crate::simulator::scenario::{thread_in, THREADS};
use crate::simulator::workload::{claim, Talk};

impl Resolver {
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
                let reply_to = reply.and_then(|r| self.said.pick(r));
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
                let q = pick_ref(&self.said.of_act(Act::Request), request)?;
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
                thread,
                grant,
            } => self.talk_request(from, to, thread, grant)?,
            Talk::Commit {
                from,
                request,
                grant,
            } => self.talk_commit(from, request, grant)?,
            Talk::Report {
                commit,
                state,
                follow,
                evidence,
            } => self.talk_report(commit, state, follow, evidence)?,
            Talk::Revise {
                target,
                previous,
                withdraw,
            } => self.talk_revise(target, previous, withdraw)?,
            Talk::Ack { from, target } | Talk::Challenge { from, target } => {
                let m = self.said.pick(target)?;
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
                let c = pick_ref(&self.said.of_act(Act::Commit), commit)?;
                let q = self
                    .said
                    .find(c["body"]["request"].as_str()?)?
                    .message
                    .clone();
                let requester = q["from"].as_str()?.to_owned();
                self.agent_index(&requester)?;
                let committer = c["from"].as_str()?.to_owned();
                self.message(&requester, vec![committer], c["thread"].as_str()?, None, "REQUEST",
                    json!({"action": "Prepare the release notes, shorter.", "done_when": "The notes are published.",
                           "constraints": [], "authority_ref": q["body"]["authority_ref"], "replaces": c["id"]}), false)
            }
        })
    }

    /// A REQUEST to some of the others, citing a grant, no grant or the forged
    /// one.
    fn talk_request(&mut self, from: u8, to: u8, th: u8, grant: u8) -> Option<Outgoing> {
        let epoch = self.epoch;
        let thread = |i: u8| thread_in(THREADS[i as usize % THREADS.len()], epoch);
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
        Some(self.message(
            &from,
            to,
            &thread(th),
            None,
            "REQUEST",
            json!({"action": "Prepare the release notes.", "done_when": "The notes are published.",
                   "constraints": ["Do not change the code."], "authority_ref": grant}),
            false,
        ))
    }

    /// A COMMIT answering a REQUEST (now and then another act), usually by one
    /// of its addressees.
    fn talk_commit(&mut self, from: u8, request: u8, grant: u8) -> Option<Outgoing> {
        // One in thirteen answers a PROPOSE or TELL as if it were the
        // REQUEST: a COMMIT its own author's receiver rejects (a
        // reference to the wrong act, L-REF-6), which that author
        // may then be asked to execute.
        let misread = request % 13 == 4;
        let requests = if misread {
            Some(self.said.of_acts(&[Act::Propose, Act::Tell]))
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| self.said.of_act(Act::Request))
        } else {
            self.said.of_act(Act::Request)
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
            .filter(|g| g.grantee.as_str() == from && g.threads.iter().any(|t| t.as_str() == th))
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
        Some(self.message(&from, vec![requester], q["thread"].as_str()?, q["id"].as_str().map(str::to_owned), "COMMIT",
            json!({"request": q["id"], "action": "Prepare the release notes.", "deliverable": "Release notes",
                   "done_when": "The notes are published.", "due": null, "conditions": [], "authority_ref": grant}), false))
    }

    /// A REPORT on a commitment by its author, following an earlier one or the
    /// COMMIT.
    fn talk_report(
        &mut self,
        commit: u8,
        state: u8,
        follow: Option<u8>,
        evidence: bool,
    ) -> Option<Outgoing> {
        let c = pick_ref(&self.said.of_act(Act::Commit), commit)?;
        let author = c["from"].as_str()?.to_owned();
        let earlier = self.said.about(Act::Report, "commitment", &c["id"]);
        let reply = follow
            .and_then(|f| pick_ref(&earlier, f))
            .map_or(c["id"].clone(), |r| r["id"].clone());
        let state = ["active", "blocked", "fulfilled", "failed"][state as usize % 4];
        let to = strings(&c["to"]);
        let cites: &[&str] = if evidence { &["ev:log"] } else { &[] };
        Some(self.message(&author, to, c["thread"].as_str()?, reply.as_str().map(str::to_owned), "REPORT",
            json!({"commitment": c["id"], "state": state, "claims": [claim("Work is under way.", cites)]}), evidence))
    }

    /// A REVISE by a message's owner: a replacement or a withdrawal, now and
    /// then of an act that cannot be revised or of a COMMIT already executed.
    fn talk_revise(
        &mut self,
        target: u8,
        previous: Option<u8>,
        withdraw: bool,
    ) -> Option<Outgoing> {
        // One in eleven targets an act that cannot be revised (an
        // ASK, ACK, CHALLENGE or REVISE: L-REV-2); three in eleven
        // a COMMIT, so that revision conflicts meet executions.
        let any_revisable = || {
            self.said.of_acts(&[
                Act::Tell,
                Act::Propose,
                Act::Request,
                Act::Commit,
                Act::Report,
            ])
        };
        // Two of those three pick a COMMIT already executed and
        // names the original as `previous`: a second such REVISE
        // competes with the first, so a conflict is revealed after
        // the effect.
        let executed = matches!(target % 11, 1 | 2) && !self.said.executed.is_empty();
        let revisable = match target % 11 {
            0 => self
                .said
                .of_acts(&[Act::Ask, Act::Ack, Act::Challenge, Act::Revise]),
            1 | 2 if executed => self.said.executed.iter().collect(),
            1..=3 => Some(self.said.of_act(Act::Commit))
                .filter(|c| !c.is_empty())
                .unwrap_or_else(any_revisable),
            _ => any_revisable(),
        };
        let t = pick_ref(&revisable, if executed { target / 11 } else { target })?;
        let owner = t["from"].as_str()?.to_owned();
        let chain = self.said.about(Act::Revise, "target", &t["id"]);
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
        Some(self.message(&owner, to, t["thread"].as_str()?, None, "REVISE",
            json!({"target": t["id"], "previous": previous, "mode": mode, "replacement": replacement, "impact": []}), false))
    }
}
