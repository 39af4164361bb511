//! The backing folder: read once at mount as the durable state of a
//! machine that just booted, and rewritten after a power loss to what the
//! machine comes back to.

use std::collections::BTreeMap;
use std::ffi::{CString, OsString};
use std::fs::{self, DirBuilder};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::model::{Ino, Kind, Model, NodeSpec, MAX_FILE_LEN, ROOT};

/// Why the backing folder could not be read or rewritten.
#[derive(Debug, thiserror::Error)]
pub enum BackingError {
    /// A file system call on the backing folder failed.
    #[error("{path}: {source}")]
    Io {
        /// The path it failed on.
        path: PathBuf,
        /// What failed.
        source: io::Error,
    },
    /// A file is larger than the model keeps in memory.
    #[error("{0}: larger than {MAX_FILE_LEN} bytes, which tern-statefs does not keep")]
    TooBig(PathBuf),
    /// The model refused what the folder holds (a name it cannot take).
    #[error("{path}: {source}")]
    Model {
        /// The path.
        path: PathBuf,
        /// The refusal.
        source: crate::model::ModelError,
    },
}

fn io_at(path: &Path) -> impl FnOnce(io::Error) -> BackingError + '_ {
    move |source| BackingError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Reads `root` into a model where everything is durable. Hard links
/// within the folder stay one inode.
pub fn scan(root: &Path) -> Result<Model, BackingError> {
    let meta = fs::metadata(root).map_err(io_at(root))?;
    if !meta.is_dir() {
        return Err(BackingError::Io {
            path: root.to_path_buf(),
            source: io::Error::from_raw_os_error(libc::ENOTDIR),
        });
    }
    let mut model = Model::new(meta.mode());
    let mut seen = BTreeMap::new();
    scan_dir(root, ROOT, &mut model, &mut seen)?;
    model.sync_all();
    Ok(model)
}

fn scan_dir(
    dir: &Path,
    ino: Ino,
    model: &mut Model,
    seen: &mut BTreeMap<(u64, u64), Ino>,
) -> Result<(), BackingError> {
    let mut names: Vec<OsString> = fs::read_dir(dir)
        .map_err(io_at(dir))?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<io::Result<_>>()
        .map_err(io_at(dir))?;
    names.sort();
    for name in names {
        let path = dir.join(&name);
        let meta = fs::symlink_metadata(&path).map_err(io_at(&path))?;
        let model_err = |source| BackingError::Model {
            path: path.clone(),
            source,
        };
        let t = meta.file_type();
        if t.is_file() && meta.nlink() > 1 {
            if let Some(existing) = seen.get(&(meta.dev(), meta.ino())) {
                model.link(*existing, ino, &name).map_err(model_err)?;
                continue;
            }
        }
        if t.is_dir() {
            let child = model
                .create(ino, &name, NodeSpec::Dir { mode: meta.mode() })
                .map_err(model_err)?;
            scan_dir(&path, child, model, seen)?;
        } else if t.is_file() {
            if meta.len() > MAX_FILE_LEN {
                return Err(BackingError::TooBig(path));
            }
            let data = fs::read(&path).map_err(io_at(&path))?;
            let child = model
                .create(ino, &name, NodeSpec::File { mode: meta.mode() })
                .map_err(model_err)?;
            model.write(child, 0, &data).map_err(model_err)?;
            seen.insert((meta.dev(), meta.ino()), child);
        } else if t.is_symlink() {
            let target = fs::read_link(&path).map_err(io_at(&path))?;
            model
                .create(
                    ino,
                    &name,
                    NodeSpec::Symlink {
                        target: target.into_os_string(),
                    },
                )
                .map_err(model_err)?;
        } else {
            model
                .create(
                    ino,
                    &name,
                    NodeSpec::Special {
                        mode: meta.mode(),
                        rdev: u32::try_from(meta.rdev()).unwrap_or(0),
                    },
                )
                .map_err(model_err)?;
        }
    }
    Ok(())
}

/// Empties `root` and writes the model's live state into it. Called after
/// [`Model::power_loss`], when live and durable are the same. Owners and
/// times are not part of the model: files belong to the caller and carry
/// the current time.
pub(crate) fn rewrite(root: &Path, model: &Model) -> Result<(), BackingError> {
    clear(root)?;
    let mut first_name: BTreeMap<Ino, PathBuf> = BTreeMap::new();
    let mut dirs = Vec::new();
    write_dir(root, ROOT, model, &mut first_name, &mut dirs)?;
    // Directory modes last, deepest first, so that a read-only directory
    // could still be filled.
    for (path, mode) in dirs.into_iter().rev() {
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).map_err(io_at(&path))?;
    }
    if let Some(mode) = model.mode(ROOT) {
        fs::set_permissions(root, fs::Permissions::from_mode(mode & 0o7777))
            .map_err(io_at(root))?;
    }
    Ok(())
}

fn clear(root: &Path) -> Result<(), BackingError> {
    for entry in fs::read_dir(root).map_err(io_at(root))? {
        let path = entry.map_err(io_at(root))?.path();
        let meta = fs::symlink_metadata(&path).map_err(io_at(&path))?;
        if meta.is_dir() {
            fs::remove_dir_all(&path).map_err(io_at(&path))?;
        } else {
            fs::remove_file(&path).map_err(io_at(&path))?;
        }
    }
    Ok(())
}

fn write_dir(
    dir: &Path,
    ino: Ino,
    model: &Model,
    first_name: &mut BTreeMap<Ino, PathBuf>,
    dirs: &mut Vec<(PathBuf, u32)>,
) -> Result<(), BackingError> {
    let entries = model.entries(ino).map_err(|source| BackingError::Model {
        path: dir.to_path_buf(),
        source,
    })?;
    for (name, child, kind) in entries {
        let path = dir.join(&name);
        let mode = model.mode(child).unwrap_or(0o644);
        if let Some(first) = first_name.get(&child) {
            fs::hard_link(first, &path).map_err(io_at(&path))?;
            continue;
        }
        match kind {
            Kind::Dir => {
                DirBuilder::new()
                    .mode(0o700)
                    .create(&path)
                    .map_err(io_at(&path))?;
                dirs.push((path.clone(), mode & 0o7777));
                write_dir(&path, child, model, first_name, dirs)?;
            }
            Kind::File => {
                let data = model.data(child).map(|d| d.durable()).unwrap_or(&[]);
                fs::write(&path, data).map_err(io_at(&path))?;
                fs::set_permissions(&path, fs::Permissions::from_mode(mode & 0o7777))
                    .map_err(io_at(&path))?;
                first_name.insert(child, path);
            }
            Kind::Symlink => {
                let target = model.target(child).unwrap_or_default();
                std::os::unix::fs::symlink(target, &path).map_err(io_at(&path))?;
            }
            Kind::Special => {
                let rdev = model.rdev(child).unwrap_or(0);
                mknod(&path, mode, rdev).map_err(io_at(&path))?;
                first_name.insert(child, path);
            }
        }
    }
    Ok(())
}

/// `mknod(2)` with the exact mode (the process umask is undone after).
pub(crate) fn mknod(path: &Path, mode: u32, rdev: u32) -> io::Result<()> {
    let c = CString::new(path.as_os_str().as_bytes())?;
    // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
    let rc = unsafe { libc::mknod(c.as_ptr(), mode as libc::mode_t, libc::dev_t::from(rdev)) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    fs::set_permissions(path, fs::Permissions::from_mode(mode & 0o7777))
}
