//! A plain binary form for values this crate keeps, written and read by
//! hand: what a snapshot of a ledger is made of ([`crate::ledger::Ledger::write_state`]).
//!
//! Reading it back must cost far less than reading the frames again (a
//! restarted receiver reads its whole state at every start), so it holds
//! no JSON and no names to look up: lengths and integers as LEB128
//! varints, strings as their length and bytes, closed vocabularies as
//! their index. Nothing in it is trusted: every length is checked against
//! what is left, every string for UTF-8, every index against the table it
//! points into, so that bytes that are not a snapshot give an error, never
//! a panic.

use std::fmt;

/// Why bytes could not be read back as a snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateError(pub(crate) String);

impl StateError {
    pub(crate) fn new(what: impl Into<String>) -> StateError {
        StateError(what.into())
    }
}

impl fmt::Display for StateError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StateError {}

/// Appends values to a buffer.
pub(crate) struct Out<'a>(pub &'a mut Vec<u8>);

impl Out<'_> {
    pub fn u8(&mut self, v: u8) {
        self.0.push(v);
    }

    pub fn bool(&mut self, v: bool) {
        self.0.push(u8::from(v));
    }

    /// An unsigned integer as a LEB128 varint: seven bits a byte, low
    /// first, the high bit set on every byte but the last.
    pub fn uint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }

    pub fn usize(&mut self, v: usize) {
        self.uint(v as u64);
    }

    pub fn i128(&mut self, v: i128) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    pub fn str(&mut self, s: &str) {
        self.usize(s.len());
        self.0.extend_from_slice(s.as_bytes());
    }

    pub fn option<T>(&mut self, v: Option<&T>, mut write: impl FnMut(&mut Self, &T)) {
        match v {
            None => self.u8(0),
            Some(v) => {
                self.u8(1);
                write(self, v);
            }
        }
    }

    pub fn list<I>(
        &mut self,
        items: impl ExactSizeIterator<Item = I>,
        mut write: impl FnMut(&mut Self, I),
    ) {
        self.usize(items.len());
        for item in items {
            write(self, item);
        }
    }
}

/// Reads values back from a slice, front to back.
pub(crate) struct In<'a> {
    rest: &'a [u8],
}

impl<'a> In<'a> {
    pub fn new(bytes: &'a [u8]) -> In<'a> {
        In { rest: bytes }
    }

    pub fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], StateError> {
        if n > self.rest.len() {
            return Err(StateError::new("the snapshot ends early"));
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }

    pub fn u8(&mut self) -> Result<u8, StateError> {
        Ok(self.take(1)?[0])
    }

    pub fn bool(&mut self) -> Result<bool, StateError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(StateError::new(format!("{b} is not a boolean"))),
        }
    }

    pub fn uint(&mut self) -> Result<u64, StateError> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            v |= u64::from(b & 0x7f)
                .checked_shl(shift)
                .filter(|x| x >> shift == u64::from(b & 0x7f))
                .ok_or_else(|| StateError::new("a number overflows"))?;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(StateError::new("a number overflows"))
    }

    pub fn usize(&mut self) -> Result<usize, StateError> {
        usize::try_from(self.uint()?).map_err(|_| StateError::new("a number overflows"))
    }

    pub fn u32(&mut self) -> Result<u32, StateError> {
        u32::try_from(self.uint()?).map_err(|_| StateError::new("a number overflows"))
    }

    pub fn i128(&mut self) -> Result<i128, StateError> {
        let bytes = self.take(16)?;
        let mut a = [0u8; 16];
        a.copy_from_slice(bytes);
        Ok(i128::from_le_bytes(a))
    }

    /// A count of items that each take at least one byte: never more than
    /// the bytes left, so a corrupt count cannot make a huge allocation.
    pub fn count(&mut self) -> Result<usize, StateError> {
        let n = self.usize()?;
        if n > self.rest.len() {
            return Err(StateError::new("a list is longer than the snapshot"));
        }
        Ok(n)
    }

    pub fn str(&mut self) -> Result<&'a str, StateError> {
        let n = self.usize()?;
        std::str::from_utf8(self.take(n)?).map_err(|_| StateError::new("a string is not UTF-8"))
    }

    pub fn option<T>(
        &mut self,
        mut read: impl FnMut(&mut Self) -> Result<T, StateError>,
    ) -> Result<Option<T>, StateError> {
        match self.u8()? {
            0 => Ok(None),
            1 => read(self).map(Some),
            b => Err(StateError::new(format!("{b} is not an option tag"))),
        }
    }

    pub fn list<T>(
        &mut self,
        mut read: impl FnMut(&mut Self) -> Result<T, StateError>,
    ) -> Result<Vec<T>, StateError> {
        let n = self.count()?;
        let mut items = Vec::with_capacity(n);
        for _ in 0..n {
            items.push(read(self)?);
        }
        Ok(items)
    }

    /// An index into a table of `len` items.
    pub fn index(&mut self, len: usize, what: &str) -> Result<usize, StateError> {
        let i = self.usize()?;
        if i >= len {
            return Err(StateError::new(format!(
                "{what} {i} is out of range (there are {len})"
            )));
        }
        Ok(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_strings_and_lists_round_trip() {
        let mut buf = Vec::new();
        let mut out = Out(&mut buf);
        for v in [0, 1, 127, 128, 300, u64::MAX] {
            out.uint(v);
        }
        out.i128(i128::MIN);
        out.str("héllo");
        out.option(Some(&7u64), |o, v| o.uint(*v));
        out.option(None::<&u64>, |o, v| o.uint(*v));
        out.list([1u64, 2, 3].iter(), |o, v| o.uint(*v));
        out.bool(true);
        let mut r = In::new(&buf);
        for v in [0, 1, 127, 128, 300, u64::MAX] {
            assert_eq!(r.uint().unwrap(), v);
        }
        assert_eq!(r.i128().unwrap(), i128::MIN);
        assert_eq!(r.str().unwrap(), "héllo");
        assert_eq!(r.option(In::uint).unwrap(), Some(7));
        assert_eq!(r.option(In::uint).unwrap(), None);
        assert_eq!(r.list(In::uint).unwrap(), vec![1, 2, 3]);
        assert!(r.bool().unwrap());
        assert!(r.is_empty());
    }

    #[test]
    fn bad_bytes_are_errors() {
        // A varint that never ends, one too long for 64 bits, a string
        // past the end, a list longer than what is left, bad UTF-8.
        assert!(In::new(&[0x80, 0x80]).uint().is_err());
        assert!(In::new(&[0xff; 11]).uint().is_err());
        assert!(
            In::new(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02])
                .uint()
                .is_err()
        );
        assert!(In::new(&[5, b'a']).str().is_err());
        assert!(In::new(&[9, 1]).list(In::uint).is_err());
        assert!(In::new(&[1, 0xff]).str().is_err());
        assert!(In::new(&[3]).index(3, "entry").is_err());
        assert!(In::new(&[2]).bool().is_err());
    }
}
