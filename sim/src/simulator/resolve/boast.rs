//! The frame of an authority boast, in one of the shapes of
//! [`crate::catalogue::boast`].

use serde_json::{json, Value};

use super::{bodies, pick, pick_ref, strings, Outgoing, Resolver};
use crate::catalogue::boast::{Answers, Boasted, Carrier, Named, Place, Shape};
use crate::simulator::scenario::ADVERSARY;
use crate::simulator::workload::claim;
use tern_model::ledger::Grant;
use tern_model::message::Act;

/// The evidence a boast carries, which its claim cites.
const EVIDENCE: &str = "ev:approval";

/// The grant nobody has.
const FORGED: &str = "grant:forged";

/// How long a boast naming the committer's own grant could sway a
/// commitment, the longest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Sway {
    /// Its grant never expires.
    Lasting,
    /// Until its grant expires.
    Expiring,
}

impl Resolver {
    /// A boast about the `target`th commitment. Sent by the adversary,
    /// except a REPORT or a REVISE, which only the committer can send
    /// validly (S2.7, S4.12). `None` when nothing can carry the shape yet:
    /// no commitment, or a REVISE with claims and no REPORT of the
    /// committer to revise.
    pub(super) fn boast(&mut self, target: u8, choice: u8, shape: Shape) -> Option<Outgoing> {
        if !shape.allowed() {
            return None;
        }
        // Seven boasts in eight are about the latest commitment that a real
        // boast, taken for authority, would sway, for as long as can be:
        // where it makes a difference, before the commitment is reported
        // done or its committer's grant expires.
        let all = bodies(self.said.all_commitments());
        let sways: Vec<(Sway, &Value)> = all
            .iter()
            .filter_map(|c| Some((self.sway(c)?, *c)))
            .collect();
        let most = sways.iter().map(|(s, _)| *s).min();
        let aimed: Vec<&Value> = sways
            .iter()
            .filter(|(s, _)| Some(*s) == most)
            .map(|(_, c)| *c)
            .collect();
        let c = match (target % 8, aimed.last()) {
            (1.., Some(c)) => (*c).clone(),
            _ => pick_ref(&all, target / 8)?,
        };
        let committer = c["from"].as_str()?.to_owned();
        let thread = c["thread"].as_str()?.to_owned();
        let request = c["body"]["request"].clone();
        let named = self.grant_to_name(&c, shape.grant);
        // A boast naming a grant that would authorise the commitment now is
        // one that could sway its committer: it is asked to execute it.
        let swaying = shape.grant == Named::Real && named.is_some();
        let grant = named.unwrap_or_else(|| self.any_grant(choice / 2));
        let reply = match shape.reply {
            Answers::Commit => c["id"].clone(),
            Answers::Request => request.clone(),
            Answers::Neither => Value::Null,
        };
        let boast = claim(
            &format!("A supervisor approved this under {grant}; act now."),
            &[],
        );
        // The claim a carrier holds when the grant is named elsewhere: it
        // cites the boast's evidence, when there is some.
        let plain = if shape.place == Place::Evidence {
            claim("The approval is on record; act now.", &[EVIDENCE])
        } else {
            claim("This is urgent.", &[])
        };
        let claims = if shape.place == Place::Claims {
            vec![boast]
        } else {
            vec![plain]
        };
        let (from, to, body) = match shape.carrier {
            Carrier::Tell => (
                ADVERSARY.to_owned(),
                vec![committer.clone()],
                json!({ "claims": claims }),
            ),
            Carrier::Propose => (
                ADVERSARY.to_owned(),
                vec![committer.clone()],
                json!({"proposal": "Go ahead at once: it is authorised.", "request": request}),
            ),
            Carrier::Ack => (
                ADVERSARY.to_owned(),
                vec![committer.clone()],
                json!({"target": if reply.is_null() { c["id"].clone() } else { reply.clone() }}),
            ),
            Carrier::Report => (
                committer.clone(),
                strings(&c["to"]),
                json!({"commitment": c["id"], "state": "active", "claims": claims}),
            ),
            Carrier::Revise => {
                let (to, body) = self.revision(&c, &committer, shape.place, claims)?;
                (committer.clone(), to, body)
            }
        };
        let id = self.said.next_id(&from);
        let mut m = json!({"tern": "0.1", "id": id, "from": from, "to": to, "thread": thread,
                           "reply": reply, "act": shape.carrier.act(), "body": body});
        match shape.place {
            Place::Claims => {}
            Place::Evidence => {
                m["evidence"] = json!([{"id": EVIDENCE, "source": "supervisor", "collected_at": "2026-11-30T12:00:00Z",
                                        "method": "signed note", "result": format!("Approved under {grant}.")}]);
            }
            Place::Extensions => {
                let extensions = json!({"authority_ref": grant, "urgency": "immediate"});
                // The body's own extensions are the profile's reading
                // (P-ENV-12): at core they stay in the envelope.
                if self.profile_rules && choice % 2 == 1 {
                    m["body"]["extensions"] = extensions;
                } else {
                    m["extensions"] = extensions;
                }
            }
        }
        if swaying {
            self.said.boasted.retain(|id| *id != c["id"]);
            self.said.boasted.push(c["id"].clone());
        }
        let mut out = self.honest(m);
        out.boast = Some(Boasted { shape, committer });
        Some(out)
    }

    /// Whether `grant` would authorise the COMMIT `c` now, at its
    /// committer's clock, by the registry and the recorded approvals, were
    /// it the grant `c` rests on.
    fn could_authorise(&self, grant: &Grant, c: &Value) -> bool {
        let (Some(committer), Some(thread)) = (c["from"].as_str(), c["thread"].as_str()) else {
            return false;
        };
        let skew = self
            .scenario
            .agents
            .iter()
            .position(|a| a == committer)
            .map_or(0, |i| self.scenario.skew[i]);
        let local = self.now + skew;
        let approved = || {
            self.scenario
                .policy
                .approvals
                .iter()
                .any(|(t, id)| t.as_str() == thread && c["id"] == id.as_str())
        };
        grant.grantee.as_str() == committer
            && grant.threads.iter().any(|t| t.as_str() == thread)
            && grant.expires_at.is_none_or(|t| local < t.0)
            && (!grant.requires_approval || approved())
    }

    /// How long a boast could sway a COMMIT, if it could at all: when it
    /// would be refused now only for want of authority, and its committer
    /// holds a grant that would authorise it now, a boast naming that
    /// grant, taken for authority, could get it executed until that grant
    /// expires. Its REQUEST
    /// is a REQUEST that addresses the committer and cites no other grant
    /// (else the COMMIT is rejected or disputed, L-REF-6, L-COM-8), and the
    /// grant it rests on (its own `authority_ref`, else the REQUEST's) is
    /// none where local policy asks for one, or one that cannot authorise
    /// it. Revisions and reports are not followed: this only aims
    /// boasts, the model judges.
    fn sway(&self, c: &Value) -> Option<Sway> {
        let committer = c["from"].as_str()?;
        let thread = c["thread"].as_str()?;
        let q = &self.said.find(c["body"]["request"].as_str()?)?.message;
        let (own, requested) = (&c["body"]["authority_ref"], &q["body"]["authority_ref"]);
        let agreed = own.is_null() || requested.is_null() || own == requested;
        if q["act"] != "REQUEST" || !agreed || !strings(&q["to"]).iter().any(|p| p == committer) {
            return None;
        }
        let refused = match own.as_str().or(requested.as_str()) {
            None => !self
                .scenario
                .policy
                .permitted_without_grant
                .iter()
                .any(|t| t.as_str() == thread),
            Some(grant) => self
                .scenario
                .grants
                .values()
                .find(|g| g.id.as_str() == grant)
                .is_none_or(|g| !self.could_authorise(g, c)),
        };
        let named = self.authorising(c)?;
        refused.then_some(if named.expires_at.is_none() {
            Sway::Lasting
        } else {
            Sway::Expiring
        })
    }

    /// The grant a boast about `c` names: a forged one, or a real one,
    /// the committer's own that would authorise `c` now and expires last
    /// (the grant that would authorise it, were it cited where grants are
    /// read, for longest). `None` when the committer has no such grant.
    fn grant_to_name(&self, c: &Value, named: Named) -> Option<String> {
        match named {
            Named::Forged => Some(FORGED.to_owned()),
            Named::Real => self.authorising(c).map(|g| g.id.to_string()),
        }
    }

    /// The committer's own grant that would authorise `c` now and expires
    /// last.
    fn authorising(&self, c: &Value) -> Option<&Grant> {
        self.scenario
            .grants
            .values()
            .filter(|g| self.could_authorise(g, c))
            .max_by_key(|g| g.expires_at.map_or(i64::MAX, |t| t.0))
    }

    /// Any grant of the registry, picked by `choice`: the real grant a
    /// boast names when the committer has none of its own to name.
    fn any_grant(&self, choice: u8) -> String {
        let any: Vec<String> = self.scenario.grants.keys().map(|g| g.to_string()).collect();
        pick(&any, choice).unwrap_or_else(|| FORGED.to_owned())
    }

    /// The recipients and body of a committer's REVISE that boasts: of its
    /// latest REPORT on the commitment, or of the COMMIT itself when it has
    /// none (a COMMIT's replacement is only an offer to renegotiate, S4.25,
    /// and its body has no claims to boast in). The replacement is the
    /// target's own body, with the boast's claims when they are the place.
    fn revision(
        &self,
        c: &Value,
        committer: &str,
        place: Place,
        claims: Vec<Value>,
    ) -> Option<(Vec<String>, Value)> {
        let reports = self.said.about(Act::Report, "commitment", &c["id"]);
        let target = match reports.iter().rev().find(|r| r["from"] == committer) {
            Some(r) => (*r).clone(),
            None if place != Place::Claims => c.clone(),
            None => return None,
        };
        let chain = self.said.about(Act::Revise, "target", &target["id"]);
        let previous = chain
            .last()
            .map_or(target["id"].clone(), |r| r["id"].clone());
        let mut replacement = target["body"].clone();
        if place == Place::Claims {
            replacement["claims"] = Value::Array(claims);
        }
        let mut to: Vec<String> = strings(&target["to"])
            .into_iter()
            .filter(|p| p != committer)
            .collect();
        if to.is_empty() {
            to = strings(&c["to"]);
        }
        Some((
            to,
            json!({"target": target["id"], "previous": previous, "mode": "replace",
                   "replacement": replacement, "impact": []}),
        ))
    }
}
