//! The output of `tern-sim check --stateful`: what the reference model
//! decides for each message, event by event.

use std::io::{self, Write};

use serde_json::{json, Value};
use tern_harness::streams::stateful::Located;
use tern_model::ledger::{EventKind, Outcome};

use crate::check::Format;

fn kind_name(kind: EventKind) -> &'static str {
    match kind {
        EventKind::Delivered => "delivered",
        EventKind::Released => "released",
        EventKind::Invalidated => "invalidated",
    }
}

fn outcome_name(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::Accepted => "accepted",
        Outcome::Duplicate => "duplicate",
        Outcome::Pending { .. } => "pending",
        Outcome::Rejected(_) => "rejected",
    }
}

/// One JSON object for one event.
pub fn json_event(located: &Located) -> Value {
    let e = &located.event;
    let mut v = json!({
        "line": located.line,
        "event": kind_name(e.kind),
        "outcome": outcome_name(&e.outcome),
        "id": e.id.as_ref().map(|i| i.as_str()),
        "thread": e.thread.as_ref().map(|t| t.as_str()),
    });
    match &e.outcome {
        Outcome::Pending { missing } => {
            v["missing"] = json!(missing.iter().map(|m| m.as_str()).collect::<Vec<_>>());
        }
        Outcome::Rejected(r) => {
            v["error"] = json!({
                "class": r.class.as_str(),
                "pointer": r.pointer.as_str(),
                "message": r.message,
            });
        }
        Outcome::Accepted | Outcome::Duplicate => {}
    }
    v
}

/// `FILE:LINE: [event] outcome ID: detail`, one line per event.
pub fn human_event(source: &str, located: &Located) -> String {
    let e = &located.event;
    let id = e.id.as_ref().map_or("(no id)", |i| i.as_str());
    let kind = match e.kind {
        EventKind::Delivered => String::new(),
        other => format!("{} ", kind_name(other)),
    };
    let detail = match &e.outcome {
        Outcome::Accepted | Outcome::Duplicate => String::new(),
        Outcome::Pending { missing } => format!(
            ": waiting for {}",
            missing
                .iter()
                .map(|m| m.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Outcome::Rejected(r) => {
            let at = if r.pointer.as_str().is_empty() {
                String::new()
            } else {
                format!(" at {}", r.pointer)
            };
            format!(": [{}]{at} {}", r.class, r.message)
        }
    };
    // IDs, pointers and messages quote the input: escaped for the terminal.
    crate::escape::t(&format!(
        "{source}:{}: {kind}{} {id}{detail}",
        located.line,
        outcome_name(&e.outcome)
    ))
}

/// Streams events and counts what each message ended as.
pub struct StatefulReport<W> {
    out: W,
    format: Format,
    source: String,
    rejected: usize,
    events: usize,
}

impl<W: Write> StatefulReport<W> {
    pub fn new(out: W, format: Format, source: impl Into<String>) -> StatefulReport<W> {
        StatefulReport {
            out,
            format,
            source: source.into(),
            rejected: 0,
            events: 0,
        }
    }

    pub fn record(&mut self, located: &Located) -> io::Result<()> {
        self.events += 1;
        if matches!(located.event.outcome, Outcome::Rejected(_)) {
            self.rejected += 1;
        }
        match self.format {
            Format::Human => writeln!(self.out, "{}", human_event(&self.source, located)),
            Format::Json => writeln!(self.out, "{}", json_event(located)),
        }
    }

    pub fn rejected(&self) -> usize {
        self.rejected
    }

    /// Pushes what was recorded to the output now, for a reader that
    /// follows a slow stream.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Prints the final views (as JSON lines) when asked, then the human
    /// summary, and flushes. `pending` counts messages still waiting.
    pub fn finish(mut self, views: &[Value], pending: usize) -> io::Result<()> {
        for v in views {
            match self.format {
                Format::Json => writeln!(self.out, "{}", json!({ "view": v }))?,
                Format::Human => {
                    let pretty = serde_json::to_string_pretty(v).unwrap_or_default();
                    for line in pretty.lines() {
                        writeln!(self.out, "{}", crate::escape::terminal(line))?;
                    }
                }
            }
        }
        if self.format == Format::Human {
            writeln!(
                self.out,
                "{}: {} events: {} rejections, {} messages still pending",
                crate::escape::terminal(&self.source),
                self.events,
                self.rejected,
                pending
            )?;
        }
        self.out.flush()
    }
}
