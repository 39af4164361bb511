//! Frames read once per thread, whoever reads them.
//!
//! In a simulation every frame is read by the harness when it is sent, by
//! each receiver it reaches (again for every duplicate), and once more by
//! each replay of a receiver's log after a crash. A read is a pure
//! function of the bytes, so the latest frames read on a thread are kept
//! with their message: a receiver reading a frame the harness read shares
//! its message, and with it the content's canonical text and digest.
//! Frames are compared whole, so a kept read is only ever given for the
//! same bytes.

use std::cell::RefCell;
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::Hasher;
use std::sync::Arc;

use crate::wire::{parse_frame, WireError};

use super::store::SharedMessage;

/// How many frames each generation keeps, and how many bytes of them. The
/// frames of a run's recent traffic are read again within a few hundred
/// deliveries; older ones are let go a generation later. The byte bound
/// keeps a stream of large frames from holding much memory.
const GENERATION: usize = 2048;
const GENERATION_BYTES: usize = 4 << 20;

/// Frames by a digest of their ends, each kept with its read.
type Generation = HashMap<u64, Vec<(Box<[u8]>, Arc<SharedMessage>)>>;

#[derive(Default)]
struct Kept {
    young: Generation,
    young_len: usize,
    young_bytes: usize,
    old: Generation,
}

thread_local! {
    static KEPT: RefCell<Kept> = RefCell::new(Kept::default());
}

/// A digest of the frame's length and its first and last bytes: enough to
/// tell frames apart (they differ in their IDs, near the start), at a
/// fraction of the cost of digesting them whole. Equal digests are
/// confirmed by comparing the frames.
fn key(frame: &[u8]) -> u64 {
    let mut h = DefaultHasher::new();
    h.write_usize(frame.len());
    h.write(&frame[..frame.len().min(96)]);
    h.write(&frame[frame.len().saturating_sub(32)..]);
    h.finish()
}

fn find(generation: &Generation, key: u64, frame: &[u8]) -> Option<Arc<SharedMessage>> {
    generation
        .get(&key)?
        .iter()
        .find(|(f, _)| **f == *frame)
        .map(|(_, m)| m.clone())
}

/// The message `frame` holds, as [`parse_frame`] reads it, shared with
/// every earlier read of the same bytes on this thread that is still kept.
/// A frame that does not parse is read again each time: refusals are rare
/// and cheap beside a message.
pub fn parse_shared(frame: &[u8]) -> Result<Arc<SharedMessage>, WireError> {
    let k = key(frame);
    let found =
        KEPT.with_borrow(|kept| find(&kept.young, k, frame).or_else(|| find(&kept.old, k, frame)));
    if let Some(m) = found {
        return Ok(m);
    }
    let message = SharedMessage::new(parse_frame(frame)?);
    KEPT.with_borrow_mut(|kept| {
        if kept.young_len >= GENERATION || kept.young_bytes + frame.len() > GENERATION_BYTES {
            kept.old = std::mem::take(&mut kept.young);
            kept.young_len = 0;
            kept.young_bytes = 0;
        }
        kept.young
            .entry(k)
            .or_default()
            .push((frame.into(), message.clone()));
        kept.young_len += 1;
        kept.young_bytes += frame.len();
    });
    Ok(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(id: &str, text: &str) -> Vec<u8> {
        format!(
            r#"{{"tern":"0.1","id":"{id}","from":"alice","to":["bob"],"thread":"t","reply":null,"act":"ASK","body":{{"question":"{text}"}}}}"#
        )
        .into_bytes()
    }

    #[test]
    fn the_same_bytes_share_one_read_and_other_bytes_do_not() {
        let text = |c: char| format!("{}{c}{}", "a".repeat(10), "b".repeat(70));
        let a = frame("alice:1", &text('x'));
        let first = parse_shared(&a).expect("parses");
        let again = parse_shared(&a.clone()).expect("parses");
        assert!(Arc::ptr_eq(&first, &again));
        // Another content where the digest does not look: the frames
        // are told apart by comparing them whole.
        let b = frame("alice:1", &text('y'));
        assert_eq!(key(&a), key(&b));
        let other = parse_shared(&b).expect("parses");
        assert!(!Arc::ptr_eq(&first, &other));
        assert_ne!(first.message(), other.message());
        assert_eq!(*other.message(), parse_frame(&b).expect("parses"));
    }

    #[test]
    fn a_refused_frame_gives_the_read_error_every_time() {
        let bad = b"{\"tern\":".to_vec();
        let want = parse_frame(&bad).expect_err("refused");
        assert_eq!(parse_shared(&bad).expect_err("refused"), want);
        assert_eq!(parse_shared(&bad).expect_err("refused"), want);
    }

    #[test]
    fn old_frames_are_let_go_after_two_generations() {
        let a = frame("alice:0", "x");
        let first = parse_shared(&a).expect("parses");
        for i in 1..=2 * GENERATION + 1 {
            parse_shared(&frame(&format!("alice:{i}"), "x")).expect("parses");
        }
        let again = parse_shared(&a).expect("parses");
        assert!(!Arc::ptr_eq(&first, &again));
        assert_eq!(first.message(), again.message());
    }
}
