//! A ledger's state written as bytes and read back (`Ledger::write_state`,
//! `Ledger::read_state`, what `tern-sim agent` keeps as its snapshot) is
//! the same ledger: it writes the same bytes again, shows the same views,
//! and answers every later delivery and execution as the original does.
//! Bytes that are not such a state are an error, never a panic.

mod common;

use common::conversation::{build, commitments, moves, viewers, Sent};
use common::kit::{config, mref, thread};
use common::message;
use proptest::prelude::*;
use tern_model::ledger::{Ledger, LedgerConfig, LocalTime};
use tern_model::message::Principal;

fn round_trip(ledger: &Ledger, config: LedgerConfig) -> Ledger {
    let mut bytes = Vec::new();
    ledger.write_state(&mut bytes);
    let back = Ledger::read_state(config, &bytes).expect("a written state reads back");
    let mut again = Vec::new();
    back.write_state(&mut again);
    assert_eq!(again, bytes, "a state read back writes the same bytes");
    back
}

fn views(ledger: &Ledger) -> Vec<String> {
    ["design", "ops", "other"]
        .iter()
        .map(|t| ledger.view_text(&thread(t)).as_str().to_owned())
        .collect()
}

/// Executes every commitment of `frames` at `now` on both ledgers, which
/// must decide alike.
fn execute_all(a: &mut Ledger, b: &mut Ledger, frames: &[Sent], now: i64) {
    for (t, id) in commitments(frames) {
        let x = a.execute(&thread(&t), &mref(&id), LocalTime(now));
        let y = b.execute(&thread(&t), &mref(&id), LocalTime(now));
        assert_eq!(x, y, "execution of {t}/{id} at {now}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// Written after any prefix of a conversation (executions included),
    /// the state read back goes on exactly as the ledger it came from.
    #[test]
    fn a_state_read_back_goes_on_as_the_ledger_written(
        ms in moves(40),
        split in any::<prop::sample::Index>(),
        executed_first in any::<bool>(),
    ) {
        let frames = build(&ms);
        let k = split.index(frames.len() + 1);
        for viewer in viewers() {
            let mut a = Ledger::new(config(viewer));
            for s in &frames[..k] {
                a.deliver(&s.bytes, &s.principal, LocalTime(0));
            }
            if executed_first {
                let mut copy = a.clone();
                execute_all(&mut a, &mut copy, &frames[..k], 5_000);
            }
            let mut b = round_trip(&a, config(viewer));
            prop_assert_eq!(views(&a), views(&b));
            prop_assert_eq!(a.deliveries(), b.deliveries());
            prop_assert_eq!(a.footprint(), b.footprint());
            for s in &frames[k..] {
                let x = a.deliver(&s.bytes, &s.principal, LocalTime(0));
                let y = b.deliver(&s.bytes, &s.principal, LocalTime(0));
                prop_assert_eq!(x, y, "viewer {:?}", viewer);
            }
            execute_all(&mut a, &mut b, &frames, 20_000);
            prop_assert_eq!(views(&a), views(&b));
            // And a state read back twice is still the same.
            let c = round_trip(&b, config(viewer));
            prop_assert_eq!(views(&a), views(&c));
        }
    }

    /// Every field of every act (claims, evidence, extensions with nested
    /// numbers and strings, revisions' replacement bodies) comes back
    /// equal: the message read back is a duplicate of the frame it was
    /// parsed from, and shows the same canonical text.
    #[test]
    fn every_message_comes_back_equal(m in message()) {
        let bytes = serde_json::to_vec(&m).unwrap();
        let from = m["from"].as_str().unwrap();
        let principal = Principal::new(from).unwrap();
        let mut a = Ledger::new(LedgerConfig::open_auditor());
        let first = a.deliver(&bytes, &principal, LocalTime(0));
        let mut b = round_trip(&a, LedgerConfig::open_auditor());
        let t = thread(m["thread"].as_str().unwrap());
        prop_assert_eq!(a.view_text(&t), b.view_text(&t));
        let again = b.deliver(&bytes, &principal, LocalTime(0));
        let expected = a.deliver(&bytes, &principal, LocalTime(0));
        prop_assert_eq!(&again, &expected, "first answer {:?}", first);
    }

    /// Cut short anywhere, a state is refused; with any byte changed, it
    /// is refused or read as some ledger: never a panic.
    #[test]
    fn damaged_states_never_panic(
        ms in moves(20),
        cut in any::<prop::sample::Index>(),
        flip in any::<prop::sample::Index>(),
        byte in any::<u8>(),
    ) {
        let frames = build(&ms);
        let mut a = Ledger::new(config(Some("reviewer")));
        for s in &frames {
            a.deliver(&s.bytes, &s.principal, LocalTime(0));
        }
        let mut bytes = Vec::new();
        a.write_state(&mut bytes);
        let short = &bytes[..cut.index(bytes.len())];
        prop_assert!(Ledger::read_state(config(Some("reviewer")), short).is_err());
        let mut changed = bytes.clone();
        let i = flip.index(changed.len());
        changed[i] = byte;
        // Refused, or read as some ledger (the agent's snapshot file keeps
        // a checksum, so a changed byte never gets this far there).
        let _ = Ledger::read_state(config(Some("reviewer")), &changed);
    }
}

#[test]
fn a_state_of_another_format_or_with_bytes_after_it_is_refused() {
    let a = Ledger::new(config(None));
    let mut bytes = Vec::new();
    a.write_state(&mut bytes);
    assert!(Ledger::read_state(config(None), &bytes).is_ok());
    let mut other = bytes.clone();
    other[0] = 99;
    let e = Ledger::read_state(config(None), &other).unwrap_err();
    assert!(e.to_string().contains("format 99"), "{e}");
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(Ledger::read_state(config(None), &longer).is_err());
}
