//! The durability model: an in-memory file system that keeps, for every
//! inode, its live state and the part of it that is durable. No I/O, no
//! clock, no randomness: the FUSE adapter tells it what happened, and
//! [`Model::power_loss`] (in `crash.rs`) says what a power loss leaves.
//!
//! The rules (see the crate documentation for why they are this strict):
//! - a file's data and size changes become durable when `fsync` or
//!   `fdatasync` of that file returns ([`Model::sync_data`]);
//! - a directory's entries become durable, all at once and as they are at
//!   that moment, when `fsync` of that directory returns
//!   ([`Model::sync_dir`]): the new names and the removals alike;
//! - a new inode starts with no durable data (an empty file), its mode as
//!   created, and a symbolic link's target is fixed at its creation.
//!
//! Inode numbers are handed out in order and never reused, so the same
//! history gives the same numbers.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

use crate::data::FileData;
use crate::tree::{Node, Tree};

/// An inode number of the model; the FUSE adapter uses it as the node id.
pub type Ino = u64;

/// The root directory, which always exists and is never renamed.
pub const ROOT: Ino = 1;

/// The largest file the model keeps, since it holds durable bytes and
/// pending writes in memory. A state_dir holds kilobytes to a few
/// megabytes; a write past this fails with `EFBIG`.
pub const MAX_FILE_LEN: u64 = 256 << 20;

/// What an inode is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link.
    Symlink,
    /// A FIFO, socket or device node: no data, only a name and a mode.
    Special,
}

/// What to create.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeSpec {
    /// A regular file with these permission bits.
    File {
        /// Permission bits.
        mode: u32,
    },
    /// A directory with these permission bits.
    Dir {
        /// Permission bits.
        mode: u32,
    },
    /// A symbolic link to `target`.
    Symlink {
        /// The target, as given.
        target: OsString,
    },
    /// A FIFO, socket or device node.
    Special {
        /// Type and permission bits, as `mknod` takes them.
        mode: u32,
        /// The device number, for device nodes.
        rdev: u32,
    },
}

/// How a rename treats an existing destination (`renameat2` flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenameMode {
    /// Plain `rename`: an existing destination is replaced.
    Replace,
    /// `RENAME_NOREPLACE`: an existing destination is an error.
    NoReplace,
    /// `RENAME_EXCHANGE`: both names must exist and swap inodes.
    Exchange,
}

/// Why the model refused an operation. Each maps to the errno a file
/// system gives for it, so the model can stand in for one in tests.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// The inode is not (or no longer) in the model.
    #[error("no inode {0}")]
    NoInode(Ino),
    /// The name is not in the directory.
    #[error("no such entry")]
    NotFound,
    /// The name is already in the directory.
    #[error("the name exists")]
    Exists,
    /// A directory was expected.
    #[error("not a directory")]
    NotDir,
    /// Something other than a directory was expected.
    #[error("is a directory")]
    IsDir,
    /// The directory still has entries.
    #[error("directory not empty")]
    NotEmpty,
    /// A regular file was expected.
    #[error("not a regular file")]
    NotFile,
    /// The file would grow past [`MAX_FILE_LEN`].
    #[error("the file would pass {MAX_FILE_LEN} bytes")]
    TooBig,
    /// A directory cannot move into itself or below itself.
    #[error("a directory cannot move below itself")]
    Loop,
    /// Not a usable entry name (empty, `.`, `..`, or with a slash).
    #[error("not a valid name")]
    BadName,
}

impl ModelError {
    /// The errno a POSIX file system gives for the same refusal.
    pub fn errno(&self) -> i32 {
        match self {
            ModelError::NoInode(_) => libc::ESTALE,
            ModelError::NotFound => libc::ENOENT,
            ModelError::Exists => libc::EEXIST,
            ModelError::NotDir => libc::ENOTDIR,
            ModelError::IsDir => libc::EISDIR,
            ModelError::NotEmpty => libc::ENOTEMPTY,
            ModelError::NotFile => libc::EINVAL,
            ModelError::TooBig => libc::EFBIG,
            ModelError::Loop => libc::EINVAL,
            ModelError::BadName => libc::EINVAL,
        }
    }
}

/// One inode: live state and durable state side by side.
#[derive(Clone, Debug)]
pub(crate) struct Inode {
    pub(crate) kind: Kind,
    /// Live permission bits (with the type bits for a special node).
    pub(crate) mode: u32,
    /// The mode a power loss leaves.
    pub(crate) durable_mode: u32,
    pub(crate) rdev: u32,
    /// A symbolic link's target.
    pub(crate) target: OsString,
    /// A regular file's data.
    pub(crate) data: FileData,
    /// A directory's live entries.
    pub(crate) live: BTreeMap<OsString, Ino>,
    /// A directory's entries as of its last fsync.
    pub(crate) durable: BTreeMap<OsString, Ino>,
    /// Live names of this inode: (directory, name).
    pub(crate) links: BTreeSet<(Ino, OsString)>,
    /// How many durable entries (of any directory still in the model)
    /// name this inode: while there is one, a power loss may bring it back.
    pub(crate) durable_refs: u64,
}

impl Inode {
    pub(crate) fn new(kind: Kind, mode: u32) -> Inode {
        Inode {
            kind,
            mode,
            durable_mode: mode,
            rdev: 0,
            target: OsString::new(),
            data: FileData::default(),
            live: BTreeMap::new(),
            durable: BTreeMap::new(),
            links: BTreeSet::new(),
            durable_refs: 0,
        }
    }
}

/// The whole model: every inode that is live or that a power loss could
/// bring back.
#[derive(Clone, Debug)]
pub struct Model {
    pub(crate) inodes: BTreeMap<Ino, Inode>,
    pub(crate) next: Ino,
    /// The first inode number handed out since the model began or was
    /// last wiped: torn cuts are drawn from a file's number counted from
    /// here, so that the same history since a wipe gives the same cuts,
    /// whatever the mount served before.
    pub(crate) epoch: Ino,
}

impl Default for Model {
    fn default() -> Model {
        Model::new(0o755)
    }
}

impl Model {
    /// An empty file system: only the root, with these permission bits.
    pub fn new(root_mode: u32) -> Model {
        let mut inodes = BTreeMap::new();
        inodes.insert(ROOT, Inode::new(Kind::Dir, root_mode & 0o7777));
        Model {
            inodes,
            next: ROOT + 1,
            epoch: ROOT + 1,
        }
    }

    /// Everything but the root is gone, durable or not: the file system of
    /// a machine whose disk was wiped. Inode numbers go on from where they
    /// were, so that nothing the kernel cached under an old number is
    /// taken for a new file.
    pub fn wipe(&mut self) {
        let mode = self.inodes.get(&ROOT).map_or(0o755, |r| r.durable_mode);
        self.inodes = BTreeMap::from([(ROOT, Inode::new(Kind::Dir, mode))]);
        self.epoch = self.next;
    }

    pub(crate) fn node(&self, ino: Ino) -> Result<&Inode, ModelError> {
        self.inodes.get(&ino).ok_or(ModelError::NoInode(ino))
    }

    fn node_mut(&mut self, ino: Ino) -> Result<&mut Inode, ModelError> {
        self.inodes.get_mut(&ino).ok_or(ModelError::NoInode(ino))
    }

    fn dir(&self, ino: Ino) -> Result<&Inode, ModelError> {
        let node = self.node(ino)?;
        if node.kind == Kind::Dir {
            Ok(node)
        } else {
            Err(ModelError::NotDir)
        }
    }

    fn file_mut(&mut self, ino: Ino) -> Result<&mut Inode, ModelError> {
        let node = self.node_mut(ino)?;
        if node.kind == Kind::File {
            Ok(node)
        } else {
            Err(ModelError::NotFile)
        }
    }

    /// Whether the inode is in the model.
    pub fn contains(&self, ino: Ino) -> bool {
        self.inodes.contains_key(&ino)
    }

    /// What the inode is.
    pub fn kind(&self, ino: Ino) -> Option<Kind> {
        self.inodes.get(&ino).map(|n| n.kind)
    }

    /// The live mode of the inode.
    pub fn mode(&self, ino: Ino) -> Option<u32> {
        self.inodes.get(&ino).map(|n| n.mode)
    }

    /// A symbolic link's target.
    pub fn target(&self, ino: Ino) -> Option<&OsStr> {
        self.inodes
            .get(&ino)
            .filter(|n| n.kind == Kind::Symlink)
            .map(|n| n.target.as_os_str())
    }

    /// A device node's number.
    pub fn rdev(&self, ino: Ino) -> Option<u32> {
        self.inodes.get(&ino).map(|n| n.rdev)
    }

    /// A regular file's data: durable bytes and pending changes.
    pub fn data(&self, ino: Ino) -> Option<&FileData> {
        self.inodes
            .get(&ino)
            .filter(|n| n.kind == Kind::File)
            .map(|n| &n.data)
    }

    /// The inode a live name points at.
    pub fn lookup(&self, parent: Ino, name: &OsStr) -> Option<Ino> {
        self.inodes.get(&parent)?.live.get(name).copied()
    }

    /// A directory's live entries, by name.
    pub fn entries(&self, dir: Ino) -> Result<Vec<(OsString, Ino, Kind)>, ModelError> {
        let node = self.dir(dir)?;
        Ok(node
            .live
            .iter()
            .map(|(name, ino)| {
                let kind = self.kind(*ino).unwrap_or(Kind::Special);
                (name.clone(), *ino, kind)
            })
            .collect())
    }

    /// The directory a directory lives in (the root's is itself).
    pub fn parent(&self, dir: Ino) -> Option<Ino> {
        if dir == ROOT {
            return Some(ROOT);
        }
        self.inodes.get(&dir)?.links.iter().next().map(|(p, _)| *p)
    }

    /// A live path of the inode, relative to the root (the first of its
    /// names in (directory, name) order); `None` once it has no live name.
    pub fn path(&self, ino: Ino) -> Option<PathBuf> {
        let mut parts = Vec::new();
        let mut cur = ino;
        // A live tree has no cycles; the bound only guards a bug.
        for _ in 0..=self.inodes.len() {
            if cur == ROOT {
                return Some(parts.iter().rev().collect());
            }
            let (parent, name) = self.inodes.get(&cur)?.links.iter().next()?;
            parts.push(name.clone());
            cur = *parent;
        }
        None
    }

    /// The next inode number [`Model::create`] will hand out.
    pub fn next_ino(&self) -> Ino {
        self.next
    }

    fn add_entry(&mut self, dir: Ino, name: &OsStr, ino: Ino) -> Result<(), ModelError> {
        self.node_mut(dir)?.live.insert(name.to_owned(), ino);
        self.node_mut(ino)?.links.insert((dir, name.to_owned()));
        Ok(())
    }

    fn remove_entry(&mut self, dir: Ino, name: &OsStr) -> Result<Ino, ModelError> {
        let ino = self
            .node_mut(dir)?
            .live
            .remove(name)
            .ok_or(ModelError::NotFound)?;
        if let Some(node) = self.inodes.get_mut(&ino) {
            node.links.remove(&(dir, name.to_owned()));
        }
        Ok(ino)
    }

    fn free_name(&self, parent: Ino, name: &OsStr) -> Result<(), ModelError> {
        check_name(name)?;
        if self.dir(parent)?.live.contains_key(name) {
            return Err(ModelError::Exists);
        }
        Ok(())
    }

    /// `creat`/`mkdir`/`symlink`/`mknod`: a new inode under a new name.
    pub fn create(&mut self, parent: Ino, name: &OsStr, spec: NodeSpec) -> Result<Ino, ModelError> {
        self.free_name(parent, name)?;
        let node = match spec {
            NodeSpec::File { mode } => Inode::new(Kind::File, mode & 0o7777),
            NodeSpec::Dir { mode } => Inode::new(Kind::Dir, mode & 0o7777),
            NodeSpec::Symlink { target } => {
                let mut node = Inode::new(Kind::Symlink, 0o777);
                node.target = target;
                node
            }
            NodeSpec::Special { mode, rdev } => {
                let mut node = Inode::new(Kind::Special, mode);
                node.rdev = rdev;
                node
            }
        };
        let ino = self.next;
        self.next += 1;
        self.inodes.insert(ino, node);
        self.add_entry(parent, name, ino)?;
        Ok(ino)
    }

    /// `link`: one more name for an existing inode (not a directory).
    pub fn link(&mut self, ino: Ino, parent: Ino, name: &OsStr) -> Result<(), ModelError> {
        if self.node(ino)?.kind == Kind::Dir {
            return Err(ModelError::IsDir);
        }
        self.free_name(parent, name)?;
        self.add_entry(parent, name, ino)
    }

    /// `unlink`: removes a name that is not a directory.
    pub fn unlink(&mut self, parent: Ino, name: &OsStr) -> Result<Ino, ModelError> {
        let ino = self.lookup_in(parent, name)?;
        if self.node(ino)?.kind == Kind::Dir {
            return Err(ModelError::IsDir);
        }
        self.remove_entry(parent, name)?;
        self.collect(ino);
        Ok(ino)
    }

    /// `rmdir`: removes an empty directory.
    pub fn rmdir(&mut self, parent: Ino, name: &OsStr) -> Result<Ino, ModelError> {
        let ino = self.lookup_in(parent, name)?;
        let node = self.node(ino)?;
        if node.kind != Kind::Dir {
            return Err(ModelError::NotDir);
        }
        if !node.live.is_empty() {
            return Err(ModelError::NotEmpty);
        }
        self.remove_entry(parent, name)?;
        self.collect(ino);
        Ok(ino)
    }

    fn lookup_in(&self, parent: Ino, name: &OsStr) -> Result<Ino, ModelError> {
        self.dir(parent)?
            .live
            .get(name)
            .copied()
            .ok_or(ModelError::NotFound)
    }

    /// Whether `dir` is `ancestor` or lies below it in the live tree.
    fn is_within(&self, dir: Ino, ancestor: Ino) -> bool {
        let mut cur = dir;
        for _ in 0..=self.inodes.len() {
            if cur == ancestor {
                return true;
            }
            if cur == ROOT {
                return false;
            }
            match self.parent(cur) {
                Some(p) => cur = p,
                None => return false,
            }
        }
        false
    }

    /// `rename`/`renameat2`. Live only: the source directory's loss of the
    /// name and the destination's gain become durable each with its own
    /// directory's fsync.
    pub fn rename(
        &mut self,
        from: Ino,
        from_name: &OsStr,
        to: Ino,
        to_name: &OsStr,
        how: RenameMode,
    ) -> Result<(), ModelError> {
        let src = self.lookup_in(from, from_name)?;
        check_name(to_name)?;
        let dst = self.dir(to)?.live.get(to_name).copied();
        let src_kind = self.node(src)?.kind;
        if how == RenameMode::Exchange {
            let dst = dst.ok_or(ModelError::NotFound)?;
            if dst == src {
                return Ok(());
            }
            let dst_kind = self.node(dst)?.kind;
            if (src_kind == Kind::Dir && self.is_within(to, src))
                || (dst_kind == Kind::Dir && self.is_within(from, dst))
            {
                return Err(ModelError::Loop);
            }
            self.remove_entry(from, from_name)?;
            self.remove_entry(to, to_name)?;
            self.add_entry(from, from_name, dst)?;
            self.add_entry(to, to_name, src)?;
            return Ok(());
        }
        if let Some(dst) = dst {
            if how == RenameMode::NoReplace {
                return Err(ModelError::Exists);
            }
            if dst == src {
                // The same name, or two hard links of one file: POSIX says
                // rename does nothing.
                return Ok(());
            }
            let dst_node = self.node(dst)?;
            match (src_kind == Kind::Dir, dst_node.kind == Kind::Dir) {
                (true, false) => return Err(ModelError::NotDir),
                (false, true) => return Err(ModelError::IsDir),
                (true, true) if !dst_node.live.is_empty() => return Err(ModelError::NotEmpty),
                _ => {}
            }
        }
        if src_kind == Kind::Dir && self.is_within(to, src) {
            return Err(ModelError::Loop);
        }
        self.remove_entry(from, from_name)?;
        if dst.is_some() {
            self.remove_entry(to, to_name)?;
        }
        self.add_entry(to, to_name, src)?;
        if let Some(dst) = dst {
            self.collect(dst);
        }
        Ok(())
    }

    /// `write`/`pwrite` of a regular file.
    pub fn write(&mut self, ino: Ino, offset: u64, bytes: &[u8]) -> Result<(), ModelError> {
        let end = offset
            .checked_add(bytes.len() as u64)
            .ok_or(ModelError::TooBig)?;
        if end > MAX_FILE_LEN {
            return Err(ModelError::TooBig);
        }
        self.file_mut(ino)?.data.write(offset, bytes);
        Ok(())
    }

    /// `truncate`/`ftruncate` (a size `setattr`).
    pub fn set_len(&mut self, ino: Ino, len: u64) -> Result<(), ModelError> {
        if len > MAX_FILE_LEN {
            return Err(ModelError::TooBig);
        }
        self.file_mut(ino)?.data.set_len(len);
        Ok(())
    }

    /// `chmod`: new permission bits (a special node keeps its type bits).
    pub fn set_mode(&mut self, ino: Ino, mode: u32) -> Result<(), ModelError> {
        let node = self.node_mut(ino)?;
        node.mode = (node.mode & !0o7777) | (mode & 0o7777);
        Ok(())
    }

    /// `fdatasync` returned: the file's data and size are durable.
    pub fn sync_data(&mut self, ino: Ino) -> Result<(), ModelError> {
        let node = self.node_mut(ino)?;
        node.data.sync();
        Ok(())
    }

    /// `fsync` of a file returned: its data, size and mode are durable.
    /// (Its names are not: those belong to its directories.)
    pub fn sync_file(&mut self, ino: Ino) -> Result<(), ModelError> {
        let node = self.node_mut(ino)?;
        node.data.sync();
        node.durable_mode = node.mode;
        Ok(())
    }

    /// `fsync` of a directory returned: its entries as they are now, and its
    /// mode, are durable. Inodes that lose their last durable name and have
    /// no live one leave the model.
    pub fn sync_dir(&mut self, dir: Ino) -> Result<(), ModelError> {
        let node = self.dir(dir)?;
        let live = node.live.clone();
        let node = self.node_mut(dir)?;
        node.durable_mode = node.mode;
        let old = std::mem::replace(&mut node.durable, live.clone());
        for ino in live.values() {
            if let Some(n) = self.inodes.get_mut(ino) {
                n.durable_refs += 1;
            }
        }
        for ino in old.values() {
            if let Some(n) = self.inodes.get_mut(ino) {
                n.durable_refs = n.durable_refs.saturating_sub(1);
            }
        }
        for ino in old.values() {
            self.collect(*ino);
        }
        Ok(())
    }

    /// Everything live becomes durable, as after `sync` and an orderly
    /// shutdown.
    pub fn sync_all(&mut self) {
        for node in self.inodes.values_mut() {
            node.data.sync();
            node.durable_mode = node.mode;
            node.durable = node.live.clone();
            node.durable_refs = 0;
        }
        let refs: Vec<Ino> = self
            .inodes
            .values()
            .flat_map(|n| n.durable.values().copied())
            .collect();
        for ino in refs {
            if let Some(n) = self.inodes.get_mut(&ino) {
                n.durable_refs += 1;
            }
        }
        let all: Vec<Ino> = self.inodes.keys().copied().collect();
        for ino in all {
            self.collect(ino);
        }
    }

    /// Drops inodes that nothing can reach any more, neither a live name
    /// nor a durable one, starting from `start`.
    fn collect(&mut self, start: Ino) {
        let mut work = vec![start];
        while let Some(ino) = work.pop() {
            if ino == ROOT {
                continue;
            }
            let Some(node) = self.inodes.get(&ino) else {
                continue;
            };
            if !node.links.is_empty() || node.durable_refs > 0 {
                continue;
            }
            let Some(node) = self.inodes.remove(&ino) else {
                continue;
            };
            for child in node.durable.values() {
                if let Some(c) = self.inodes.get_mut(child) {
                    c.durable_refs = c.durable_refs.saturating_sub(1);
                    work.push(*child);
                }
            }
            for (name, child) in &node.live {
                if let Some(c) = self.inodes.get_mut(child) {
                    c.links.remove(&(ino, name.clone()));
                    work.push(*child);
                }
            }
        }
    }

    /// Every live path and the inode it names.
    pub(crate) fn live_paths(&self) -> BTreeMap<PathBuf, Ino> {
        let mut out = BTreeMap::new();
        let mut stack = vec![(ROOT, PathBuf::new())];
        let mut seen = BTreeSet::new();
        while let Some((dir, path)) = stack.pop() {
            if !seen.insert(dir) {
                continue;
            }
            let Some(node) = self.inodes.get(&dir) else {
                continue;
            };
            for (name, ino) in &node.live {
                let p = path.join(name);
                out.insert(p.clone(), *ino);
                if self.kind(*ino) == Some(Kind::Dir) {
                    stack.push((*ino, p));
                }
            }
        }
        out
    }

    /// The live state as a [`Tree`].
    pub fn tree(&self) -> Tree {
        let mut tree = Tree::default();
        for (path, ino) in self.live_paths() {
            let Some(node) = self.inodes.get(&ino) else {
                continue;
            };
            tree.nodes
                .insert(path, self.tree_node(node, node.data.live(), node.mode));
        }
        tree
    }

    pub(crate) fn tree_node(&self, node: &Inode, data: Vec<u8>, mode: u32) -> Node {
        match node.kind {
            Kind::Dir => Node::Dir {
                mode: mode & 0o7777,
            },
            Kind::File => Node::File {
                mode: mode & 0o7777,
                data,
            },
            Kind::Symlink => Node::Symlink {
                target: node.target.clone(),
            },
            Kind::Special => Node::Special {
                mode: mode & 0o7777,
            },
        }
    }
}

fn check_name(name: &OsStr) -> Result<(), ModelError> {
    use std::os::unix::ffi::OsStrExt;
    let b = name.as_bytes();
    if b.is_empty() || b == b"." || b == b".." || b.contains(&b'/') || b.contains(&0) {
        return Err(ModelError::BadName);
    }
    Ok(())
}
