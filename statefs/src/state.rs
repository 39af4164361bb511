//! The passthrough: each operation done on the backing folder, then told
//! to the model, under one lock. The backing folder holds the live bytes
//! and attributes; the model holds the namespace (which names exist, which
//! inode each names) and what is durable.
//!
//! The order is always "backing first, model after, only on success", so a
//! refused operation changes neither. If the model refuses what the backing
//! folder accepted, the two disagree; that is a bug, answered with `EIO`.

use std::ffi::{CString, OsStr, OsString};
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{DirBuilderExt, FileExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use fuser::{Errno, FileAttr, TimeOrNow};

use crate::attr::attr;
use crate::gate::Gate;
use crate::handles::{Handles, OpenDir, OpenFile};
use crate::model::{Ino, Kind, Model, ModelError, NodeSpec, RenameMode, MAX_FILE_LEN};

/// A parked operation: run with [`Verdict::Apply`] to let it take effect,
/// with [`Verdict::Refuse`] to answer it with an error and drop it.
pub(crate) type Job = Box<dyn FnOnce(&mut State, Verdict) + Send>;

/// What becomes of a parked operation.
pub(crate) enum Verdict {
    Apply,
    Refuse,
}

/// Who a new node belongs to: the caller, when the file system runs as root
/// and so can give it away; otherwise whoever runs the file system.
#[derive(Clone, Copy)]
pub(crate) struct Owner {
    pub(crate) uid: u32,
    pub(crate) gid: u32,
}

/// Everything the file system knows, behind one lock.
pub(crate) struct State {
    pub(crate) backing: PathBuf,
    pub(crate) model: Model,
    pub(crate) handles: Handles,
    pub(crate) gate: Gate<Job>,
    /// The model as it was when the crash point was reached. What the
    /// kernel does after it without a caller to stop (writing back pages of
    /// a shared mapping) still reaches the backing folder and the live
    /// model, but a power loss starts from here.
    pub(crate) at_crash: Option<Model>,
    /// False once unmounting began: the reaper thread stops.
    pub(crate) open: bool,
}

type Res<T> = Result<T, Errno>;

fn model_err(e: ModelError) -> Errno {
    Errno::from_i32(e.errno())
}

/// The model refused what the backing folder did: they disagree.
fn diverged(_e: ModelError) -> Errno {
    Errno::EIO
}

fn cpath(path: &Path) -> Res<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| Errno::EINVAL)
}

fn check(rc: libc::c_int) -> Res<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(Errno::from(io::Error::last_os_error()))
    }
}

impl State {
    pub(crate) fn new(backing: PathBuf, model: Model) -> State {
        State {
            backing,
            model,
            handles: Handles::default(),
            gate: Gate::new(),
            at_crash: None,
            open: true,
        }
    }

    /// The backing path of a live inode.
    fn real(&self, ino: Ino) -> Res<PathBuf> {
        if !self.model.contains(ino) {
            return Err(Errno::ESTALE);
        }
        let rel = self.model.path(ino).ok_or(Errno::ENOENT)?;
        Ok(self.backing.join(rel))
    }

    /// The backing path of a name in a live directory.
    fn entry(&self, parent: Ino, name: &OsStr) -> Res<PathBuf> {
        if self.model.kind(parent).is_some_and(|k| k != Kind::Dir) {
            return Err(Errno::ENOTDIR);
        }
        Ok(self.real(parent)?.join(name))
    }

    pub(crate) fn getattr(&self, ino: Ino, fh: Option<u64>) -> Res<FileAttr> {
        if let Some(open) = fh.and_then(|fh| self.handles.file(fh)) {
            if open.ino == ino {
                return Ok(attr(ino, &open.file.metadata()?));
            }
        }
        match self.real(ino) {
            Ok(path) => Ok(attr(ino, &fs::symlink_metadata(path)?)),
            // A file with no name left, still open somewhere.
            Err(e) => match self.handles.any_for(ino) {
                Some(open) => Ok(attr(ino, &open.file.metadata()?)),
                None => Err(e),
            },
        }
    }

    pub(crate) fn lookup(&self, parent: Ino, name: &OsStr) -> Res<FileAttr> {
        if !self.model.contains(parent) {
            return Err(Errno::ESTALE);
        }
        let ino = self.model.lookup(parent, name).ok_or(Errno::ENOENT)?;
        self.getattr(ino, None)
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn setattr(
        &mut self,
        ino: Ino,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        fh: Option<u64>,
    ) -> Res<FileAttr> {
        let path = self.real(ino).ok();
        let open = fh
            .and_then(|fh| self.handles.file(fh))
            .filter(|o| o.ino == ino);
        if let Some(size) = size {
            if size > MAX_FILE_LEN {
                return Err(Errno::EFBIG);
            }
            match (open, &path) {
                (Some(open), _) => open.file.set_len(size)?,
                (None, Some(path)) => {
                    let c = cpath(path)?;
                    let len = libc::off_t::try_from(size).map_err(|_| Errno::EFBIG)?;
                    // SAFETY: `c` is a valid NUL-terminated path.
                    check(unsafe { libc::truncate(c.as_ptr(), len) })?;
                }
                (None, None) => return Err(Errno::ENOENT),
            }
            if self.model.kind(ino) == Some(Kind::File) {
                self.model.set_len(ino, size).map_err(diverged)?;
            }
        }
        if let Some(mode) = mode {
            let perm = fs::Permissions::from_mode(mode & 0o7777);
            match (open, &path) {
                // fchmod: works for a file that no longer has a name.
                (Some(open), _) => open.file.set_permissions(perm)?,
                (None, Some(path)) => fs::set_permissions(path, perm)?,
                (None, None) => return Err(Errno::ENOENT),
            }
            if self.model.contains(ino) {
                self.model.set_mode(ino, mode).map_err(diverged)?;
            }
        }
        if uid.is_some() || gid.is_some() {
            let path = path.as_ref().ok_or(Errno::ENOENT)?;
            std::os::unix::fs::lchown(path, uid, gid)?;
        }
        if atime.is_some() || mtime.is_some() {
            let path = path.as_ref().ok_or(Errno::ENOENT)?;
            let times = [timespec(atime), timespec(mtime)];
            let c = cpath(path)?;
            // SAFETY: `c` is a valid path and `times` two valid timespecs.
            check(unsafe {
                libc::utimensat(
                    libc::AT_FDCWD,
                    c.as_ptr(),
                    times.as_ptr(),
                    libc::AT_SYMLINK_NOFOLLOW,
                )
            })?;
        }
        self.getattr(ino, fh)
    }

    pub(crate) fn readlink(&self, ino: Ino) -> Res<Vec<u8>> {
        let path = self.real(ino)?;
        Ok(fs::read_link(path)?.into_os_string().into_vec())
    }

    fn give(&self, path: &Path, owner: Owner) {
        // Only root can give a file away; a failure leaves it to whoever
        // runs the file system, which is no reason to fail the call.
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            let _ = std::os::unix::fs::lchown(path, Some(owner.uid), Some(owner.gid));
        }
    }

    /// Records a node the backing folder now has, undoing the backing side
    /// if the model refuses.
    fn adopt(&mut self, parent: Ino, name: &OsStr, path: &Path, spec: NodeSpec) -> Res<Ino> {
        match self.model.create(parent, name, spec) {
            Ok(ino) => Ok(ino),
            Err(e) => {
                if fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
                    let _ = fs::remove_dir(path);
                } else {
                    let _ = fs::remove_file(path);
                }
                Err(model_err(e))
            }
        }
    }

    fn free(&self, parent: Ino, name: &OsStr) -> Res<PathBuf> {
        let path = self.entry(parent, name)?;
        if self.model.lookup(parent, name).is_some() {
            return Err(Errno::EEXIST);
        }
        Ok(path)
    }

    pub(crate) fn mknod(
        &mut self,
        parent: Ino,
        name: &OsStr,
        mode: u32,
        rdev: u32,
        owner: Owner,
    ) -> Res<FileAttr> {
        let path = self.free(parent, name)?;
        let spec = if mode & libc::S_IFMT == libc::S_IFREG || mode & libc::S_IFMT == 0 {
            OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(mode & 0o7777)
                .open(&path)?;
            fs::set_permissions(&path, fs::Permissions::from_mode(mode & 0o7777))?;
            NodeSpec::File { mode }
        } else if mode & libc::S_IFMT == libc::S_IFDIR {
            return Err(Errno::EINVAL);
        } else {
            crate::backing::mknod(&path, mode, rdev)?;
            NodeSpec::Special { mode, rdev }
        };
        self.give(&path, owner);
        let ino = self.adopt(parent, name, &path, spec)?;
        self.getattr(ino, None)
    }

    pub(crate) fn mkdir(
        &mut self,
        parent: Ino,
        name: &OsStr,
        mode: u32,
        owner: Owner,
    ) -> Res<FileAttr> {
        let path = self.free(parent, name)?;
        fs::DirBuilder::new().mode(mode & 0o7777).create(&path)?;
        fs::set_permissions(&path, fs::Permissions::from_mode(mode & 0o7777))?;
        self.give(&path, owner);
        let ino = self.adopt(parent, name, &path, NodeSpec::Dir { mode })?;
        self.getattr(ino, None)
    }

    pub(crate) fn symlink(
        &mut self,
        parent: Ino,
        name: &OsStr,
        target: &Path,
        owner: Owner,
    ) -> Res<FileAttr> {
        let path = self.free(parent, name)?;
        std::os::unix::fs::symlink(target, &path)?;
        self.give(&path, owner);
        let spec = NodeSpec::Symlink {
            target: target.as_os_str().to_owned(),
        };
        let ino = self.adopt(parent, name, &path, spec)?;
        self.getattr(ino, None)
    }

    pub(crate) fn link(&mut self, ino: Ino, parent: Ino, name: &OsStr) -> Res<FileAttr> {
        let from = self.real(ino)?;
        let path = self.free(parent, name)?;
        fs::hard_link(&from, &path)?;
        if let Err(e) = self.model.link(ino, parent, name) {
            let _ = fs::remove_file(&path);
            return Err(model_err(e));
        }
        self.getattr(ino, None)
    }

    pub(crate) fn unlink(&mut self, parent: Ino, name: &OsStr) -> Res<()> {
        let path = self.entry(parent, name)?;
        self.model.lookup(parent, name).ok_or(Errno::ENOENT)?;
        fs::remove_file(&path)?;
        self.model.unlink(parent, name).map_err(diverged)?;
        Ok(())
    }

    pub(crate) fn rmdir(&mut self, parent: Ino, name: &OsStr) -> Res<()> {
        let path = self.entry(parent, name)?;
        self.model.lookup(parent, name).ok_or(Errno::ENOENT)?;
        fs::remove_dir(&path)?;
        self.model.rmdir(parent, name).map_err(diverged)?;
        Ok(())
    }

    pub(crate) fn rename(
        &mut self,
        parent: Ino,
        name: &OsStr,
        to_parent: Ino,
        to_name: &OsStr,
        flags: u32,
    ) -> Res<()> {
        let how = match flags {
            0 => RenameMode::Replace,
            libc::RENAME_NOREPLACE => RenameMode::NoReplace,
            libc::RENAME_EXCHANGE => RenameMode::Exchange,
            _ => return Err(Errno::EINVAL),
        };
        let from = self.entry(parent, name)?;
        let to = self.entry(to_parent, to_name)?;
        self.model.lookup(parent, name).ok_or(Errno::ENOENT)?;
        let (cf, ct) = (cpath(&from)?, cpath(&to)?);
        // SAFETY: both paths are valid NUL-terminated strings.
        check(unsafe {
            libc::renameat2(
                libc::AT_FDCWD,
                cf.as_ptr(),
                libc::AT_FDCWD,
                ct.as_ptr(),
                flags,
            )
        })?;
        self.model
            .rename(parent, name, to_parent, to_name, how)
            .map_err(diverged)
    }

    fn open_backing(path: &Path, flags: i32) -> io::Result<File> {
        let acc = flags & libc::O_ACCMODE;
        // Not passed on: O_APPEND (the kernel sends explicit offsets),
        // O_SYNC/O_DSYNC (durability is the model's business, not the
        // backing folder's), O_DIRECT (alignment rules of the backing file
        // system), O_TRUNC (the kernel sends a size change instead).
        OpenOptions::new()
            .read(acc != libc::O_WRONLY)
            .write(acc != libc::O_RDONLY)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
    }

    pub(crate) fn open(&mut self, ino: Ino, flags: i32) -> Res<u64> {
        let path = self.real(ino)?;
        if self.model.kind(ino) == Some(Kind::Dir) {
            return Err(Errno::EISDIR);
        }
        let file = State::open_backing(&path, flags)?;
        Ok(self.handles.add_file(OpenFile {
            ino,
            file,
            sync: flags & libc::O_DSYNC != 0,
        }))
    }

    pub(crate) fn create(
        &mut self,
        parent: Ino,
        name: &OsStr,
        mode: u32,
        flags: i32,
        owner: Owner,
    ) -> Res<(FileAttr, u64)> {
        let path = self.free(parent, name)?;
        let acc = flags & libc::O_ACCMODE;
        let file = OpenOptions::new()
            .read(acc != libc::O_WRONLY)
            .write(true)
            .create_new(true)
            .mode(mode & 0o7777)
            .open(&path)?;
        file.set_permissions(fs::Permissions::from_mode(mode & 0o7777))?;
        self.give(&path, owner);
        let ino = self.adopt(parent, name, &path, NodeSpec::File { mode })?;
        let attr = attr(ino, &file.metadata()?);
        let fh = self.handles.add_file(OpenFile {
            ino,
            file,
            sync: flags & libc::O_DSYNC != 0,
        });
        Ok((attr, fh))
    }

    pub(crate) fn read(&self, fh: u64, offset: u64, size: u32) -> Res<Vec<u8>> {
        let open = self.handles.file(fh).ok_or(Errno::EBADF)?;
        let mut buf = vec![0; size as usize];
        let mut got = 0;
        while got < buf.len() {
            match open.file.read_at(&mut buf[got..], offset + got as u64) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        buf.truncate(got);
        Ok(buf)
    }

    pub(crate) fn write(&mut self, fh: u64, offset: u64, data: &[u8], flags: i32) -> Res<u32> {
        let open = self.handles.file(fh).ok_or(Errno::EBADF)?;
        let ino = open.ino;
        let sync = open.sync || flags & libc::O_DSYNC != 0;
        let end = offset.checked_add(data.len() as u64).ok_or(Errno::EFBIG)?;
        if end > MAX_FILE_LEN {
            return Err(Errno::EFBIG);
        }
        let mut done = 0;
        let mut failed = None;
        while done < data.len() {
            match open.file.write_at(&data[done..], offset + done as u64) {
                Ok(0) => {
                    failed = Some(Errno::EIO);
                    break;
                }
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    failed = Some(e.into());
                    break;
                }
            }
        }
        // Whatever reached the backing file is live, and the model must
        // know it even when the rest failed. A file no name can bring back
        // (unlinked, never durable) has left the model: nothing to record.
        if self.model.contains(ino) {
            self.model
                .write(ino, offset, &data[..done])
                .map_err(diverged)?;
            if sync && failed.is_none() {
                self.model.sync_data(ino).map_err(diverged)?;
            }
        }
        match failed {
            Some(e) if done == 0 => Err(e),
            _ => Ok(u32::try_from(done).unwrap_or(u32::MAX)),
        }
    }

    pub(crate) fn release(&mut self, fh: u64) {
        self.handles.close_file(fh);
    }

    pub(crate) fn fsync(&mut self, ino: Ino, datasync: bool) -> Res<()> {
        // An inode the model dropped can never come back: its sync is moot.
        if !self.model.contains(ino) {
            return Ok(());
        }
        let done = if datasync {
            self.model.sync_data(ino)
        } else {
            self.model.sync_file(ino)
        };
        done.map_err(diverged)
    }

    pub(crate) fn opendir(&mut self, ino: Ino) -> Res<u64> {
        let listed = self.model.entries(ino).map_err(model_err)?;
        let parent = self.model.parent(ino).unwrap_or(ino);
        let mut entries = vec![
            (ino, Kind::Dir, OsString::from(".")),
            (parent, Kind::Dir, OsString::from("..")),
        ];
        entries.extend(
            listed
                .into_iter()
                .map(|(name, child, kind)| (child, kind, name)),
        );
        Ok(self.handles.add_dir(OpenDir { entries }))
    }

    pub(crate) fn dir_entries(&self, fh: u64) -> Res<&OpenDir> {
        self.handles.dir(fh).ok_or(Errno::EBADF)
    }

    pub(crate) fn releasedir(&mut self, fh: u64) {
        self.handles.close_dir(fh);
    }

    pub(crate) fn fsyncdir(&mut self, ino: Ino) -> Res<()> {
        if !self.model.contains(ino) {
            return Ok(());
        }
        self.model.sync_dir(ino).map_err(model_err)
    }

    pub(crate) fn statfs(&self) -> Res<libc::statvfs> {
        let c = cpath(&self.backing)?;
        // SAFETY: statvfs is plain data; all-zero is a valid value.
        let mut out: libc::statvfs = unsafe { std::mem::zeroed() };
        // SAFETY: `c` is a valid path and `out` a valid statvfs to fill.
        check(unsafe { libc::statvfs(c.as_ptr(), &mut out) })?;
        Ok(out)
    }

    pub(crate) fn access(&self, ino: Ino, mask: i32) -> Res<()> {
        let c = cpath(&self.real(ino)?)?;
        // SAFETY: `c` is a valid NUL-terminated path.
        check(unsafe { libc::access(c.as_ptr(), mask) })
    }
}

/// A relative path for reports (crash points): the inode's live path, or a
/// name in a live directory.
pub(crate) fn describe(model: &Model, ino: Ino, name: Option<&OsStr>) -> PathBuf {
    let base = model.path(ino).unwrap_or_default();
    match name {
        Some(name) => base.join(name),
        None => base,
    }
}

fn timespec(t: Option<TimeOrNow>) -> libc::timespec {
    match t {
        None => libc::timespec {
            tv_sec: 0,
            tv_nsec: libc::UTIME_OMIT,
        },
        Some(TimeOrNow::Now) => libc::timespec {
            tv_sec: 0,
            tv_nsec: libc::UTIME_NOW,
        },
        Some(TimeOrNow::SpecificTime(t)) => {
            let (secs, nanos) = match t.duration_since(UNIX_EPOCH) {
                Ok(d) => (
                    i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
                    d.subsec_nanos(),
                ),
                Err(e) => {
                    let d = e.duration();
                    // Before 1970: whole seconds down, nanoseconds up.
                    let secs = -i64::try_from(d.as_secs()).unwrap_or(i64::MAX);
                    match d.subsec_nanos() {
                        0 => (secs, 0),
                        n => (secs - 1, 1_000_000_000 - n),
                    }
                }
            };
            libc::timespec {
                tv_sec: secs as libc::time_t,
                tv_nsec: nanos as libc::c_long,
            }
        }
    }
}
