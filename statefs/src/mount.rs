//! Serving the file system at a mountpoint, and what a harness drives it
//! with: crash points, power loss, unmount.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use fuser::{Config, MountOption, SessionACL, SessionUnmounter};

use crate::backing::{self, BackingError};
use crate::crash::Cut;
use crate::fs::{Core, StateFs};
use crate::gate::{ArmError, HeldOp, OpKind};
use crate::lost::Lost;
use crate::mountinfo;
use crate::probe::Unavailable;
use crate::state::{State, Verdict};
use crate::tree::Tree;

/// Why the file system could not be mounted or unmounted.
#[derive(Debug, thiserror::Error)]
pub enum MountError {
    /// FUSE cannot be used (or [`crate::NO_FUSE_ENV`] says so).
    #[error(transparent)]
    Unavailable(#[from] Unavailable),
    /// The backing folder could not be read.
    #[error("the backing folder: {0}")]
    Backing(#[from] BackingError),
    /// A path given could not be resolved.
    #[error("{path}: {source}")]
    Path {
        /// The path.
        path: PathBuf,
        /// What failed.
        source: io::Error,
    },
    /// The mountpoint lies inside the backing folder or the other way
    /// round: the file system would serve itself.
    #[error("the mountpoint {mountpoint} and the backing folder {backing} overlap")]
    Overlap {
        /// The backing folder.
        backing: PathBuf,
        /// The mountpoint.
        mountpoint: PathBuf,
    },
    /// The kernel or fusermount refused the mount.
    #[error("mounting at {path}: {source}")]
    Mount {
        /// The mountpoint.
        path: PathBuf,
        /// What failed.
        source: io::Error,
    },
    /// The unmount failed, and so did the lazy detach after it.
    #[error("unmounting {path}: {source}")]
    Unmount {
        /// The mountpoint.
        path: PathBuf,
        /// What failed.
        source: io::Error,
    },
}

/// Why a power loss could not be made. The model has already moved on to
/// the post-crash state; the backing folder may be half rewritten, so the
/// run that asked for it should stop.
#[derive(Debug, thiserror::Error)]
pub enum PowerLossError {
    /// Rewriting the backing folder failed.
    #[error("rewriting the backing folder: {0}")]
    Backing(#[from] BackingError),
}

/// How long an unmount waits for the FUSE thread to end, which it does as
/// soon as the kernel lets go of the connection.
const JOIN_WAIT: Duration = Duration::from_secs(5);

fn path_err(path: &Path) -> impl FnOnce(io::Error) -> MountError + '_ {
    move |source| MountError::Path {
        path: path.to_path_buf(),
        source,
    }
}

impl StateFs {
    /// Reads `backing` as the durable state of a machine that just booted:
    /// everything in it is durable.
    pub fn open(backing: &Path) -> Result<StateFs, MountError> {
        let backing = backing.canonicalize().map_err(path_err(backing))?;
        let model = backing::scan(&backing)?;
        Ok(StateFs {
            core: Arc::new(Core {
                state: Mutex::new(State::new(backing, model)),
                changed: Condvar::new(),
            }),
        })
    }

    /// Serves the file system at `mountpoint` from a background thread.
    pub fn mount(self, mountpoint: &Path) -> Result<Mounted, MountError> {
        if let Some(refused) = Unavailable::from_env() {
            return Err(refused.into());
        }
        // A mount left by a harness that died is a dead end
        // ("Transport endpoint is not connected"): take it away first, if
        // it is one of ours.
        if let Err(e) = std::fs::metadata(mountpoint) {
            if e.raw_os_error() == Some(libc::ENOTCONN) {
                let absolute = std::path::absolute(mountpoint).map_err(path_err(mountpoint))?;
                if mountinfo::ours_at(&absolute).is_some() {
                    let _ = detach(&absolute);
                }
            }
        }
        let mountpoint = mountpoint.canonicalize().map_err(path_err(mountpoint))?;
        let backing = self.core.lock().backing.clone();
        if backing.starts_with(&mountpoint) || mountpoint.starts_with(&backing) {
            return Err(MountError::Overlap {
                backing,
                mountpoint,
            });
        }
        let core = Arc::clone(&self.core);
        let mut session = open_session(self, &mountpoint)?;
        let unmounter = session.unmount_callable();
        let mut mounted = Mounted {
            core: Arc::clone(&core),
            mountpoint: mountpoint.clone(),
            backing,
            unmounter: Some(unmounter),
            dev: mountinfo::ours_at(&mountpoint),
            session: None,
            reaper: None,
        };
        let spawned = thread::Builder::new()
            .name("tern-statefs".into())
            .spawn(move || session.run());
        match spawned {
            Ok(handle) => mounted.session = Some(handle),
            Err(source) => {
                return Err(MountError::Mount {
                    path: mountpoint,
                    source,
                })
            }
        }
        let reaper_core = Arc::clone(&core);
        match thread::Builder::new()
            .name("tern-statefs-reaper".into())
            .spawn(move || crate::reaper::run(reaper_core))
        {
            Ok(handle) => mounted.reaper = Some(handle),
            Err(source) => {
                return Err(MountError::Mount {
                    path: mountpoint,
                    source,
                })
            }
        }
        Ok(mounted)
    }
}

/// Detaches every tern-statefs mount below `root`, lazily (each goes when
/// its last user does): for a harness that exits with mounts it could not
/// drop in order, so that removing `root` afterwards neither walks into a
/// live mount nor leaves a dead one. Mounts of other file systems are
/// left alone.
pub fn detach_all_under(root: &Path) {
    let Ok(table) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return;
    };
    for entry in mountinfo::parse(&table) {
        if entry.is_ours() && entry.mountpoint.starts_with(root) && entry.mountpoint != root {
            let _ = detach(&entry.mountpoint);
        }
    }
}

/// Mounts `backing` at `mountpoint`: [`StateFs::open`] then
/// [`StateFs::mount`].
pub fn mount(backing: &Path, mountpoint: &Path) -> Result<Mounted, MountError> {
    StateFs::open(backing)?.mount(mountpoint)
}

/// Mounts through fuser: with `auto_unmount` when fusermount3 (or
/// fusermount) is installed, so that the mount goes away even when the
/// harness is killed, else (or if fusermount refuses, as it does for a
/// user when `/etc/fuse.conf` lacks `user_allow_other`) without. Without
/// it a mount left by a killed harness stays until the next mount at the
/// same place removes it.
fn open_session(fs: StateFs, mountpoint: &Path) -> Result<fuser::Session<StateFs>, MountError> {
    let mount_err = |source| MountError::Mount {
        path: mountpoint.to_path_buf(),
        source,
    };
    if !fusermount_installed() {
        return fuser::Session::new(fs, mountpoint, &config(false)).map_err(mount_err);
    }
    // Session::new consumes the file system even when it fails, so the
    // first try gets a second handle on the same core.
    let retry = StateFs {
        core: Arc::clone(&fs.core),
    };
    match fuser::Session::new(fs, mountpoint, &config(true)) {
        Ok(session) => Ok(session),
        Err(_) => fuser::Session::new(retry, mountpoint, &config(false)).map_err(mount_err),
    }
}

/// Mount options; `auto_unmount` needs `allow_root` (fuser then checks the
/// caller, so only the owner and root get in).
fn config(auto_unmount: bool) -> Config {
    let mut config = Config::default();
    config.mount_options = vec![
        MountOption::FSName(mountinfo::NAME.into()),
        MountOption::Subtype(mountinfo::NAME.into()),
        // Permission checks by the kernel, against the backing files'
        // modes, as on an ordinary file system.
        MountOption::DefaultPermissions,
        MountOption::NoDev,
        MountOption::NoSuid,
    ];
    if auto_unmount {
        config.mount_options.push(MountOption::AutoUnmount);
        config.acl = SessionACL::RootAndOwner;
    }
    config
}

/// The fusermount program on `PATH`, if any.
fn fusermount() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| ["fusermount3", "fusermount"].map(|name| dir.join(name)))
        .find(|p| p.is_file())
}

fn fusermount_installed() -> bool {
    fusermount().is_some()
}

/// How an unmount went.
#[derive(PartialEq, Eq)]
enum Unmounted {
    /// Gone; the FUSE thread ends now.
    Gone,
    /// Busy, so detached: out of the namespace, but the FUSE thread serves
    /// whoever still uses it until the last one lets go.
    Detached,
}

/// Unmounts what fuser left: a busy direct mount, or a mount made through
/// fusermount, which on its socket's closing unmounts only a dead file
/// system, never a live one.
fn unmount_now(mountpoint: &Path) -> io::Result<Unmounted> {
    let c = CString::new(mountpoint.as_os_str().as_bytes())?;
    // SAFETY: `c` is a valid NUL-terminated path.
    if unsafe { libc::umount2(c.as_ptr(), 0) } == 0 {
        return Ok(Unmounted::Gone);
    }
    let err = io::Error::last_os_error();
    match err.raw_os_error() {
        // Not (or no longer) a mountpoint.
        Some(libc::EINVAL) => Ok(Unmounted::Gone),
        Some(libc::EBUSY) => detach(mountpoint).map(|()| Unmounted::Detached),
        // Not root: fusermount may unmount what its user mounted.
        Some(libc::EPERM) => {
            let program = fusermount().ok_or(err)?;
            let status = std::process::Command::new(program)
                .args(["-u", "-z", "-q", "--"])
                .arg(mountpoint)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()?;
            if status.success() {
                Ok(Unmounted::Detached)
            } else {
                Err(io::Error::other(format!("fusermount -u: {status}")))
            }
        }
        _ => Err(err),
    }
}

/// `umount2(MNT_DETACH)`: the mount leaves the namespace at once, and goes
/// away when its last user does.
fn detach(mountpoint: &Path) -> io::Result<()> {
    let c = CString::new(mountpoint.as_os_str().as_bytes())?;
    // SAFETY: `c` is a valid NUL-terminated path.
    if unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// A mounted state_dir file system. Dropping it unmounts (see
/// [`Mounted::unmount`]).
pub struct Mounted {
    core: Arc<Core>,
    mountpoint: PathBuf,
    backing: PathBuf,
    unmounter: Option<SessionUnmounter>,
    /// The mount's device as the mount table shows it: an unmount removes
    /// only this mount, never something mounted at the same place later.
    dev: Option<String>,
    session: Option<JoinHandle<io::Result<()>>>,
    reaper: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Mounted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mounted")
            .field("mountpoint", &self.mountpoint)
            .field("backing", &self.backing)
            .finish_non_exhaustive()
    }
}

impl Mounted {
    /// Where the file system is mounted (canonical).
    pub fn mountpoint(&self) -> &Path {
        &self.mountpoint
    }

    /// The backing folder (canonical), which holds the live state.
    pub fn backing(&self) -> &Path {
        &self.backing
    }

    /// Mutating operations seen since the mount, held ones included: run a
    /// request once, and the difference is how many crash points it has.
    pub fn mutating_ops(&self) -> u64 {
        self.core.lock().gate.seen()
    }

    /// The kinds of the mutating operations after the `mark`-th (a value
    /// [`Mounted::mutating_ops`] gave), oldest first, held ones included;
    /// at most the last 64. Read after a crash point, it says what the
    /// request had done before it: a held `fsync` right after a `write`
    /// is a crash between a write and its sync.
    pub fn ops_since(&self, mark: u64) -> Vec<OpKind> {
        self.core.lock().gate.kinds_since(mark)
    }

    /// Holds the `k`-th mutating operation from now (`arm(1)` the next
    /// one), and every mutating operation after it, unanswered and not
    /// applied, until [`Mounted::power_loss`] or [`Mounted::resume`].
    pub fn arm(&self, k: u64) -> Result<(), ArmError> {
        self.core.lock().gate.arm(k)
    }

    /// Forgets an armed crash point that was not reached yet.
    pub fn disarm(&self) {
        self.core.lock().gate.disarm();
    }

    /// The crash point, once reached.
    pub fn held(&self) -> Option<HeldOp> {
        self.core.lock().gate.first().cloned()
    }

    /// Waits up to `timeout` for the armed crash point to be reached.
    ///
    /// Then kill the caller (every process using the mount): its held
    /// operation is answered with an error, unapplied, as soon as it is
    /// killed, so waiting for it to exit is safe. Then call
    /// [`Mounted::power_loss`].
    pub fn wait_held(&self, timeout: Duration) -> Option<HeldOp> {
        let st = self.core.lock();
        let (st, _) = self
            .core
            .changed
            .wait_timeout_while(st, timeout, |st| st.gate.first().is_none())
            .unwrap_or_else(PoisonError::into_inner);
        st.gate.first().cloned()
    }

    /// Lets the held operations take effect, in order, and answers them:
    /// no crash after all. Returns how many there were.
    pub fn resume(&self) -> usize {
        let mut st = self.core.lock();
        st.at_crash = None;
        let held = st.gate.take_all();
        let count = held.len();
        for (_, job) in held {
            job(&mut st, Verdict::Apply);
        }
        count
    }

    /// Lets the held operations take effect, in order, and holds the next
    /// mutating operation, all at once: a harness walks a request one
    /// operation at a time this way, to stop it exactly where something
    /// else it watches happens (an effect the request announced), whatever
    /// the timing. Returns how many were let go.
    pub fn step(&self) -> usize {
        let mut st = self.core.lock();
        st.at_crash = None;
        let held = st.gate.take_all();
        // Armed before the held ones run, under the same lock: the next
        // operation cannot slip through in between.
        let _ = st.gate.arm(1);
        let count = held.len();
        for (_, job) in held {
            job(&mut st, Verdict::Apply);
        }
        count
    }

    /// A power loss: everything not durable at the crash point, if one was
    /// reached, else now, is dropped (with
    /// [`Cut::Torn`], each file keeps a seeded prefix of its unsynced
    /// writes), the backing folder is rewritten to what is left, and the
    /// file system goes on serving that.
    ///
    /// Call it after killing every process that had files open on the
    /// mount. Held operations are answered with an error and never take
    /// effect; open files are closed (their handles answer `EBADF`).
    pub fn power_loss(&self, cut: Cut) -> Result<Lost, PowerLossError> {
        let mut st = self.core.lock();
        for (_, job) in st.gate.take_all() {
            job(&mut st, Verdict::Refuse);
        }
        st.handles.clear();
        if let Some(at_crash) = st.at_crash.take() {
            st.model = at_crash;
        }
        let lost = st.model.power_loss(cut);
        backing::rewrite(&st.backing, &st.model)?;
        self.core.changed.notify_all();
        Ok(lost)
    }

    /// Empties the file system, durable state and all, for a new user of
    /// the same mount: held operations are refused, open files closed (old
    /// handles answer `EBADF`), and the backing folder emptied. A harness
    /// that runs many short sessions keeps a few mounts and resets them
    /// rather than mounting anew for each, which costs a round of mount
    /// and unmount (and a fusermount process) every time.
    pub fn reset(&self) -> Result<(), PowerLossError> {
        let mut st = self.core.lock();
        for (_, job) in st.gate.take_all() {
            job(&mut st, Verdict::Refuse);
        }
        st.handles.clear();
        st.at_crash = None;
        st.model.wipe();
        backing::rewrite(&st.backing, &st.model)?;
        self.core.changed.notify_all();
        Ok(())
    }

    /// What [`Mounted::power_loss`] with `cut` would leave now, without
    /// making it.
    pub fn preview(&self, cut: Cut) -> Tree {
        let st = self.core.lock();
        st.at_crash.as_ref().unwrap_or(&st.model).crash_tree(cut)
    }

    /// The live state as the model sees it (the backing folder should
    /// read the same, owners and times aside).
    pub fn live(&self) -> Tree {
        self.core.lock().model.tree()
    }

    /// Feeds `h` what a later power loss or kill can depend on: the live
    /// state, and what a clean power loss would leave of it (see
    /// [`Tree::hash_unordered`]). A harness that merges equal states (an
    /// exhaustive search) keys them by this.
    pub fn hash_state(&self, h: &mut impl std::hash::Hasher) {
        let st = self.core.lock();
        st.model.tree().hash_unordered(h);
        st.at_crash
            .as_ref()
            .unwrap_or(&st.model)
            .crash_tree(Cut::Clean)
            .hash_unordered(h);
    }

    /// Makes everything durable, as `sync` followed by an orderly shutdown
    /// would: for a stop that is not a crash.
    pub fn settle(&self) {
        self.core.lock().model.sync_all();
    }

    /// Unmounts: held operations are answered with an error, then the
    /// mount is removed; if it is busy, it is detached lazily so that no
    /// stale mount stays visible.
    pub fn unmount(mut self) -> Result<(), MountError> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<(), MountError> {
        {
            let mut st = self.core.lock();
            st.open = false;
            st.at_crash = None;
            for (_, job) in st.gate.take_all() {
                job(&mut st, Verdict::Refuse);
            }
            self.core.changed.notify_all();
        }
        let mut result = Ok(());
        let mut how = Unmounted::Gone;
        if let Some(mut unmounter) = self.unmounter.take() {
            // fuser first: a plain umount(2) of a direct mount (refused if
            // busy), or, for a mount made through fusermount, closing its
            // socket, after which fusermount leaves a live mount alone.
            let _ = unmounter.unmount();
            let still_ours = mountinfo::ours_at(&self.mountpoint);
            if still_ours.is_some() && still_ours == self.dev {
                match unmount_now(&self.mountpoint) {
                    Ok(done) => how = done,
                    Err(source) => {
                        result = Err(MountError::Unmount {
                            path: self.mountpoint.clone(),
                            source,
                        })
                    }
                }
            }
        }
        if let Some(session) = self.session.take() {
            // A detached mount still in use keeps its thread serving: it is
            // left to end by itself rather than waited for.
            if how == Unmounted::Gone {
                let start = Instant::now();
                while !session.is_finished() && start.elapsed() < JOIN_WAIT {
                    thread::sleep(Duration::from_millis(2));
                }
                if session.is_finished() {
                    let _ = session.join();
                }
            }
        }
        if let Some(reaper) = self.reaper.take() {
            let _ = reaper.join();
        }
        result
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}
