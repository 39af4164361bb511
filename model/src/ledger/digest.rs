//! Digests of views, so that two ledgers' views of a thread are compared
//! without writing either out.
//!
//! The simulator compares a receiver's view with the oracle's after nearly
//! every delivery, and when both are ledgers, writing two views of a
//! thread's whole history and comparing the bytes cost more than the
//! deliveries themselves. A view's digest is made from digests kept with
//! the parts that make it: each stored content's (once per content), each
//! message item's (once per change of its standing), and the small derived
//! lists (commitments, pending, revisions, effects), written as before.
//!
//! Two digests are equal exactly when the views' canonical texts are,
//! save for a chance of about 2^-128 that two different texts meet. The
//! list of messages is digested as the sum of its items' digests: its items
//! are in ID order and each holds its ID, so the same set of items is the
//! same text. Digests live only in memory: they are never written, so the
//! hasher need not be stable across versions.

use std::collections::hash_map::DefaultHasher;
use std::hash::Hasher;

/// A digest of a view's canonical text, as [`super::Ledger::view_digest`]
/// gives it. Only a ledger makes one: a receiver built on the reference
/// ledger can answer with it, and the harness then compares digests, and
/// writes views out only to explain a difference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ViewDigest(pub(crate) u128);

/// A 128-bit digest of bytes written in pieces: two keyed SipHash states
/// side by side, the second told apart by a first byte of its own.
/// Writing `a` then `b` digests as writing `a` and `b` joined.
pub(crate) struct Digester {
    low: DefaultHasher,
    high: DefaultHasher,
}

impl Digester {
    pub fn new() -> Digester {
        let mut high = DefaultHasher::new();
        high.write_u8(0xA5);
        Digester {
            low: DefaultHasher::new(),
            high,
        }
    }

    pub fn write(&mut self, bytes: &[u8]) {
        self.low.write(bytes);
        self.high.write(bytes);
    }

    /// A piece whose end the bytes alone do not mark: its length first.
    pub fn write_piece(&mut self, bytes: &[u8]) {
        self.write(&(bytes.len() as u64).to_le_bytes());
        self.write(bytes);
    }

    pub fn write_u128(&mut self, n: u128) {
        self.write(&n.to_le_bytes());
    }

    pub fn finish(&self) -> u128 {
        (u128::from(self.high.finish()) << 64) | u128::from(self.low.finish())
    }
}

/// The digest of a message's content as serde writes it, in field order:
/// the same serialisation is the same content, hence the same canonical
/// text, without paying for the canonical form (sorted keys) that only a
/// written view needs. The converse need not hold: two serialisations of
/// one canonical text would only send a comparison to the texts.
pub(crate) fn of_message(message: &crate::message::Message) -> u128 {
    thread_local! {
        /// Written whole, then digested at once: serde writes a message in
        /// many small pieces, each of which would cost the hasher a call.
        static BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    BUFFER.with_borrow_mut(|buffer| {
        buffer.clear();
        // Serialising a parsed message into memory cannot fail.
        let _ = serde_json::to_writer(&mut *buffer, message);
        let mut d = Digester::new();
        d.write(buffer);
        d.finish()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(bytes: &[u8]) -> u128 {
        let mut d = Digester::new();
        d.write(bytes);
        d.finish()
    }

    #[test]
    fn pieces_digest_as_their_join_and_differ_from_other_bytes() {
        let mut d = Digester::new();
        d.write(b"{\"a\":");
        d.write(b"1}");
        assert_eq!(d.finish(), of(b"{\"a\":1}"));
        assert_ne!(of(b"{\"a\":1}"), of(b"{\"a\":2}"));
        // Both halves carry the bytes.
        let (x, y) = (of(b"x"), of(b"y"));
        assert_ne!(x >> 64, y >> 64);
        assert_ne!(x as u64, y as u64);
    }

    #[test]
    fn a_length_marks_where_a_piece_ends() {
        let mut ab = Digester::new();
        ab.write_piece(b"ab");
        ab.write_piece(b"");
        let mut a_b = Digester::new();
        a_b.write_piece(b"a");
        a_b.write_piece(b"b");
        assert_ne!(ab.finish(), a_b.finish());
    }
}
