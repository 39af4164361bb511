//! What happened in a recorded run, as data: who sent which message, when
//! each copy arrived and with what outcome, every fault and every
//! execution. It is the run's one record: the shorthand notes a terminal
//! prints and a trace keeps are rendered from it ([`Happening::note`]), and
//! reports draw the same record as a sequence diagram.

use std::fmt;

use crate::judge::failure::Failure;

/// A fault that hits one agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaultEvent {
    Crash {
        why: String,
    },
    Restart,
    /// A crash scheduled at a crash point (`when` says which delivery).
    WillCrash {
        point: String,
        when: &'static str,
    },
    /// The agent's link to `to` is cut (`arrow`: one way or both).
    Partition {
        to: String,
        arrow: &'static str,
        ms: u16,
    },
}

/// One event of a recorded run, at virtual time `at` (milliseconds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Happening {
    /// A message put on the network. `index` identifies it in later events;
    /// `gloss` is its shorthand line.
    Send {
        at: u64,
        index: usize,
        from: String,
        to: Vec<String>,
        gloss: String,
        frame: Vec<u8>,
        spoofed: bool,
    },
    /// The network will deliver a second copy to `to`.
    SecondCopy { at: u64, index: usize, to: String },
    /// A copy reached `to`, which reported `outcome`.
    Deliver {
        at: u64,
        index: usize,
        to: String,
        outcome: String,
    },
    /// A copy to `to` was lost; the sender retransmits. `whose` says which
    /// copy, in words.
    Lost {
        at: u64,
        index: usize,
        to: String,
        whose: String,
    },
    Fault {
        at: u64,
        agent: String,
        fault: FaultEvent,
    },
    /// An agent's clock was moved to a grant's expiry.
    Clock {
        at: u64,
        agent: String,
        text: String,
    },
    /// An execution of `id` and its result.
    Execute {
        at: u64,
        agent: String,
        id: String,
        result: String,
    },
    /// The violation that ended the run.
    Violation {
        at: u64,
        agent: Option<String>,
        failure: Failure,
    },
}

impl FaultEvent {
    /// The fault as a label on `agent`'s lifeline.
    pub fn label(&self, agent: &str) -> String {
        match self {
            FaultEvent::Crash { why } => format!("⚡ crash ({why})"),
            FaultEvent::Restart => "↺ restart from storage".into(),
            FaultEvent::WillCrash { point, when } => format!("⚡ will crash at {point}{when}"),
            FaultEvent::Partition { to, arrow, ms } => {
                format!("⌁ partition {agent} {arrow} {to} for {ms} ms")
            }
        }
    }
}

impl Happening {
    /// When it happened, in virtual milliseconds.
    pub fn at(&self) -> u64 {
        match self {
            Happening::Send { at, .. }
            | Happening::SecondCopy { at, .. }
            | Happening::Deliver { at, .. }
            | Happening::Lost { at, .. }
            | Happening::Fault { at, .. }
            | Happening::Clock { at, .. }
            | Happening::Execute { at, .. }
            | Happening::Violation { at, .. } => *at,
        }
    }

    /// The shorthand note: the time, then one line for people.
    pub fn note(&self) -> String {
        format!("{:>6} ms  {}", self.at(), Shorthand(self))
    }
}

/// A run in shorthand, one note per happening: rendered when shown, from
/// the record every other view of the run reads too.
pub fn notes(happenings: &[Happening]) -> Vec<String> {
    happenings.iter().map(Happening::note).collect()
}

/// A happening in the shorthand's words (docs/simulator.md section 12).
struct Shorthand<'h>(&'h Happening);

impl fmt::Display for Shorthand<'_> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.0 {
            Happening::Send { gloss, spoofed, .. } => {
                write!(f, "{}{gloss}", if *spoofed { "☠ " } else { "" })
            }
            Happening::SecondCopy { to, .. } => write!(f, "  ⧉ a second copy to {to} will follow"),
            Happening::Deliver { to, outcome, .. } => write!(f, "  ↳ {to}: {outcome}"),
            Happening::Lost { whose, .. } => {
                write!(f, "  ✗ {whose} is lost; the sender retransmits")
            }
            Happening::Fault { agent, fault, .. } => match fault {
                FaultEvent::Crash { why } => write!(f, "⚡ {agent} crashes ({why})"),
                FaultEvent::Restart => write!(f, "↺ {agent} restarts from its storage"),
                FaultEvent::WillCrash { point, when } => {
                    write!(f, "⚡ {agent} will crash at {point}{when}")
                }
                FaultEvent::Partition { .. } => f.write_str(&fault.label(agent)),
            },
            Happening::Clock { agent, text, .. } => write!(f, "⏱ {agent}'s clock reaches {text}"),
            Happening::Execute {
                agent, id, result, ..
            } => write!(f, "▶ {agent} executes {id}: {result}"),
            Happening::Violation { failure, .. } => write!(f, "✘ {}", failure.line()),
        }
    }
}
