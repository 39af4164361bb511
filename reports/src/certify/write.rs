//! Writing report files so that none is ever seen half-written: each goes
//! to a temporary file in the target folder, is synced, and is renamed
//! over its final name only when complete.

use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
#[error("cannot write {}: {source}", path.display())]
pub struct WriteError {
    pub path: PathBuf,
    pub source: std::io::Error,
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
        let target = dir.join(name);
        let mut tmp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".tmp")
            .tempfile_in(dir)
            .map_err(fail(&target))?;
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
