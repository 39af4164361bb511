//! One file's data as durability sees it: the bytes a power loss would
//! leave, and the changes made since, in the order they were made.
//!
//! Keeping the changes rather than a second copy of the bytes is what makes
//! the torn cut possible (a prefix of them can be replayed), and it lets the
//! model compute the live bytes without reading the backing file.

/// One data change of a file that is not durable yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// `pwrite` of `bytes` at `offset`; a gap past the end reads as zeros.
    Write {
        /// Where the bytes go.
        offset: u64,
        /// What was written (never empty: empty writes change nothing).
        bytes: Vec<u8>,
    },
    /// `truncate`/`ftruncate`: the file becomes exactly this long.
    SetLen(u64),
}

impl Change {
    /// How many units of a torn cut this change spans: a write spans its
    /// bytes, so a cut can fall inside it; a size change is one unit, so it
    /// is either kept or not.
    pub fn weight(&self) -> u64 {
        match self {
            Change::Write { bytes, .. } => bytes.len() as u64,
            Change::SetLen(_) => 1,
        }
    }
}

/// What a torn replay kept of a file's unsynced changes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Kept {
    /// Changes applied whole.
    pub changes: usize,
    /// Written bytes applied (whole changes and the torn part).
    pub bytes: u64,
    /// The cut fell inside a write: part of it was kept, part dropped.
    pub torn: bool,
}

/// Past this many unsynced changes of one file, they are merged (see
/// [`FileData::merge`]), so that a program that never syncs cannot make
/// the model hold every write it ever made.
pub const MERGE_CHANGES: usize = 4096;

/// Past this many unsynced written bytes (or twice the file's length, if
/// that is more), the changes are merged too.
pub const MERGE_BYTES: u64 = 16 << 20;

/// The durable bytes of a file and its unsynced changes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileData {
    durable: Vec<u8>,
    pending: Vec<Change>,
    /// Written bytes among `pending`, kept as it grows.
    pending_bytes: u64,
    /// The live length, kept as it changes.
    live_len: u64,
}

impl FileData {
    /// A file whose bytes are all durable (as found at mount, or after a
    /// power loss).
    pub fn durable_only(bytes: Vec<u8>) -> FileData {
        FileData {
            live_len: bytes.len() as u64,
            durable: bytes,
            pending: Vec::new(),
            pending_bytes: 0,
        }
    }

    /// The bytes a clean power loss would leave.
    pub fn durable(&self) -> &[u8] {
        &self.durable
    }

    /// The changes made since the last sync, oldest first.
    pub fn pending(&self) -> &[Change] {
        &self.pending
    }

    /// The live bytes: the durable ones with every pending change applied.
    pub fn live(&self) -> Vec<u8> {
        let mut bytes = self.durable.clone();
        for change in &self.pending {
            apply(&mut bytes, change, u64::MAX);
        }
        bytes
    }

    /// The live length, without building the live bytes.
    pub fn live_len(&self) -> u64 {
        self.live_len
    }

    /// Records a write. Callers bound `offset + bytes.len()` (see
    /// [`crate::model::MAX_FILE_LEN`]) so that replay fits in memory.
    pub fn write(&mut self, offset: u64, bytes: &[u8]) {
        if !bytes.is_empty() {
            self.live_len = self.live_len.max(offset + bytes.len() as u64);
            self.pending_bytes += bytes.len() as u64;
            self.pending.push(Change::Write {
                offset,
                bytes: bytes.to_vec(),
            });
            self.merge_if_long();
        }
    }

    /// Records a size change.
    pub fn set_len(&mut self, len: u64) {
        self.live_len = len;
        self.pending.push(Change::SetLen(len));
        self.merge_if_long();
    }

    fn merge_if_long(&mut self) {
        if self.pending.len() > MERGE_CHANGES
            || self.pending_bytes > MERGE_BYTES.max(2 * self.live_len)
        {
            self.merge();
        }
    }

    /// Replaces the unsynced changes with two that have the same effect:
    /// one write of the live bytes from offset 0, then the live size. A
    /// torn cut of a merged file keeps a prefix of its live bytes over its
    /// durable ones (and the size only if it keeps everything): coarser
    /// than the changes as made, but still a state the writes could leave.
    pub fn merge(&mut self) {
        if self.pending.len() <= 2 {
            return;
        }
        let live = self.live();
        let len = live.len() as u64;
        self.pending.clear();
        self.pending_bytes = len;
        if !live.is_empty() {
            self.pending.push(Change::Write {
                offset: 0,
                bytes: live,
            });
        }
        self.pending.push(Change::SetLen(len));
    }

    /// `fsync`/`fdatasync` returned: every change so far is durable.
    pub fn sync(&mut self) {
        // In place: an appending log synced after each record would else
        // copy the whole file at every sync.
        for change in self.pending.drain(..) {
            apply(&mut self.durable, &change, u64::MAX);
        }
        self.pending_bytes = 0;
    }

    /// Total weight of the pending changes (see [`Change::weight`]).
    pub fn pending_weight(&self) -> u64 {
        self.pending.iter().map(Change::weight).sum()
    }

    /// Written bytes among the pending changes.
    pub fn pending_bytes(&self) -> u64 {
        self.pending_bytes
    }

    /// The durable bytes plus the pending changes replayed in order up to
    /// `cut` units of weight: changes wholly inside the cut are applied, a
    /// write the cut falls inside is applied up to the cut, the rest is
    /// dropped. `cut` 0 is a clean power loss; a cut at or past
    /// [`FileData::pending_weight`] keeps everything.
    pub fn torn(&self, cut: u64) -> (Vec<u8>, Kept) {
        let mut bytes = self.durable.clone();
        let mut kept = Kept::default();
        let mut left = cut;
        for change in &self.pending {
            if left == 0 {
                break;
            }
            let weight = change.weight();
            if weight <= left {
                apply(&mut bytes, change, u64::MAX);
                kept.changes += 1;
                if let Change::Write { bytes: b, .. } = change {
                    kept.bytes += b.len() as u64;
                }
                left -= weight;
            } else {
                // Only a write weighs more than one unit, so only a write
                // can be cut inside.
                apply(&mut bytes, change, left);
                kept.bytes += left;
                kept.torn = true;
                break;
            }
        }
        (bytes, kept)
    }
}

/// Applies `change` to `bytes`, a write only up to its first `limit` bytes.
fn apply(bytes: &mut Vec<u8>, change: &Change, limit: u64) {
    match change {
        Change::Write {
            offset,
            bytes: data,
        } => {
            let take = data.len().min(usize::try_from(limit).unwrap_or(usize::MAX));
            let data = &data[..take];
            // Offsets were bounded when the write was recorded.
            let start = usize::try_from(*offset).unwrap_or(usize::MAX);
            let end = start.saturating_add(data.len());
            if bytes.len() < end {
                bytes.resize(end, 0);
            }
            bytes[start..end].copy_from_slice(data);
        }
        Change::SetLen(len) => {
            bytes.resize(usize::try_from(*len).unwrap_or(usize::MAX), 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_is_durable_plus_pending_in_order() {
        let mut d = FileData::durable_only(b"hello".to_vec());
        d.write(3, b"p!");
        d.write(7, b"x");
        assert_eq!(d.live(), b"help!\0\0x");
        assert_eq!(d.live_len(), 8);
        d.set_len(2);
        assert_eq!(d.live(), b"he");
        assert_eq!(d.durable(), b"hello");
        d.sync();
        assert_eq!(d.durable(), b"he");
        assert!(d.pending().is_empty());
    }

    #[test]
    fn torn_keeps_a_prefix_of_the_pending_changes() {
        let mut d = FileData::durable_only(b"ab".to_vec());
        d.write(2, b"cde");
        d.set_len(1);
        d.write(1, b"XY");
        assert_eq!(d.pending_weight(), 6);
        assert_eq!(d.torn(0).0, b"ab");
        let (bytes, kept) = d.torn(2);
        assert_eq!(bytes, b"abcd");
        assert_eq!(
            kept,
            Kept {
                changes: 0,
                bytes: 2,
                torn: true
            }
        );
        assert_eq!(d.torn(3).0, b"abcde");
        assert_eq!(d.torn(4).0, b"a");
        let (bytes, kept) = d.torn(5);
        assert_eq!(bytes, b"aX");
        assert!(kept.torn);
        let (bytes, kept) = d.torn(6);
        assert_eq!(bytes, d.live());
        assert_eq!(kept.changes, 3);
        assert!(!kept.torn);
        assert_eq!(d.torn(1000).0, d.live());
    }

    #[test]
    fn many_unsynced_changes_are_merged_into_the_same_live_bytes() {
        let mut d = FileData::durable_only(b"durable".to_vec());
        for i in 0..(MERGE_CHANGES as u64 + 1) {
            d.write(i % 100, &[b'a' + (i % 26) as u8]);
        }
        let live = d.live();
        assert_eq!(d.pending().len(), 2);
        assert_eq!(d.live_len(), live.len() as u64);
        let mut expect = b"durable".to_vec();
        for i in 0..(MERGE_CHANGES as u64 + 1) {
            let at = (i % 100) as usize;
            if expect.len() <= at {
                expect.resize(at + 1, 0);
            }
            expect[at] = b'a' + (i % 26) as u8;
        }
        assert_eq!(live, expect);
        // A torn cut keeps a prefix of the live bytes over the durable ones.
        let (torn, kept) = d.torn(3);
        assert_eq!(&torn[..3], &live[..3]);
        assert_eq!(&torn[3..7], &b"durable"[3..]);
        assert!(kept.torn);
        d.sync();
        assert_eq!(d.durable(), &live[..]);
        assert_eq!(d.pending_bytes(), 0);
    }
}
