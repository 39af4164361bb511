//! Which files of a folder make up a corpus: `clauses.json` and every
//! `*.json` one folder down. tern-sim's build script includes this very
//! file (`#[path]`) to embed `scenarios/`, so the corpus built into the
//! binary is, file for file, what loading the folder reads. It therefore
//! uses nothing but `std`.

use std::path::{Path, PathBuf};

/// The registry's path, relative to the corpus folder.
pub const CLAUSES: &str = "clauses.json";

/// The case files under `dir`, as paths relative to it with `/` between
/// components, in path order. On failure, the path that could not be read.
pub fn case_files(dir: &Path) -> Result<Vec<String>, (PathBuf, std::io::Error)> {
    let mut files: Vec<PathBuf> = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| (dir.to_path_buf(), e))?;
    for entry in entries {
        let path = entry.map_err(|e| (dir.to_path_buf(), e))?.path();
        if !path.is_dir() {
            continue;
        }
        let inner = std::fs::read_dir(&path).map_err(|e| (path.clone(), e))?;
        for file in inner {
            let file = file.map_err(|e| (path.clone(), e))?.path();
            if file.extension().is_some_and(|e| e == "json") {
                files.push(file);
            }
        }
    }
    // Sorted as paths (component by component), which is also the order
    // the corpus hash is taken in.
    files.sort();
    Ok(files
        .iter()
        .map(|f| {
            f.strip_prefix(dir)
                .unwrap_or(f)
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect())
}
