//! The adversarial part of a workload: spoofed, replayed, misrouted,
//! equivocating, foreign and broken frames, each built from what has been
//! said, so that every rule an implementation must hold against a
//! misbehaving sender is met.

use serde_json::{json, Value};
use tern_model::message::{Act, Principal};

use super::{bodies, pick, pick_ref, strings, Outgoing, Resolver, STRANGER};
use crate::catalogue::malformed::Malformation;
use crate::simulator::scenario::{principal, thread_in, ADVERSARY};
use crate::simulator::workload::{claim, Attack};

/// A frame from the adversary, under the given principal: no agent sent
/// it, so none is its actor.
fn adversary(
    frame: Vec<u8>,
    principal: Principal,
    recipients: Vec<usize>,
    claimed: String,
) -> Outgoing {
    Outgoing {
        frame,
        principal,
        actor: None,
        recipients,
        claimed,
        spoofed: true,
        malformed: None,
        boast: None,
    }
}

impl Resolver {
    /// The agents among a message's `to`.
    fn recipients_of(&self, m: &Value) -> Vec<usize> {
        strings(&m["to"])
            .iter()
            .filter_map(|r| self.agent_index(r))
            .collect()
    }

    /// A frame sent by the participant it names, under that participant's
    /// own principal, which the workload must not refer back to: a
    /// misbehaving sender rather than an impostor.
    fn misbehaving(&self, m: &Value) -> Option<Outgoing> {
        let from = m["from"].as_str()?.to_owned();
        let thread = m["thread"].as_str()?;
        Some(self.sent_by(serde_json::to_vec(m).ok()?, from, thread, m))
    }

    /// An adversarial or broken frame.
    pub fn attack(&mut self, a: &Attack) -> Option<Outgoing> {
        Some(match *a {
            Attack::Spoof { of, victim } => self.spoof(of, victim)?,
            Attack::Replay { commit } => {
                let c = pick_ref(&bodies(self.said.all_commitments()), commit)?;
                let mut out = self.misbehaving(&c)?;
                out.recipients.extend(out.actor.take());
                out
            }
            Attack::Stranger { of, thread } => self.stranger(of, thread)?,
            Attack::OtherContext { of } => self.other_context(of)?,
            Attack::ReuseId { of } => {
                // The original sender equivocates: same ID, other content.
                // Half reuse the ID of a COMMIT already executed, so that
                // the conflict is revealed after its effect.
                let mut m = match of % 2 {
                    0 if !self.said.executed.is_empty() => pick(&self.said.executed, of / 2)?,
                    _ => self.said.pick(of)?,
                };
                m["extensions"] = json!({"variant": self.said.messages.len()});
                self.misbehaving(&m)?
            }
            Attack::ForeignRevise { target, by } => self.foreign_revise(target, by)?,
            Attack::ForeignReport { commit, by } => self.foreign_report(commit, by)?,
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
            Attack::Malformed { of, how } => self.malformed(of, how)?,
            Attack::Misroute { of, to } => self.misroute(of, to)?,
            Attack::BadReplacement { target } => self.bad_replacement(target)?,
            Attack::ForeignRenewal { commit, by } => self.foreign_renewal(commit, by)?,
        })
    }

    /// A frame claiming to come from a victim, under the adversary's
    /// credentials.
    fn spoof(&mut self, of: u8, victim: u8) -> Option<Outgoing> {
        // A fresh message claiming to come from a victim, or an old
        // one replayed, under mallory's credentials.
        let thread = self.thread(victim);
        let m = if of % 2 == 0 {
            self.said.pick(of)?
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
        let recipients = self.recipients_of(&m);
        Some(adversary(
            serde_json::to_vec(&m).ok()?,
            principal(ADVERSARY, &th),
            recipients,
            m["from"].as_str()?.to_owned(),
        ))
    }

    /// A message moved to a thread no context knows, or sent by a participant
    /// nobody bound.
    fn stranger(&mut self, of: u8, thread: bool) -> Option<Outgoing> {
        let mut m = self.said.pick(of)?;
        Some(if thread && self.profile_rules {
            // L-ID-2 (profile): a thread no context knows.
            m["thread"] = json!("elsewhere");
            self.misbehaving(&m)?
        } else {
            // L-ID-3 (core for `from`): a sender nobody bound.
            let n = self.said.messages.len();
            m["from"] = json!(STRANGER);
            m["id"] = json!(format!("{STRANGER}:{n}"));
            let th = m["thread"].as_str()?.to_owned();
            let recipients = self.recipients_of(&m);
            Outgoing {
                spoofed: false,
                ..adversary(
                    serde_json::to_vec(&m).ok()?,
                    principal(STRANGER, &th),
                    recipients,
                    STRANGER.to_owned(),
                )
            }
        })
    }

    /// A message's sender and ID reused for a new message in the other identity
    /// context.
    fn other_context(&mut self, of: u8) -> Option<Outgoing> {
        // The same sender, the same ID, a new message in the other
        // identity context: a key of its own there (L-DUP-1).
        let m = self.said.pick(of)?;
        let here = m["thread"].as_str()?;
        let there = thread_in(
            if crate::simulator::scenario::context_of(here) == "annex" {
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
        self.misbehaving(&fresh)
    }

    /// A withdrawal of a message by someone other than its owner.
    fn foreign_revise(&mut self, target: u8, by: u8) -> Option<Outgoing> {
        let t = self.said.pick(target)?;
        let owner = t["from"].as_str()?;
        let by = self.person(by);
        if by == owner {
            return None;
        }
        let id = self.said.next_id(&by);
        let to: Vec<String> = vec![owner.to_owned()];
        let m = json!({"tern": "0.1", "id": id, "from": by, "to": to, "thread": t["thread"], "reply": null, "act": "REVISE",
                       "body": {"target": t["id"], "previous": t["id"], "mode": "withdraw", "replacement": null, "impact": []}});
        self.misbehaving(&m)
    }

    /// A REPORT of a commitment by someone other than its author.
    fn foreign_report(&mut self, commit: u8, by: u8) -> Option<Outgoing> {
        let c = pick_ref(&bodies(self.said.all_commitments()), commit)?;
        let author = c["from"].as_str()?;
        let by = self.person(by);
        if by == author {
            return None;
        }
        let id = self.said.next_id(&by);
        let m = json!({"tern": "0.1", "id": id, "from": by, "to": [author], "thread": c["thread"], "reply": c["id"], "act": "REPORT",
                       "body": {"commitment": c["id"], "state": "fulfilled", "claims": [claim("It is done, trust me.", &[])]}});
        self.misbehaving(&m)
    }

    /// A message that fits the way of breaking it, broken that way (or by a
    /// duplicate body key, where it cannot be).
    fn malformed(&mut self, of: u8, how: u8) -> Option<Outgoing> {
        let fitting: Vec<&Value> = bodies(&self.said.messages)
            .into_iter()
            .filter(|m| Malformation::of(how).fits(m))
            .collect();
        let m = pick_ref(&fitting, of)?;
        // A kind the message cannot be broken by (no claim to break)
        // or that only the profile reads (at core) breaks the body.
        let variant = Malformation::variant_of(how);
        let (kind, frame) = match Malformation::of(how).apply(&m, self.profile_rules, variant) {
            Some(frame) => (Malformation::of(how), frame),
            None => (
                Malformation::DuplicateBodyKey,
                Malformation::DuplicateBodyKey.apply(&m, self.profile_rules, 0)?,
            ),
        };
        let from = m["from"].as_str()?.to_owned();
        let th = m["thread"].as_str()?.to_owned();
        let recipients = self.recipients_of(&m);
        Some(Outgoing {
            spoofed: false,
            malformed: Some(kind),
            ..adversary(frame, principal(&from, &th), recipients, from)
        })
    }

    /// A message sent to an agent its `to` does not name.
    fn misroute(&mut self, of: u8, to: u8) -> Option<Outgoing> {
        let m = self.said.pick(of)?;
        let listed = strings(&m["to"]);
        let sender = m["from"].as_str()?.to_owned();
        let strangers: Vec<usize> = (0..self.scenario.agents.len())
            .filter(|&i| {
                self.scenario.agents[i] != sender && !listed.contains(&self.scenario.agents[i])
            })
            .collect();
        let target = *strangers.get(to as usize % strangers.len().max(1))?;
        let th = m["thread"].as_str()?.to_owned();
        Some(Outgoing {
            frame: serde_json::to_vec(&m).ok()?,
            principal: principal(&sender, &th),
            actor: None,
            recipients: vec![target],
            claimed: sender,
            spoofed: false,
            malformed: None,
            boast: None,
        })
    }

    /// A REVISE whose replacement is the body of another act; not remembered as
    /// said.
    fn bad_replacement(&mut self, target: u8) -> Option<Outgoing> {
        let revisable = self
            .said
            .of_acts(&[Act::Tell, Act::Request, Act::Commit, Act::Report]);
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
        Some(out)
    }

    /// A request to replace a commitment by someone other than its requester;
    /// not remembered as said.
    fn foreign_renewal(&mut self, commit: u8, by: u8) -> Option<Outgoing> {
        let c = pick_ref(&bodies(self.said.all_commitments()), commit)?;
        let q = self
            .said
            .find(c["body"]["request"].as_str()?)?
            .message
            .clone();
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
        Some(out)
    }
}
