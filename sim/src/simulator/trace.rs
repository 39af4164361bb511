//! Counterexample traces: a JSON-lines file that `tern-sim replay` re-runs
//! exactly. The first line is the header (everything that defines the run
//! but its steps), then one line per step, then the violation found, then the
//! run in shorthand for people. Replay reads the header and the steps only.

use std::io::{self, BufRead, Read, Write};
use std::path::Path;

use serde_json::{json, Value};

use super::driver::Counterexample;
use super::faults::FaultSet;
use super::happening::notes;
use super::runner::{RunConfig, Sessions, Violation};
use super::scenario::MAX_STEPS;
use super::workload::{Mix, Step};
use crate::judge::compare::RejectNames;

/// The trace format's version. Format 2: an `execute` step may pick among
/// the commitments the model would execute (docs/simulator.md §3). Format 3:
/// an `execute` step's pick chooses a kind of aimed request, there are three
/// more attacks and twenty-one ways of breaking a frame, and the scenario
/// has more grants. Format 4: the pick is 16 bits, a broken frame's `how`
/// names a kind and a variant (forty-two kinds), and grants expire within
/// the run's length. Format 6: a boast has a shape and a pick, and two
/// kinds of `execute` pick ask for commitments boasts were about. The steps
/// of an older trace would play another run, so it is refused.
pub const FORMAT: u64 = 6;

/// The longest line a trace holds: a note of a step with a frame at the
/// size limit, with room to spare.
pub const MAX_LINE: usize = 4 << 20;

/// A trace as read back.
#[derive(Debug, Clone)]
pub struct Trace {
    pub config: RunConfig,
    pub implementation: String,
    /// The tern-sim version that recorded it.
    pub version: String,
    pub steps: Vec<Step>,
    /// The invariant the run broke when it was saved.
    pub invariant: Option<String>,
}

/// Why a trace could not be read, with the line.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("cannot read the trace: {0}")]
    Io(#[from] io::Error),
    #[error("line {line}: {message}")]
    Format { line: usize, message: String },
}

/// A violation as JSON, in traces and reports alike.
pub fn violation_json(v: &Violation) -> Value {
    json!({
        "invariant": v.failure.invariant.name,
        "section": v.failure.invariant.section,
        "says": v.failure.invariant.says,
        "step": v.step,
        "agent": v.agent,
        "expected": v.failure.expected,
        "actual": v.failure.actual,
    })
}

/// Writes a counterexample to `out`.
pub fn write(out: &mut impl Write, c: &Counterexample, implementation: &str) -> io::Result<()> {
    let header = json!({
        "tern_sim_trace": FORMAT,
        "version": env!("CARGO_PKG_VERSION"),
        "implementation": implementation,
        "seed": c.config.seed,
        "agents": c.config.agents,
        "faults": c.config.faults.names(),
        "mix": c.config.mix,
        "names": c.config.names.as_str(),
        "original_steps": c.original_len,
    });
    let mut header = header;
    if c.config.sessions != Sessions::Once {
        header["sessions"] = json!(c.config.sessions.as_str());
    }
    writeln!(out, "{header}")?;
    for (i, step) in c.steps.iter().enumerate() {
        writeln!(out, "{}", json!({"step": i, "do": step}))?;
    }
    writeln!(
        out,
        "{}",
        json!({"violation": violation_json(&c.violation)})
    )?;
    for note in notes(&c.happenings) {
        writeln!(out, "{}", json!({ "note": note }))?;
    }
    Ok(())
}

/// Writes a counterexample atomically: a temporary file in the same folder,
/// renamed into place, so a reader never sees half a trace.
pub fn save(path: &Path, c: &Counterexample, implementation: &str) -> io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension("jsonl.partial");
    {
        let mut file = io::BufWriter::new(std::fs::File::create(&tmp)?);
        write(&mut file, c, implementation)?;
        file.flush()?;
        file.get_ref().sync_all()?;
    }
    std::fs::rename(&tmp, path)
}

/// Reads a trace.
pub fn read(mut input: impl BufRead) -> Result<Trace, TraceError> {
    let mut header: Option<Value> = None;
    let mut steps = Vec::new();
    let mut invariant = None;
    let mut bytes = Vec::new();
    for n in 1.. {
        // Lines are read with a bound, so that a file that is no trace
        // (one endless line) costs no more memory than a trace's line.
        bytes.clear();
        let read = (&mut input)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut bytes)?;
        if read == 0 {
            break;
        }
        if bytes.len() > MAX_LINE {
            return Err(TraceError::Format {
                line: n,
                message: format!("a line longer than {MAX_LINE} bytes: not a trace line"),
            });
        }
        let line = std::str::from_utf8(&bytes).map_err(|_| TraceError::Format {
            line: n,
            message: "not UTF-8".to_owned(),
        })?;
        if line.trim().is_empty() {
            continue;
        }
        let fail = |message: String| TraceError::Format { line: n, message };
        let v: Value = serde_json::from_str(line).map_err(|e| fail(e.to_string()))?;
        if header.is_none() {
            match v.get("tern_sim_trace") {
                Some(f) if *f == json!(FORMAT) => {}
                // A header of another format is a trace this tern-sim
                // cannot read, not a file that is no trace at all.
                Some(f) => {
                    return Err(fail(format!(
                        "trace format {f} is not supported: this tern-sim reads format {FORMAT}"
                    )))
                }
                None => {
                    return Err(fail(format!(
                        "not a tern-sim trace of format {FORMAT} (no `tern_sim_trace` header)"
                    )))
                }
            }
            header = Some(v);
            continue;
        }
        if let Some(step) = v.get("do") {
            if steps.len() == MAX_STEPS {
                return Err(fail(format!(
                    "more than {MAX_STEPS} steps, the longest run tern-sim plays"
                )));
            }
            let step: Step =
                serde_json::from_value(step.clone()).map_err(|e| fail(format!("bad step: {e}")))?;
            steps.push(step);
        } else if let Some(viol) = v.get("violation") {
            invariant = viol["invariant"].as_str().map(str::to_owned);
        } else if v.get("note").is_none() {
            return Err(fail("expected a step, a violation or a note".into()));
        }
    }
    let h = header.ok_or(TraceError::Format {
        line: 1,
        message: "the trace is empty".into(),
    })?;
    let field = |k: &str| TraceError::Format {
        line: 1,
        message: format!("header lacks a valid `{k}`"),
    };
    let seed = h["seed"].as_u64().ok_or_else(|| field("seed"))?;
    let agents = h["agents"].as_u64().ok_or_else(|| field("agents"))? as usize;
    if agents == 0 || agents > super::scenario::MAX_AGENTS {
        return Err(field("agents"));
    }
    let faults = FaultSet::parse_list(h["faults"].as_str().ok_or_else(|| field("faults"))?)
        .map_err(|m| TraceError::Format {
            line: 1,
            message: m,
        })?;
    let mix: Mix = serde_json::from_value(h["mix"].clone()).map_err(|_| field("mix"))?;
    // The scenario (its epochs and its grants' expiry instants) is drawn
    // for the run's generated length, which a shrunk trace no longer has.
    let generated = match h.get("original_steps") {
        None => steps.len(),
        Some(n) => n
            .as_u64()
            .filter(|n| *n as usize >= steps.len() && *n as usize <= MAX_STEPS)
            .ok_or_else(|| field("original_steps"))? as usize,
    };
    Ok(Trace {
        config: RunConfig {
            seed,
            agents,
            steps: generated,
            faults,
            mix,
            // Traces written before names could be ignored compared them.
            names: if h["names"] == "ignored" {
                RejectNames::Ignored
            } else {
                RejectNames::Compared
            },
            sessions: match h.get("sessions") {
                None => Sessions::Once,
                Some(s) => s
                    .as_str()
                    .and_then(Sessions::from_name)
                    .ok_or_else(|| field("sessions"))?,
            },
        },
        implementation: h["implementation"].as_str().unwrap_or("").to_owned(),
        version: h["version"].as_str().unwrap_or("").to_owned(),
        steps,
        invariant,
    })
}
