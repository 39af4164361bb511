//! `tern-sim check`: stateless validation of frames, reported like a compiler.

use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use tern_harness::check::{check_document, check_frame};
use tern_harness::frames::{read_document, Frame, Frames};
use tern_harness::stateful::StatefulCheck;
use tern_model::ledger::{LedgerConfig, Viewer};
use tern_model::message::Participant;
use tern_model::wire::MAX_FRAME_BYTES;
use tern_reports::check::{CheckReport, Format};
use tern_reports::stateful::StatefulReport;

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

    /// Output format: compiler-style lines, or one JSON object per message
    /// (per event with --stateful).
    #[arg(long, value_enum, default_value_t = FormatArg::Human)]
    format: FormatArg,

    /// Run the stream through the reference ledger and print each message's
    /// outcome (accepted, duplicate, pending, rejected) and every release.
    #[arg(long)]
    stateful: bool,

    /// Ledger configuration (identity contexts, grants, policy), see
    /// docs/ledger.md; without it every `from` is taken as authenticated.
    #[arg(long, value_name = "FILE", requires = "stateful")]
    context: Option<PathBuf>,

    /// Take this participant's view instead of an auditor's that sees every
    /// message.
    #[arg(long = "as", value_name = "NAME", requires = "stateful")]
    as_participant: Option<String>,

    /// After the stream, print the canonical view of every thread.
    #[arg(long, requires = "stateful")]
    views: bool,
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
    #[error("{name}: {source}")]
    Config {
        name: String,
        source: tern_model::ledger::ConfigError,
    },
    #[error("--as {0}: {1}")]
    Participant(String, String),
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
    if args.stateful {
        return check_stateful(args);
    }
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

/// The ledger configuration the flags ask for.
fn ledger_config(args: &CheckArgs) -> Result<LedgerConfig, CheckFailure> {
    let mut config = match &args.context {
        None => LedgerConfig::open_auditor(),
        Some(path) => {
            let name = display_name(path);
            let mut text = String::new();
            open(path)?
                .read_to_string(&mut text)
                .map_err(|source| CheckFailure::Read {
                    name: name.clone(),
                    source,
                })?;
            LedgerConfig::from_json(&text)
                .map_err(|source| CheckFailure::Config { name, source })?
        }
    };
    if let Some(name) = &args.as_participant {
        let participant = Participant::new(name.as_str())
            .map_err(|e| CheckFailure::Participant(name.clone(), e))?;
        config.viewer = Viewer::Participant(participant);
    }
    Ok(config)
}

fn check_stateful(args: &CheckArgs) -> Result<Status, CheckFailure> {
    let mut checker = StatefulCheck::new(ledger_config(args)?);
    let out = io::BufWriter::new(io::stdout().lock());
    let (path, frames): (&Path, Vec<Frame>) = if let Some(path) = &args.document {
        let name = display_name(path);
        let document = read_document(open(path)?, MAX_FRAME_BYTES)
            .map_err(|source| CheckFailure::Read { name, source })?;
        let frame = match document {
            Ok(bytes) => Frame::Bytes { line: 1, bytes },
            Err(len) => Frame::Oversized { line: 1, len },
        };
        (path, vec![frame])
    } else {
        (args.input.as_deref().unwrap_or(Path::new("-")), Vec::new())
    };
    let name = display_name(path);
    let mut report = StatefulReport::new(out, args.format.into(), name.clone());
    let mut feed = |frame: &Frame, report: &mut StatefulReport<_>| -> Result<(), CheckFailure> {
        for located in checker.feed(frame) {
            report.record(&located).map_err(CheckFailure::Write)?;
        }
        Ok(())
    };
    if args.document.is_some() {
        for frame in &frames {
            feed(frame, &mut report)?;
        }
    } else {
        for frame in Frames::new(BufReader::new(open(path)?)) {
            let frame = frame.map_err(|source| CheckFailure::Read {
                name: name.clone(),
                source,
            })?;
            feed(&frame, &mut report)?;
        }
    }
    // Views are built only when shown: they copy every stored message.
    let pending = checker.ledger().pending_messages();
    let rejected = report.rejected();
    let shown: Vec<serde_json::Value> = if args.views {
        checker.views().into_iter().map(|(_, v)| v).collect()
    } else {
        Vec::new()
    };
    report
        .finish(&shown, pending)
        .map_err(CheckFailure::Write)?;
    Ok(if rejected == 0 && pending == 0 {
        Status::Ok
    } else {
        Status::Violation
    })
}
