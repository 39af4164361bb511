//! The state directories of an implementation's processes: one per agent
//! per run, kept across its restarts and removed when its session ends.
//!
//! With power loss on, each is a tern-statefs mount (docs/statefs.md) over
//! a backing folder beside it. A crash then kills the process and, at the
//! restart, drops what the process never made durable, whole or torn, as
//! the crash's cut says; and a crash can fall inside a request, at its
//! k-th mutating file operation, which the mount holds unanswered while
//! the process is killed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tern_statefs::{Cut, Mounted, OpKind};

use crate::contract::storage::{FileOp, Loss, PowerCut, PowerNote};
use crate::implementations::locked;

/// One agent's state directory.
#[derive(Clone)]
pub struct StateDir {
    /// What the implementation is given as `state_dir`.
    pub path: PathBuf,
    /// The file system that serves it, with power loss on.
    mount: Option<Arc<Mounted>>,
    /// The folder that holds its live state (with power loss on).
    backing: Option<PathBuf>,
}

/// Why a state directory could not be served: the machine's trouble, not
/// the implementation's.
#[derive(Debug, thiserror::Error)]
pub enum StateDirError {
    #[error("cannot make the state directory {}: {source}", path.display())]
    Create {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot serve the state directory {} through FUSE: {source}", path.display())]
    Mount {
        path: PathBuf,
        source: tern_statefs::MountError,
    },
    #[error("cannot make the power loss of the state directory {}: {source}", path.display())]
    PowerLoss {
        path: PathBuf,
        source: tern_statefs::PowerLossError,
    },
}

/// Every state directory of one implementation, by storage, and the
/// mounts of sessions that ended, emptied and kept for the next ones.
#[derive(Default)]
pub struct StateDirs {
    dirs: Mutex<BTreeMap<u64, StateDir>>,
    /// A mount and an unmount cost a fusermount process and tens of
    /// milliseconds, several times a short run's other work: a session's
    /// mount is emptied and kept when it ends ([`Mounted::reset`]).
    pool: Mutex<Vec<StateDir>>,
    /// Mounts made so far, for their names.
    made: std::sync::atomic::AtomicU64,
}

/// The most emptied mounts kept: every agent of a run on every worker.
const POOL_MOST: usize = 32;

impl StateDirs {
    /// The state directory of storage `id` under `root`, made (and, with
    /// `power`, mounted) at its first start, and whether this start is
    /// that first one.
    pub fn get(
        &self,
        root: &Path,
        id: u64,
        power: bool,
    ) -> Result<(StateDir, bool), StateDirError> {
        let mut dirs = locked(&self.dirs);
        if let Some(dir) = dirs.get(&id) {
            return Ok((dir.clone(), false));
        }
        if power {
            if let Some(dir) = locked(&self.pool).pop() {
                dirs.insert(id, dir.clone());
                return Ok((dir, true));
            }
        }
        let dir = if power {
            let n = self.made.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let path = root.join(format!("state-{n}"));
            let backing = root.join(format!("state-{n}.data"));
            for p in [&path, &backing] {
                std::fs::create_dir_all(p).map_err(|source| StateDirError::Create {
                    path: p.clone(),
                    source,
                })?;
            }
            let mount =
                tern_statefs::mount(&backing, &path).map_err(|source| StateDirError::Mount {
                    path: path.clone(),
                    source,
                })?;
            StateDir {
                path,
                mount: Some(Arc::new(mount)),
                backing: Some(backing),
            }
        } else {
            StateDir {
                path: root.join(format!("agent-{id}")),
                mount: None,
                backing: None,
            }
        };
        dirs.insert(id, dir.clone());
        Ok((dir, true))
    }

    /// The state directory of storage `id`, if it has one now.
    pub fn existing(&self, id: u64) -> Option<StateDir> {
        locked(&self.dirs).get(&id).cloned()
    }

    /// The session of storage `id` is over: its directory goes now (an
    /// exploration makes one per schedule, hundreds of thousands), and
    /// its file system is unmounted once the last holder lets it go.
    pub fn remove(&self, id: u64) {
        let dir = locked(&self.dirs).remove(&id);
        if let Some(dir) = dir {
            if let Some(mount) = &dir.mount {
                let mut pool = locked(&self.pool);
                if pool.len() < POOL_MOST && mount.reset().is_ok() {
                    pool.push(dir);
                    return;
                }
            }
            let StateDir {
                path,
                mount,
                backing,
            } = dir;
            drop(mount);
            let _ = std::fs::remove_dir_all(&path);
            if let Some(backing) = backing {
                let _ = std::fs::remove_dir_all(backing);
            }
        }
    }

    /// Unmounts every state directory (before the root goes).
    pub fn clear(&self) {
        let ids: Vec<u64> = locked(&self.dirs).keys().copied().collect();
        for id in ids {
            self.remove(id);
        }
        drop(std::mem::take(&mut *locked(&self.pool)));
    }
}

impl StateDir {
    /// Feeds `h` the live state and what a clean power loss would leave
    /// (nothing without a file system of tern-sim's: a plain folder is not
    /// read).
    pub fn hash_state(&self, h: &mut dyn std::hash::Hasher) {
        if let Some(mount) = &self.mount {
            mount.hash_state(&mut { h });
        }
    }

    /// How many mutating file operations the directory saw so far.
    pub fn ops_mark(&self) -> Option<u64> {
        self.mount.as_ref().map(|m| m.mutating_ops())
    }

    /// The mutating file operations after the `mark`-th, oldest first (at
    /// most the last 64).
    pub fn ops_since(&self, mark: u64) -> Vec<FileOp> {
        self.mount
            .as_ref()
            .map(|m| m.ops_since(mark).into_iter().map(file_op).collect())
            .unwrap_or_default()
    }

    /// After a crash, before the restart: the crash's cut is made. A kill
    /// keeps everything the file system took; a power loss drops what was
    /// not durable (at the crash point, if the crash fell at one). The
    /// note says what it took.
    pub fn after_crash(&self, cut: Option<PowerCut>) -> Result<Option<PowerNote>, StateDirError> {
        let Some(mount) = &self.mount else {
            return Ok(None);
        };
        let cut = match cut.map(|c| c.loss) {
            None | Some(Loss::Kill) => {
                // The held operations of the killed process were refused
                // as it died; nothing else is held, and counting goes on.
                mount.resume();
                return Ok(None);
            }
            Some(Loss::Power) => Cut::Clean,
            Some(Loss::Torn(seed)) => Cut::Torn { seed },
        };
        let lost = mount
            .power_loss(cut)
            .map_err(|source| StateDirError::PowerLoss {
                path: self.path.clone(),
                source,
            })?;
        Ok(Some(PowerNote::Lost {
            dropped_data: lost.dropped_data(),
            torn: lost.torn_writes() > 0,
        }))
    }

    /// Watches one request on which a crash is armed: with `at_op`, the
    /// request's `at_op`-th mutating file operation is held. `None` when
    /// the directory has no file system of tern-sim's to watch it by.
    pub fn watch(&self, at_op: Option<u8>) -> Option<Watch> {
        let mount = self.mount.clone()?;
        let mark = mount.mutating_ops();
        let crash_at = at_op
            .filter(|k| mount.arm(u64::from(*k)).is_ok())
            .map(|k| mark + u64::from(k));
        Some(Watch {
            mount,
            mark,
            crash_at,
            stepping: false,
        })
    }

    /// Watches an execution on which a crash at its effect is armed: its
    /// file operations are let through one at a time, so that when its
    /// `perform` line fires the crash, nothing it did after that line has
    /// taken effect (it is held), however fast it went on. With `at_op`,
    /// the crash falls at that operation instead, if it comes before the
    /// effect.
    pub fn watch_stepping(&self, at_op: Option<u8>) -> Option<Watch> {
        let mount = self.mount.clone()?;
        let mark = mount.mutating_ops();
        if mount.arm(1).is_err() {
            return None;
        }
        Some(Watch {
            mount,
            mark,
            crash_at: at_op.map(|k| mark + u64::from(k)),
            stepping: true,
        })
    }
}

/// What the reader of an answer polls while a crash point is armed.
#[derive(Clone)]
pub struct Gate {
    pub mount: Arc<Mounted>,
    /// The number of the operation at which the crash falls, if any.
    crash_at: Option<u64>,
    /// Whether every other held operation is let through (see
    /// [`StateDir::watch_stepping`]).
    stepping: bool,
}

impl Gate {
    /// Whether the request is to crash now: it is held at its crash point.
    /// A held operation that is not the crash point, while stepping, is
    /// let through (and the next one held).
    pub fn crash_now(&self) -> bool {
        let Some(held) = self.mount.held() else {
            return false;
        };
        if self.stepping && Some(held.seq) != self.crash_at {
            self.mount.step();
            return false;
        }
        true
    }
}

/// A request on which a crash is armed, watched through its state
/// directory.
pub struct Watch {
    mount: Arc<Mounted>,
    /// The count of mutating operations before the request.
    mark: u64,
    /// The number of the operation at which the crash falls, if one inside
    /// the request is armed.
    crash_at: Option<u64>,
    stepping: bool,
}

impl Watch {
    /// What the reader of the answer polls, when there is something to
    /// poll for.
    pub fn gate(&self) -> Option<Gate> {
        (self.crash_at.is_some() || self.stepping).then(|| Gate {
            mount: self.mount.clone(),
            crash_at: self.crash_at,
            stepping: self.stepping,
        })
    }

    /// Whether the crash point inside the request was reached.
    pub fn held(&self) -> bool {
        self.mount
            .held()
            .is_some_and(|h| self.crash_at == Some(h.seq))
    }

    /// Once the request is over without a crash at its own point: nothing
    /// is armed any more. (A process killed at a held operation leaves it
    /// held, for the power loss of the restart to start from.)
    pub fn release(self) {
        self.mount.disarm();
    }

    /// Once the request answered with no crash at its own point: nothing
    /// is armed any more, and whatever operation the watch held meanwhile
    /// takes effect, in order, as it would have without the watch.
    /// Another process writing in the state directory (a daemon the
    /// implementation left behind, a thread of its own after the answer)
    /// can be held by a stepping watch at any time; left held, it and every
    /// operation after it, the implementation's next request's included,
    /// would wait forever.
    pub fn release_answered(self) {
        self.mount.disarm();
        self.mount.resume();
    }

    /// Once the request is over: where the crash fell. At the held
    /// operation, if the crash point was reached; else the request made
    /// fewer operations, it answered, and the crash falls now, after its
    /// last one.
    pub fn settle(self) -> PowerNote {
        let ops: Vec<FileOp> = self
            .mount
            .ops_since(self.mark)
            .into_iter()
            .map(file_op)
            .collect();
        if let Some(held) = self.mount.held() {
            // Everything from the held operation on is held too.
            let before = held.seq.saturating_sub(self.mark + 1) as usize;
            let earlier = ops.iter().take(before).copied().collect();
            return PowerNote::Held {
                op: file_op(held.kind),
                earlier,
            };
        }
        self.mount.disarm();
        PowerNote::Answered {
            last: ops.last().copied(),
        }
    }
}

fn file_op(kind: OpKind) -> FileOp {
    match kind {
        OpKind::Write => FileOp::Write,
        OpKind::Fsync | OpKind::Fdatasync => FileOp::Sync,
        OpKind::Fsyncdir => FileOp::SyncDir,
        OpKind::Create | OpKind::Mknod => FileOp::Create,
        OpKind::Rename => FileOp::Rename,
        OpKind::Unlink | OpKind::Rmdir => FileOp::Remove,
        OpKind::Truncate => FileOp::Truncate,
        OpKind::Mkdir | OpKind::Symlink | OpKind::Link => FileOp::Other,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    use super::*;

    /// Waits until the mount holds an operation; `false` after 20 s.
    fn held_soon(mount: &Mounted) -> bool {
        let start = Instant::now();
        while mount.held().is_none() {
            if start.elapsed() > Duration::from_secs(20) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        true
    }

    /// A write in the state directory from outside the request (a daemon
    /// the implementation left behind) that a stepping watch held when
    /// the request answered: `release` leaves it held, with every
    /// operation after it (the next request's write would wait forever,
    /// as a fresh-clone CI run once saw), and `release_answered` lets it
    /// take effect.
    #[test]
    fn a_write_held_when_the_request_answered_is_let_through() {
        if let Err(why) = tern_statefs::probe() {
            eprintln!("skipped: {why}");
            return;
        }
        let root = tempfile::tempdir().expect("a scratch folder");
        let dirs = StateDirs::default();
        let (dir, first) = dirs.get(root.path(), 1, true).expect("mounted");
        assert!(first);
        let mount = dir.mount.clone().expect("power loss is on");
        let write = |name: &str| {
            let (done, finished) = mpsc::channel();
            let path = dir.path.join(name);
            let writer = std::thread::spawn(move || {
                let _ = done.send(std::fs::write(path, b"late").is_ok());
            });
            (writer, finished)
        };

        // The old way out: disarmed, and the write still held.
        let watch = dir.watch_stepping(None).expect("armed");
        let (writer, finished) = write("before");
        assert!(held_soon(&mount), "the stepping watch holds the write");
        watch.release();
        assert!(mount.held().is_some(), "release leaves the write held");
        mount.resume();
        assert_eq!(finished.recv_timeout(Duration::from_secs(20)), Ok(true));
        writer.join().expect("the writer ends");

        // Answered: the held write takes effect.
        let watch = dir.watch_stepping(None).expect("armed");
        let (writer, finished) = write("after");
        assert!(held_soon(&mount), "the stepping watch holds the write");
        watch.release_answered();
        assert_eq!(
            finished.recv_timeout(Duration::from_secs(20)),
            Ok(true),
            "the held write went through"
        );
        writer.join().expect("the writer ends");
        assert!(mount.held().is_none());
        assert_eq!(
            std::fs::read(dir.path.join("after")).ok(),
            Some(b"late".to_vec())
        );
        dirs.clear();
    }
}
