//! `tern-sim diff OLD NEW`: what changed outcome between two certification
//! reports. Exits 1 on any regression, for CI.

use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::json;
use tern_reports::certify::diff::{diff, text};
use tern_reports::certify::validate::{pointer_of, validate};
use tern_reports::certify::Report;
use tern_reports::escape;

use super::{FormatArg, Status};

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The earlier report.json.
    old: PathBuf,
    /// The later report.json.
    new: PathBuf,

    /// Output format: `human`, or `json` for the regressions as one document.
    #[arg(long, value_enum, default_value_t = FormatArg::Human)]
    format: FormatArg,
}

/// Reads and checks one report. The message names the file and the JSON
/// pointer of what is wrong; it quotes the file, so it is escaped for the
/// terminal.
fn read(path: &Path) -> Result<Report, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let de = &mut serde_json::Deserializer::from_slice(&bytes);
    let report: Report = serde_path_to_error::deserialize(de).map_err(|e| {
        format!(
            "{}: not a tern-sim report: at {}: {}",
            path.display(),
            display_pointer(&pointer_of(e.path())),
            e.inner()
        )
    })?;
    validate(&report).map_err(|e| {
        format!(
            "{}: not a tern-sim report: at {}: {}",
            path.display(),
            display_pointer(&e.pointer),
            e.message
        )
    })?;
    Ok(report)
}

/// The root pointer is empty, which reads badly in a sentence.
fn display_pointer(p: &str) -> String {
    if p.is_empty() {
        "the top level".to_owned()
    } else {
        p.to_owned()
    }
}

pub fn run(args: DiffArgs) -> Status {
    let (old, new) = match (read(&args.old), read(&args.new)) {
        (Ok(o), Ok(n)) => (o, n),
        (Err(e), _) | (_, Err(e)) => {
            errln!("tern-sim diff: {}", escape::terminal(&e));
            return Status::Trouble;
        }
    };
    let d = diff(&old, &new);
    match args.format {
        FormatArg::Human => out!("{}", text(&d)),
        FormatArg::Json => outln!(
            "{}",
            json!({
                "regressions": d.regressions(),
                "notes": d.notes,
                "changes": d.changes.iter().map(|c| json!({
                    "implementation": c.implementation,
                    "what": c.what,
                    "old": c.old,
                    "new": c.new,
                    "regression": c.regression,
                })).collect::<Vec<_>>(),
            })
        ),
    }
    if d.regressions() > 0 {
        Status::Violation
    } else {
        Status::Ok
    }
}
