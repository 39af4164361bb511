//! Stateful checking of a stream: every frame through one reference ledger,
//! each outcome tied back to the input line of the message it concerns.

use tern_model::ledger::{Event, EventKind, Ledger, LedgerConfig, LocalTime, Outcome, Rejection};
use tern_model::message::{Principal, ThreadId};
use tern_model::wire::MAX_FRAME_BYTES;

use crate::streams::frames::Frame;

/// One event, located in the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// 1-based input line of the message the event concerns (for a release,
    /// the line of the released message, not of the frame that released it).
    pub line: usize,
    pub event: Event,
}

/// A ledger fed from a stream. Each frame is delivered as if the transport
/// had authenticated its `from`: with an open configuration every sender is
/// its own principal, with explicit contexts the principal bound to `from`.
/// A bare stream carries no transport credentials, so spoofing cannot be
/// detected here; the simulator, which plays the transport, can.
pub struct StatefulCheck {
    ledger: Ledger,
    /// The delivery number and input line of each delivery that stored a
    /// message, in delivery order: only those can be named by a later event.
    /// Frames rejected before storage and duplicates leave nothing here.
    lines: Vec<(u64, usize)>,
}

impl StatefulCheck {
    pub fn new(config: LedgerConfig) -> StatefulCheck {
        StatefulCheck {
            ledger: Ledger::new(config),
            lines: Vec::new(),
        }
    }

    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// Delivers one frame; returns its events, located.
    pub fn feed(&mut self, frame: &Frame) -> Vec<Located> {
        let (line, bytes) = match frame {
            Frame::Bytes { line, bytes } => (*line, bytes),
            Frame::Oversized { line, len } => {
                let rejection: Rejection =
                    tern_model::wire::WireError::oversized(*len, MAX_FRAME_BYTES).into();
                return vec![Located {
                    line: *line,
                    event: Event {
                        kind: EventKind::Delivered,
                        origin: u64::MAX,
                        id: None,
                        thread: None,
                        outcome: Outcome::Rejected(rejection),
                    },
                }];
            }
        };
        // One parse serves both the principal and the delivery.
        let parsed = tern_model::parse_frame(bytes);
        let principal = self.principal_for(parsed.as_ref().ok());
        let origin = self.ledger.deliveries();
        let stored = self.ledger.stored_messages();
        let events = self.ledger.deliver_parsed(parsed, &principal, LocalTime(0));
        if self.ledger.stored_messages() > stored {
            self.lines.push((origin, line));
        }
        events
            .into_iter()
            .map(|event| Located {
                line: self.line_of(event.origin).unwrap_or(line),
                event,
            })
            .collect()
    }

    /// The input line of a delivery that stored a message.
    fn line_of(&self, origin: u64) -> Option<usize> {
        let i = self.lines.binary_search_by_key(&origin, |&(o, _)| o).ok()?;
        Some(self.lines[i].1)
    }

    /// How many deliveries this checker remembers (those that stored a
    /// message): with the ledger's footprint, what tests bound.
    pub fn remembered(&self) -> usize {
        self.lines.len()
    }

    /// The principal the transport would have authenticated for this frame's
    /// claimed sender, or a placeholder the ledger will refuse.
    fn principal_for(&self, message: Option<&tern_model::Message>) -> Principal {
        let unknown = || Principal::new("(unauthenticated)").expect("nonempty");
        let Some(message) = message else {
            return unknown();
        };
        match &self.ledger.config().contexts {
            tern_model::ledger::Contexts::Open => {
                Principal::new(message.from.as_str()).unwrap_or_else(|_| unknown())
            }
            tern_model::ledger::Contexts::Fixed { contexts, threads } => threads
                .get(&message.thread)
                .and_then(|c| contexts.get(c))
                .and_then(|c| c.bindings.get(&message.from))
                .cloned()
                .unwrap_or_else(unknown),
        }
    }

    /// The canonical views of every thread seen, in thread order.
    pub fn views(&self) -> Vec<(ThreadId, serde_json::Value)> {
        self.ledger
            .threads()
            .into_iter()
            .map(|t| {
                let v = self.ledger.view(&t);
                (t, v)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(line: usize, text: &str) -> Frame {
        Frame::Bytes {
            line,
            bytes: text.as_bytes().to_vec(),
        }
    }

    /// Issue "memory on endless streams": rejected frames and duplicates
    /// leave nothing in the checker or its ledger, and events still name
    /// the line of the message they concern.
    #[test]
    fn rejected_frames_and_duplicates_are_not_remembered() {
        let mut check = StatefulCheck::new(LedgerConfig::open_auditor());
        let ask = r#"{"tern":"0.1","id":"a:1","from":"a","to":["b"],"thread":"t","reply":null,"act":"ASK","body":{"question":"Why?"}}"#;
        let ack = r#"{"tern":"0.1","id":"b:1","from":"b","to":["a"],"thread":"t","reply":"a:1","act":"ACK","body":{"target":"a:1"}}"#;
        // The ACK waits for the ASK, which arrives after a flood.
        assert!(matches!(
            check.feed(&bytes(1, ack))[0].event.outcome,
            Outcome::Pending { .. }
        ));
        let (remembered, footprint) = (check.remembered(), check.ledger().footprint());
        for n in 0..10_000 {
            let frame = if n % 2 == 0 {
                bytes(n + 2, "{}")
            } else {
                bytes(n + 2, ack)
            };
            let events = check.feed(&frame);
            assert_eq!(events.len(), 1);
            assert_eq!(events[0].line, n + 2);
        }
        assert_eq!(check.remembered(), remembered);
        assert_eq!(check.ledger().footprint(), footprint);
        let events = check.feed(&bytes(20_000, ask));
        let lines: Vec<usize> = events.iter().map(|e| e.line).collect();
        assert_eq!(lines, [20_000, 1], "the release names the ACK's line");
        assert_eq!(events[1].event.kind, EventKind::Released);
    }
}
