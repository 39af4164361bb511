//! A folder's contents as plain values, so that two states can be compared:
//! the model's live state, what a power loss would leave, or a real folder
//! on disk (a state_dir after recovery, say).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// One name in a [`Tree`]. Modes are the permission bits only (`0o7777`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Node {
    /// A directory.
    Dir {
        /// Permission bits.
        mode: u32,
    },
    /// A regular file and its bytes. Hard links show as several names with
    /// the same bytes.
    File {
        /// Permission bits.
        mode: u32,
        /// Contents.
        data: Vec<u8>,
    },
    /// A symbolic link and its target.
    Symlink {
        /// The target, as stored.
        target: OsString,
    },
    /// A FIFO, socket or device node.
    Special {
        /// Permission bits.
        mode: u32,
    },
}

/// Every name under a root, by path relative to it (the root itself is not
/// listed). Ordered, so two trees print and compare the same way every time.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Tree {
    /// Relative path to what is there.
    pub nodes: BTreeMap<PathBuf, Node>,
}

impl Tree {
    /// The node at `path` (relative), if any.
    pub fn get(&self, path: impl AsRef<Path>) -> Option<&Node> {
        self.nodes.get(path.as_ref())
    }

    /// The bytes of the regular file at `path`, if there is one.
    pub fn file(&self, path: impl AsRef<Path>) -> Option<&[u8]> {
        match self.get(path) {
            Some(Node::File { data, .. }) => Some(data),
            _ => None,
        }
    }

    /// Feeds `h` every name with its kind and mode, and each file's
    /// length and the multiset of its bytes, not their order: a log whose
    /// records were appended in another order hashes the same, as two
    /// orders of the same deliveries should when a search merges states;
    /// one that lost a record, or holds a part of one, does not.
    pub fn hash_unordered(&self, h: &mut impl std::hash::Hasher) {
        use std::hash::Hash;
        for (path, node) in &self.nodes {
            path.hash(h);
            match node {
                Node::File { mode, data } => {
                    mode.hash(h);
                    data.len().hash(h);
                    let mut counts = [0u32; 256];
                    for &b in data {
                        counts[b as usize] += 1;
                    }
                    counts.hash(h);
                }
                other => other.hash(h),
            }
        }
    }

    /// Reads a real folder, not following symbolic links.
    pub fn read(root: &Path) -> io::Result<Tree> {
        let mut tree = Tree::default();
        read_into(root, Path::new(""), &mut tree)?;
        Ok(tree)
    }
}

fn read_into(root: &Path, rel: &Path, tree: &mut Tree) -> io::Result<()> {
    let mut names: Vec<OsString> = fs::read_dir(root.join(rel))?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<io::Result<_>>()?;
    names.sort();
    for name in names {
        let rel = rel.join(&name);
        let path = root.join(&rel);
        let meta = fs::symlink_metadata(&path)?;
        let mode = meta.mode() & 0o7777;
        let kind = meta.file_type();
        let node = if kind.is_dir() {
            Node::Dir { mode }
        } else if kind.is_file() {
            Node::File {
                mode,
                data: fs::read(&path)?,
            }
        } else if kind.is_symlink() {
            Node::Symlink {
                target: fs::read_link(&path)?.into_os_string(),
            }
        } else if kind.is_fifo()
            || kind.is_socket()
            || kind.is_char_device()
            || kind.is_block_device()
        {
            Node::Special { mode }
        } else {
            continue;
        };
        let is_dir = matches!(node, Node::Dir { .. });
        tree.nodes.insert(rel.clone(), node);
        if is_dir {
            read_into(root, &rel, tree)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::Hasher;

    fn digest(files: &[(&str, &[u8])]) -> u64 {
        let mut tree = Tree::default();
        for (path, data) in files {
            tree.nodes.insert(
                PathBuf::from(path),
                Node::File {
                    mode: 0o644,
                    data: data.to_vec(),
                },
            );
        }
        let mut h = std::collections::hash_map::DefaultHasher::new();
        tree.hash_unordered(&mut h);
        h.finish()
    }

    #[test]
    fn records_in_another_order_hash_the_same_and_a_lost_or_partial_one_does_not() {
        let ab = digest(&[("log", b"record-a;record-b;")]);
        assert_eq!(ab, digest(&[("log", b"record-b;record-a;")]));
        assert_ne!(ab, digest(&[("log", b"record-a;")]));
        assert_ne!(ab, digest(&[("log", b"record-a;record-b;rec")]));
        assert_ne!(ab, digest(&[("log.new", b"record-a;record-b;")]));
        assert_ne!(ab, digest(&[("log", b"record-a;record-c;")]));
    }
}
