//! `tern-sim merge`: the parts of a sharded `run`, `certify`, `selftest` or `explore`
//! put back together into the output, reports and exit status one machine
//! would have given (docs/scale.md).

use std::path::PathBuf;

use clap::Args;
use tern_reports::certify::write;
use tern_reports::escape;
use tern_reports::shards::{self, Command, MergeError};

use super::{Exit, FormatArg};

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The parts, one per shard; a folder stands for every `.json` file in it.
    #[arg(value_name = "PART", required = true)]
    parts: Vec<PathBuf>,

    /// For `certify` parts: where report.json, junit.xml, report.html and
    /// summary.txt go.
    #[arg(long, value_name = "DIR", default_value = "tern-sim-report")]
    report_dir: PathBuf,

    /// `human` prints what the command prints; `json` its JSON (for
    /// certify, report.json).
    #[arg(long, value_enum, default_value_t = FormatArg::Human)]
    format: FormatArg,
}

/// The part files named: folders expand to their `.json` files, in name order.
fn files(args: &MergeArgs) -> Result<Vec<PathBuf>, MergeError> {
    let mut out = Vec::new();
    for p in &args.parts {
        if p.is_dir() {
            let unreadable = |e: std::io::Error| MergeError::Unreadable {
                path: p.clone(),
                why: e.to_string(),
            };
            let mut found: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(unreadable)?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x == "json") && f.is_file())
                .collect();
            found.sort();
            if found.is_empty() {
                return Err(MergeError::Unreadable {
                    path: p.clone(),
                    why: "a folder with no .json part in it".to_owned(),
                });
            }
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

pub fn run(args: MergeArgs) -> Exit {
    let human = matches!(args.format, FormatArg::Human);
    let fail = |e: MergeError| {
        errln!("tern-sim merge: {}", escape::terminal(&e.to_string()));
        Exit::Trouble
    };
    let parts = match files(&args)
        .and_then(|files| {
            files
                .iter()
                .map(|f| shards::read(f))
                .collect::<Result<Vec<_>, _>>()
        })
        .and_then(shards::check)
    {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    match parts[0].header.command {
        Command::Certify => {
            let report = match shards::certify::merge(&parts) {
                Ok(r) => r,
                Err(e) => return fail(e),
            };
            if let Err(e) = write::prepare(&args.report_dir) {
                errln!(
                    "tern-sim merge: --report-dir {}",
                    escape::terminal(&e.to_string())
                );
                return Exit::Trouble;
            }
            super::certify::publish(&report, &args.report_dir, human)
        }
        Command::Run => {
            let merged = match shards::run::merge(&parts) {
                Ok(m) => m,
                Err(e) => return fail(e),
            };
            if human {
                super::run::print_header(&merged.setting);
                if let Some(f) = &merged.finding {
                    super::run::print_found(f.seed, &f.found);
                }
            }
            super::run::print_outcome(
                &merged.setting,
                merged.runs,
                &merged.totals,
                merged.finding.as_ref(),
                merged.determinism.as_ref(),
                human,
            )
        }
        Command::Explore => {
            let order = parts[0]
                .header
                .work
                .get("scopes")
                .cloned()
                .unwrap_or_default();
            match shards::explore::merge(&parts, &order) {
                Ok(body) => {
                    if human {
                        body.scopes.iter().for_each(super::explore::print_found);
                    }
                    super::explore::print_outcome(&body, human)
                }
                Err(e) => fail(e),
            }
        }
        Command::Selftest => {
            let order = parts[0]
                .header
                .work
                .get("mutants")
                .cloned()
                .unwrap_or_default();
            match shards::selftest::merge(&parts, &order) {
                Ok(body) => super::selftest::print_outcome(&body, human),
                Err(e) => fail(e),
            }
        }
    }
}
