//! Which corpus a command plays: the folder given with `--scenarios`, else
//! the one built into the binary. Never a folder found in the working
//! directory: a stray `scenarios/` where tern-sim happens to run must not
//! silently change what a certification means.

use std::path::Path;

use tern_harness::corpus::{Corpus, CorpusError, Origin};
use tern_reports::escape;

use super::Exit;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/builtin_corpus.rs"));
}

/// The corpus tern-sim was built with, from `scenarios/` at build time:
/// the same files, so the same hash, as loading that folder.
pub fn builtin() -> Result<Corpus, CorpusError> {
    Corpus::from_files(Origin::BuiltIn, embedded::FILES.iter().copied())
}

/// The corpus in `given`, else the built-in one.
pub fn read(given: Option<&Path>) -> Result<Corpus, CorpusError> {
    match given {
        Some(dir) => Corpus::load(dir),
        None => builtin(),
    }
}

/// [`read`], with the error printed for `tern-sim COMMAND` (exit status 2).
pub fn load_corpus(given: Option<&Path>, command: &str) -> Result<Corpus, Exit> {
    read(given).map_err(|e| {
        errln!(
            "tern-sim {command}: the corpus cannot be used: {}",
            escape::terminal(&e.to_string())
        );
        Exit::Trouble
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The built-in corpus is the source folder's, byte for byte: reports
    /// give it the same hash, and it holds the same cases.
    #[test]
    fn the_builtin_corpus_is_the_scenarios_folder() {
        let builtin = builtin().expect("the built-in corpus loads");
        let folder = Corpus::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios"))
            .expect("the folder loads");
        assert_eq!(builtin.hash, folder.hash);
        assert_eq!(builtin.origin, Origin::BuiltIn);
        let ids = |c: &Corpus| c.cases.iter().map(|x| x.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&builtin), ids(&folder));
        assert_eq!(builtin.clauses.all(), folder.clauses.all());
    }

    /// Errors in an in-memory corpus name the file by its place in the
    /// corpus, as the folder loader names it by its path.
    #[test]
    fn errors_name_the_file_inside_the_builtin_corpus() {
        let clauses = embedded::FILES
            .iter()
            .find(|(rel, _)| *rel == "clauses.json")
            .expect("the registry is built in")
            .1;
        let files = [
            ("clauses.json", clauses),
            ("s1-encoding/x.json", b"{\"id\": 1}".as_slice()),
        ];
        let e = Corpus::from_files(Origin::BuiltIn, files).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("built-in corpus: s1-encoding/x.json"),
            "{e}"
        );
        let e = Corpus::from_files(Origin::BuiltIn, [("s1/a.json", b"{}".as_slice())]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "built-in corpus: clauses.json: missing: a corpus needs its clause registry"
        );
    }
}
