//! The files certify writes beside its four reports, which report.json,
//! summary.txt and the HTML name by their path in the report folder:
//!
//! - `traces/<implementation>-seed-<n>.jsonl`: the simulation's shrunk
//!   counterexample, which `tern-sim replay` plays again exactly (so the
//!   simulation's reproduce command is a replay of it, not a new search);
//! - `stderr/<implementation>/<case>.txt` and
//!   `stderr/<implementation>-seed-<n>.txt`: everything a subprocess wrote
//!   on stderr while a failing case, or the shrunk run, played; a verdict
//!   quotes only its last lines.

use std::collections::BTreeSet;

use tern_harness::certify::{reproduce, Certification};
use tern_harness::simulator::trace;

use super::Report;

/// A name for an implementation that is safe as a file name: its label
/// with anything but letters, digits, `.`, `_` and `-` made `-`, at most
/// 60 characters.
pub fn slug(label: &str) -> String {
    let mut out = String::new();
    for c in label.chars() {
        let c = if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
            c
        } else {
            '-'
        };
        if !(c == '-' && out.ends_with('-')) {
            out.push(c);
        }
    }
    let out: String = out.trim_matches(['-', '.']).chars().take(60).collect();
    if out.is_empty() {
        "implementation".to_owned()
    } else {
        out
    }
}

/// Whether `path` is one that [`attach`] gives: `traces/NAME` or
/// `stderr/[IMPLEMENTATION/]NAME`, every component a slug. A report read
/// back (a shard's part) is checked with this before any of its files is
/// written, so that no name it carries reaches outside the report folder.
pub fn is_attachment_path(path: &str) -> bool {
    let parts: Vec<&str> = path.split('/').collect();
    let slug_like = |c: &str| {
        !c.is_empty()
            && !c.starts_with('.')
            && c.len() <= 200
            && c.chars()
                .all(|ch| ch.is_ascii_alphanumeric() || matches!(ch, '.' | '_' | '-'))
    };
    let shape = matches!(
        parts.as_slice(),
        ["traces", _] | ["stderr", _] | ["stderr", _, _]
    );
    shape && parts.iter().all(|c| slug_like(c))
}

/// Names every file of `results` in `report`, in report order, and keeps
/// their contents in `report.attachments`.
pub(super) fn attach(report: &mut Report, results: &[Certification]) {
    let mut used = BTreeSet::new();
    for (imp, r) in report.implementations.iter_mut().zip(results) {
        let base = slug(&imp.label);
        let mut name = base.clone();
        let mut n = 1;
        while !used.insert(name.clone()) {
            n += 1;
            name = format!("{base}-{n}");
        }
        for case in &mut imp.cases {
            let (Some(failure), Some(log)) = (&mut case.failure, r.corpus.logs.get(&case.id))
            else {
                continue;
            };
            let path = format!("stderr/{name}/{}.txt", slug(&case.id));
            failure.stderr = Some(path.clone());
            report.attachments.insert(path, log.clone());
        }
        let (Some(violation), Some(ce)) =
            (&mut imp.simulation.violation, &r.simulation.counterexample)
        else {
            continue;
        };
        let path = format!("traces/{name}-seed-{}.jsonl", violation.seed);
        let mut text = Vec::new();
        if trace::write(&mut text, ce, &r.implementation).is_ok() {
            violation.trace = Some(path.clone());
            report
                .attachments
                .insert(path, String::from_utf8_lossy(&text).into_owned());
        }
        if let Some(log) = &r.simulation.log {
            let path = format!("stderr/{name}-seed-{}.txt", violation.seed);
            violation.stderr = Some(path.clone());
            report.attachments.insert(path, log.clone());
        }
    }
}

/// A command as one single-quoted shell word, whatever it holds: how
/// reproduce commands write `--impl`.
pub fn shell_quoted(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
}

/// A path as one word of a shell command line: as it is when it needs no
/// quoting, else in single quotes.
pub fn shell_word(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:,+@%".contains(c))
    {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

impl super::ImplReport {
    /// Makes the simulation's reproduce command name its trace where the
    /// reports are written, `folder`, as given on the command line: run
    /// from where certify ran, like every other reproduce command (and
    /// like `--impl`'s command).
    pub fn locate_files(&mut self, folder: &std::path::Path) {
        let flag = self.flag_suffix();
        if let Some(v) = &mut self.simulation.violation {
            if let Some(trace) = &v.trace {
                let path = folder.join(trace);
                v.reproduce = reproduce::replay(&shell_word(&path.to_string_lossy()), &flag);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{shell_word, slug};

    #[test]
    fn shell_words_quote_only_when_needed() {
        assert_eq!(
            shell_word("r/traces/a-seed-1.jsonl"),
            "r/traces/a-seed-1.jsonl"
        );
        assert_eq!(shell_word("my reports/x"), "'my reports/x'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word(""), "''");
        assert_eq!(super::shell_quoted("python3 a.py"), "'python3 a.py'");
        assert_eq!(super::shell_quoted("sh -c 'x'"), r"'sh -c '\''x'\'''");
    }

    #[test]
    fn attachment_paths_stay_in_their_two_folders() {
        use super::is_attachment_path as ok;
        for good in [
            "traces/reference-seed-7.jsonl",
            "stderr/a-b/case-1.txt",
            "stderr/impl-seed-3.txt",
        ] {
            assert!(ok(good), "{good}");
        }
        for bad in [
            "../../x",
            "/etc/passwd",
            "traces/../../x",
            "traces/./x",
            "traces/",
            "traces//x",
            "report.json",
            "traces/a/b",
            "stderr/a/b/c",
            "traces/.hidden",
            "other/x.txt",
            "traces\\..\\x",
            "stderr/a b/c",
        ] {
            assert!(!ok(bad), "{bad}");
        }
    }

    #[test]
    fn slugs_are_file_names() {
        assert_eq!(slug("reference"), "reference");
        assert_eq!(slug("memory-dedup"), "memory-dedup");
        assert_eq!(
            slug("target/release/tern-sim agent --mutant x"),
            "target-release-tern-sim-agent-mutant-x"
        );
        assert_eq!(slug("../../etc/passwd"), "etc-passwd");
        assert_eq!(slug("///"), "implementation");
        assert_eq!(slug(&"a".repeat(100)).len(), 60);
    }
}
