//! What happened in a recorded run, as data: who sent which message, when
//! each copy arrived and with what outcome, every fault and every
//! execution. It is the run's one record: the shorthand notes a terminal
//! prints and a trace keeps are rendered from it ([`Happening::note`]), and
//! reports draw the same record as a sequence diagram.

use std::fmt;

use tern_model::ledger::{Execution, Outcome};

use crate::catalogue::reach::Whose;
use crate::contract::storage::{CrashPoint, FileOp, Loss};
use crate::judge::compare::execution_text;
use crate::judge::failure::Failure;
use crate::judge::oracle::outcome_summary;
use crate::shorthand;

/// When in an agent's life a crash came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrashWhen {
    /// Between operations.
    Idle,
    /// Between operations, with another crash armed for the recovery.
    IdleThenRecovery,
    Recovery,
    /// Inside a delivery, before its outcome was reported.
    Delivery,
    Execution,
}

impl CrashWhen {
    fn text(self) -> &'static str {
        match self {
            CrashWhen::Idle => "between operations",
            CrashWhen::IdleThenRecovery => {
                "between operations; it will crash again while recovering"
            }
            CrashWhen::Recovery => "during its recovery",
            CrashWhen::Delivery => "during a delivery, before reporting its outcome",
            CrashWhen::Execution => "during an execution",
        }
    }
}

/// How a crash over a power-loss state directory fell: where in the
/// request it came, if inside one, and what it took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PowerCrash {
    pub at: Option<InRequest>,
    pub loss: Loss,
}

/// Where in a request a crash fell, as the state directory told it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InRequest {
    /// At its operation `op`, after `earlier` ones.
    Held { op: FileOp, earlier: Vec<FileOp> },
    /// Right after it answered; `last` was its last operation.
    Answered { last: Option<FileOp> },
}

impl fmt::Display for InRequest {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            InRequest::Held { op, earlier } => write!(
                f,
                ", at its {} file operation of the request ({}, after {})",
                shorthand::ordinal(earlier.len() + 1),
                op.name(),
                if earlier.is_empty() {
                    "none".to_owned()
                } else {
                    earlier
                        .iter()
                        .map(|o| o.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ),
            InRequest::Answered { last } => write!(
                f,
                ", right after the request answered{}",
                last.map(|o| format!(" (its last file operation: {})", o.name()))
                    .unwrap_or_default()
            ),
        }
    }
}

/// Why an agent crashed, in the words of the shorthand.
struct Why<'a>(CrashWhen, &'a Option<PowerCrash>);

impl fmt::Display for Why<'_> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.0.text())?;
        if let Some(power) = self.1 {
            if let Some(at) = &power.at {
                write!(f, "{at}")?;
            }
            write!(f, "; {}", power.loss.describe())?;
        }
        Ok(())
    }
}

/// A fault that hits one agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaultEvent {
    /// A crash; over a power-loss state directory, how it fell.
    Crash {
        when: CrashWhen,
        power: Option<PowerCrash>,
    },
    Restart,
    /// A crash scheduled at a crash point (`when` says which delivery).
    WillCrash {
        point: CrashPoint,
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
    /// A message put on the network, by `from` as the frame claims.
    /// `index` identifies it in later events.
    Send {
        at: u64,
        index: usize,
        from: String,
        to: Vec<String>,
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
        outcome: Reported,
    },
    /// A copy to `to` was lost; the sender retransmits. `whose` says which
    /// copy it was.
    Lost {
        at: u64,
        index: usize,
        to: String,
        whose: Whose,
    },
    Fault {
        at: u64,
        agent: String,
        fault: FaultEvent,
    },
    /// An agent's clock was moved to `delta` milliseconds from a grant's
    /// expiry.
    Clock { at: u64, agent: String, delta: i64 },
    /// An execution of `id` and its result.
    Execute {
        at: u64,
        agent: String,
        id: String,
        result: ExecutionResult,
    },
    /// The violation that ended the run.
    Violation {
        at: u64,
        agent: Option<String>,
        failure: Failure,
    },
}

/// The outcome a receiver reported for a delivered copy: the first of its
/// events (a duplicate when it reported none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reported(pub Outcome);

impl fmt::Display for Reported {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&outcome_summary(&self.0))
    }
}

/// What an ask to execute came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExecutionResult {
    /// The agent crashed before it answered.
    Crashed,
    Answered(Execution),
}

impl fmt::Display for ExecutionResult {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            ExecutionResult::Crashed => f.write_str("crashed before answering"),
            ExecutionResult::Answered(e) => f.write_str(&execution_text(e)),
        }
    }
}

impl FaultEvent {
    /// The fault as a label on `agent`'s lifeline.
    pub fn label(&self, agent: &str) -> String {
        match self {
            FaultEvent::Crash { when, power } => format!("⚡ crash ({})", Why(*when, power)),
            FaultEvent::Restart => "↺ restart from storage".into(),
            FaultEvent::WillCrash { point, when } => {
                format!("⚡ will crash at {}{when}", point.name())
            }
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
            Happening::Send {
                from,
                frame,
                spoofed,
                ..
            } => write!(
                f,
                "{}{}",
                if *spoofed { "☠ " } else { "" },
                shorthand::line(frame, Some(from))
            ),
            Happening::SecondCopy { to, .. } => write!(f, "  ⧉ a second copy to {to} will follow"),
            Happening::Deliver { to, outcome, .. } => write!(f, "  ↳ {to}: {outcome}"),
            Happening::Lost { whose, to, .. } => {
                write!(f, "  ✗ {} is lost; the sender retransmits", whose.text(to))
            }
            Happening::Fault { agent, fault, .. } => match fault {
                FaultEvent::Crash { when, power } => {
                    write!(f, "⚡ {agent} crashes ({})", Why(*when, power))
                }
                FaultEvent::Restart => write!(f, "↺ {agent} restarts from its storage"),
                FaultEvent::WillCrash { point, when } => {
                    write!(f, "⚡ {agent} will crash at {}{when}", point.name())
                }
                FaultEvent::Partition { .. } => f.write_str(&fault.label(agent)),
            },
            Happening::Clock { agent, delta, .. } => {
                write!(
                    f,
                    "⏱ {agent}'s clock reaches {delta:+} ms from the grant's expiry"
                )
            }
            Happening::Execute {
                agent, id, result, ..
            } => write!(f, "▶ {agent} executes {id}: {result}"),
            Happening::Violation { failure, .. } => write!(f, "✘ {}", failure.line()),
        }
    }
}

#[cfg(test)]
mod tests {
    use tern_model::ledger::{Execution, Outcome, Refusal};

    use super::*;

    /// The typed parts of a happening read in the shorthand as the words
    /// docs/simulator.md section 12 gives.
    #[test]
    fn typed_happenings_read_as_the_shorthand_says() {
        let lines: Vec<String> = [
            Happening::Deliver {
                at: 20,
                index: 0,
                to: "bob".into(),
                outcome: Reported(Outcome::Duplicate),
            },
            Happening::Clock {
                at: 30,
                agent: "bob".into(),
                delta: -1,
            },
            Happening::Execute {
                at: 30,
                agent: "bob".into(),
                id: "bob:2".into(),
                result: ExecutionResult::Answered(Execution::Refused(Refusal::GrantExpired)),
            },
            Happening::Execute {
                at: 40,
                agent: "bob".into(),
                id: "bob:2".into(),
                result: ExecutionResult::Crashed,
            },
            Happening::Fault {
                at: 50,
                agent: "carol".into(),
                fault: FaultEvent::WillCrash {
                    point: CrashPoint::AfterSync,
                    when: " of its second delivery from now",
                },
            },
            Happening::Lost {
                at: 60,
                index: 0,
                to: "carol".into(),
                whose: Whose::Misrouted,
            },
            Happening::Fault {
                at: 70,
                agent: "carol".into(),
                fault: FaultEvent::Crash {
                    when: CrashWhen::Delivery,
                    power: None,
                },
            },
            Happening::Fault {
                at: 80,
                agent: "carol".into(),
                fault: FaultEvent::Crash {
                    when: CrashWhen::Recovery,
                    power: Some(PowerCrash {
                        at: Some(InRequest::Held {
                            op: FileOp::Rename,
                            earlier: vec![FileOp::Write, FileOp::Sync],
                        }),
                        loss: Loss::Power,
                    }),
                },
            },
            Happening::Fault {
                at: 90,
                agent: "carol".into(),
                fault: FaultEvent::Crash {
                    when: CrashWhen::Idle,
                    power: Some(PowerCrash {
                        at: Some(InRequest::Answered { last: None }),
                        loss: Loss::Kill,
                    }),
                },
            },
        ]
        .iter()
        .map(Happening::note)
        .collect();
        assert_eq!(
            lines,
            [
                "    20 ms    ↳ bob: duplicate",
                "    30 ms  ⏱ bob's clock reaches -1 ms from the grant's expiry",
                "    30 ms  ▶ bob executes bob:2: refused: grant_expired",
                "    40 ms  ▶ bob executes bob:2: crashed before answering",
                "    50 ms  ⚡ carol will crash at AfterSync of its second delivery from now",
                "    60 ms    ✗ the copy misrouted to carol is lost; the sender retransmits",
                "    70 ms  ⚡ carol crashes (during a delivery, before reporting its outcome)",
                "    80 ms  ⚡ carol crashes (during its recovery, at its 3rd file operation of the request (rename, after write, sync); power loss; what was not synced is gone)",
                "    90 ms  ⚡ carol crashes (between operations, right after the request answered; killed; the kernel keeps every write that returned)",
            ]
        );
    }
}
