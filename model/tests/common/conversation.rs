//! Generated conversations for ledger properties: several participants, all
//! acts, revisions with competing successors, spoofs, ID conflicts, grants
//! that expire. A conversation is a list of moves that a deterministic builder
//! turns into frames, so proptest shrinks moves, not bytes.

use proptest::prelude::*;
use serde_json::{json, Value};
use tern_model::message::Principal;

use super::kit::{claim, PEOPLE};

const THREADS: [&str; 3] = ["design", "ops", "other"];
const GRANTS: [Option<&str>; 5] = [
    None,
    Some("grant:review"),
    Some("grant:forever"),
    Some("grant:editor"),
    Some("grant:human"),
];
const STATES: [&str; 4] = ["active", "blocked", "fulfilled", "failed"];

/// The `i`th participant, cyclically.
fn person(i: u8) -> &'static str {
    PEOPLE[i as usize % PEOPLE.len()]
}

/// The `i`th thread, cyclically.
fn thread(i: u8) -> &'static str {
    THREADS[i as usize % THREADS.len()]
}

#[derive(Debug, Clone)]
pub enum Move {
    Ask {
        from: u8,
        thread: u8,
    },
    Tell {
        from: u8,
        thread: u8,
        reply: Option<u8>,
    },
    Propose {
        from: u8,
        request: u8,
    },
    Request {
        from: u8,
        to: u8,
        thread: u8,
        grant: u8,
        replaces: Option<u8>,
    },
    Commit {
        from: u8,
        request: u8,
        grant: u8,
    },
    Report {
        commit: u8,
        state: u8,
        reply: Option<u8>,
        by_other: bool,
    },
    Revise {
        target: u8,
        previous: Option<u8>,
        withdraw: bool,
        foreign: bool,
    },
    Ack {
        from: u8,
        target: u8,
    },
    Challenge {
        from: u8,
        target: u8,
    },
    /// Resend an earlier frame as it was.
    Duplicate {
        of: u8,
    },
    /// Reuse an earlier frame's ID with other content.
    Conflict {
        of: u8,
    },
    /// Send an earlier frame under another principal.
    Spoof {
        of: u8,
        as_who: u8,
    },
    /// A frame that is not valid Tern.
    Garbage {
        kind: u8,
    },
}

pub fn moves(max: usize) -> impl Strategy<Value = Vec<Move>> {
    let m = prop_oneof![
        1 => (any::<u8>(), any::<u8>()).prop_map(|(from, thread)| Move::Ask { from, thread }),
        1 => (any::<u8>(), any::<u8>(), proptest::option::of(any::<u8>()))
            .prop_map(|(from, thread, reply)| Move::Tell { from, thread, reply }),
        1 => (any::<u8>(), any::<u8>()).prop_map(|(from, request)| Move::Propose { from, request }),
        4 => (any::<u8>(), any::<u8>(), any::<u8>(), any::<u8>(), proptest::option::weighted(0.2, any::<u8>()))
            .prop_map(|(from, to, thread, grant, replaces)| Move::Request { from, to, thread, grant, replaces }),
        4 => (any::<u8>(), any::<u8>(), any::<u8>()).prop_map(|(from, request, grant)| Move::Commit { from, request, grant }),
        4 => (any::<u8>(), any::<u8>(), proptest::option::of(any::<u8>()), proptest::bool::weighted(0.1))
            .prop_map(|(commit, state, reply, by_other)| Move::Report { commit, state, reply, by_other }),
        3 => (any::<u8>(), proptest::option::of(any::<u8>()), any::<bool>(), proptest::bool::weighted(0.1))
            .prop_map(|(target, previous, withdraw, foreign)| Move::Revise { target, previous, withdraw, foreign }),
        1 => (any::<u8>(), any::<u8>()).prop_map(|(from, target)| Move::Ack { from, target }),
        1 => (any::<u8>(), any::<u8>()).prop_map(|(from, target)| Move::Challenge { from, target }),
        1 => any::<u8>().prop_map(|of| Move::Duplicate { of }),
        1 => any::<u8>().prop_map(|of| Move::Conflict { of }),
        1 => (any::<u8>(), any::<u8>()).prop_map(|(of, as_who)| Move::Spoof { of, as_who }),
        1 => any::<u8>().prop_map(|kind| Move::Garbage { kind }),
    ];
    proptest::collection::vec(m, 1..max)
}

/// One frame as sent: bytes and the principal the transport authenticated.
#[derive(Debug, Clone)]
pub struct Sent {
    pub bytes: Vec<u8>,
    pub principal: Principal,
    /// The JSON, for frames that are messages.
    pub value: Option<Value>,
}

fn pick<T: Clone>(items: &[T], i: u8) -> Option<T> {
    (!items.is_empty()).then(|| items[i as usize % items.len()].clone())
}

fn honest(from: &str, thread: &str) -> Principal {
    let suffix = if thread == "other" { "-2" } else { "" };
    Principal::new(format!("pk-{from}{suffix}")).unwrap()
}

/// Builds the frames of a conversation.
pub fn build(moves: &[Move]) -> Vec<Sent> {
    let mut b = Builder::default();
    for m in moves {
        b.apply(m);
    }
    b.sent
}

#[derive(Default)]
struct Builder {
    sent: Vec<Sent>,
    messages: Vec<Value>,
    counter: std::collections::BTreeMap<String, u32>,
}

impl Builder {
    fn next_id(&mut self, from: &str) -> String {
        let n = self.counter.entry(from.to_owned()).or_default();
        *n += 1;
        format!("{from}:{n}")
    }

    fn of_act(&self, act: &str) -> Vec<Value> {
        self.messages
            .iter()
            .filter(|m| m["act"] == act)
            .cloned()
            .collect()
    }

    fn push(&mut self, v: Value) {
        let from = v["from"].as_str().unwrap().to_owned();
        let thread = v["thread"].as_str().unwrap().to_owned();
        self.sent.push(Sent {
            bytes: serde_json::to_vec(&v).unwrap(),
            principal: honest(&from, &thread),
            value: Some(v.clone()),
        });
        self.messages.push(v);
    }

    fn message(
        &mut self,
        from: &str,
        to: Vec<String>,
        thread: &str,
        reply: Option<String>,
        act: &str,
        body: Value,
    ) {
        let id = self.next_id(from);
        let to: Vec<String> = if to.is_empty() {
            vec![PEOPLE.iter().find(|p| **p != from).unwrap().to_string()]
        } else {
            to
        };
        self.push(
            json!({"tern": "0.1", "id": id, "from": from, "to": to, "thread": thread,
                         "reply": reply, "act": act, "body": body}),
        );
    }

    fn others(from: &str, mask: u8) -> Vec<String> {
        PEOPLE
            .iter()
            .enumerate()
            .filter(|(i, p)| **p != from && (mask >> i) & 1 == 1)
            .map(|(_, p)| p.to_string())
            .collect()
    }

    fn apply(&mut self, m: &Move) {
        match *m {
            Move::Ask { from, thread: t } => {
                let from = person(from);
                self.message(
                    from,
                    Self::others(from, 0b1111),
                    thread(t),
                    None,
                    "ASK",
                    json!({"question": "Which part first?"}),
                );
            }
            Move::Tell {
                from,
                thread: t,
                reply,
            } => {
                let from = person(from);
                let reply_to = reply.and_then(|r| pick(&self.messages, r));
                let t = reply_to.as_ref().map_or(thread(t).to_owned(), |r| {
                    r["thread"].as_str().unwrap().to_owned()
                });
                let reply = reply_to.map(|r| r["id"].as_str().unwrap().to_owned());
                self.message(
                    from,
                    Self::others(from, 0b1111),
                    &t,
                    reply,
                    "TELL",
                    json!({"claims": [claim("It is so")]}),
                );
            }
            Move::Propose { from, request } => {
                let Some(q) = pick(&self.of_act("REQUEST"), request) else {
                    return;
                };
                let from = person(from);
                self.message(
                    from,
                    Self::others(from, 0b1111),
                    q["thread"].as_str().unwrap(),
                    None,
                    "PROPOSE",
                    json!({"proposal": "Friday instead", "request": q["id"]}),
                );
            }
            Move::Request {
                from,
                to,
                thread: t,
                grant,
                replaces,
            } => {
                let from = person(from);
                let mut body = json!({"action": "Do it", "done_when": "Done", "constraints": [],
                                      "authority_ref": GRANTS[grant as usize % GRANTS.len()]});
                let mut t = thread(t).to_owned();
                if let Some(c) = replaces.and_then(|r| pick(&self.of_act("COMMIT"), r)) {
                    body["replaces"] = c["id"].clone();
                    t = c["thread"].as_str().unwrap().to_owned();
                }
                self.message(from, Self::others(from, to), &t, None, "REQUEST", body);
            }
            Move::Commit {
                from,
                request,
                grant,
            } => self.commit(from, request, grant),
            Move::Report {
                commit,
                state,
                reply,
                by_other,
            } => self.report(commit, state, reply, by_other),
            Move::Revise {
                target,
                previous,
                withdraw,
                foreign,
            } => self.revise(target, previous, withdraw, foreign),
            Move::Ack { from, target } => self.ack_or_challenge(from, target, true),
            Move::Challenge { from, target } => self.ack_or_challenge(from, target, false),
            Move::Duplicate { of } => {
                if let Some(s) = pick(&self.sent, of) {
                    self.sent.push(s);
                }
            }
            Move::Conflict { of } => {
                let Some(mut v) = pick(&self.messages, of) else {
                    return;
                };
                v["extensions"] = json!({"variant": self.sent.len()});
                self.push(v);
            }
            Move::Spoof { of, as_who } => {
                let Some(mut s) = pick(&self.sent, of) else {
                    return;
                };
                s.principal = Principal::new(format!("pk-{}", person(as_who))).unwrap();
                self.sent.push(s);
            }
            Move::Garbage { kind } => {
                let bytes = match kind % 4 {
                    0 => b"{\"tern\":\"0.1\",\"tern\":\"0.1\"}".to_vec(),
                    1 => b"{\"tern\":\"0.1\",\"n\":1e999}".to_vec(),
                    2 => vec![0xff, 0xfe, b'{'],
                    _ => b"{\"tern\":\"0.1\",\"id\":\"drafter:1\"".to_vec(),
                };
                self.sent.push(Sent {
                    bytes,
                    principal: honest("drafter", "design"),
                    value: None,
                });
            }
        }
    }

    /// A COMMIT to a REQUEST, usually by one of its addressees.
    fn commit(&mut self, from: u8, request: u8, grant: u8) {
        let Some(q) = pick(&self.of_act("REQUEST"), request) else {
            return;
        };
        // Usually an addressee commits; sometimes anyone.
        let addressees: Vec<String> = q["to"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect();
        let from = if from % 5 == 0 {
            person(from).to_owned()
        } else {
            addressees[from as usize % addressees.len()].clone()
        };
        let requester = q["from"].as_str().unwrap().to_owned();
        self.message(&from, vec![requester], q["thread"].as_str().unwrap(), Some(q["id"].as_str().unwrap().to_owned()), "COMMIT",
            json!({"request": q["id"], "action": "Do it", "deliverable": "It", "done_when": "Done",
                   "due": null, "conditions": [], "authority_ref": GRANTS[grant as usize % GRANTS.len()]}));
    }

    /// A REPORT on a commitment, by its author or (`by_other`) someone else.
    fn report(&mut self, commit: u8, state: u8, reply: Option<u8>, by_other: bool) {
        let Some(c) = pick(&self.of_act("COMMIT"), commit) else {
            return;
        };
        let author = c["from"].as_str().unwrap().to_owned();
        let from = if by_other {
            PEOPLE.iter().find(|p| **p != author).unwrap().to_string()
        } else {
            author
        };
        let t = c["thread"].as_str().unwrap().to_owned();
        let earlier: Vec<Value> = self
            .of_act("REPORT")
            .into_iter()
            .filter(|r| r["body"]["commitment"] == c["id"])
            .collect();
        let reply = reply
            .and_then(|r| pick(&earlier, r))
            .map_or(c["id"].clone(), |r| r["id"].clone());
        let to = vec![c["to"][0].as_str().unwrap().to_owned()];
        let state = STATES[state as usize % STATES.len()];
        self.message(
            &from,
            to,
            &t,
            reply.as_str().map(str::to_owned),
            "REPORT",
            json!({"commitment": c["id"], "state": state, "claims": [claim("Progress")]}),
        );
    }

    /// A REVISE of a revisable message, by its owner or (`foreign`) someone
    /// else.
    fn revise(&mut self, target: u8, previous: Option<u8>, withdraw: bool, foreign: bool) {
        let revisable: Vec<Value> = self
            .messages
            .iter()
            .filter(|m| {
                ["TELL", "PROPOSE", "REQUEST", "COMMIT", "REPORT"]
                    .contains(&m["act"].as_str().unwrap())
            })
            .cloned()
            .collect();
        let Some(t) = pick(&revisable, target) else {
            return;
        };
        let owner = t["from"].as_str().unwrap().to_owned();
        let from = if foreign {
            PEOPLE.iter().find(|p| **p != owner).unwrap().to_string()
        } else {
            owner.clone()
        };
        let chain: Vec<Value> = self
            .of_act("REVISE")
            .into_iter()
            .filter(|r| r["body"]["target"] == t["id"])
            .collect();
        let previous = previous
            .and_then(|p| pick(&chain, p))
            .map_or(t["id"].clone(), |p| p["id"].clone());
        let (mode, replacement) = if withdraw {
            ("withdraw", Value::Null)
        } else {
            ("replace", t["body"].clone())
        };
        let to: Vec<String> = t["to"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .filter(|p| *p != from)
            .collect();
        self.message(&from, to, t["thread"].as_str().unwrap(), None, "REVISE",
            json!({"target": t["id"], "previous": previous, "mode": mode, "replacement": replacement, "impact": []}));
    }

    /// An ACK (`ack`) or a CHALLENGE of a message, to its sender.
    fn ack_or_challenge(&mut self, from: u8, target: u8, ack: bool) {
        let Some(t) = pick(&self.messages, target) else {
            return;
        };
        let from = person(from);
        let to = vec![t["from"].as_str().unwrap().to_owned()]
            .into_iter()
            .filter(|p| p != from)
            .collect();
        let (act, body) = if ack {
            ("ACK", json!({"target": t["id"]}))
        } else {
            (
                "CHALLENGE",
                json!({"target": t["id"], "kind": "factual", "reason": "Doubtful", "claims": []}),
            )
        };
        self.message(
            from,
            to,
            t["thread"].as_str().unwrap(),
            Some(t["id"].as_str().unwrap().to_owned()),
            act,
            body,
        );
    }
}

/// Every COMMIT ID the frames name, with its thread, sorted and without
/// repeats: what the execution checks of the ledger tests try.
pub fn commitments(frames: &[Sent]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = frames
        .iter()
        .filter_map(|s| s.value.as_ref())
        .filter(|v| v["act"] == "COMMIT")
        .map(|v| {
            (
                v["thread"].as_str().unwrap_or_default().to_owned(),
                v["id"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// A deterministic permutation of `frames` from `seed`.
pub fn shuffled(frames: &[Sent], seed: u64) -> Vec<Sent> {
    let mut out = frames.to_vec();
    let mut state = seed | 1;
    for i in (1..out.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        out.swap(i, (state % (i as u64 + 1)) as usize);
    }
    out
}

/// Every participant's point of view, and the open one (`None`).
pub fn viewers() -> Vec<Option<&'static str>> {
    let mut v: Vec<Option<&str>> = super::kit::PEOPLE.iter().map(|p| Some(*p)).collect();
    v.push(None);
    v
}
