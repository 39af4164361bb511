//! The FUSE side: turns kernel requests into [`State`] calls, and sends
//! every mutating one through the crash-point gate first.
//!
//! Entry and attribute timeouts are zero, so the kernel asks again every
//! time: after a power loss rewrote the backing folder and renumbered the
//! inodes, nothing cached can answer for the file system. Reads go through
//! the page cache as usual; it is dropped at each open, and a power loss
//! renumbers every inode anyway.

use std::ffi::OsStr;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use fuser::{
    AccessFlags, Errno, FileHandle, Filesystem, FopenFlags, Generation, INodeNo, KernelConfig,
    LockOwner, OpenFlags, RenameFlags, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory,
    ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request, TimeOrNow, WriteFlags,
};

use crate::attr::kind_type;
use crate::gate::{Admit, HeldOp, OpKind};
use crate::model::Ino;
use crate::state::{describe, Owner, State, Verdict};

/// How long the kernel may keep a name's entry: not at all, so that every
/// path is looked up here. A power loss can bring back a name, or take
/// one away, behind the kernel's back; a cached entry (or a cached
/// "no such name") would hide that.
const TTL: Duration = Duration::ZERO;

/// How long the kernel may keep a file's attributes once it asked for
/// them. Every change to a file the kernel has not made itself is a power
/// loss or a reset, and both give every surviving file a new inode number
/// (the root keeps its own, whose mode never changes), so an attribute
/// cached under an old number is never used again. Caching them spares the
/// `getattr` round trips the kernel makes around writes: a synced delivery
/// of `tern-sim agent` then costs about 3.4 requests (its two writes, its
/// `fdatasync`, and a share of the lookups at each start).
const ATTR_TTL: Duration = Duration::from_secs(3600);

/// The state and the condition variable that announces held operations
/// and shutdown, shared by the FUSE thread, the reaper and the harness.
pub(crate) struct Core {
    pub(crate) state: Mutex<State>,
    pub(crate) changed: Condvar,
}

impl Core {
    /// Locks the state. A panic while it was held leaves it usable: every
    /// operation keeps the model and the backing folder in step before it
    /// can panic, so there is nothing to repair.
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Where a mutating operation acts, for the crash point's report.
#[derive(Clone, Copy)]
enum Place<'a> {
    Ino(Ino),
    Entry(Ino, &'a OsStr),
}

/// The FUSE file system: a passthrough to the backing folder that keeps
/// the durability model. Made by [`crate::StateFs::open`] and served by
/// [`crate::StateFs::mount`].
pub struct StateFs {
    pub(crate) core: Arc<Core>,
}

fn owner(req: &Request) -> Owner {
    Owner {
        uid: req.uid(),
        gid: req.gid(),
    }
}

impl StateFs {
    /// Counts a mutating operation, then runs it or, at or past an armed
    /// crash point, parks it unanswered.
    fn gated(
        &self,
        req: &Request,
        kind: OpKind,
        at: Place<'_>,
        to: Option<Place<'_>>,
        job: impl FnOnce(&mut State, Verdict) + Send + 'static,
    ) {
        let mut st = self.core.lock();
        let pid = req.pid();
        let state = &mut *st;
        let model = &state.model;
        let place = |p: Place<'_>| match p {
            Place::Ino(ino) => describe(model, ino, None),
            Place::Entry(dir, name) => describe(model, dir, Some(name)),
        };
        let describe = |seq| HeldOp {
            seq,
            kind,
            path: place(at),
            to: to.map(place),
            pid,
        };
        match state.gate.admit(kind, describe, Box::new(job)) {
            Admit::Run(job) => job(&mut st, Verdict::Apply),
            Admit::Held => {
                if st.at_crash.is_none() {
                    st.at_crash = Some(st.model.clone());
                }
                self.core.changed.notify_all();
            }
        }
    }
}

/// Answers a parked operation that was refused: it never took effect.
/// The caller is gone or about to be (killed, or the machine "lost
/// power"), so the error only has to unblock the kernel.
const REFUSED: Errno = Errno::EIO;

impl Filesystem for StateFs {
    fn init(&mut self, _req: &Request, _config: &mut KernelConfig) -> std::io::Result<()> {
        Ok(())
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        match self.core.lock().lookup(parent.0, name) {
            Ok(attr) => reply.entry(&TTL, &attr, Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.core.lock().getattr(ino.0, fh.map(|f| f.0)) {
            Ok(attr) => reply.attr(&ATTR_TTL, &attr),
            Err(e) => reply.error(e),
        }
    }

    fn setattr(
        &self,
        req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        _ctime: Option<std::time::SystemTime>,
        fh: Option<FileHandle>,
        _crtime: Option<std::time::SystemTime>,
        _chgtime: Option<std::time::SystemTime>,
        _bkuptime: Option<std::time::SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let fh = fh.map(|f| f.0);
        let job = move |st: &mut State, verdict| match verdict {
            Verdict::Apply => match st.setattr(ino.0, mode, uid, gid, size, atime, mtime, fh) {
                Ok(attr) => reply.attr(&ATTR_TTL, &attr),
                Err(e) => reply.error(e),
            },
            Verdict::Refuse => reply.error(REFUSED),
        };
        // Only a size change is a data change; a mode, owner or time change
        // is no crash point (a mode change is still tracked by the model).
        if size.is_some() {
            self.gated(req, OpKind::Truncate, Place::Ino(ino.0), None, job);
        } else {
            job(&mut self.core.lock(), Verdict::Apply);
        }
    }

    fn readlink(&self, _req: &Request, ino: INodeNo, reply: ReplyData) {
        match self.core.lock().readlink(ino.0) {
            Ok(target) => reply.data(&target),
            Err(e) => reply.error(e),
        }
    }

    fn mknod(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        _umask: u32,
        rdev: u32,
        reply: ReplyEntry,
    ) {
        let owner = owner(req);
        let name_owned = name.to_owned();
        let place = Place::Entry(parent.0, name);
        self.gated(
            req,
            OpKind::Mknod,
            place,
            None,
            move |st, verdict| match verdict {
                Verdict::Apply => match st.mknod(parent.0, &name_owned, mode, rdev, owner) {
                    Ok(attr) => reply.entry(&TTL, &attr, Generation(0)),
                    Err(e) => reply.error(e),
                },
                Verdict::Refuse => reply.error(REFUSED),
            },
        );
    }

    fn mkdir(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        _umask: u32,
        reply: ReplyEntry,
    ) {
        let owner = owner(req);
        let name_owned = name.to_owned();
        let place = Place::Entry(parent.0, name);
        self.gated(
            req,
            OpKind::Mkdir,
            place,
            None,
            move |st, verdict| match verdict {
                Verdict::Apply => match st.mkdir(parent.0, &name_owned, mode, owner) {
                    Ok(attr) => reply.entry(&TTL, &attr, Generation(0)),
                    Err(e) => reply.error(e),
                },
                Verdict::Refuse => reply.error(REFUSED),
            },
        );
    }

    fn unlink(&self, req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let name_owned = name.to_owned();
        let place = Place::Entry(parent.0, name);
        self.gated(
            req,
            OpKind::Unlink,
            place,
            None,
            move |st, verdict| match verdict {
                Verdict::Apply => match st.unlink(parent.0, &name_owned) {
                    Ok(()) => reply.ok(),
                    Err(e) => reply.error(e),
                },
                Verdict::Refuse => reply.error(REFUSED),
            },
        );
    }

    fn rmdir(&self, req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let name_owned = name.to_owned();
        let place = Place::Entry(parent.0, name);
        self.gated(
            req,
            OpKind::Rmdir,
            place,
            None,
            move |st, verdict| match verdict {
                Verdict::Apply => match st.rmdir(parent.0, &name_owned) {
                    Ok(()) => reply.ok(),
                    Err(e) => reply.error(e),
                },
                Verdict::Refuse => reply.error(REFUSED),
            },
        );
    }

    fn symlink(
        &self,
        req: &Request,
        parent: INodeNo,
        link_name: &OsStr,
        target: &Path,
        reply: ReplyEntry,
    ) {
        let owner = owner(req);
        let name_owned = link_name.to_owned();
        let target = target.to_owned();
        let place = Place::Entry(parent.0, link_name);
        self.gated(
            req,
            OpKind::Symlink,
            place,
            None,
            move |st, verdict| match verdict {
                Verdict::Apply => match st.symlink(parent.0, &name_owned, &target, owner) {
                    Ok(attr) => reply.entry(&TTL, &attr, Generation(0)),
                    Err(e) => reply.error(e),
                },
                Verdict::Refuse => reply.error(REFUSED),
            },
        );
    }

    fn rename(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        let (from, to) = (name.to_owned(), newname.to_owned());
        let at = Place::Entry(parent.0, name);
        let dest = Place::Entry(newparent.0, newname);
        self.gated(
            req,
            OpKind::Rename,
            at,
            Some(dest),
            move |st, verdict| match verdict {
                Verdict::Apply => {
                    match st.rename(parent.0, &from, newparent.0, &to, flags.bits()) {
                        Ok(()) => reply.ok(),
                        Err(e) => reply.error(e),
                    }
                }
                Verdict::Refuse => reply.error(REFUSED),
            },
        );
    }

    fn link(
        &self,
        req: &Request,
        ino: INodeNo,
        newparent: INodeNo,
        newname: &OsStr,
        reply: ReplyEntry,
    ) {
        let name_owned = newname.to_owned();
        let at = Place::Ino(ino.0);
        let dest = Place::Entry(newparent.0, newname);
        self.gated(
            req,
            OpKind::Link,
            at,
            Some(dest),
            move |st, verdict| match verdict {
                Verdict::Apply => match st.link(ino.0, newparent.0, &name_owned) {
                    Ok(attr) => reply.entry(&TTL, &attr, Generation(0)),
                    Err(e) => reply.error(e),
                },
                Verdict::Refuse => reply.error(REFUSED),
            },
        );
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        match self.core.lock().open(ino.0, flags.0) {
            Ok(fh) => reply.opened(FileHandle(fh), FopenFlags::empty()),
            Err(e) => reply.error(e),
        }
    }

    fn read(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        match self.core.lock().read(fh.0, offset, size) {
            Ok(data) => reply.data(&data),
            Err(e) => reply.error(e),
        }
    }

    fn write(
        &self,
        req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        data: &[u8],
        write_flags: WriteFlags,
        flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let data = data.to_vec();
        let job = move |st: &mut State, verdict| match verdict {
            Verdict::Apply => match st.write(fh.0, offset, &data, flags.0) {
                Ok(n) => reply.written(n),
                Err(e) => reply.error(e),
            },
            Verdict::Refuse => reply.error(REFUSED),
        };
        // The kernel writing back pages of a shared mapping: no system call
        // of the process, at a time the kernel picks. Counting it would make
        // crash points depend on timing, and holding it would stop a killed
        // process from exiting (it waits for its pages' write-back). It is
        // applied; after a crash point, the power loss does not see it.
        if write_flags.contains(WriteFlags::FUSE_WRITE_CACHE) {
            job(&mut self.core.lock(), Verdict::Apply);
        } else {
            self.gated(req, OpKind::Write, Place::Ino(ino.0), None, job);
        }
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        // close() makes nothing durable.
        reply.ok();
    }

    fn release(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        self.core.lock().release(fh.0);
        reply.ok();
    }

    fn fsync(
        &self,
        req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        datasync: bool,
        reply: ReplyEmpty,
    ) {
        let kind = if datasync {
            OpKind::Fdatasync
        } else {
            OpKind::Fsync
        };
        self.gated(
            req,
            kind,
            Place::Ino(ino.0),
            None,
            move |st, verdict| match verdict {
                Verdict::Apply => match st.fsync(ino.0, datasync) {
                    Ok(()) => reply.ok(),
                    Err(e) => reply.error(e),
                },
                Verdict::Refuse => reply.error(REFUSED),
            },
        );
    }

    fn opendir(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        match self.core.lock().opendir(ino.0) {
            Ok(fh) => reply.opened(FileHandle(fh), FopenFlags::empty()),
            Err(e) => reply.error(e),
        }
    }

    fn readdir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let st = self.core.lock();
        let dir = match st.dir_entries(fh.0) {
            Ok(dir) => dir,
            Err(e) => return reply.error(e),
        };
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        for (i, (ino, kind, name)) in dir.entries.iter().enumerate().skip(start) {
            let mode = st.model.mode(*ino).unwrap_or(0);
            if reply.add(INodeNo(*ino), (i + 1) as u64, kind_type(*kind, mode), name) {
                break;
            }
        }
        reply.ok();
    }

    fn releasedir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        reply: ReplyEmpty,
    ) {
        self.core.lock().releasedir(fh.0);
        reply.ok();
    }

    fn fsyncdir(
        &self,
        req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        self.gated(
            req,
            OpKind::Fsyncdir,
            Place::Ino(ino.0),
            None,
            move |st, verdict| match verdict {
                Verdict::Apply => match st.fsyncdir(ino.0) {
                    Ok(()) => reply.ok(),
                    Err(e) => reply.error(e),
                },
                Verdict::Refuse => reply.error(REFUSED),
            },
        );
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        match self.core.lock().statfs() {
            Ok(s) => reply.statfs(
                s.f_blocks,
                s.f_bfree,
                s.f_bavail,
                s.f_files,
                s.f_ffree,
                u32::try_from(s.f_bsize).unwrap_or(4096),
                u32::try_from(s.f_namemax).unwrap_or(255),
                u32::try_from(s.f_frsize).unwrap_or(4096),
            ),
            Err(e) => reply.error(e),
        }
    }

    fn access(&self, _req: &Request, ino: INodeNo, mask: AccessFlags, reply: ReplyEmpty) {
        match self.core.lock().access(ino.0, mask.bits()) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn create(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        _umask: u32,
        flags: i32,
        reply: ReplyCreate,
    ) {
        let owner = owner(req);
        let name_owned = name.to_owned();
        let place = Place::Entry(parent.0, name);
        self.gated(
            req,
            OpKind::Create,
            place,
            None,
            move |st, verdict| match verdict {
                Verdict::Apply => match st.create(parent.0, &name_owned, mode, flags, owner) {
                    Ok((attr, fh)) => reply.created(
                        &TTL,
                        &attr,
                        Generation(0),
                        FileHandle(fh),
                        FopenFlags::empty(),
                    ),
                    Err(e) => reply.error(e),
                },
                Verdict::Refuse => reply.error(REFUSED),
            },
        );
    }
}
