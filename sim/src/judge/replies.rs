//! What a receiver may not send of its own accord, one rule for every
//! driver (the simulator and the corpus player).
//!
//! Every frame a receiver returns from `deliver` is sent on its own
//! initiative: the harness never asks for one. So an outgoing ACK whose
//! `target` or `reply` names an ACK is automatic ACK-of-ACK behaviour, which
//! seed §2 forbids ("No automatic ACK-of-ACK behavior", S2.14), whichever
//! ACK it names: the one just delivered or any earlier one. Profile P-ACK-1
//! records this reading.

use std::collections::BTreeSet;

use tern_model::message::{MessageRef, ThreadId};
use tern_model::{Act, Body, Message};

/// The ACKs seen on the network so far, by thread and ID, so that an
/// outgoing ACK is judged in O(log n) however long the run.
#[derive(Debug, Default, Clone)]
pub struct KnownAcks(BTreeSet<(ThreadId, MessageRef)>);

impl KnownAcks {
    /// Notes a message seen on the network (delivered or sent).
    pub fn note(&mut self, m: &Message) {
        if m.act() == Act::Ack {
            self.0.insert((m.thread.clone(), m.id.clone()));
        }
    }

    /// Notes a frame seen on the network; a frame that is not a valid
    /// message is no ACK. Only a frame that spells `"ACK"`, or that has a
    /// `\u` escape (which could spell it), can be one, so the others are
    /// not parsed.
    pub fn note_frame(&mut self, frame: &[u8]) {
        let may_be_ack =
            frame.windows(5).any(|w| w == b"\"ACK\"") || frame.windows(2).any(|w| w == b"\\u");
        if !may_be_ack {
            return;
        }
        if let Ok(m) = tern_model::parse_frame(frame) {
            self.note(&m);
        }
    }

    fn knows(&self, thread: &ThreadId, id: &MessageRef) -> bool {
        self.0.contains(&(thread.clone(), id.clone()))
    }

    /// Whether `outgoing`, sent by a receiver of its own accord, acknowledges
    /// an ACK: its target, or the message it replies to, is a known ACK.
    pub fn is_ack_of_ack(&self, outgoing: &Message) -> bool {
        let Body::Ack(ack) = &outgoing.body else {
            return false;
        };
        self.knows(&outgoing.thread, &ack.target)
            || outgoing
                .reply
                .as_ref()
                .is_some_and(|r| self.knows(&outgoing.thread, r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(json: &str) -> Message {
        tern_model::parse_frame(json.as_bytes()).expect("a valid frame")
    }

    const ACK: &str = r#"{"tern":"0.1","id":"alice:1","from":"alice","to":["bob"],"thread":"t","reply":null,"act":"ACK","body":{"target":"bob:1"}}"#;

    fn ack_from_bob(target: &str, reply: &str, thread: &str) -> Message {
        msg(&format!(
            r#"{{"tern":"0.1","id":"bob:9","from":"bob","to":["alice"],"thread":"{thread}","reply":{reply},"act":"ACK","body":{{"target":"{target}"}}}}"#
        ))
    }

    #[test]
    fn an_ack_naming_a_known_ack_by_target_or_reply_is_an_ack_of_an_ack() {
        let mut known = KnownAcks::default();
        known.note_frame(ACK.as_bytes());
        assert!(known.is_ack_of_ack(&ack_from_bob("alice:1", "null", "t")));
        assert!(known.is_ack_of_ack(&ack_from_bob("carol:3", "\"alice:1\"", "t")));
    }

    #[test]
    fn other_acks_and_other_threads_are_not() {
        let mut known = KnownAcks::default();
        known.note_frame(ACK.as_bytes());
        // The same ID in another thread names another message.
        assert!(!known.is_ack_of_ack(&ack_from_bob("alice:1", "null", "u")));
        // An ACK of a message that is not an ACK.
        assert!(!known.is_ack_of_ack(&ack_from_bob("bob:1", "null", "t")));
        // Nothing is known before it is noted.
        assert!(!KnownAcks::default().is_ack_of_ack(&ack_from_bob("alice:1", "null", "t")));
        // A frame that is not a valid message is no ACK.
        known.note_frame(b"{\"act\":\"ACK\"}");
        assert!(!known.is_ack_of_ack(&ack_from_bob("bob:1", "null", "t")));
    }

    #[test]
    fn an_ack_spelled_with_escapes_is_known_too() {
        let mut known = KnownAcks::default();
        known.note_frame(ACK.replace("\"ACK\"", "\"\\u0041CK\"").as_bytes());
        assert!(known.is_ack_of_ack(&ack_from_bob("alice:1", "null", "t")));
    }
}
