//! Open files and directories of the mount, by FUSE file handle.
//!
//! Handle numbers are never reused, not even across a power loss, so a
//! handle from before a power loss can only find nothing (`EBADF`).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::File;

use crate::model::{Ino, Kind};

/// An open regular file: the backing file and how it was opened.
pub(crate) struct OpenFile {
    pub(crate) ino: Ino,
    pub(crate) file: File,
    /// Opened with `O_SYNC` or `O_DSYNC`: each write is durable on return.
    pub(crate) sync: bool,
}

/// An open directory: its entries as they were at `opendir`, so that
/// `readdir` offsets stay meaningful while the directory changes.
pub(crate) struct OpenDir {
    pub(crate) entries: Vec<(Ino, Kind, OsString)>,
}

#[derive(Default)]
pub(crate) struct Handles {
    next: u64,
    files: BTreeMap<u64, OpenFile>,
    dirs: BTreeMap<u64, OpenDir>,
}

impl Handles {
    fn take_number(&mut self) -> u64 {
        self.next += 1;
        self.next
    }

    pub(crate) fn add_file(&mut self, file: OpenFile) -> u64 {
        let fh = self.take_number();
        self.files.insert(fh, file);
        fh
    }

    pub(crate) fn add_dir(&mut self, dir: OpenDir) -> u64 {
        let fh = self.take_number();
        self.dirs.insert(fh, dir);
        fh
    }

    pub(crate) fn file(&self, fh: u64) -> Option<&OpenFile> {
        self.files.get(&fh)
    }

    /// Some open handle of the inode, for `fstat` of a file with no name.
    pub(crate) fn any_for(&self, ino: Ino) -> Option<&OpenFile> {
        self.files.values().find(|f| f.ino == ino)
    }

    pub(crate) fn dir(&self, fh: u64) -> Option<&OpenDir> {
        self.dirs.get(&fh)
    }

    pub(crate) fn close_file(&mut self, fh: u64) {
        self.files.remove(&fh);
    }

    pub(crate) fn close_dir(&mut self, fh: u64) {
        self.dirs.remove(&fh);
    }

    /// Closes everything: a power loss leaves no process with files open.
    pub(crate) fn clear(&mut self) {
        self.files.clear();
        self.dirs.clear();
    }
}
