//! One call to a receiver, above all a delivery, judged by the rules that hold whatever the
//! oracle expects: a scheduled crash fires exactly when storage says it
//! did, an answer carries the frame's own event, a delivery performs no
//! effect, and the frames a receiver sends of its own accord are valid
//! messages from itself that neither answer a rejected frame nor
//! acknowledge an ACK.
//!
//! The simulator and the corpus player both deliver through here, so the
//! two cannot drift apart on any of these rules; each then compares the
//! answer with its own expectation (the oracle's, or the case's).

use tern_model::ledger::{LocalTime, Outcome};
use tern_model::message::Principal;

use super::invariants::{self as inv, Invariant};
use super::no_effect;
use super::replies::KnownAcks;
use crate::contract::error::ImplError;
use crate::contract::plugin::{Delivered, Receiver};
use crate::contract::storage::{CrashPoint, Storage};
use crate::shorthand;

/// What a delivery came to.
#[derive(Debug)]
pub enum Delivery {
    /// The scheduled crash fired during the delivery, and the receiver
    /// reported it: no outcome.
    Crashed,
    Answered(Delivered),
}

/// What a call that a crash can cut came to, when it broke nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Came {
    Answered,
    /// The scheduled crash fired: the receiver is down.
    Crashed,
}

/// A call into a receiver that a crash can cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    StartUp,
    Delivery,
    Execution,
}

impl Call {
    /// What the call answers with when no crash cuts it.
    fn answer(self) -> &'static str {
        match self {
            Call::StartUp => "a started receiver",
            Call::Delivery => "an outcome",
            Call::Execution => "a decision",
        }
    }

    fn during(self) -> &'static str {
        match self {
            Call::StartUp => "start-up",
            Call::Delivery => "delivery",
            Call::Execution => "execution",
        }
    }
}

/// A call that broke one of this module's rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Breach {
    /// The receiver reported an injected crash that did not fire.
    InventedCrash(Call),
    /// The scheduled crash fired, and the receiver answered anyway.
    SwallowedCrash(Call),
    /// The receiver failed on its own (garbage, a timeout): not a verdict
    /// on Tern, so each driver reports it in its own way.
    Failed(ImplError),
    /// An answer without the delivered frame's own event.
    NoEvent,
    /// Effects performed during a start-up or a delivery (only `execute`
    /// may act on the world).
    Effects { call: Call, count: usize },
    /// Effects performed while answering the views of `threads`: a view
    /// is a read, and an effect there bypasses every authority check.
    EffectsInView { threads: String, count: usize },
    /// Frames sent in answer to a frame the receiver should reject.
    ReplyToInvalid {
        class: String,
        sent: usize,
        first: String,
    },
    /// An outgoing frame that is not a valid Tern message.
    InvalidOutgoing(String),
    /// An outgoing frame that claims another sender.
    ForeignOutgoing { me: String, claimed: String },
    /// An outgoing ACK of an ACK, in shorthand.
    AckOfAck(String),
}

impl Breach {
    /// The invariant the breach violates.
    pub fn invariant(&self) -> Invariant {
        match self {
            Breach::InventedCrash(_)
            | Breach::SwallowedCrash(_)
            | Breach::Failed(_)
            | Breach::NoEvent => inv::ALIVE,
            Breach::Effects { .. } | Breach::EffectsInView { .. } => inv::AUTHORITY,
            Breach::ReplyToInvalid { .. } => inv::NO_REPLY_TO_INVALID,
            Breach::InvalidOutgoing(_) => inv::SCHEMA,
            Breach::ForeignOutgoing { .. } => inv::IDENTITY,
            Breach::AckOfAck(_) => inv::NO_ACK_OF_ACK,
        }
    }

    /// What a conforming receiver does instead.
    pub fn expected(&self) -> String {
        match self {
            Breach::InventedCrash(call) => {
                format!("{} (no crash was scheduled here)", call.answer())
            }
            Breach::SwallowedCrash(call) => format!(
                "a crash (the scheduled crash fired during this {})",
                call.during()
            ),
            Breach::Failed(_) => "an answer to deliver".into(),
            Breach::NoEvent => "at least the delivered frame's own event".into(),
            Breach::Effects {
                call: Call::StartUp,
                ..
            } => "no effect while starting".into(),
            Breach::Effects { .. } => "no effect during a delivery".into(),
            Breach::EffectsInView { .. } => "no effect while answering a view".into(),
            Breach::ReplyToInvalid { class, .. } => {
                format!("no frame in answer to a rejected message ({class})")
            }
            Breach::InvalidOutgoing(_) => "outgoing frames are valid Tern messages".into(),
            Breach::ForeignOutgoing { me, .. } => format!("outgoing frames come from {me}"),
            Breach::AckOfAck(_) => "no ACK of an ACK".into(),
        }
    }

    /// What the receiver did.
    pub fn actual(&self) -> String {
        match self {
            Breach::InventedCrash(_) => {
                "the implementation reported an injected crash that did not happen".into()
            }
            Breach::SwallowedCrash(call) => {
                format!("{}: the implementation swallowed the crash", call.answer())
            }
            Breach::Failed(e) => e.to_string(),
            Breach::NoEvent => "an answer with no event".into(),
            Breach::Effects {
                call: Call::StartUp,
                count,
            } => format!("{count} effect(s) performed during start-up"),
            Breach::Effects { .. } => "an effect was performed while delivering a message".into(),
            Breach::EffectsInView { threads, count } => {
                format!("{count} effect(s) performed while answering a view of {threads}")
            }
            Breach::ReplyToInvalid { sent, first, .. } => format!("{sent} frame(s) sent: {first}"),
            Breach::InvalidOutgoing(why) => format!("an outgoing frame is invalid: {why}"),
            Breach::ForeignOutgoing { claimed, .. } => {
                format!("an outgoing frame claims to come from {claimed}")
            }
            Breach::AckOfAck(line) => line.clone(),
        }
    }
}

/// Delivers `frame`, with `crash` armed on `storage` for exactly this call
/// (disarmed again if it did not fire), and judges the answer against the
/// crash schedule.
pub fn deliver(
    receiver: &mut dyn Receiver,
    storage: &Storage,
    crash: Option<CrashPoint>,
    frame: &[u8],
    principal: &Principal,
    now: LocalTime,
) -> Result<Delivery, Breach> {
    let (result, fired) = storage.with_crash(crash, || receiver.deliver(frame, principal, now));
    match crash_judged(Call::Delivery, result, fired)? {
        None => Ok(Delivery::Crashed),
        Some(d) if d.events.is_empty() => Err(Breach::NoEvent),
        Some(d) => Ok(Delivery::Answered(d)),
    }
}

/// A call's result against the crash schedule: `fired` says whether the
/// scheduled crash fired during it. `None` is a crash exactly as scheduled.
pub fn crash_judged<T>(
    call: Call,
    result: Result<T, ImplError>,
    fired: bool,
) -> Result<Option<T>, Breach> {
    match result {
        Err(ImplError::Crashed) if !fired => Err(Breach::InventedCrash(call)),
        Err(ImplError::Crashed) => Ok(None),
        Err(e) => Err(Breach::Failed(e)),
        Ok(_) if fired => Err(Breach::SwallowedCrash(call)),
        Ok(answer) => Ok(Some(answer)),
    }
}

/// Why an answered delivery failed, in the order it is judged.
#[derive(Debug)]
pub enum Judged<E> {
    /// Effects performed during the delivery.
    Effects(Breach),
    /// The driver's own comparison of its events.
    Events(E),
    /// A rule of the frames sent, broken by the one at index `frame` of
    /// them (the first, for a reply to a frame that deserved rejection).
    Sent { frame: usize, breach: Breach },
}

/// The rules every answered delivery keeps, in the order every driver (the
/// simulator, the explorer, the corpus player) judges them: no effect
/// (`effects_before` and `effects_after`, the world's counts), then the
/// driver's own comparison of the events (`events`: with the oracle's, or
/// with a case's expectation), then the frames sent of its own accord
/// ([`outgoing`]), given the outcome the frame deserves.
pub fn answered<E>(
    effects_before: usize,
    effects_after: usize,
    events: impl FnOnce() -> Result<(), E>,
    deserved: &Outcome,
    sent: &[Vec<u8>],
    me: &str,
    acks: &mut KnownAcks,
) -> Result<(), Judged<E>> {
    no_effect::no_effects(Call::Delivery, effects_before, effects_after)
        .map_err(Judged::Effects)?;
    events().map_err(Judged::Events)?;
    outgoing(deserved, sent, me, acks).map_err(|(frame, breach)| Judged::Sent { frame, breach })
}

/// The frames receiver `me` sent of its own accord, given the outcome the
/// delivered frame deserves: none in answer to a rejected frame, each a
/// valid message from `me`, none an ACK of an ACK in `acks` (which learns
/// the ACKs among them). A breach comes with the index of the frame it
/// stopped at, so that a driver can point at it.
pub fn outgoing(
    deserved: &Outcome,
    frames: &[Vec<u8>],
    me: &str,
    acks: &mut KnownAcks,
) -> Result<(), (usize, Breach)> {
    if let (Outcome::Rejected(r), Some(first)) = (deserved, frames.first()) {
        return Err((
            0,
            Breach::ReplyToInvalid {
                class: r.class.to_string(),
                sent: frames.len(),
                first: shorthand::line(first, None),
            },
        ));
    }
    for (i, frame) in frames.iter().enumerate() {
        let m = tern_model::parse_frame(frame)
            .map_err(|e| (i, Breach::InvalidOutgoing(e.to_string())))?;
        if m.from.as_str() != me {
            return Err((
                i,
                Breach::ForeignOutgoing {
                    me: me.to_owned(),
                    claimed: m.from.to_string(),
                },
            ));
        }
        if acks.is_ack_of_ack(&m) {
            return Err((i, Breach::AckOfAck(shorthand::line(frame, None))));
        }
        acks.note(&m);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use tern_model::ledger::{RejectClass, Rejection};
    use tern_model::Pointer;

    use super::*;

    fn ack(id: &str, from: &str, target: &str) -> Vec<u8> {
        format!(
            r#"{{"tern":"0.1","id":"{id}","from":"{from}","to":["alice"],"thread":"t","reply":null,"act":"ACK","body":{{"target":"{target}"}}}}"#
        )
        .into_bytes()
    }

    fn rejected() -> Outcome {
        Outcome::Rejected(Rejection::new(
            RejectClass::Envelope,
            Pointer::of(&["to"]),
            "test".to_owned(),
        ))
    }

    #[test]
    fn crashes_are_judged_against_what_fired() {
        let ok: Result<u8, ImplError> = Ok(1);
        let crashed: Result<u8, ImplError> = Err(ImplError::Crashed);
        assert_eq!(crash_judged(Call::Delivery, ok.clone(), false), Ok(Some(1)));
        assert_eq!(
            crash_judged(Call::Delivery, crashed.clone(), true),
            Ok(None)
        );
        assert_eq!(
            crash_judged(Call::Execution, crashed, false),
            Err(Breach::InventedCrash(Call::Execution))
        );
        assert_eq!(
            crash_judged(Call::StartUp, ok, true),
            Err(Breach::SwallowedCrash(Call::StartUp))
        );
        let garbage = Err::<u8, _>(ImplError::Misbehaved("x".into()));
        assert!(matches!(
            crash_judged(Call::Delivery, garbage, true),
            Err(Breach::Failed(_))
        ));
        assert_eq!(
            Breach::SwallowedCrash(Call::Execution).actual(),
            "a decision: the implementation swallowed the crash"
        );
    }

    /// Every driver judges an answer in one order: an effect first, then
    /// its own comparison of the events, then the frames sent.
    #[test]
    fn an_answer_is_judged_effects_then_events_then_frames() {
        let mut acks = KnownAcks::default();
        let bad_frame = [b"{".to_vec()];
        let judged = |before, after, events: Result<(), &'static str>, acks: &mut KnownAcks| {
            answered(
                before,
                after,
                || events,
                &Outcome::Accepted,
                &bad_frame,
                "bob",
                acks,
            )
        };
        assert!(matches!(
            judged(1, 2, Err("events differ"), &mut acks),
            Err(Judged::Effects(Breach::Effects {
                call: Call::Delivery,
                count: 1
            }))
        ));
        assert!(matches!(
            judged(2, 2, Err("events differ"), &mut acks),
            Err(Judged::Events("events differ"))
        ));
        assert!(matches!(
            judged(2, 2, Ok(()), &mut acks),
            Err(Judged::Sent {
                frame: 0,
                breach: Breach::InvalidOutgoing(_)
            })
        ));
        assert!(matches!(
            answered(
                2,
                2,
                || Ok::<(), ()>(()),
                &Outcome::Accepted,
                &[],
                "bob",
                &mut acks
            ),
            Ok(())
        ));
    }

    /// A breach points at the frame the rules stopped at, not at the last
    /// one sent: an invalid frame, another sender's, or an ACK of an ACK
    /// known before the delivery or sent earlier in the same answer.
    #[test]
    fn a_breach_names_the_frame_it_stopped_at() {
        let ask = |id: &str, from: &str| {
            format!(
                r#"{{"tern":"0.1","id":"{id}","from":"{from}","to":["alice"],"thread":"t","reply":null,"act":"ASK","body":{{"question":"Which first?"}}}}"#
            )
            .into_bytes()
        };
        let at = |sent: &[Vec<u8>], mut known: KnownAcks| {
            outgoing(&Outcome::Accepted, sent, "bob", &mut known).map_err(|(i, _)| i)
        };
        let none = KnownAcks::default();
        let mine = ask("bob:1", "bob");
        let sent = [mine.clone(), b"{".to_vec(), mine.clone()];
        assert_eq!(at(&sent, none.clone()), Err(1));
        let sent = [mine.clone(), mine.clone(), ask("carol:1", "carol")];
        assert_eq!(at(&sent, none.clone()), Err(2));
        let sent = [
            mine.clone(),
            ack("bob:2", "bob", "alice:1"),
            ack("bob:3", "bob", "bob:2"),
        ];
        assert_eq!(at(&sent, none.clone()), Err(2));
        let mut known = KnownAcks::default();
        known.note_frame(&ack("alice:9", "alice", "bob:1"));
        assert_eq!(at(&[ack("bob:4", "bob", "alice:9"), mine], known), Err(0));
        // A reply to a frame that deserved rejection: the first frame.
        let replies = [ack("bob:5", "bob", "alice:1")];
        let refused = outgoing(&rejected(), &replies, "bob", &mut none.clone());
        assert!(matches!(refused, Err((0, Breach::ReplyToInvalid { .. }))));
    }

    #[test]
    fn outgoing_frames_follow_every_rule() {
        let mut acks = KnownAcks::default();
        let valid = ack("bob:1", "bob", "alice:1");
        // A valid ACK of a message that is not an ACK passes, and is noted.
        assert_eq!(
            outgoing(
                &Outcome::Accepted,
                std::slice::from_ref(&valid),
                "bob",
                &mut acks
            ),
            Ok(())
        );
        // Now an ACK of that ACK is automatic ACK-of-ACK.
        let again = ack("bob:2", "bob", "bob:1");
        let (_, breach) = outgoing(&Outcome::Accepted, &[again], "bob", &mut acks).unwrap_err();
        assert_eq!(breach.invariant(), inv::NO_ACK_OF_ACK);
        // Anything sent in answer to a rejected frame.
        let (_, breach) = outgoing(&rejected(), &[valid], "bob", &mut acks).unwrap_err();
        assert_eq!(breach.invariant(), inv::NO_REPLY_TO_INVALID);
        assert!(
            breach.expected().contains("envelope"),
            "{}",
            breach.expected()
        );
        // A frame that is not a Tern message.
        let (_, breach) =
            outgoing(&Outcome::Accepted, &[b"{".to_vec()], "bob", &mut acks).unwrap_err();
        assert_eq!(breach.invariant(), inv::SCHEMA);
        // A frame in another participant's name.
        let (_, breach) = outgoing(
            &Outcome::Accepted,
            &[ack("carol:1", "carol", "alice:1")],
            "bob",
            &mut acks,
        )
        .unwrap_err();
        assert_eq!(breach.invariant(), inv::IDENTITY);
        // Nothing sent, nothing to judge, even for a rejected frame.
        assert_eq!(outgoing(&rejected(), &[], "bob", &mut acks), Ok(()));
    }
}
