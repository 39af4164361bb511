//! Putting a site in place whole: every file is written and synced into
//! a fresh folder beside the target, which then takes the target's name
//! by a rename, so a reader (or a web server) sees the old site or the
//! new one, never a mix, and a failure leaves the old site as it was.
//!
//! A folder that exists is replaced only when it is empty or is a site
//! this command wrote (its index.html names the generator): `--out` given
//! a wrong folder must not wipe it.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::page::GENERATOR;
use crate::certify::write::{write_all, WriteError};

#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    #[error("{}: not a folder (a file of that name exists)", path.display())]
    NotAFolder { path: PathBuf },
    #[error("{}: a symbolic link; name the folder itself", path.display())]
    Linked { path: PathBuf },
    #[error("{}: holds files that are not a site written by `tern-sim site` (no index.html of its own); empty it or choose another folder", path.display())]
    NotASite { path: PathBuf },
    #[error("{}: name a folder to create or replace, not `.` or `..`", path.display())]
    NoName { path: PathBuf },
    #[error("cannot put the site in place at {}: {source}", path.display())]
    Rename {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// Whether a site can be put at `dir`: it is absent, an empty folder, or
/// a site written earlier. Checked before any report is read, and again
/// when the site is put in place.
pub fn check(dir: &Path) -> Result<(), PublishError> {
    let path = dir.to_path_buf();
    if dir.file_name().is_none() {
        return Err(PublishError::NoName { path });
    }
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => return Err(WriteError { path, source }.into()),
    };
    if meta.file_type().is_symlink() {
        return Err(PublishError::Linked { path });
    }
    if !meta.is_dir() {
        return Err(PublishError::NotAFolder { path });
    }
    let mut entries = std::fs::read_dir(dir).map_err(|source| WriteError {
        path: path.clone(),
        source,
    })?;
    if entries.next().is_none() || is_site(dir) {
        Ok(())
    } else {
        Err(PublishError::NotASite { path })
    }
}

/// Whether `dir`'s index.html says this command wrote it.
fn is_site(dir: &Path) -> bool {
    let mut head = Vec::new();
    let read = std::fs::File::open(dir.join("index.html"))
        .and_then(|f| f.take(4096).read_to_end(&mut head));
    read.is_ok()
        && String::from_utf8_lossy(&head)
            .contains(&format!(r#"<meta name="generator" content="{GENERATOR}">"#))
}

/// Writes `files` (path in the site, bytes) as the site at `dir`,
/// replacing the site there, if any (see the module comment).
pub fn publish(dir: &Path, files: &[(String, Vec<u8>)]) -> Result<(), PublishError> {
    check(dir)?;
    let name = dir
        .file_name()
        .ok_or_else(|| PublishError::NoName {
            path: dir.to_path_buf(),
        })?
        .to_string_lossy()
        .into_owned();
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(|source| WriteError {
        path: parent.clone(),
        source,
    })?;
    let staging = fresh_folder(&parent, &name, "new")?;
    let borrowed: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    if let Err(e) = write_all(&staging, &borrowed) {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(e.into());
    }
    let renamed = |source| PublishError::Rename {
        path: dir.to_path_buf(),
        source,
    };
    if std::fs::symlink_metadata(dir).is_err() {
        if let Err(e) = std::fs::rename(&staging, dir) {
            let _ = std::fs::remove_dir_all(&staging);
            return Err(renamed(e));
        }
    } else {
        // A folder cannot be renamed over one that holds files: the old
        // site steps aside first, into an empty folder it replaces.
        let old = fresh_folder(&parent, &name, "old")?;
        if let Err(e) = std::fs::rename(dir, &old) {
            let _ = std::fs::remove_dir(&old);
            let _ = std::fs::remove_dir_all(&staging);
            return Err(renamed(e));
        }
        if let Err(e) = std::fs::rename(&staging, dir) {
            let _ = std::fs::rename(&old, dir);
            let _ = std::fs::remove_dir_all(&staging);
            return Err(renamed(e));
        }
        let _ = std::fs::remove_dir_all(&old);
    }
    if let Ok(f) = std::fs::File::open(&parent) {
        let _ = f.sync_all();
    }
    Ok(())
}

/// A new empty folder beside the site, hidden, named after it and this
/// process, made with the mode any new folder gets, since it becomes the
/// published site.
fn fresh_folder(parent: &Path, name: &str, role: &str) -> Result<PathBuf, PublishError> {
    let pid = std::process::id();
    for n in 0..1000 {
        let path = parent.join(format!(".{name}.tern-sim-site-{role}-{pid}-{n}"));
        match std::fs::create_dir(&path) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(source) => return Err(WriteError { path, source }.into()),
        }
    }
    let path = parent.join(format!(".{name}.tern-sim-site-{role}-{pid}"));
    Err(WriteError {
        path,
        source: std::io::Error::from(std::io::ErrorKind::AlreadyExists),
    }
    .into())
}
