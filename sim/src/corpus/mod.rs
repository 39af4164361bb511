//! The conformance corpus (`scenarios/`, docs/corpus.md): the seed's clauses,
//! the cases that check them, and running one case against an
//! implementation.

pub mod case;
pub mod clauses;
pub(crate) mod files;
pub(crate) mod pattern;
pub mod play;
pub(crate) mod reading;

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
    #[error("{}: missing: a corpus needs its clause registry", file.display())]
    Missing { file: PathBuf },
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
    /// Where its files were read from.
    pub origin: Origin,
}

fn read(path: &Path) -> Result<Vec<u8>, CorpusError> {
    std::fs::read(path).map_err(|source| CorpusError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Where a corpus's files come from, so that an error names a file the
/// way its reader can find it: under the folder given, or inside the
/// binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A folder on disk (`--scenarios DIR`).
    Folder(PathBuf),
    /// The corpus built into tern-sim from its `scenarios/` folder.
    BuiltIn,
}

impl Origin {
    /// How errors name the file at `rel` (a path relative to the corpus).
    pub fn file(&self, rel: &str) -> PathBuf {
        match self {
            Origin::Folder(dir) => dir.join(rel),
            Origin::BuiltIn => PathBuf::from(format!("built-in corpus: {rel}")),
        }
    }

    /// How errors and notes name the whole corpus.
    pub fn whole(&self) -> PathBuf {
        match self {
            Origin::Folder(dir) => dir.clone(),
            Origin::BuiltIn => PathBuf::from("built-in corpus"),
        }
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.whole().display())
    }
}

impl Corpus {
    /// Reads `dir/clauses.json` and every `dir/*/*.json` case, then builds
    /// the corpus from their bytes exactly as [`Corpus::from_files`] does.
    pub fn load(dir: &Path) -> Result<Corpus, CorpusError> {
        let origin = Origin::Folder(dir.to_path_buf());
        let mut files = vec![(
            files::CLAUSES.to_owned(),
            read(&origin.file(files::CLAUSES))?,
        )];
        let cases =
            files::case_files(dir).map_err(|(path, source)| CorpusError::Io { path, source })?;
        for rel in cases {
            let bytes = read(&origin.file(&rel))?;
            files.push((rel, bytes));
        }
        Corpus::from_files(origin, files)
    }

    /// Builds a corpus from its files' bytes, each by its path relative to
    /// the corpus (`clauses.json`, the registry; every other path a case),
    /// and checks that they fit together: unique IDs, file names that
    /// match them, and every cited clause copied exactly from the
    /// registry. The hash is taken in path order whatever the order given,
    /// so the same files give the same hash wherever they were read from.
    pub fn from_files<P, B>(
        origin: Origin,
        files: impl IntoIterator<Item = (P, B)>,
    ) -> Result<Corpus, CorpusError>
    where
        P: AsRef<str>,
        B: AsRef<[u8]>,
    {
        let mut files: Vec<(P, B)> = files.into_iter().collect();
        files.sort_by(|(a, _), (b, _)| Path::new(a.as_ref()).cmp(Path::new(b.as_ref())));
        let Some(at) = files
            .iter()
            .position(|(rel, _)| rel.as_ref() == files::CLAUSES)
        else {
            return Err(CorpusError::Missing {
                file: origin.file(files::CLAUSES),
            });
        };
        let (_, clauses_bytes) = files.remove(at);
        let clauses_bytes = clauses_bytes.as_ref();
        let clauses = Clauses::from_json(&origin.file(files::CLAUSES), clauses_bytes)?;
        let mut hasher = Sha256::new();
        let mut hash_file = |rel: &str, bytes: &[u8]| {
            hasher.update((rel.len() as u64).to_le_bytes());
            hasher.update(rel.as_bytes());
            hasher.update((bytes.len() as u64).to_le_bytes());
            hasher.update(bytes);
        };
        hash_file(files::CLAUSES, clauses_bytes);
        if files.is_empty() {
            return Err(CorpusError::Empty {
                dir: origin.whole(),
            });
        }
        let mut seen: BTreeMap<String, PathBuf> = BTreeMap::new();
        let mut cases = Vec::with_capacity(files.len());
        for (rel, bytes) in &files {
            let (rel, bytes) = (rel.as_ref(), bytes.as_ref());
            let file = origin.file(rel);
            hash_file(rel, bytes);
            let text = std::str::from_utf8(bytes).map_err(|e| CorpusError::Invalid {
                file: file.clone(),
                pointer: String::new(),
                message: format!("not UTF-8: {e}"),
            })?;
            let case = Case::from_json(&file, text)?;
            if Path::new(rel).file_stem().and_then(|s| s.to_str()) != Some(case.id.as_str()) {
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
            origin,
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
