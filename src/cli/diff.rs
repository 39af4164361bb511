//! `tern-sim diff OLD NEW`: what changed outcome between two certification
//! reports, and NEW's failures classified against OLD as `certify
//! --baseline` classifies them. Exits 1 on any regression or New failure,
//! for CI.

use std::path::PathBuf;

use clap::Args;
use serde_json::json;
use tern_reports::certify::baseline::{self, classify, load};
use tern_reports::certify::diff::{diff, text};
use tern_reports::escape;

use super::{Exit, FormatArg};

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

pub fn run(args: DiffArgs) -> Exit {
    let (old, new) = match (load(&args.old), load(&args.new)) {
        (Ok(o), Ok(n)) => (o, n),
        (Err(e), _) | (_, Err(e)) => {
            errln!("tern-sim diff: {}", escape::terminal(&e.to_string()));
            return Exit::Trouble;
        }
    };
    let d = diff(&old, &new);
    let classified = classify(&args.old.to_string_lossy(), &old, &new);
    match args.format {
        FormatArg::Human => {
            out!("{}", text(&d));
            out!("{}", baseline::heading(&classified, &new.corpus.hash));
            for c in &classified.implementations {
                outln!("{}:", escape::terminal(&c.label));
                out!("{}", baseline::lines(c, "  "));
            }
        }
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
                "baseline": classified,
            })
        ),
    }
    if d.regressions() > 0 || classified.has_new() {
        Exit::Violation
    } else {
        Exit::Ok
    }
}
