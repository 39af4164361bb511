//! `tern-sim check`: stateless validation of frames, reported like a compiler.

use std::fs::File;
use std::io::{self, BufReader, Write};
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use tern_harness::check::{check_document, check_frame};
use tern_harness::frames::{read_document, Frames};
use tern_model::wire::MAX_FRAME_BYTES;
use tern_reports::check::{CheckReport, Format};

use super::Status;

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// JSON-lines input, one message per line; `-` reads standard input.
    #[arg(
        value_name = "FILE",
        required_unless_present = "document",
        conflicts_with = "document"
    )]
    input: Option<PathBuf>,

    /// Check one message that may be pretty-printed over several lines.
    #[arg(long, value_name = "FILE")]
    document: Option<PathBuf>,

    /// Output format: compiler-style lines, or one JSON object per message.
    #[arg(long, value_enum, default_value_t = FormatArg::Human)]
    format: FormatArg,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum FormatArg {
    Human,
    Json,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Human => Format::Human,
            FormatArg::Json => Format::Json,
        }
    }
}

/// Why `check` could not finish, named with the file it concerns.
#[derive(Debug, thiserror::Error)]
enum CheckFailure {
    #[error("cannot read {name}: {source}")]
    Read { name: String, source: io::Error },
    #[error("cannot write the report: {0}")]
    Write(io::Error),
}

pub fn run(args: CheckArgs) -> Status {
    match check(&args) {
        Ok(status) => status,
        Err(CheckFailure::Write(e)) if e.kind() == io::ErrorKind::BrokenPipe => Status::Trouble,
        Err(e) => {
            eprintln!("tern-sim check: {e}");
            Status::Trouble
        }
    }
}

fn display_name(path: &Path) -> String {
    if path == Path::new("-") {
        "<stdin>".to_owned()
    } else {
        path.display().to_string()
    }
}

fn open(path: &Path) -> Result<Box<dyn io::Read>, CheckFailure> {
    if path == Path::new("-") {
        return Ok(Box::new(io::stdin().lock()));
    }
    let file = File::open(path).map_err(|source| CheckFailure::Read {
        name: display_name(path),
        source,
    })?;
    Ok(Box::new(file))
}

fn check(args: &CheckArgs) -> Result<Status, CheckFailure> {
    let stdout = io::stdout().lock();
    let out = io::BufWriter::new(stdout);
    if let Some(path) = &args.document {
        let name = display_name(path);
        let document =
            read_document(open(path)?, MAX_FRAME_BYTES).map_err(|source| CheckFailure::Read {
                name: name.clone(),
                source,
            })?;
        let mut report = CheckReport::new(out, args.format.into(), name);
        report
            .record(&check_document(document))
            .map_err(CheckFailure::Write)?;
        return finish(report);
    }
    let path = args.input.as_deref().unwrap_or(Path::new("-"));
    let name = display_name(path);
    let mut report = CheckReport::new(out, args.format.into(), name.clone());
    for frame in Frames::new(BufReader::new(open(path)?)) {
        let frame = frame.map_err(|source| CheckFailure::Read {
            name: name.clone(),
            source,
        })?;
        report
            .record(&check_frame(&frame))
            .map_err(CheckFailure::Write)?;
    }
    finish(report)
}

fn finish<W: Write>(report: CheckReport<W>) -> Result<Status, CheckFailure> {
    let invalid = report.invalid();
    report.finish().map_err(CheckFailure::Write)?;
    Ok(if invalid == 0 {
        Status::Ok
    } else {
        Status::Violation
    })
}
