//! The conformance corpus (`scenarios/`, docs/corpus.md): the seed's clauses,
//! the cases that check them, and running one case against an
//! implementation.

pub mod case;
pub mod clauses;
pub mod pattern;
pub mod play;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

pub use case::{Case, Level};
pub use clauses::{Clause, Clauses};

/// Why a corpus cannot be used. Each names the file, and the member where
/// there is one, so an author can go straight to it.
#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}{}: {message}", file.display(), if pointer.is_empty() { String::new() } else { format!(" at {pointer}") })]
    Invalid {
        file: PathBuf,
        pointer: String,
        message: String,
    },
    #[error("case `{id}` is defined twice: {} and {}", first.display(), second.display())]
    DuplicateId {
        id: String,
        first: PathBuf,
        second: PathBuf,
    },
    #[error("{}: the file name must be the case ID followed by `.json` (`{id}.json`)", file.display())]
    FileName { file: PathBuf, id: String },
    #[error("{}: no case files (`*.json` in subfolders) under it", dir.display())]
    Empty { dir: PathBuf },
}

/// A loaded corpus: clauses, cases sorted by ID, and a hash of every file
/// that went into it, so two reports can tell whether they ran the same one.
#[derive(Debug, Clone)]
pub struct Corpus {
    pub clauses: Clauses,
    pub cases: Vec<Case>,
    /// SHA-256 over each file's relative path and bytes, in path order.
    pub hash: String,
}

fn read(path: &Path) -> Result<Vec<u8>, CorpusError> {
    std::fs::read(path).map_err(|source| CorpusError::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn case_files(dir: &Path) -> Result<Vec<PathBuf>, CorpusError> {
    let io = |source| CorpusError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if path.is_dir() {
            let sub = |source| CorpusError::Io {
                path: path.clone(),
                source,
            };
            for inner in std::fs::read_dir(&path).map_err(sub)? {
                let file = inner.map_err(sub)?.path();
                if file.extension().is_some_and(|e| e == "json") {
                    files.push(file);
                }
            }
        }
    }
    files.sort();
    Ok(files)
}

impl Corpus {
    /// Reads `dir/clauses.json` and every `dir/*/*.json` case, and checks
    /// that they fit together: unique IDs, file names that match them, and
    /// every cited clause copied exactly from the registry.
    pub fn load(dir: &Path) -> Result<Corpus, CorpusError> {
        let clauses_path = dir.join("clauses.json");
        let clauses_bytes = read(&clauses_path)?;
        let clauses = Clauses::from_json(&clauses_path, &clauses_bytes)?;
        let mut hasher = Sha256::new();
        let mut hash_file = |rel: &str, bytes: &[u8]| {
            hasher.update((rel.len() as u64).to_le_bytes());
            hasher.update(rel.as_bytes());
            hasher.update((bytes.len() as u64).to_le_bytes());
            hasher.update(bytes);
        };
        hash_file("clauses.json", &clauses_bytes);
        let files = case_files(dir)?;
        if files.is_empty() {
            return Err(CorpusError::Empty {
                dir: dir.to_path_buf(),
            });
        }
        let mut seen: BTreeMap<String, PathBuf> = BTreeMap::new();
        let mut cases = Vec::with_capacity(files.len());
        for file in files {
            let bytes = read(&file)?;
            let rel = file
                .strip_prefix(dir)
                .unwrap_or(&file)
                .to_string_lossy()
                .replace('\\', "/");
            hash_file(&rel, &bytes);
            let text = String::from_utf8(bytes).map_err(|e| CorpusError::Invalid {
                file: file.clone(),
                pointer: String::new(),
                message: format!("not UTF-8: {e}"),
            })?;
            let case = Case::from_json(&file, &text)?;
            if file.file_stem().and_then(|s| s.to_str()) != Some(case.id.as_str()) {
                return Err(CorpusError::FileName { file, id: case.id });
            }
            clauses.check_citations(&case)?;
            if let Some(first) = seen.insert(case.id.clone(), file.clone()) {
                return Err(CorpusError::DuplicateId {
                    id: case.id,
                    first,
                    second: file,
                });
            }
            cases.push(case);
        }
        cases.sort_by(|a, b| a.id.cmp(&b.id));
        let hash = hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        Ok(Corpus {
            clauses,
            cases,
            hash,
        })
    }

    /// The cases whose ID contains `filter` (all of them for `None`).
    pub fn select(&self, filter: Option<&str>) -> Vec<&Case> {
        self.cases
            .iter()
            .filter(|c| filter.is_none_or(|f| c.id.contains(f)))
            .collect()
    }

    /// Clause ID → the cases citing it, for every clause (uncovered ones
    /// map to an empty list).
    pub fn coverage(&self) -> BTreeMap<&str, Vec<&Case>> {
        let mut map: BTreeMap<&str, Vec<&Case>> = self
            .clauses
            .all()
            .iter()
            .map(|c| (c.id.as_str(), Vec::new()))
            .collect();
        for case in &self.cases {
            for c in &case.clauses {
                if let Some(list) = map.get_mut(c.id.as_str()) {
                    list.push(case);
                }
            }
        }
        map
    }
}
