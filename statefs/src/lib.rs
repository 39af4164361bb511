//! tern-statefs: a crash-faithful file system for an implementation's
//! `state_dir`, so that tern-sim can crash a Tern receiver by a power loss,
//! not only by SIGKILL.
//!
//! A SIGKILL loses nothing the kernel already holds, so a receiver that
//! never calls `fsync` survives it. tern-statefs is served by tern-sim
//! itself through FUSE. It passes every operation through to a backing
//! folder, which holds the live state, and keeps a model of what is
//! durable. [`Mounted::power_loss`] then rewrites the backing folder to
//! what a machine would find after losing power: everything that was never
//! made durable is gone.
//!
//! # The durability model
//!
//! - **File data** (writes, and size changes by `truncate`/`ftruncate` or
//!   an `O_TRUNC` open) becomes durable when `fsync` or `fdatasync` of that
//!   file returns, or when a write through a handle opened with `O_SYNC` or
//!   `O_DSYNC` returns. Such a write makes all of the file's data durable,
//!   as `fdatasync` would: the kernel's FUSE client follows each of these
//!   writes with an `fsync` of the whole file anyway.
//! - **A file's mode** becomes durable at `fsync` of the file (not at
//!   `fdatasync`); a new inode starts with the mode it was created with.
//! - **Directory entries** (create, `mkdir`, `mknod`, `symlink`, `link`,
//!   `unlink`, `rmdir`, `rename`) become durable when `fsync` of their
//!   directory returns: the directory's entries as they are at that moment,
//!   all at once. A symbolic link's target is durable with its name.
//! - **A rename** changes two directories: the source loses the name and
//!   the destination gains it, and each half becomes durable with its own
//!   directory's `fsync`. Within one directory one `fsync` does both. Across
//!   two directories the rename is durable only when both were synced:
//!   with only the destination synced, a file has both names after a power
//!   loss (as if hard-linked) and a directory stays under its first name
//!   met (below); with only the source synced, the inode has no name and is
//!   gone.
//! - **A power loss** drops every change that was not durable. The tree
//!   after it is the durable directory entries, followed from the root
//!   (which always exists) breadth-first in name order, each naming an
//!   inode with its durable data. An inode that no durable entry reaches is
//!   gone; a durable name whose data was never synced is an empty file (or
//!   holds what was last durable). A directory that durable entries name
//!   twice keeps the first name met, since no file system shows a
//!   directory twice.
//! - **A torn power loss** ([`Cut::Torn`]) keeps, for each file, its
//!   durable data plus a prefix of its unsynced changes applied in order,
//!   cut at a point drawn from the seed and the file's inode number: any
//!   point from "nothing" to "everything", counting each written byte, and
//!   each size change as one. The cut can fall inside a write, which is
//!   then kept only in part. The same seed and the same history give the
//!   same cuts. Directory entries are as in a clean power loss.
//!
//! Nothing reads a clock or draws at random: inode numbers are handed out
//! in order, so the same history gives the same numbers, the same crash
//! points and the same cuts.
//!
//! # Why this strict
//!
//! POSIX promises, for `fsync`, only that the file's data reach the
//! storage device; it says nothing about the directory entry, and
//! nothing at all about data that was not synced. File systems keep more
//! than that, each in its own way and depending on mount options and
//! kernel versions. A receiver that is correct under this model is correct
//! on any file system that keeps the `fsync` promise; one that relies on a
//! particular file system's extra care can lose data on another. The model
//! follows the one used by ALICE (Pillai et al., "All File Systems Are Not
//! Created Equal: On the Complexity of Crafting Crash-Consistent
//! Applications", OSDI 2014), CrashMonkey (Mohan et al., "Finding
//! Crash-Consistency Bugs with Bounded Black-Box Crash Testing", OSDI 2018)
//! and LazyFS (a FUSE file system that loses unsynced data on command), and
//! like them it tells a receiver's real bug from a file system's luck.
//!
//! What ext4 with `data=ordered` (Linux's usual default) would keep that
//! this model may drop:
//!
//! - ext4 commits metadata in one journal for the whole file system, every
//!   few seconds and at every `fsync` of any file. A name created earlier
//!   becomes durable with the next commit, whoever caused it, and `fsync`
//!   of a new file in practice makes its name durable too. Here a name
//!   needs `fsync` of its own directory.
//! - `data=ordered` writes a file's data before the journal commits that
//!   file's metadata, so an appended file whose new size was committed has
//!   its appended bytes too. Here unsynced appends are dropped.
//! - ext4's `auto_da_alloc` flushes a file's data before a rename over an
//!   existing file, and at close after a truncate to zero, so "write a
//!   temporary file, rename it over the old one" without `fsync` usually
//!   leaves the old or the whole new content. Here it leaves the old one
//!   (the rename was not durable), or, if the directory was synced and the
//!   file was not, an empty file.
//! - A journal transaction is atomic: a rename across directories is all or
//!   nothing. Here its two halves are durable separately.
//! - A real crash loses at most the last seconds of writes. Here everything
//!   not synced is lost however old it is.
//!
//! # Use
//!
//! [`probe`] says whether FUSE can be used (and [`NO_FUSE_ENV`] makes it
//! say no). [`mount`] serves a backing folder at a mountpoint from a
//! background thread; the implementation under test gets the mountpoint as
//! its `state_dir`. [`Mounted::arm`] and [`Mounted::wait_held`] stop it at
//! its k-th mutating operation; after the harness kills it,
//! [`Mounted::power_loss`] makes the power loss and says what was
//! [`Lost`]. Dropping the [`Mounted`] unmounts. The model alone, with no
//! FUSE, is [`Model`]. docs/statefs.md has the whole interface and the
//! recipe for a harness.

mod attr;
pub mod backing;
pub mod crash;
pub mod data;
mod fs;
pub mod gate;
mod handles;
pub mod lost;
pub mod model;
mod mount;
mod mountinfo;
pub mod probe;
mod reaper;
mod state;
pub mod tree;

pub use crash::Cut;
pub use fs::StateFs;
pub use gate::{ArmError, HeldOp, OpKind};
pub use lost::{Lost, LostData};
pub use model::{Ino, Kind, Model, ModelError, NodeSpec, RenameMode, ROOT};
pub use mount::{detach_all_under, mount, MountError, Mounted, PowerLossError};
pub use probe::{probe, Unavailable, NO_FUSE_ENV};
pub use tree::{Node, Tree};
