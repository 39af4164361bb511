//! Writing report files so that none is ever seen half-written: each goes
//! to a temporary file in the target folder, is synced, and is renamed
//! over its final name only when complete. The reports are meant to be
//! published, so they get the mode an ordinary file gets (0666 less the
//! umask), not a temporary file's private 0600.

use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
#[error("cannot write {}: {source}", path.display())]
pub struct WriteError {
    pub path: PathBuf,
    pub source: std::io::Error,
}

/// The mode asked of the system for a report file: `open(2)` takes the
/// umask off, as for any file a program creates.
#[cfg(unix)]
fn published() -> std::fs::Permissions {
    use std::os::unix::fs::PermissionsExt;
    std::fs::Permissions::from_mode(0o666)
}

/// Why a report folder cannot be used, said before any work starts.
#[derive(Debug, thiserror::Error)]
pub enum FolderError {
    #[error("{}: not a folder (a file of that name exists)", path.display())]
    NotAFolder { path: PathBuf },
    #[error("{}: cannot create the folder: {source}", path.display())]
    Create {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: cannot write in the folder: {source}", path.display())]
    Unwritable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: a symbolic link, where tern-sim writes only into folders it made itself; remove it", path.display())]
    Linked { path: PathBuf },
}

/// The folders inside a report folder that tern-sim alone writes: their
/// files are replaced wholesale by each report, and a symbolic link in
/// them is never followed.
pub const OWNED: [&str; 2] = ["traces", "stderr"];

/// Makes sure reports can be written into `dir` (creating it), so that a
/// certification does not run for minutes only to fail at the end. A
/// probe file is created and removed again, and the folders tern-sim owns
/// in it must be real folders, not links to somewhere else.
pub fn prepare(dir: &Path) -> Result<(), FolderError> {
    prepare_folder(dir)?;
    for owned in OWNED {
        if let Some(link) = linked_folder_within(&dir.join(owned)) {
            return Err(FolderError::Linked { path: link });
        }
    }
    Ok(())
}

/// The first symbolic link found at `folder` or at a folder in it (one
/// level down: the depth certify writes at), if any.
fn linked_folder_within(folder: &Path) -> Option<PathBuf> {
    let meta = std::fs::symlink_metadata(folder).ok()?;
    if meta.file_type().is_symlink() {
        return Some(folder.to_path_buf());
    }
    if !meta.is_dir() {
        return None;
    }
    std::fs::read_dir(folder)
        .ok()?
        .filter_map(Result::ok)
        .find(|e| e.file_type().is_ok_and(|t| t.is_symlink()))
        .map(|e| e.path())
}

fn prepare_folder(dir: &Path) -> Result<(), FolderError> {
    let path = dir.to_path_buf();
    if dir.exists() && !dir.is_dir() {
        return Err(FolderError::NotAFolder { path });
    }
    std::fs::create_dir_all(dir).map_err(|source| {
        if dir.exists() && !dir.is_dir() {
            FolderError::NotAFolder { path: path.clone() }
        } else {
            FolderError::Create {
                path: path.clone(),
                source,
            }
        }
    })?;
    tempfile::Builder::new()
        .prefix(".tern-sim-probe.")
        .tempfile_in(dir)
        .map(drop)
        .map_err(|source| FolderError::Unwritable { path, source })
}

/// Writes every `(file name, content)` into `dir`, creating it. All
/// contents are written and synced before the first rename, so a failure
/// leaves the earlier reports in place rather than a mix. A name is a
/// relative path inside `dir`; its folders are made one by one, and one
/// that is a symbolic link is refused, so nothing is written outside
/// `dir`.
pub fn write_all(dir: &Path, files: &[(&str, &[u8])]) -> Result<Vec<PathBuf>, WriteError> {
    let fail = |path: &Path| {
        let path = path.to_path_buf();
        move |source| WriteError { path, source }
    };
    std::fs::create_dir_all(dir).map_err(fail(dir))?;
    let mut staged = Vec::with_capacity(files.len());
    for (name, content) in files {
        // A name may lie in a subfolder (`traces/x.jsonl`): its temporary
        // file is made beside it, so the rename stays within one folder.
        let target = dir.join(name);
        let folder = folder_within(dir, name).map_err(fail(&target))?;
        let file_name = target
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let prefix = format!(".{file_name}.");
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".tmp");
        #[cfg(unix)]
        builder.permissions(published());
        let mut tmp = builder.tempfile_in(&folder).map_err(fail(&target))?;
        tmp.write_all(content).map_err(fail(&target))?;
        tmp.as_file().sync_all().map_err(fail(&target))?;
        staged.push((tmp, target));
    }
    let mut written = Vec::with_capacity(staged.len());
    for (tmp, target) in staged {
        tmp.persist(&target).map_err(|e| WriteError {
            path: target.clone(),
            source: e.error,
        })?;
        written.push(target);
    }
    Ok(written)
}

/// The folder that holds `name` inside `dir`, made if missing, each step
/// checked: `name` must be a plain relative path, and no folder on the way
/// may be a symbolic link.
fn folder_within(dir: &Path, name: &str) -> Result<PathBuf, std::io::Error> {
    use std::path::Component;
    let refuse = |why: &str| std::io::Error::new(std::io::ErrorKind::InvalidInput, why.to_owned());
    let relative = Path::new(name);
    let components: Vec<Component> = relative.components().collect();
    if components.is_empty() || !components.iter().all(|c| matches!(c, Component::Normal(_))) {
        return Err(refuse("not a plain path inside the report folder"));
    }
    let mut folder = dir.to_path_buf();
    for c in &components[..components.len() - 1] {
        folder.push(c);
        match std::fs::symlink_metadata(&folder) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(refuse(&format!(
                    "{} is a symbolic link; tern-sim writes only into folders it made itself",
                    folder.display()
                )))
            }
            Ok(m) if m.is_dir() => {}
            Ok(_) => return Err(refuse(&format!("{} is not a folder", folder.display()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => std::fs::create_dir(&folder)?,
            Err(e) => return Err(e),
        }
    }
    Ok(folder)
}

/// Removes, from the folders tern-sim owns in `dir`, every file and link
/// that `kept` (the names just written) does not name, then the folders
/// left empty: a report folder never holds a trace from an earlier run
/// beside a new verdict. Links are removed, never followed.
pub fn clear_stale(dir: &Path, kept: &[&str]) -> Result<(), WriteError> {
    let kept: std::collections::BTreeSet<PathBuf> = kept.iter().map(|k| dir.join(k)).collect();
    for owned in OWNED {
        clear_in(&dir.join(owned), &kept)?;
    }
    Ok(())
}

/// Clears `folder` of what `kept` does not hold; true when it is left empty
/// (and so removed).
fn clear_in(folder: &Path, kept: &std::collections::BTreeSet<PathBuf>) -> Result<bool, WriteError> {
    let fail = |path: &Path| {
        let path = path.to_path_buf();
        move |source| WriteError { path, source }
    };
    let meta = match std::fs::symlink_metadata(folder) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(fail(folder)(e)),
    };
    if !meta.is_dir() {
        if !kept.contains(folder) {
            std::fs::remove_file(folder).map_err(fail(folder))?;
            return Ok(true);
        }
        return Ok(false);
    }
    let mut empty = true;
    for entry in std::fs::read_dir(folder).map_err(fail(folder))? {
        let path = entry.map_err(fail(folder))?.path();
        if !clear_in(&path, kept)? {
            empty = false;
        }
    }
    if empty {
        std::fs::remove_dir(folder).map_err(fail(folder))?;
    }
    Ok(empty)
}
