//! What a case's play did at each step, kept as data: the frames, answers
//! and crashes themselves. Reports and the sequence diagram draw their text
//! from it when they render, so the player never formats a line nobody
//! reads (a passing case's transcript is thrown away unread).

use std::collections::BTreeMap;

use serde_json::Value;
use tern_model::ledger::{EffectKey, Execution};
use tern_model::message::{MessageRef, Principal, ThreadId};

use crate::corpus::case::{ComparedEvent, DeliverCrash, ExecuteCrash};
use crate::judge::compare::{events_text, execution_text};
use crate::shorthand;

/// One line of a case's transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exchange {
    /// 0-based index of the case step that did it.
    pub step: usize,
    pub did: Did,
    /// False on the line a failure was found at.
    pub ok: bool,
}

/// What a step did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Did {
    /// A frame delivered over the transport as `principal`.
    Delivered {
        frame: Vec<u8>,
        principal: Principal,
        /// Its lifeline in the diagram: the frame's `from` when the
        /// principal is the one bound to it, otherwise the principal
        /// itself, so that a spoofer does not hide behind the name it
        /// claims.
        sender: String,
        crash: Option<DeliverCrash>,
        answer: Answer<Vec<ComparedEvent>>,
    },
    /// A frame the receiver sent while answering the step's delivery.
    Sent { by: String, frame: Vec<u8> },
    Viewed {
        thread: ThreadId,
        answer: Answer<Value>,
    },
    /// An ask to execute, with the effects the world saw during it.
    Executed {
        thread: ThreadId,
        commitment: MessageRef,
        performed: Vec<EffectKey>,
        crash: Option<ExecuteCrash>,
        answer: Answer<Execution>,
    },
    /// The world's count of each effect so far.
    Effects { counts: BTreeMap<String, u32> },
    /// Killed without warning.
    Crashed,
    /// Started again from its storage, killed during the start-up if
    /// `crash` says so.
    Restarted { crash: Option<DeliverCrash> },
}

/// How a call ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer<T> {
    Given(T),
    /// The step scheduled a crash, so no answer was taken.
    Killed,
    /// The implementation failed the call, or broke a rule in answering:
    /// what it did instead.
    Failed(String),
}

impl Exchange {
    /// The step's operation, as cases name them (`outgoing` for a frame the
    /// receiver sent).
    pub fn op(&self) -> &'static str {
        match self.did {
            Did::Delivered { .. } => "deliver",
            Did::Sent { .. } => "outgoing",
            Did::Viewed { .. } => "view",
            Did::Executed { .. } => "execute",
            Did::Effects { .. } => "effects",
            Did::Crashed => "crash",
            Did::Restarted { .. } => "restart",
        }
    }

    /// Who sent the frame; `None` for operations of the harness.
    pub fn sender(&self) -> Option<&str> {
        match &self.did {
            Did::Delivered { sender, .. } => Some(sender),
            Did::Sent { by, .. } => Some(by),
            _ => None,
        }
    }

    pub fn frame(&self) -> Option<&[u8]> {
        match &self.did {
            Did::Delivered { frame, .. } | Did::Sent { frame, .. } => Some(frame),
            _ => None,
        }
    }

    /// The seed's shorthand for a frame, or a short description.
    pub fn gloss(&self) -> String {
        match &self.did {
            Did::Delivered {
                frame, principal, ..
            } => shorthand::line(frame, Some(principal.as_str())),
            Did::Sent { frame, .. } => shorthand::line(frame, None),
            Did::Viewed { thread, .. } => format!("view of {thread}"),
            Did::Executed {
                thread,
                commitment,
                performed,
                ..
            } => {
                let mut gloss = format!("execute {commitment} in {thread}");
                if !performed.is_empty() {
                    gloss.push_str(&format!(" (performed {})", effect_names(performed)));
                }
                gloss
            }
            Did::Effects { .. } => "the world's effect counts".to_owned(),
            Did::Crashed => "crash".to_owned(),
            Did::Restarted { .. } => "restart from storage".to_owned(),
        }
    }

    /// The receiver's answer, summarised.
    pub fn answer(&self) -> String {
        match &self.did {
            Did::Delivered { answer, .. } => {
                answer.text("(killed; no outcome)", |events| events_text(events))
            }
            Did::Viewed { answer, .. } => answer.text("", Value::to_string),
            Did::Executed { answer, .. } => answer.text("(killed; no answer)", execution_text),
            Did::Effects { counts } => counts_text(counts),
            Did::Restarted { crash: Some(_) } => "(killed while starting)".to_owned(),
            Did::Sent { .. } | Did::Crashed | Did::Restarted { crash: None } => String::new(),
        }
    }

    /// A crash or restart the harness caused at this step.
    pub fn fault(&self) -> Option<&'static str> {
        match &self.did {
            Did::Delivered { crash, .. } => crash.map(|c| match c {
                DeliverCrash::BeforeDurable => "crash before the frame is durable",
                DeliverCrash::AfterDurable => {
                    "crash after the frame is durable, before its outcome is taken"
                }
            }),
            Did::Executed { crash, .. } => crash.map(|c| match c {
                ExecuteCrash::BeforeEffect => {
                    "crash at the effect, before it happens (its intent durable)"
                }
                ExecuteCrash::AfterEffect => "crash right after the effect, before it is reported",
            }),
            Did::Crashed => Some("killed without warning"),
            Did::Restarted { crash } => Some(match crash {
                None => "restart",
                Some(DeliverCrash::BeforeDurable) => {
                    "restart, crashing before what it writes is durable"
                }
                Some(DeliverCrash::AfterDurable) => {
                    "restart, crashing once what it writes is durable"
                }
            }),
            Did::Sent { .. } | Did::Viewed { .. } | Did::Effects { .. } => None,
        }
    }
}

impl<T> Answer<T> {
    fn text(&self, killed: &str, given: impl Fn(&T) -> String) -> String {
        match self {
            Answer::Given(t) => given(t),
            Answer::Killed => killed.to_owned(),
            Answer::Failed(what) => what.clone(),
        }
    }
}

/// Effect names, comma-separated.
pub(crate) fn effect_names(effects: &[EffectKey]) -> String {
    effects
        .iter()
        .map(|k| k.0.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Each effect with its count, or `no effect`.
pub(crate) fn counts_text(counts: &BTreeMap<String, u32>) -> String {
    if counts.is_empty() {
        return "no effect".to_owned();
    }
    counts
        .iter()
        .map(|(k, n)| format!("{k} ×{n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(did: Did) -> Exchange {
        Exchange {
            step: 0,
            did,
            ok: true,
        }
    }

    #[test]
    fn a_scheduled_crash_reads_as_killed_whatever_was_answered() {
        let x = line(Did::Delivered {
            frame: b"{}".to_vec(),
            principal: Principal::new("bob").expect("a principal"),
            sender: "bob".to_owned(),
            crash: Some(DeliverCrash::AfterDurable),
            answer: Answer::Killed,
        });
        assert_eq!(x.op(), "deliver");
        assert_eq!(x.sender(), Some("bob"));
        assert_eq!(x.answer(), "(killed; no outcome)");
        assert_eq!(
            x.fault(),
            Some("crash after the frame is durable, before its outcome is taken")
        );
    }

    #[test]
    fn an_execution_names_what_the_world_saw_and_what_it_answered() {
        let x = line(Did::Executed {
            thread: ThreadId::new("t1").expect("a thread"),
            commitment: MessageRef::new("alice:m1").expect("a reference"),
            performed: vec![EffectKey("pay".to_owned()), EffectKey("ship".to_owned())],
            crash: None,
            answer: Answer::Failed("internal error".to_owned()),
        });
        assert_eq!(x.gloss(), "execute alice:m1 in t1 (performed pay, ship)");
        assert_eq!(x.answer(), "internal error");
        assert_eq!(x.fault(), None);
        assert_eq!(x.sender(), None);
    }

    #[test]
    fn harness_operations_say_what_the_harness_did() {
        let restart = line(Did::Restarted {
            crash: Some(DeliverCrash::BeforeDurable),
        });
        assert_eq!(restart.answer(), "(killed while starting)");
        assert_eq!(
            restart.fault(),
            Some("restart, crashing before what it writes is durable")
        );
        let plain = line(Did::Restarted { crash: None });
        assert_eq!(
            (plain.answer().as_str(), plain.fault()),
            ("", Some("restart"))
        );
        let counts = line(Did::Effects {
            counts: BTreeMap::from([("pay".to_owned(), 2)]),
        });
        assert_eq!(counts.answer(), "pay ×2");
        assert_eq!(
            line(Did::Effects {
                counts: BTreeMap::new()
            })
            .answer(),
            "no effect"
        );
    }
}
