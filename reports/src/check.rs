//! The output of `tern-sim check`: compiler-style lines for people, one JSON
//! object per message for machines. Both stream, so a long input is reported
//! as it is read.

use std::io::{self, Write};

use serde_json::json;
use tern_harness::streams::check::{Checked, Validity};

/// How `check` prints its verdicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Human,
    Json,
}

/// Writes verdicts as they come and counts them for the summary.
pub struct CheckReport<W> {
    out: W,
    format: Format,
    source: String,
    valid: usize,
    invalid: usize,
}

impl<W: Write> CheckReport<W> {
    /// `source` names the input in human output (a path, or `<stdin>`).
    pub fn new(out: W, format: Format, source: impl Into<String>) -> CheckReport<W> {
        CheckReport {
            out,
            format,
            source: source.into(),
            valid: 0,
            invalid: 0,
        }
    }

    pub fn record(&mut self, checked: &Checked) -> io::Result<()> {
        if checked.is_valid() {
            self.valid += 1;
        } else {
            self.invalid += 1;
        }
        match self.format {
            Format::Human => {
                if let Some(line) = human_line(&self.source, checked) {
                    writeln!(self.out, "{line}")?;
                }
                Ok(())
            }
            Format::Json => writeln!(self.out, "{}", json_record(checked)),
        }
    }

    pub fn invalid(&self) -> usize {
        self.invalid
    }

    /// Pushes what was recorded to the output now, for a reader that
    /// follows a slow stream.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Prints the human summary (JSON output has none: every line is a record)
    /// and flushes.
    pub fn finish(mut self) -> io::Result<()> {
        if self.format == Format::Human {
            let total = self.valid + self.invalid;
            writeln!(
                self.out,
                "{}: {total} message{} checked: {} valid, {} invalid",
                crate::escape::terminal(&self.source),
                if total == 1 { "" } else { "s" },
                self.valid,
                self.invalid
            )?;
        }
        self.out.flush()
    }
}

/// `FILE:LINE:COL: error[CLASS] at POINTER: MESSAGE`, or `None` for a valid message.
pub fn human_line(source: &str, checked: &Checked) -> Option<String> {
    let Validity::Invalid(err) = &checked.verdict else {
        return None;
    };
    let (line, column) = checked.error_location().unwrap_or((checked.line, 1));
    let at = if err.pointer.as_str().is_empty() {
        "the top level".to_owned()
    } else {
        err.pointer.to_string()
    };
    // The pointer and message quote the input: escaped for the terminal.
    let line = format!(
        "{source}:{line}:{column}: error[{}] at {at}: {}",
        err.class, err.message
    );
    Some(crate::escape::t(&line))
}

/// One JSON object for one message.
pub fn json_record(checked: &Checked) -> serde_json::Value {
    match &checked.verdict {
        Validity::Valid { act, id } => json!({
            "line": checked.line,
            "valid": true,
            "act": act.as_str(),
            "id": id.as_str(),
        }),
        Validity::Invalid(err) => {
            let mut error = json!({
                "class": err.class.as_str(),
                "pointer": err.pointer.as_str(),
                "message": err.message,
            });
            if let Some((line, column)) = checked.error_location() {
                error["line"] = json!(line);
                error["column"] = json!(column);
            }
            json!({ "line": checked.line, "valid": false, "error": error })
        }
    }
}
