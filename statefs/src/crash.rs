//! Power loss: from the model's durable state, the tree a machine would
//! find when it comes back, and what was lost on the way.
//!
//! The tree after a power loss is the durable directory entries, followed
//! from the root breadth-first in name order, each pointing at an inode
//! with its durable data (clean cut) or its durable data plus a prefix of
//! its unsynced changes (torn cut). An inode no durable entry reaches is
//! gone. A directory keeps only the first name this walk meets: with the
//! per-directory rule a directory moved between two directories, only one
//! of them synced, can be durable under both names, and no file system can
//! show a directory twice.

use std::collections::{BTreeMap, VecDeque};
use std::ffi::OsString;
use std::path::PathBuf;

use crate::data::{FileData, Kept};
use crate::lost::{Lost, LostData};
use crate::model::{Ino, Inode, Kind, Model, ROOT};
use crate::tree::Tree;

/// How a power loss treats unsynced data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// Every change that was not durable is dropped.
    Clean,
    /// Each file keeps its durable data plus a prefix of its unsynced
    /// changes, applied in order and cut at a point drawn from `seed`
    /// (possibly inside a write). The same seed and history give the same
    /// cuts. Directory entries are as in [`Cut::Clean`].
    Torn {
        /// Chooses the cut of every file.
        seed: u64,
    },
}

/// The result of following the durable entries from the root.
struct Survivors {
    /// Inodes reached, in the order first met (the root first).
    order: Vec<Ino>,
    /// Surviving entries of each surviving directory.
    entries: BTreeMap<Ino, Vec<(OsString, Ino)>>,
    /// Every surviving path and the inode it names.
    paths: BTreeMap<PathBuf, Ino>,
}

impl Model {
    fn survivors(&self) -> Survivors {
        let mut order = vec![ROOT];
        let mut reached = std::collections::BTreeSet::from([ROOT]);
        let mut entries: BTreeMap<Ino, Vec<(OsString, Ino)>> = BTreeMap::new();
        let mut paths = BTreeMap::new();
        let mut queue = VecDeque::from([(ROOT, PathBuf::new())]);
        while let Some((dir, path)) = queue.pop_front() {
            let Some(node) = self.inodes.get(&dir) else {
                continue;
            };
            let list = entries.entry(dir).or_default();
            for (name, child) in &node.durable {
                let Some(child_node) = self.inodes.get(child) else {
                    continue;
                };
                let first = !reached.contains(child);
                if child_node.kind == Kind::Dir && !first {
                    continue;
                }
                if first {
                    reached.insert(*child);
                    order.push(*child);
                }
                list.push((name.clone(), *child));
                let p = path.join(name);
                paths.insert(p.clone(), *child);
                if child_node.kind == Kind::Dir {
                    queue.push_back((*child, p));
                }
            }
        }
        Survivors {
            order,
            entries,
            paths,
        }
    }

    /// The data a file keeps under `cut`; `ino` counted from the model's
    /// epoch.
    fn cut_data(ino: Ino, data: &FileData, cut: Cut) -> (Vec<u8>, Kept) {
        match cut {
            Cut::Clean => (data.durable().to_vec(), Kept::default()),
            Cut::Torn { seed } => {
                let weight = data.pending_weight();
                if weight == 0 {
                    return (data.durable().to_vec(), Kept::default());
                }
                let at = splitmix64(seed ^ splitmix64(ino)) % (weight + 1);
                data.torn(at)
            }
        }
    }

    /// What a power loss with `cut` would leave, without making it.
    pub fn crash_tree(&self, cut: Cut) -> Tree {
        let survivors = self.survivors();
        let mut tree = Tree::default();
        for (path, ino) in survivors.paths {
            let Some(node) = self.inodes.get(&ino) else {
                continue;
            };
            let data = if node.kind == Kind::File {
                Model::cut_data(ino.wrapping_sub(self.epoch), &node.data, cut).0
            } else {
                Vec::new()
            };
            tree.nodes
                .insert(path, self.tree_node(node, data, node.durable_mode));
        }
        tree
    }

    /// Makes the power loss: the model becomes the state the machine comes
    /// back to, where everything is durable. Surviving inodes get new
    /// numbers (the root keeps its own), so that nothing cached under an old
    /// number can show pre-crash data.
    pub fn power_loss(&mut self, cut: Cut) -> Lost {
        let survivors = self.survivors();
        let live = self.live_paths();

        let mut lost = Lost {
            cut,
            names_gone: Vec::new(),
            names_back: Vec::new(),
            names_changed: Vec::new(),
            files: Vec::new(),
        };
        for (path, ino) in &live {
            match survivors.paths.get(path) {
                None => lost.names_gone.push(path.clone()),
                Some(after) if after != ino => lost.names_changed.push(path.clone()),
                Some(_) => {}
            }
        }
        for path in survivors.paths.keys() {
            if !live.contains_key(path) {
                lost.names_back.push(path.clone());
            }
        }

        let mut renumber = BTreeMap::from([(ROOT, ROOT)]);
        for ino in &survivors.order[1..] {
            renumber.insert(*ino, self.next);
            self.next += 1;
        }

        // Each inode's first path in path order, live and after.
        let first_paths = |paths: &BTreeMap<PathBuf, Ino>| {
            let mut first: BTreeMap<Ino, PathBuf> = BTreeMap::new();
            for (path, ino) in paths {
                first.entry(*ino).or_insert_with(|| path.clone());
            }
            first
        };
        let (first_after, first_live) = (first_paths(&survivors.paths), first_paths(&live));
        let mut new_inodes: BTreeMap<Ino, Inode> = BTreeMap::new();
        for (ino, node) in &self.inodes {
            let kept = if node.kind == Kind::File {
                let (bytes, kept) = Model::cut_data(ino.wrapping_sub(self.epoch), &node.data, cut);
                if let Some(new) = renumber.get(ino) {
                    let mut fresh = Inode::new(node.kind, node.durable_mode);
                    fresh.data = FileData::durable_only(bytes);
                    new_inodes.insert(*new, fresh);
                }
                Some(kept)
            } else {
                if let Some(new) = renumber.get(ino) {
                    let mut fresh = Inode::new(node.kind, node.durable_mode);
                    fresh.rdev = node.rdev;
                    fresh.target = node.target.clone();
                    new_inodes.insert(*new, fresh);
                }
                None
            };
            let pending = node.data.pending();
            if let (Some(kept), false) = (kept, pending.is_empty()) {
                let survived = renumber.contains_key(ino);
                let path = if survived {
                    first_after.get(ino).cloned()
                } else {
                    first_live.get(ino).cloned()
                };
                // A file with neither a live nor a surviving name (open and
                // unlinked, say) has nothing a harness could look at.
                if let Some(path) = path {
                    lost.files.push(LostData {
                        path,
                        survived,
                        unsynced_changes: pending.len(),
                        unsynced_bytes: node.data.pending_bytes(),
                        kept_changes: if survived { kept.changes } else { 0 },
                        kept_bytes: if survived { kept.bytes } else { 0 },
                        torn: survived && kept.torn,
                    });
                }
            }
        }
        lost.files.sort_by(|a, b| a.path.cmp(&b.path));

        for (dir, list) in &survivors.entries {
            let Some(new_dir) = renumber.get(dir).copied() else {
                continue;
            };
            for (name, child) in list {
                let Some(new_child) = renumber.get(child).copied() else {
                    continue;
                };
                if let Some(d) = new_inodes.get_mut(&new_dir) {
                    d.live.insert(name.clone(), new_child);
                    d.durable.insert(name.clone(), new_child);
                }
                if let Some(c) = new_inodes.get_mut(&new_child) {
                    c.links.insert((new_dir, name.clone()));
                    c.durable_refs += 1;
                }
            }
        }
        self.inodes = new_inodes;
        lost
    }
}

/// A fixed, well-mixed hash (SplitMix64), so that cuts depend only on the
/// seed and the inode, not on the platform or the standard library.
pub(crate) fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
