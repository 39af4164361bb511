//! `tern-sim check`: stateless validation of frames, reported like a compiler.

use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use tern_harness::streams::check::{check_document, check_frame, Checked, Validity};
use tern_harness::streams::frames::{Frame, Frames};
use tern_harness::streams::stateful::StatefulCheck;
use tern_model::ledger::{LedgerConfig, Viewer};
use tern_model::message::Participant;
use tern_model::wire::{ErrorClass, Pointer, WireError, MAX_FRAME_BYTES};
use tern_reports::check::{CheckReport, Format};
use tern_reports::escape;
use tern_reports::stateful::StatefulReport;

use super::Exit;

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

pub fn run(args: CheckArgs) -> Exit {
    match check(&args) {
        Ok(status) => status,
        Err(e) => {
            errln!("tern-sim check: {}", escape::terminal(&e.to_string()));
            Exit::Trouble
        }
    }
}

/// Whether to flush after every verdict: when standard output is a pipe or
/// a terminal (anything but a regular file), someone may be following the
/// stream as it comes, so no verdict waits in a buffer.
fn live_output() -> bool {
    let Ok(fd) = io::stdout().as_fd().try_clone_to_owned() else {
        return true;
    };
    !File::from(fd).metadata().is_ok_and(|m| m.is_file())
}

/// What a failed write of a verdict means: a reader that went away ends
/// the check quietly with the status of what was checked (see
/// `output`); any other failure is an error.
fn written(result: io::Result<()>) -> Result<bool, CheckFailure> {
    match result {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
            super::output::note_error(&e);
            Ok(false)
        }
        Err(e) => Err(CheckFailure::Write(e)),
    }
}

/// Exit status 1 when anything was invalid (or rejected, or left pending).
fn status(failures: usize) -> Exit {
    if failures == 0 {
        Exit::Ok
    } else {
        Exit::Violation
    }
}

/// Reads one document, but never more than one byte past `limit`: an
/// endless or huge input is answered as soon as it is known to be too big,
/// instead of being read to its end. `Err(read)` gives the bytes read.
fn read_bounded(reader: impl Read, limit: usize) -> io::Result<Result<Vec<u8>, usize>> {
    let mut bytes = Vec::new();
    reader.take(limit as u64 + 1).read_to_end(&mut bytes)?;
    Ok(if bytes.len() > limit {
        Err(bytes.len())
    } else {
        Ok(bytes)
    })
}

/// The verdict on a document over the limit, of which `read` bytes were read.
fn oversized_document(read: usize) -> Checked {
    Checked {
        line: 1,
        verdict: Validity::Invalid(WireError::new(
            ErrorClass::Parse,
            Pointer::root(),
            format!(
                "document exceeds the limit of {MAX_FRAME_BYTES} bytes (reading stopped after {read} bytes)"
            ),
        )),
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

fn check(args: &CheckArgs) -> Result<Exit, CheckFailure> {
    if args.stateful {
        return check_stateful(args);
    }
    let stdout = io::stdout().lock();
    let out = io::BufWriter::new(stdout);
    let live = live_output();
    if let Some(path) = &args.document {
        let name = display_name(path);
        let document =
            read_bounded(open(path)?, MAX_FRAME_BYTES).map_err(|source| CheckFailure::Read {
                name: name.clone(),
                source,
            })?;
        let checked = match document {
            Ok(bytes) => check_document(Ok(bytes)),
            Err(read) => oversized_document(read),
        };
        let mut report = CheckReport::new(out, args.format.into(), name);
        if !written(report.record(&checked))? {
            return Ok(status(report.invalid()));
        }
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
        let checked = check_frame(&frame);
        let mut result = report.record(&checked);
        if live && result.is_ok() {
            result = report.flush();
        }
        if !written(result)? {
            return Ok(status(report.invalid()));
        }
    }
    finish(report)
}

fn finish<W: Write>(report: CheckReport<W>) -> Result<Exit, CheckFailure> {
    let invalid = report.invalid();
    written(report.finish())?;
    Ok(status(invalid))
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

fn check_stateful(args: &CheckArgs) -> Result<Exit, CheckFailure> {
    let mut checker = StatefulCheck::new(ledger_config(args)?);
    let out = io::BufWriter::new(io::stdout().lock());
    let live = live_output();
    let (path, frames): (&Path, Vec<Frame>) = if let Some(path) = &args.document {
        let name = display_name(path);
        let document = read_bounded(open(path)?, MAX_FRAME_BYTES)
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
    // False once the reader has gone: the check ends there.
    let mut feed = |frame: &Frame, report: &mut StatefulReport<_>| -> Result<bool, CheckFailure> {
        for located in checker.feed(frame) {
            if !written(report.record(&located))? {
                return Ok(false);
            }
        }
        written(if live { report.flush() } else { Ok(()) })
    };
    let mut open_reader = true;
    if args.document.is_some() {
        for frame in &frames {
            open_reader = open_reader && feed(frame, &mut report)?;
        }
    } else {
        for frame in Frames::new(BufReader::new(open(path)?)) {
            let frame = frame.map_err(|source| CheckFailure::Read {
                name: name.clone(),
                source,
            })?;
            if !feed(&frame, &mut report)? {
                open_reader = false;
                break;
            }
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
    if open_reader {
        written(report.finish(&shown, pending))?;
    }
    Ok(status(rejected + pending))
}
