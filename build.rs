//! Embeds the conformance corpus (`scenarios/`) in tern-sim, so that the
//! binary certifies the same way wherever it is copied, without its
//! source tree. Which files count is decided by the same code that loads
//! a corpus folder at run time (`sim/src/corpus/files.rs`), so a case
//! added to `scenarios/` is built in without any change to the code.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[path = "sim/src/corpus/files.rs"]
mod files;

fn main() {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let dir = root.join("scenarios");
    println!("cargo:rerun-if-changed=sim/src/corpus/files.rs");
    // A folder makes cargo look at everything under it, so a new case
    // (or a new section folder) rebuilds the table.
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut rels = vec![files::CLAUSES.to_owned()];
    match files::case_files(&dir) {
        Ok(cases) => rels.extend(cases),
        Err((path, e)) => panic!("cannot list the corpus at {}: {e}", path.display()),
    }
    let mut table = String::from(
        "/// Every file of `scenarios/`, by its path relative to it.\n\
         pub const FILES: &[(&str, &[u8])] = &[\n",
    );
    for rel in &rels {
        let path = dir.join(rel);
        println!("cargo:rerun-if-changed={}", path.display());
        writeln!(
            table,
            "    ({rel:?}, include_bytes!({:?})),",
            absolute(&path).display().to_string()
        )
        .expect("writing to a String");
    }
    table.push_str("];\n");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"));
    std::fs::write(out.join("builtin_corpus.rs"), table).expect("OUT_DIR is writable");
}

fn absolute(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}
