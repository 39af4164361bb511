//! Writes adversarial and realistic JSONL streams for measuring
//! `tern-sim check --stateful`: how its time and memory grow with the
//! history a ledger holds.
//!
//! ```text
//! cargo run --release --example ledger_streams -- SHAPE N > stream.jsonl
//! ```
//!
//! Shapes (N messages in all, one thread unless said otherwise):
//!
//! * `chain`: a TELL and N-1 REVISEs of it, each continuing the last.
//! * `chain-reversed`: the same stream backwards, so everything is pending
//!   until the original arrives last and releases the whole chain.
//! * `competing`: a TELL and N-1 REVISEs that all claim it as predecessor.
//! * `conflicts`: N/2 TELLs, then another content under each of their IDs.
//! * `conflicts-one`: N contents under one ID.
//! * `cascade`: a reply chain of N messages delivered backwards: each waits
//!   for the one before it, and the first releases them all.
//! * `fan-in`: N-1 replies to a message that arrives last.
//! * `realistic`: N/11 threads of an eleven-message exchange (request,
//!   commitment, reports, talk, a revision, acknowledgements, a challenge),
//!   about 400 bytes a message.
//! * `garbage`: N lines of `{}`.
//! * `duplicates`: one message, then N-1 copies of it.
//!
//! The output depends on SHAPE and N alone.

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use serde_json::{json, Value};

fn claim(text: &str) -> Value {
    json!({"text": text, "basis": "observed", "confidence": "high",
           "scope": "This review only: the draft as supplied on the last day of November, read in full, with the comments of the first reviewer left aside.", "evidence": ["ev:notes"], "alternatives": []})
}

fn message(id: &str, thread: &str, reply: Option<&str>, act: &str, body: Value) -> Value {
    let from = id.split(':').next().unwrap_or("a");
    let to = if from == "a" { "b" } else { "a" };
    json!({"tern": "0.1", "id": id, "from": from, "to": [to], "thread": thread,
           "reply": reply, "act": act, "body": body})
}

fn tell(id: &str, text: &str) -> Value {
    message(id, "t", None, "TELL", json!({"claims": [claim(text)]}))
}

fn revise(id: &str, target: &str, previous: &str, text: &str) -> Value {
    message(
        id,
        "t",
        None,
        "REVISE",
        json!({"target": target, "previous": previous, "mode": "replace",
               "replacement": {"claims": [claim(text)]}, "impact": []}),
    )
}

/// One thread of the realistic exchange.
fn exchange(thread: &str, out: &mut Vec<Value>) {
    let evidence = json!([{"id": "ev:notes", "source": "review notes",
        "collected_at": "2026-11-30T12:00:00Z", "method": "read", "result": "Finding recorded."}]);
    let with_evidence = |mut v: Value| {
        v["evidence"] = evidence.clone();
        v
    };
    out.push(message("a:1", thread, None, "REQUEST", json!({
        "action": "Review the ACK rule in the supplied draft.",
        "done_when": "Identify whether ACK implies agreement and explain why.",
        "constraints": ["Review only; do not edit files.", "Quote the text you rely on."], "authority_ref": null})));
    out.push(message(
        "b:1",
        thread,
        Some("a:1"),
        "COMMIT",
        json!({
        "request": "a:1", "action": "Review the supplied ACK rule.",
        "deliverable": "A finding and textual support.",
        "done_when": "Explain whether ACK implies agreement with supporting text.",
        "due": "2026-12-24T17:00:00Z", "conditions": ["The draft is accessible."],
        "authority_ref": null}),
    ));
    out.push(with_evidence(message(
        "b:2",
        thread,
        Some("b:1"),
        "REPORT",
        json!({
        "commitment": "b:1", "state": "active", "claims": [claim("Started on the review.")]}),
    )));
    out.push(message(
        "a:2",
        thread,
        Some("b:2"),
        "ACK",
        json!({"target": "b:2"}),
    ));
    out.push(message(
        "a:3",
        thread,
        None,
        "ASK",
        json!({
        "question": "Which ambiguity should we remove first, and why that one?"}),
    ));
    out.push(with_evidence(message(
        "b:3",
        thread,
        Some("a:3"),
        "TELL",
        json!({
        "claims": [claim("The ACK rule is the most ambiguous part of the draft.")]}),
    )));
    out.push(with_evidence(message(
        "b:4",
        thread,
        Some("b:2"),
        "REPORT",
        json!({
        "commitment": "b:1", "state": "blocked",
        "claims": [claim("The draft is not available to me.")],
        "next": "Please provide the draft text."}),
    )));
    out.push(with_evidence(message("b:5", thread, None, "REVISE", json!({
        "target": "b:3", "previous": "b:3", "mode": "replace",
        "replacement": {"claims": [claim("The ACK rule and the REVISE rule are equally ambiguous.")]},
        "impact": []}))));
    out.push(message(
        "a:4",
        thread,
        Some("b:5"),
        "CHALLENGE",
        json!({
        "target": "b:5", "kind": "inference",
        "reason": "The REVISE rule was clarified last week.", "claims": []}),
    ));
    out.push(with_evidence(message(
        "b:6",
        thread,
        Some("b:4"),
        "REPORT",
        json!({
        "commitment": "b:1", "state": "fulfilled",
        "claims": [claim("ACK does not imply agreement: section 2 says so.")]}),
    )));
    out.push(message(
        "a:5",
        thread,
        Some("b:6"),
        "ACK",
        json!({"target": "b:6"}),
    ));
}

fn stream(shape: &str, n: usize) -> Option<Vec<Value>> {
    let n = n.max(2);
    let mut out = Vec::with_capacity(n);
    match shape {
        "chain" | "chain-reversed" => {
            out.push(tell("a:0", "The original."));
            for k in 1..n {
                out.push(revise(
                    &format!("a:{k}"),
                    "a:0",
                    &format!("a:{}", k - 1),
                    &format!("Version {k}."),
                ));
            }
            if shape == "chain-reversed" {
                out.reverse();
            }
        }
        "competing" => {
            out.push(tell("a:0", "The original."));
            for k in 1..n {
                out.push(revise(
                    &format!("a:{k}"),
                    "a:0",
                    "a:0",
                    &format!("Version {k}."),
                ));
            }
        }
        "conflicts" => {
            for k in 0..n / 2 {
                out.push(tell(&format!("a:{k}"), "First content."));
            }
            for k in 0..n - n / 2 {
                out.push(tell(&format!("a:{k}"), "Second content."));
            }
        }
        "conflicts-one" => {
            for k in 0..n {
                out.push(tell("a:0", &format!("Content {k}.")));
            }
        }
        "cascade" => {
            out.push(message(
                "a:0",
                "t",
                None,
                "ASK",
                json!({"question": "Where does it start?"}),
            ));
            for k in 1..n {
                let (id, reply) = (format!("a:{k}"), format!("a:{}", k - 1));
                out.push(message(
                    &id,
                    "t",
                    Some(&reply),
                    "TELL",
                    json!({"claims": [claim("Next.")]}),
                ));
            }
            out.reverse();
        }
        "fan-in" => {
            for k in 1..n {
                let id = format!("b:{k}");
                out.push(message(
                    &id,
                    "t",
                    Some("a:0"),
                    "ACK",
                    json!({"target": "a:0"}),
                ));
            }
            out.push(message(
                "a:0",
                "t",
                None,
                "ASK",
                json!({"question": "Who answers?"}),
            ));
        }
        "realistic" => {
            for k in 0..n.div_ceil(11) {
                exchange(&format!("thread-{k}"), &mut out);
            }
            out.truncate(n);
        }
        "garbage" => out.resize(n, json!({})),
        "duplicates" => out.resize(n, tell("a:0", "Said once, sent many times.")),
        _ => return None,
    }
    Some(out)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(shape), Some(Ok(n))) = (args.first(), args.get(1).map(|s| s.parse::<usize>())) else {
        eprintln!("usage: ledger_streams SHAPE N");
        return ExitCode::from(2);
    };
    let Some(messages) = stream(shape, n) else {
        eprintln!("ledger_streams: unknown shape `{shape}`");
        return ExitCode::from(2);
    };
    let mut out = BufWriter::new(io::stdout().lock());
    for m in messages {
        if writeln!(out, "{m}").is_err() {
            return ExitCode::from(1);
        }
    }
    if out.flush().is_err() {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
