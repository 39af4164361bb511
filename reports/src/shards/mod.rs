//! Parts and their merge (docs/scale.md). A sharded command writes a
//! *part*: a header that says which shard it is of which work, under which
//! options, and a body of results from which `tern-sim merge` rebuilds,
//! exactly, what one machine would have reported. The header is checked
//! across all parts before any body is read, so that parts that do not
//! belong together are refused with the reason, never merged.
//!
//! A part is untrusted input (a CI artifact anyone in the pipeline could
//! have touched), so merge also checks each part against itself: a digest
//! binds its body to its header, and every case, scope, mutant and seed in
//! a body must be one its header's shard takes. This detects mistakes and
//! edits of a part; it cannot detect a part forged by running tern-sim
//! itself on other work (docs/scale.md).

pub mod certify;
pub mod explore;
pub mod run;
pub mod selftest;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use tern_harness::shard::Shard;
use tern_harness::simulator::runner::Stats;

use crate::certify::validate::pointer_of;

pub const SCHEMA: &str = "tern-sim/part/2";

/// The commands that can be sharded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Command {
    Run,
    Certify,
    Selftest,
    Explore,
}

impl Command {
    pub fn as_str(self) -> &'static str {
        match self {
            Command::Run => "run",
            Command::Certify => "certify",
            Command::Selftest => "selftest",
            Command::Explore => "explore",
        }
    }
}

/// What a part says of itself: everything that must agree across the
/// parts of one merge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    pub schema: String,
    pub tern_sim_version: String,
    pub command: Command,
    pub shard: Shard,
    /// Every option that affects results, by its flag, as the shard ran
    /// with it (defaults included).
    pub options: BTreeMap<String, String>,
    /// The corpus's hash, when the command reads the corpus.
    pub corpus_hash: Option<String>,
    /// The named pieces of the whole work, in order, by kind (`cases`,
    /// `scopes`, `mutants`): merge checks each is in exactly one part.
    pub work: BTreeMap<String, Vec<String>>,
    /// False when the shard was interrupted: its part covers less than its
    /// share, and merge refuses it.
    pub complete: bool,
}

impl Header {
    pub fn new(command: Command, shard: Shard) -> Header {
        Header {
            schema: SCHEMA.to_owned(),
            tern_sim_version: env!("CARGO_PKG_VERSION").to_owned(),
            command,
            shard,
            options: BTreeMap::new(),
            corpus_hash: None,
            work: BTreeMap::new(),
            complete: true,
        }
    }

    /// The part's file name in the part folder.
    pub fn file_name(&self) -> String {
        format!(
            "{}-{}-of-{}.json",
            self.command.as_str(),
            self.shard.index(),
            self.shard.count()
        )
    }
}

/// A part as written: its header and a command's body. The file also
/// holds `digest`, over both (see [`digest`]).
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Part<B> {
    pub part: Header,
    pub body: B,
}

impl<B: Serialize> Part<B> {
    pub fn to_json(&self) -> String {
        let (Ok(part), Ok(body)) = (
            serde_json::to_value(&self.part),
            serde_json::to_value(&self.body),
        ) else {
            return String::new();
        };
        let digest = digest(&part, &body);
        let whole = serde_json::json!({"part": part, "body": body, "digest": digest});
        let mut s = whole.to_string();
        s.push('\n');
        s
    }
}

/// Writes again the digest of a part read as JSON (`{part, body, digest}`),
/// for whoever edits a part knowingly (tests of merge's other checks do):
/// the digest is a seal against accidents and naive edits, not a secret.
pub fn reseal(whole: &mut Value) {
    let sealed = match (whole.get("part"), whole.get("body")) {
        (Some(p), Some(b)) => digest(p, b),
        _ => return,
    };
    if let Some(o) = whole.as_object_mut() {
        o.insert("digest".to_owned(), Value::String(sealed));
    }
}

/// SHA-256 over a part's header and body in their canonical JSON (keys in
/// order, as `Value` writes them), in hex. Not a signature: anyone can
/// compute it again, so it catches a body moved under another header or
/// edited by hand, not a forgery made with intent.
fn digest(part: &Value, body: &Value) -> String {
    let mut hasher = Sha256::new();
    for piece in [SCHEMA.to_owned(), part.to_string(), body.to_string()] {
        hasher.update((piece.len() as u64).to_le_bytes());
        hasher.update(piece.as_bytes());
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Why parts cannot be merged. Each names the file or the option at fault.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MergeError {
    #[error("no part given")]
    NoParts,
    #[error("{}: cannot read: {why}", path.display())]
    Unreadable { path: PathBuf, why: String },
    #[error("{}: not a tern-sim part{at}: {why}", path.display())]
    NotAPart {
        path: PathBuf,
        at: String,
        why: String,
    },
    #[error("{}: a part of tern-sim {found}; this is tern-sim {ours}, and parts merge only with the version that wrote them", path.display())]
    Version {
        path: PathBuf,
        found: String,
        ours: String,
    },
    #[error("{} is a part of `{b}`, {} of `{a}`", second.display(), first.display())]
    Command {
        first: PathBuf,
        a: String,
        second: PathBuf,
        b: String,
    },
    #[error("{} is shard {b}, {} is shard {a}: the parts split the work in different numbers of shards", second.display(), first.display())]
    Count {
        first: PathBuf,
        a: String,
        second: PathBuf,
        b: String,
    },
    #[error("the parts disagree on {what}: {a} in {}, {b} in {}", first.display(), second.display())]
    Disagree {
        what: String,
        first: PathBuf,
        a: String,
        second: PathBuf,
        b: String,
    },
    #[error("shard {index}/{count} is given twice: {} and {}", first.display(), second.display())]
    Duplicate {
        index: u32,
        count: u32,
        first: PathBuf,
        second: PathBuf,
    },
    #[error("{} missing: each of the {count} shards must be given once", missing_text(missing, *count))]
    Missing {
        /// Runs of missing shard indexes, first and last.
        missing: Vec<(u32, u32)>,
        count: u32,
    },
    #[error("{}: the part's digest does not match its header and body: it was changed after tern-sim wrote it", path.display())]
    Tampered { path: PathBuf },
    #[error("{}: {what} belongs to shard {owner}, but this part is shard {shard}", path.display())]
    NotItsShare {
        path: PathBuf,
        what: String,
        owner: String,
        shard: String,
    },
    #[error("{}: shard {shard} was interrupted and covers less than its share; run it again", path.display())]
    Interrupted { path: PathBuf, shard: String },
    #[error("{}: the part does not hold its share: {why}", path.display())]
    Inconsistent { path: PathBuf, why: String },
}

/// A part read from a file, its body not yet interpreted.
#[derive(Debug)]
pub struct Read {
    pub path: PathBuf,
    pub header: Header,
    body: Value,
}

impl Read {
    /// Checks that the named piece of work (`case x`, `scope y`) is one
    /// this part's shard takes.
    pub(crate) fn owns_name(&self, kind: &str, name: &str) -> Result<(), MergeError> {
        let shard = self.header.shard;
        if shard.takes_name(name) {
            return Ok(());
        }
        Err(MergeError::NotItsShare {
            path: self.path.clone(),
            what: format!("{kind} `{name}`"),
            owner: shard.owner_of_name(name).to_string(),
            shard: shard.to_string(),
        })
    }

    /// Checks that `seed`, of a batch from `first`, is in this part's
    /// residue class.
    pub(crate) fn owns_seed(&self, first: u64, seed: u64) -> Result<(), MergeError> {
        let shard = self.header.shard;
        let what = format!("seed {seed}");
        match seed.checked_sub(first) {
            Some(offset) if shard.takes_position(offset) => Ok(()),
            Some(offset) => Err(MergeError::NotItsShare {
                path: self.path.clone(),
                what,
                owner: shard.owner_of_position(offset).to_string(),
                shard: shard.to_string(),
            }),
            None => Err(MergeError::Inconsistent {
                path: self.path.clone(),
                why: format!("{what} comes before the batch's first seed, {first}"),
            }),
        }
    }

    /// The body as the command's type.
    pub fn body<B: DeserializeOwned>(&self) -> Result<B, MergeError> {
        serde_path_to_error::deserialize(&self.body).map_err(|e| MergeError::NotAPart {
            path: self.path.clone(),
            at: format!(" (at /body{})", pointer_of(e.path())),
            why: e.into_inner().to_string(),
        })
    }
}

/// Reads one part's header; the body is kept for later.
pub fn read(path: &Path) -> Result<Read, MergeError> {
    let text = std::fs::read_to_string(path).map_err(|e| MergeError::Unreadable {
        path: path.to_path_buf(),
        why: e.to_string(),
    })?;
    let not_a_part = |at: String, why: String| MergeError::NotAPart {
        path: path.to_path_buf(),
        at,
        why,
    };
    let value: Value =
        serde_json::from_str(&text).map_err(|e| not_a_part(String::new(), e.to_string()))?;
    // The schema and version are read first, so that a part of another
    // version is named as such rather than as a malformed part.
    let schema = value.pointer("/part/schema").and_then(Value::as_str);
    if schema != Some(SCHEMA) {
        return Err(not_a_part(
            " (at /part/schema)".to_owned(),
            format!(
                "{} where {SCHEMA} is expected",
                schema.map_or("nothing".to_owned(), |s| format!("`{s}`"))
            ),
        ));
    }
    let ours = env!("CARGO_PKG_VERSION");
    // The version is read before the digest, so that a part of another
    // version (which may digest otherwise) is named as such.
    match value
        .pointer("/part/tern_sim_version")
        .and_then(Value::as_str)
    {
        Some(v) if v == ours => {}
        found => {
            return Err(MergeError::Version {
                path: path.to_path_buf(),
                found: found.unwrap_or("(none)").to_owned(),
                ours: ours.to_owned(),
            })
        }
    }
    let mut value = value;
    let digest_given = value
        .as_object_mut()
        .and_then(|o| o.remove("digest"))
        .ok_or_else(|| {
            not_a_part(
                " (at /digest)".to_owned(),
                "no digest: every part carries one".to_owned(),
            )
        })?;
    let computed = match (value.get("part"), value.get("body")) {
        (Some(p), Some(b)) => Some(digest(p, b)),
        _ => None,
    };
    if computed.is_some() && digest_given.as_str() != computed.as_deref() {
        return Err(MergeError::Tampered {
            path: path.to_path_buf(),
        });
    }
    let part: Part<Value> = serde_path_to_error::deserialize(&value).map_err(|e| {
        not_a_part(
            format!(" (at {})", pointer_of(e.path())),
            e.into_inner().to_string(),
        )
    })?;
    Ok(Read {
        path: path.to_path_buf(),
        header: part.part,
        body: part.body,
    })
}

/// Checks that `parts` are the N shards of one piece of work, each once
/// and complete, and returns them in shard order.
pub fn check(mut parts: Vec<Read>) -> Result<Vec<Read>, MergeError> {
    let Some(first) = parts.first() else {
        return Err(MergeError::NoParts);
    };
    let (p0, h0) = (first.path.clone(), first.header.clone());
    for r in &parts[1..] {
        let h = &r.header;
        if h.command != h0.command {
            return Err(MergeError::Command {
                first: p0,
                a: h0.command.as_str().to_owned(),
                second: r.path.clone(),
                b: h.command.as_str().to_owned(),
            });
        }
        if h.shard.count() != h0.shard.count() {
            return Err(MergeError::Count {
                first: p0,
                a: h0.shard.to_string(),
                second: r.path.clone(),
                b: h.shard.to_string(),
            });
        }
        let disagree = |what: String, a: String, b: String| MergeError::Disagree {
            what,
            first: p0.clone(),
            a,
            second: r.path.clone(),
            b,
        };
        let flags: std::collections::BTreeSet<&String> =
            h0.options.keys().chain(h.options.keys()).collect();
        for flag in flags {
            let (a, b) = (h0.options.get(flag), h.options.get(flag));
            if a != b {
                let shown =
                    |v: Option<&String>| v.map_or("(absent)".to_owned(), |v| format!("`{v}`"));
                return Err(disagree(flag.clone(), shown(a), shown(b)));
            }
        }
        if h.corpus_hash != h0.corpus_hash {
            let shown = |v: &Option<String>| {
                v.as_deref()
                    .map_or("none", |h| &h[..h.len().min(12)])
                    .to_owned()
            };
            return Err(disagree(
                "the corpus (its hash)".to_owned(),
                shown(&h0.corpus_hash),
                shown(&h.corpus_hash),
            ));
        }
        if h.work != h0.work {
            return Err(disagree(
                "the work to split (the cases, scopes or mutants selected)".to_owned(),
                summary(&h0.work),
                summary(&h.work),
            ));
        }
    }
    let count = h0.shard.count();
    parts.sort_by_key(|r| r.header.shard.index());
    for pair in parts.windows(2) {
        if pair[0].header.shard == pair[1].header.shard {
            return Err(MergeError::Duplicate {
                index: pair[0].header.shard.index(),
                count,
                first: pair[0].path.clone(),
                second: pair[1].path.clone(),
            });
        }
    }
    // In runs, never one by one: a part may claim a count in the
    // hundreds, and the error must stay one short line.
    let mut missing: Vec<(u32, u32)> = Vec::new();
    let mut next = 1;
    for k in parts
        .iter()
        .map(|r| r.header.shard.index())
        .chain([count + 1])
    {
        if k > next {
            missing.push((next, k - 1));
        }
        next = k + 1;
    }
    if !missing.is_empty() {
        return Err(MergeError::Missing { missing, count });
    }
    if let Some(r) = parts.iter().find(|r| !r.header.complete) {
        return Err(MergeError::Interrupted {
            path: r.path.clone(),
            shard: r.header.shard.to_string(),
        });
    }
    Ok(parts)
}

fn missing_text(missing: &[(u32, u32)], count: u32) -> String {
    let names: Vec<String> = missing
        .iter()
        .map(|&(a, b)| {
            if a == b {
                format!("{a}/{count}")
            } else {
                format!("{a}-{b}/{count}")
            }
        })
        .collect();
    match missing {
        [(a, b)] if a == b => format!("shard {} is", names[0]),
        _ => format!("shards {} are", names.join(", ")),
    }
}

fn summary(work: &BTreeMap<String, Vec<String>>) -> String {
    work.iter()
        .map(|(kind, names)| format!("{} {kind}", names.len()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One shard's simulation runs: the counts of each run it played, in its
/// order of seeds, and the seed of its first violation.
pub(crate) struct Runs<'a> {
    pub read: &'a Read,
    pub counts: &'a [Stats],
    pub violation: Option<u64>,
    /// The simulation did not run at all (the same in every part).
    pub skipped: bool,
}

/// What one batch of `seeds` runs from `first_seed` would have played:
/// every shard's runs up to the first violation in seed order (one batch
/// stops there). Returns the runs, their totals, and which of `shares`
/// holds that violation.
pub(crate) fn one_batch(
    shares: &[Runs],
    first_seed: u64,
    seeds: u64,
) -> Result<(u64, Stats, Option<usize>), MergeError> {
    let found = shares
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.violation.map(|seed| (seed, i)))
        .min();
    let last = found.map_or(u64::MAX, |(seed, _)| seed);
    let mut totals = Stats::default();
    let mut runs = 0;
    for s in shares {
        if let Some(seed) = s.violation {
            s.read.owns_seed(first_seed, seed)?;
        }
        let shard = s.read.header.shard;
        let share = shard.positions_of(seeds);
        let played = s.counts.len() as u64;
        // A shard without a violation played its whole share; one with a
        // violation stopped there, within it.
        let whole = if s.violation.is_some() || s.skipped {
            played <= share
        } else {
            played == share
        };
        if !whole {
            return Err(MergeError::Inconsistent {
                path: s.read.path.clone(),
                why: format!("{played} simulation run(s) where its share is {share}"),
            });
        }
        for (nth, counts) in s.counts.iter().enumerate() {
            if shard.seed(first_seed, nth as u64) <= last {
                totals.add(counts);
                runs += 1;
            }
        }
    }
    Ok((runs, totals, found.map(|(_, i)| i)))
}
