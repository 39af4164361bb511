//! What a power loss took away, so that a harness can say which kind of
//! crash it made ("power loss with unsynced data", "a torn write", "a
//! rename that was not durable") and count them.

use std::path::PathBuf;

use crate::crash::Cut;

/// One file that had data changes not yet durable at the power loss.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LostData {
    /// Where the file is after the power loss if it survived, else where it
    /// was live (relative to the root).
    pub path: PathBuf,
    /// Whether the file has a name after the power loss.
    pub survived: bool,
    /// Unsynced changes (writes and size changes).
    pub unsynced_changes: usize,
    /// Bytes those writes carried.
    pub unsynced_bytes: u64,
    /// Changes kept whole (a torn cut keeps a prefix; a clean one none).
    pub kept_changes: usize,
    /// Written bytes kept, the torn part of a write included.
    pub kept_bytes: u64,
    /// The cut fell inside a write: part of one `write` reached the disk.
    pub torn: bool,
}

impl LostData {
    /// Whether anything of this file's unsynced changes was dropped.
    pub fn dropped_anything(&self) -> bool {
        !self.survived || self.kept_changes < self.unsynced_changes
    }
}

/// The summary of one power loss. Paths are relative to the root, sorted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lost {
    /// The cut that was made.
    pub cut: Cut,
    /// Live names that are gone (never made durable, or renamed in without
    /// a durable rename).
    pub names_gone: Vec<PathBuf>,
    /// Names that came back (removed or renamed away, with the directory
    /// never synced after).
    pub names_back: Vec<PathBuf>,
    /// Names that exist before and after but now name another file (a
    /// rename over them, or a replacement, that was not durable).
    pub names_changed: Vec<PathBuf>,
    /// Files that had unsynced data changes.
    pub files: Vec<LostData>,
}

impl Lost {
    /// Nothing differs from the live state: every name and byte was durable.
    pub fn is_empty(&self) -> bool {
        self.names_gone.is_empty()
            && self.names_back.is_empty()
            && self.names_changed.is_empty()
            && !self.files.iter().any(LostData::dropped_anything)
    }

    /// Some file lost unsynced data.
    pub fn dropped_data(&self) -> bool {
        self.files.iter().any(LostData::dropped_anything)
    }

    /// Some name differs from the live state.
    pub fn changed_names(&self) -> bool {
        !(self.names_gone.is_empty() && self.names_back.is_empty() && self.names_changed.is_empty())
    }

    /// Unsynced written bytes that did not survive.
    pub fn bytes_dropped(&self) -> u64 {
        self.files
            .iter()
            .map(|f| f.unsynced_bytes - f.kept_bytes.min(f.unsynced_bytes))
            .sum()
    }

    /// Files whose cut fell inside a write.
    pub fn torn_writes(&self) -> usize {
        self.files.iter().filter(|f| f.torn).count()
    }
}
