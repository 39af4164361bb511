//! Reading the reports a site is made of, with the files each names
//! (traces, stderr) from its folder, so that the site holds everything
//! its pages link to.

use std::path::{Component, Path};

use crate::certify::baseline::{self, LoadError};
use crate::certify::write::OWNED;
use crate::certify::Report;

/// A report as the site uses it.
#[derive(Debug)]
pub struct Loaded {
    /// As named on the command line.
    pub path: String,
    /// Its bytes, copied beside its page as they were.
    pub json: Vec<u8>,
    /// Without the files that could not be copied, so that no page links
    /// to a file the site lacks.
    pub report: Report,
    /// The files it names, by their path in its folder, with their bytes.
    pub attachments: Vec<(String, Vec<u8>)>,
    /// Files it names that its folder does not hold (a report.json copied
    /// on its own, say): left out, and said on standard error.
    pub missing: Vec<String>,
}

/// Reads and checks the report at `path`, then the files it names.
/// A file that is not a report is refused with its name and the JSON
/// pointer of the first thing wrong, as `diff` refuses it.
pub fn load(path: &Path) -> Result<Loaded, LoadError> {
    let json = std::fs::read(path).map_err(|source| LoadError::Unreadable {
        path: path.to_path_buf(),
        source,
    })?;
    let mut report = baseline::parse(path, &json)?;
    let folder = path.parent().unwrap_or(Path::new("."));
    let mut attachments = Vec::new();
    let mut missing = Vec::new();
    let named: Vec<String> = report
        .implementations
        .iter()
        .flat_map(|i| i.files().map(str::to_owned))
        .collect();
    for name in named {
        if attachments.iter().any(|(n, _)| *n == name) || missing.contains(&name) {
            continue;
        }
        match read_owned(folder, &name) {
            Some(bytes) => attachments.push((name, bytes)),
            None => missing.push(name),
        }
    }
    forget(&mut report, &missing);
    attachments.sort();
    Ok(Loaded {
        path: path.to_string_lossy().into_owned(),
        json,
        report,
        attachments,
        missing,
    })
}

/// The file `name` in `folder`, when `name` is a plain path inside one of
/// the folders certify owns there and nothing on the way is a symbolic
/// link: a report, which anyone can write, must not make the site copy a
/// file from elsewhere.
fn read_owned(folder: &Path, name: &str) -> Option<Vec<u8>> {
    let parts: Vec<Component> = Path::new(name).components().collect();
    let first = match parts.first() {
        Some(Component::Normal(f)) => f.to_str()?,
        _ => return None,
    };
    if parts.len() < 2
        || !OWNED.contains(&first)
        || !parts.iter().all(|c| matches!(c, Component::Normal(_)))
    {
        return None;
    }
    let mut at = folder.to_path_buf();
    for part in &parts {
        at.push(part);
        if std::fs::symlink_metadata(&at)
            .ok()?
            .file_type()
            .is_symlink()
        {
            return None;
        }
    }
    std::fs::read(at).ok()
}

/// Takes every mention of the `missing` files out of `report`.
fn forget(report: &mut Report, missing: &[String]) {
    let gone = |f: &mut Option<String>| {
        if f.as_ref().is_some_and(|p| missing.contains(p)) {
            *f = None;
        }
    };
    for i in &mut report.implementations {
        for c in &mut i.cases {
            if let Some(f) = &mut c.failure {
                gone(&mut f.stderr);
            }
        }
        if let Some(v) = &mut i.simulation.violation {
            gone(&mut v.trace);
            gone(&mut v.stderr);
        }
    }
}
