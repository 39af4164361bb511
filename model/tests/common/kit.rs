//! A small world for ledger tests: two identity contexts, four participants,
//! and builders for frames of every act.

use serde_json::{json, Value};
use tern_model::ledger::{
    Contexts, Event, EventKind, Execution, Grant, IdentityContext, Ledger, LedgerConfig, LocalTime,
    Outcome, Policy, RejectClass, Viewer,
};
use tern_model::message::{ContextName, GrantRef, MessageRef, Participant, Principal, ThreadId};

pub const PEOPLE: [&str; 4] = ["drafter", "reviewer", "editor", "mallory"];

pub fn principal(name: &str) -> Principal {
    Principal::new(format!("pk-{name}")).unwrap()
}

pub fn thread(name: &str) -> ThreadId {
    ThreadId::new(name).unwrap()
}

pub fn mref(s: &str) -> MessageRef {
    MessageRef::new(s).unwrap()
}

/// Threads `design` and `ops` share context `c1`; thread `other` is in `c2`,
/// where the same names are bound to other principals.
pub fn config(viewer: Option<&str>) -> LedgerConfig {
    let bind = |suffix: &str| IdentityContext {
        bindings: PEOPLE
            .iter()
            .map(|p| {
                (
                    Participant::new(*p).unwrap(),
                    Principal::new(format!("pk-{p}{suffix}")).unwrap(),
                )
            })
            .collect(),
    };
    let mut grants = std::collections::BTreeMap::new();
    let mut grant =
        |id: &str, grantee: &str, threads: &[&str], expires: Option<i64>, approval: bool| {
            grants.insert(
                GrantRef::new(id).unwrap(),
                Grant {
                    id: GrantRef::new(id).unwrap(),
                    grantee: Participant::new(grantee).unwrap(),
                    threads: threads.iter().map(|t| thread(t)).collect(),
                    expires_at: expires.map(LocalTime),
                    requires_approval: approval,
                },
            );
        };
    grant("grant:review", "reviewer", &["design"], Some(10_000), false);
    grant("grant:forever", "reviewer", &["design", "ops"], None, false);
    grant("grant:editor", "editor", &["design"], None, false);
    grant("grant:human", "reviewer", &["design"], None, true);
    LedgerConfig {
        viewer: viewer.map_or(Viewer::Auditor, |v| {
            Viewer::Participant(Participant::new(v).unwrap())
        }),
        contexts: Contexts::Fixed {
            contexts: [
                (ContextName::new("c1").unwrap(), bind("")),
                (ContextName::new("c2").unwrap(), bind("-2")),
            ]
            .into_iter()
            .collect(),
            threads: [("design", "c1"), ("ops", "c1"), ("other", "c2")]
                .into_iter()
                .map(|(t, c)| (thread(t), ContextName::new(c).unwrap()))
                .collect(),
        },
        grants,
        policy: Policy {
            permitted_without_grant: [thread("ops")].into_iter().collect(),
            approval_required: Default::default(),
            approvals: Default::default(),
        },
    }
}

/// A frame of `act` from the sender of `id` to `to`, in `thread`.
pub fn frame(
    id: &str,
    to: &[&str],
    thread: &str,
    reply: Option<&str>,
    act: &str,
    body: Value,
) -> Value {
    let from = id.split(':').next().unwrap();
    json!({"tern": "0.1", "id": id, "from": from, "to": to, "thread": thread,
           "reply": reply, "act": act, "body": body})
}

pub fn claim(text: &str) -> Value {
    json!({"text": text, "basis": "observed", "confidence": "high", "scope": "here",
           "evidence": [], "alternatives": []})
}

pub fn request(id: &str, to: &[&str], thread: &str, authority: Option<&str>) -> Value {
    frame(
        id,
        to,
        thread,
        None,
        "REQUEST",
        json!({"action": "Review", "done_when": "Reviewed", "constraints": [], "authority_ref": authority}),
    )
}

pub fn commit(
    id: &str,
    to: &[&str],
    thread: &str,
    request: &str,
    authority: Option<&str>,
) -> Value {
    frame(
        id,
        to,
        thread,
        Some(request),
        "COMMIT",
        json!({"request": request, "action": "Review", "deliverable": "Notes", "done_when": "Reviewed",
               "due": null, "conditions": [], "authority_ref": authority}),
    )
}

pub fn report(
    id: &str,
    to: &[&str],
    thread: &str,
    reply: &str,
    commitment: &str,
    state: &str,
) -> Value {
    frame(
        id,
        to,
        thread,
        Some(reply),
        "REPORT",
        json!({"commitment": commitment, "state": state, "claims": [claim("status")]}),
    )
}

pub fn revise(
    id: &str,
    to: &[&str],
    thread: &str,
    target: &str,
    previous: &str,
    replacement: Option<Value>,
) -> Value {
    let (mode, replacement) = match replacement {
        Some(b) => ("replace", b),
        None => ("withdraw", Value::Null),
    };
    frame(
        id,
        to,
        thread,
        None,
        "REVISE",
        json!({"target": target, "previous": previous, "mode": mode, "replacement": replacement, "impact": []}),
    )
}

pub struct Tester {
    pub ledger: Ledger,
    pub now: i64,
}

impl Tester {
    pub fn new(viewer: Option<&str>) -> Tester {
        Tester {
            ledger: Ledger::new(config(viewer)),
            now: 0,
        }
    }

    /// Delivers `v` as sent by the principal bound to its `from` in `c1`
    /// (or `c2` for thread `other`): an honest transport.
    pub fn send(&mut self, v: &Value) -> Vec<Event> {
        let from = v["from"].as_str().unwrap_or("nobody");
        let suffix = if v["thread"] == "other" { "-2" } else { "" };
        let p = Principal::new(format!("pk-{from}{suffix}")).unwrap();
        self.send_as(v, &p)
    }

    pub fn send_as(&mut self, v: &Value, p: &Principal) -> Vec<Event> {
        let bytes = serde_json::to_vec(v).unwrap();
        self.ledger.deliver(&bytes, p, LocalTime(self.now))
    }

    /// Delivers and returns the frame's own outcome.
    pub fn outcome(&mut self, v: &Value) -> Outcome {
        let events = self.send(v);
        assert_eq!(events[0].kind, EventKind::Delivered);
        events[0].outcome.clone()
    }

    #[track_caller]
    pub fn accept(&mut self, v: &Value) {
        let o = self.outcome(v);
        assert_eq!(o, Outcome::Accepted, "{v}");
    }

    #[track_caller]
    pub fn reject(&mut self, v: &Value, class: RejectClass) {
        match self.outcome(v) {
            Outcome::Rejected(r) => assert_eq!(r.class, class, "{}: {}", v, r.message),
            other => panic!("expected {class} rejection, got {other:?} for {v}"),
        }
    }

    pub fn execute(&mut self, thread_name: &str, id: &str) -> Execution {
        self.ledger
            .execute(&thread(thread_name), &mref(id), LocalTime(self.now))
    }

    /// The view, checked canonical on the way: the text the ledger writes
    /// is exactly what printing its JSON tree gives.
    pub fn view(&self, thread_name: &str) -> Value {
        let text = self.ledger.view_text(&thread(thread_name));
        let tree = text.to_value();
        assert_eq!(
            tern_model::ledger::View::from_value(&tree),
            text,
            "the view of {thread_name} is not in canonical form"
        );
        tree
    }

    /// The view's entry for commitment `id`.
    pub fn commitment(&self, thread_name: &str, id: &str) -> Value {
        self.view(thread_name)["commitments"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("no commitment {id} in {}", self.view(thread_name)))
    }

    pub fn status(&self, thread_name: &str, id: &str) -> String {
        self.view(thread_name)["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["id"] == id)
            .map(|m| m["status"].as_str().unwrap().to_owned())
            .unwrap_or_else(|| "absent".to_owned())
    }
}

pub fn has(annotations: &Value, name: &str) -> bool {
    annotations.as_array().unwrap().iter().any(|a| a == name)
}
