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
}

/// Makes sure reports can be written into `dir` (creating it), so that a
/// certification does not run for minutes only to fail at the end. A
/// probe file is created and removed again.
pub fn prepare(dir: &Path) -> Result<(), FolderError> {
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
/// leaves the earlier reports in place rather than a mix.
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
        let folder = target.parent().unwrap_or(dir);
        std::fs::create_dir_all(folder).map_err(fail(folder))?;
        let file_name = target
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let prefix = format!(".{file_name}.");
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".tmp");
        #[cfg(unix)]
        builder.permissions(published());
        let mut tmp = builder.tempfile_in(folder).map_err(fail(&target))?;
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
